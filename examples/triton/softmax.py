"""Triton port of kernels/softmax.cu: one program per row, the whole row in one block."""
import triton
import triton.language as tl


@triton.jit
def _softmax_rows_kernel(x_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * cols + offs, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    e = tl.where(mask, e, 0.0)
    tl.store(y_ptr + row * cols + offs, e / tl.sum(e, axis=0), mask=mask)


# xlate: x: in[rows, cols](-10..10), y: out[rows, cols], rows: size(1..256), cols: size(1..2048),
# xlate: grid: rows, block: 256, op: reduction(cols), values: finite
def softmax_rows(x, y, rows, cols):
    block = triton.next_power_of_2(cols)
    _softmax_rows_kernel[(rows,)](x, y, cols, BLOCK=block)
