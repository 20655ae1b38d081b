"""Correct: 1024-element programs instead of 256 (block size is free in Triton)."""
import triton
import triton.language as tl


@triton.jit
def _vector_add_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(c_ptr + offs, tl.load(a_ptr + offs, mask=mask) + tl.load(b_ptr + offs, mask=mask), mask=mask)


# xlate: a: in[n], b: in[n], c: out[n], n: size(1..1<<20),
# xlate: grid: cdiv(n, 256), block: 256, op: elementwise
def vector_add(a, b, c, n):
    _vector_add_kernel[(triton.cdiv(n, 1024),)](a, b, c, n, BLOCK=1024)
