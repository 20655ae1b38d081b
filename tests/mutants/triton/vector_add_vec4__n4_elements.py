"""Wrong: takes the float4 count n / 4 for the element count, so only the first quarter of c is written."""
import triton
import triton.language as tl


@triton.jit
def _vector_add_kernel(a_ptr, b_ptr, c_ptr, n4, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n4
    tl.store(c_ptr + offs, tl.load(a_ptr + offs, mask=mask) + tl.load(b_ptr + offs, mask=mask), mask=mask)


# xlate: a: in[n], b: in[n], c: out[n], n: size(4..1<<20), where: n % 4 == 0,
# xlate: grid: cdiv(n / 4, 256), block: 256, op: elementwise
def vector_add_vec4(a, b, c, n):
    n4 = n // 4
    _vector_add_kernel[(triton.cdiv(n4, 256),)](a, b, c, n4, BLOCK=256)
