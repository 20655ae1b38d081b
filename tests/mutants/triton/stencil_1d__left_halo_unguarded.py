"""Wrong: the left neighbour of element 0 is read from x[-1] (no `offs >= 1` guard) instead of as
zero, so y[0] depends on memory before the start of x."""
import triton
import triton.language as tl


@triton.jit
def _stencil_kernel(x_ptr, y_ptr, n, wl, wc, wr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    left = tl.load(x_ptr + offs - 1, mask=mask, other=0.0)
    mid = tl.load(x_ptr + offs, mask=mask, other=0.0)
    right = tl.load(x_ptr + offs + 1, mask=(offs + 1) < n, other=0.0)
    tl.store(y_ptr + offs, wl * left + wc * mid + wr * right, mask=mask)


# xlate: x: in[n], y: out[n], n: size(1..1<<20), wl: scalar(-1..1), wc: scalar(-1..1),
# xlate: wr: scalar(-1..1), grid: cdiv(n, 256), block: 256, op: elementwise
def stencil_1d(x, y, n, wl, wc, wr):
    _stencil_kernel[(triton.cdiv(n, 256),)](x, y, n, wl, wc, wr, BLOCK=256)
