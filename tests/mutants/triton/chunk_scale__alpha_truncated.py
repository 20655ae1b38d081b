"""Wrong scalar type: the launcher passes int(alpha), truncating the float scale factor."""
import triton
import triton.language as tl


@triton.jit
def _scale_kernel(x_ptr, y_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, alpha * tl.load(x_ptr + offs, mask=mask), mask=mask)


# xlate: x: in[n], y: out[n], n: size(1..1<<20), alpha: scalar(-4..4),
# xlate: grid: cdiv(n, 256), block: 256, op: elementwise
def chunk_scale(x, y, n, alpha):
    _scale_kernel[(triton.cdiv(n, 256),)](x, y, n, float(int(alpha)), BLOCK=256)
