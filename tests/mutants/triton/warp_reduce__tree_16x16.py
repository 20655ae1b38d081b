"""Correct: the 256 inputs as a 16 x 16 tile, summed along rows then columns (like 8 warps' worth of
partial sums, in a different order)."""
import triton
import triton.language as tl


@triton.jit
def _reduce_kernel(x_ptr, partial_ptr, n):
    pid = tl.program_id(0)
    offs = pid * 256 + tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :]
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(partial_ptr + pid, tl.sum(tl.sum(x, axis=1), axis=0))


# xlate: x: in[n], partial: out[cdiv(n, 256)], n: size(1..1<<20),
# xlate: grid: cdiv(n, 256), block: 256, op: reduction(256)
def warp_reduce_sum(x, partial, n):
    _reduce_kernel[(triton.cdiv(n, 256),)](x, partial, n)
