"""Wrong: Horner's rule with the coefficient table walked in the wrong order (highest degree taken
as the constant term)."""
import triton
import triton.language as tl


@triton.jit
def _poly_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x_ptr + offs, mask=mask, other=0.0)
    acc = ((1.0 * v - 0.5) * v + 0.25) * v - 0.125
    tl.store(y_ptr + offs, acc, mask=mask)


# xlate: x: in[n](-2..2), y: out[n], n: size(1..1<<20), grid: cdiv(n, 256), block: 256,
# xlate: op: elementwise
def poly_eval(x, y, n):
    _poly_kernel[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256)
