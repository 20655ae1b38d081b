"""Wrong: counts x >= thresh instead of x > thresh."""
import triton
import triton.language as tl


@triton.jit
def _count_kernel(x_ptr, n, thresh, count_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    hit = (offs < n) & (x >= thresh)
    tl.atomic_add(count_ptr, tl.sum(hit.to(tl.int32), axis=0))


# xlate: x: in[n](-1..1), n: size(1..1<<20), thresh: scalar(-1..1), count: inout[1](0..100) as int32,
# xlate: grid: cdiv(n, 256), block: 256, op: atomic
def count_above(x, n, thresh, count):
    _count_kernel[(triton.cdiv(n, 256),)](x, n, thresh, count, BLOCK=256)
