"""Wrong: stores each block's partial into *result instead of adding it atomically: the old value of
result (an accumulator) is lost, and all blocks but the last are too."""
import triton
import triton.language as tl


@triton.jit
def _dot_kernel(a_ptr, b_ptr, result_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0)
    tl.store(result_ptr, tl.sum(a * b, axis=0))


# xlate: a: in[n], b: in[n], result: inout[1], n: size(1..1<<20),
# xlate: grid: cdiv(n, 256), block: 256, op: reduction(n)
def dot_atomic(a, b, result, n):
    _dot_kernel[(triton.cdiv(n, 256),)](a, b, result, n, BLOCK=256)
