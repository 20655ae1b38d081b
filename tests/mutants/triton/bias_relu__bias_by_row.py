"""Wrong index: the bias is taken per row (i // cols) instead of per column (i % cols)."""
import triton
import triton.language as tl


@triton.jit
def _bias_relu_kernel(x_ptr, bias_ptr, y_ptr, total, cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    v = tl.load(x_ptr + offs, mask=mask, other=0.0) + tl.load(bias_ptr + offs // cols, mask=mask, other=0.0)
    tl.store(y_ptr + offs, tl.where(v > 0.0, v, 0.0), mask=mask)


# xlate: x: in[rows, cols], bias: in[cols], y: out[rows, cols], rows: size(1..300),
# xlate: cols: size(1..4096), grid: cdiv(rows * cols, 256), block: 256, op: elementwise
def bias_relu(x, bias, y, rows, cols):
    _bias_relu_kernel[(triton.cdiv(rows * cols, 256),)](x, bias, y, rows * cols, cols, BLOCK=256)
