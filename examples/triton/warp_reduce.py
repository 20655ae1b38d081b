"""Triton port of kernels/warp_reduce.cu. Triton has no warps to program against: the block
reduction that the CUDA code builds from 32-lane shuffles is a single tl.sum over 256 elements,
so the warp-size assumptions of the source simply disappear."""
import triton
import triton.language as tl


@triton.jit
def _warp_reduce_sum_kernel(x_ptr, partial_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(partial_ptr + pid, tl.sum(x, axis=0))


# xlate: x: in[n], partial: out[cdiv(n, 256)], n: size(1..1<<20),
# xlate: grid: cdiv(n, 256), block: 256, op: reduction(256)
def warp_reduce_sum(x, partial, n):
    grid = (triton.cdiv(n, 256),)
    _warp_reduce_sum_kernel[grid](x, partial, n, BLOCK=256)
