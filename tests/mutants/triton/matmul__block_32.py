"""Correct: 32 x 32 output tiles with a 32-wide K step (fp32 accumulation, IEEE products)."""
import triton
import triton.language as tl


@triton.jit
def _matmul_kernel(a_ptr, b_ptr, c_ptr, m, n, k, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rn = tl.program_id(0) * BN + tl.arange(0, BN)
    rm = tl.program_id(1) * BM + tl.arange(0, BM)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, k, BK):
        kk = k0 + rk
        a = tl.load(a_ptr + rm[:, None] * k + kk[None, :], mask=(rm[:, None] < m) & (kk[None, :] < k), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * n + rn[None, :], mask=(kk[:, None] < k) & (rn[None, :] < n), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * n + rn[None, :], acc, mask=(rm[:, None] < m) & (rn[None, :] < n))


# xlate: A: in[m, k], B: in[k, n], C: out[m, n], m: size(1..300), n: size(1..300), k: size(1..300),
# xlate: grid: (cdiv(n, 16), cdiv(m, 16)), block: (16, 16), op: matmul(k)
def matmul_tiled(A, B, C, m, n, k):
    _matmul_kernel[(triton.cdiv(n, 32), triton.cdiv(m, 32))](A, B, C, m, n, k, BM=32, BN=32, BK=32)
