"""Triton port of kernels/gather.cu: y[i] = x[idx[i]] (out-of-range indices read 0)."""
import triton
import triton.language as tl


@triton.jit
def _gather_kernel(x_ptr, idx_ptr, y_ptr, n, m, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < m
    j = tl.load(idx_ptr + offs, mask=mask, other=0)
    ok = mask & (j >= 0) & (j < n)
    v = tl.load(x_ptr + j, mask=ok, other=0.0)
    tl.store(y_ptr + offs, v, mask=mask)


# xlate: x: in[n], idx: in[m](0..n-1), y: out[m], n: size(1..1<<16), m: size(1..1<<18),
# xlate: grid: cdiv(m, 256), block: 256, op: movement
def gather(x, idx, y, n, m):
    grid = (triton.cdiv(m, 256),)
    _gather_kernel[grid](x, idx, y, n, m, BLOCK=256)
