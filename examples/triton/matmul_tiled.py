"""Triton port of kernels/matmul_tiled.cu: one program per 16x16 tile of C, fp32 accumulation.
input_precision="ieee" keeps true fp32 products (the default would use TF32 on NVIDIA GPUs)."""
import triton
import triton.language as tl


@triton.jit
def _matmul_kernel(a_ptr, b_ptr, c_ptr, m, n, k, BM: tl.constexpr, BN: tl.constexpr,
                   BK: tl.constexpr):
    pid_n = tl.program_id(0)
    pid_m = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, k, BK):
        kk = k0 + rk
        a = tl.load(a_ptr + rm[:, None] * k + kk[None, :],
                    mask=(rm[:, None] < m) & (kk[None, :] < k), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * n + rn[None, :],
                    mask=(kk[:, None] < k) & (rn[None, :] < n), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * n + rn[None, :], acc, mask=(rm[:, None] < m) & (rn[None, :] < n))


# xlate: A: in[m, k], B: in[k, n], C: out[m, n], m: size(1..300), n: size(1..300), k: size(1..300),
# xlate: grid: (cdiv(n, 16), cdiv(m, 16)), block: (16, 16), op: matmul(k)
def matmul_tiled(A, B, C, m, n, k):
    grid = (triton.cdiv(n, 16), triton.cdiv(m, 16))
    _matmul_kernel[grid](A, B, C, m, n, k, BM=16, BN=16, BK=16)
