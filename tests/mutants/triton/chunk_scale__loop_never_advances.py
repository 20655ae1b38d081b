"""Wrong: a persistent single-program loop over the array that advances the offsets but tests the
start, which never changes; for any n >= 1 it loops forever."""
import triton
import triton.language as tl


@triton.jit
def _scale_kernel(x_ptr, y_ptr, n, alpha, BLOCK: tl.constexpr):
    start = 0
    offs = start + tl.arange(0, BLOCK)
    while start < n:
        mask = offs < n
        tl.store(y_ptr + offs, alpha * tl.load(x_ptr + offs, mask=mask), mask=mask)
        offs += BLOCK


# xlate: x: in[n], y: out[n], n: size(1..1<<20), alpha: scalar(-4..4),
# xlate: grid: cdiv(n, 256), block: 256, op: elementwise
def chunk_scale(x, y, n, alpha):
    _scale_kernel[(1,)](x, y, n, alpha, BLOCK=256)
