"""Wrong only at n = 1: a single-element fast path stores a[0] * b[0] into result instead of
adding it to the accumulator."""
import triton
import triton.language as tl


@triton.jit
def _dot_kernel(a_ptr, b_ptr, result_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0)
    tl.atomic_add(result_ptr, tl.sum(a * b, axis=0))


@triton.jit
def _dot_one_kernel(a_ptr, b_ptr, result_ptr):
    tl.store(result_ptr, tl.load(a_ptr) * tl.load(b_ptr))


# xlate: a: in[n], b: in[n], result: inout[1], n: size(1..1<<20),
# xlate: grid: cdiv(n, 256), block: 256, op: reduction(n)
def dot_atomic(a, b, result, n):
    if n == 1:
        _dot_one_kernel[(1,)](a, b, result)
        return
    _dot_kernel[(triton.cdiv(n, 256),)](a, b, result, n, BLOCK=256)
