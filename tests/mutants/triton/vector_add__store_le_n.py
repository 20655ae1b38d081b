"""Wrong: the store mask is `offs <= n`, so c[n] (one past the end) is written."""
import triton
import triton.language as tl


@triton.jit
def _vector_add_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs <= n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(c_ptr + offs, a + b, mask=mask)


# xlate: a: in[n], b: in[n], c: out[n], n: size(1..1<<20),
# xlate: grid: cdiv(n, 256), block: 256, op: elementwise
def vector_add(a, b, c, n):
    _vector_add_kernel[(triton.cdiv(n, 256),)](a, b, c, n, BLOCK=256)
