"""Wrong: the launcher asserts that n is a multiple of the block (a port that assumed it), so any
other legal n fails at launch."""
import triton
import triton.language as tl


@triton.jit
def _vector_add_kernel(a_ptr, b_ptr, c_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(c_ptr + offs, tl.load(a_ptr + offs) + tl.load(b_ptr + offs))


# xlate: a: in[n], b: in[n], c: out[n], n: size(1..1<<20),
# xlate: grid: cdiv(n, 256), block: 256, op: elementwise
def vector_add(a, b, c, n):
    assert n % 256 == 0, "n must be a multiple of 256"
    _vector_add_kernel[(n // 256,)](a, b, c, BLOCK=256)
