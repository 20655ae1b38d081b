"""NumPy float64 reference for kernels/clamp.cu."""
import numpy as np


def clamp_kernel(x, lo, hi, n, **_):
    """y = min(max(x, lo), hi) (fmaxf first, then fminf, as in the kernel)."""
    x = np.asarray(x, dtype=np.float64)
    return {"y": np.minimum(np.maximum(x, lo), hi)}
