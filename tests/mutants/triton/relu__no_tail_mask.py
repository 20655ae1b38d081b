"""Wrong: no tail guard at all; the last program writes up to 31 elements past the end of y."""
import triton
import triton.language as tl


@triton.jit
def _relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, tl.where(x > 0.0, x, 0.0))


# xlate: x: in[n], y: out[n], n: size(1..1<<20), grid: cdiv(n, 256), block: 256, op: elementwise
def relu(x, y, n):
    _relu_kernel[(triton.cdiv(n, 32),)](x, y, n, BLOCK=32)
