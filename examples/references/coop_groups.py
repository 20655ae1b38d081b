"""NumPy float64 reference for kernels/coop_groups.cu."""
import numpy as np

BLOCK = 256


def cg_block_sum(x, n, **_):
    """partial[b] = sum of block b's 256 inputs."""
    x = np.asarray(x, dtype=np.float64).reshape(n)
    nblk = -(-n // BLOCK)
    padded = np.zeros(nblk * BLOCK)
    padded[:n] = x
    return {"partial": padded.reshape(nblk, BLOCK).sum(axis=1)}
