"""Correct: vectorised as a [BLOCK, 4] tile (one row per float4 of the source)."""
import triton
import triton.language as tl


@triton.jit
def _vec4_kernel(a_ptr, b_ptr, c_ptr, n4, BLOCK: tl.constexpr):
    q = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    offs = q[:, None] * 4 + tl.arange(0, 4)[None, :]
    mask = q[:, None] < n4
    tl.store(c_ptr + offs, tl.load(a_ptr + offs, mask=mask) + tl.load(b_ptr + offs, mask=mask), mask=mask)


# xlate: a: in[n], b: in[n], c: out[n], n: size(4..1<<20), where: n % 4 == 0,
# xlate: grid: cdiv(n / 4, 256), block: 256, op: elementwise
def vector_add_vec4(a, b, c, n):
    _vec4_kernel[(triton.cdiv(n // 4, 256),)](a, b, c, n // 4, BLOCK=256)
