"""Wrong: each partial sums only the first 128 of its block's 256 inputs (a 128-wide program laid over
the source's 256-thread blocks)."""
import triton
import triton.language as tl


@triton.jit
def _reduce_kernel(x_ptr, partial_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * 256 + tl.arange(0, BLOCK)
    tl.store(partial_ptr + pid, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0))


# xlate: x: in[n], partial: out[cdiv(n, 256)], n: size(1..1<<20),
# xlate: grid: cdiv(n, 256), block: 256, op: reduction(256)
def warp_reduce_sum(x, partial, n):
    _reduce_kernel[(triton.cdiv(n, 256),)](x, partial, n, BLOCK=128)
