"""Wrong: copies x[i] (a plain copy) instead of x[idx[i]]."""
import triton
import triton.language as tl


@triton.jit
def _gather_kernel(x_ptr, idx_ptr, y_ptr, n, m, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < m
    v = tl.load(x_ptr + offs, mask=mask & (offs < n), other=0.0)
    tl.store(y_ptr + offs, v, mask=mask)


# xlate: x: in[n], idx: in[m](0..n-1) as int32, y: out[m], n: size(1..1<<16), m: size(1..1<<18),
# xlate: grid: cdiv(m, 256), block: 256, op: movement
def gather(x, idx, y, n, m):
    _gather_kernel[(triton.cdiv(m, 256),)](x, idx, y, n, m, BLOCK=256)
