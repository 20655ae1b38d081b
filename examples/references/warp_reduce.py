"""NumPy float64 reference for kernels/warp_reduce.cu."""
import numpy as np

BLOCK = 256


def warp_reduce_sum(x, n, **_):
    """partial[b] = sum of block b's 256 inputs (warp shuffles, then a sum over the warps)."""
    x = np.asarray(x, dtype=np.float64).reshape(n)
    nblk = -(-n // BLOCK)
    padded = np.zeros(nblk * BLOCK)
    padded[:n] = x
    return {"partial": padded.reshape(nblk, BLOCK).sum(axis=1)}
