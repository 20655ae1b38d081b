"""NumPy float64 reference for kernels/reduce_sum_shared.cu."""
import numpy as np

BLOCK = 256


def block_reduce_sum(x, n, **_):
    """partial[b] = sum(x[b*256 : (b+1)*256]) for each of the cdiv(n, 256) blocks."""
    x = np.asarray(x, dtype=np.float64).reshape(n)
    nblk = -(-n // BLOCK)
    padded = np.zeros(nblk * BLOCK)
    padded[:n] = x
    return {"partial": padded.reshape(nblk, BLOCK).sum(axis=1)}
