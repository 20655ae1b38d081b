"""Correct: the straightforward port with tl.atomic_add (addition order differs from the source's)."""
import triton
import triton.language as tl


@triton.jit
def _scatter_add_kernel(x_ptr, idx_ptr, y_ptr, n, m, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    j = tl.load(idx_ptr + offs, mask=mask, other=0)
    ok = mask & (j >= 0) & (j < m)
    tl.atomic_add(y_ptr + j, tl.load(x_ptr + offs, mask=mask, other=0.0), mask=ok)


# xlate: x: in[n], idx: in[n](0..m-1) as int32, y: inout[m], n: size(1..1<<18), m: size(1..4096),
# xlate: grid: cdiv(n, 256), block: 256, op: atomic
def scatter_add(x, idx, y, n, m):
    _scatter_add_kernel[(triton.cdiv(n, 256),)](x, idx, y, n, m, BLOCK=256)
