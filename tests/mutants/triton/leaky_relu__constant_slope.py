"""Wrong: a constant 0.01 slope instead of the slope argument."""
import triton
import triton.language as tl


@triton.jit
def _leaky_relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.where(x > 0.0, x, 0.01 * x), mask=mask)


# xlate: x: in[n], y: out[n], n: size(1..1<<20), slope: scalar(0..1),
# xlate: grid: cdiv(n, 512), block: 512, op: elementwise
def leaky_relu(x, y, n, slope):
    _leaky_relu_kernel[(triton.cdiv(n, 512),)](x, y, n, BLOCK=512)
