"""Wrong scalar order: computes b * x + a (the two scalars swapped at the call)."""
import triton
import triton.language as tl


@triton.jit
def _scale_shift_kernel(x_ptr, y_ptr, a, b, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, a * x + b, mask=mask)


# xlate: x: in[n], y: out[n], a: scalar(-8..8), b: scalar(-8..8), n: size(1..1<<20),
# xlate: grid: cdiv(n, 128), block: 128, op: elementwise
def scale_shift(x, y, a, b, n):
    _scale_shift_kernel[(triton.cdiv(n, 128),)](x, y, b, a, n, BLOCK=128)
