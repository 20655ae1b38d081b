"""NumPy float64 reference for kernels/clamp.cu."""
import numpy as np


def clamp_kernel(x, lo, hi, n, **_):
    """y = fminf(fmaxf(x, lo), hi): like the CUDA functions, np.fmax/np.fmin return the non-NaN operand."""
    x = np.asarray(x, dtype=np.float64)
    return {"y": np.fmin(np.fmax(x, lo), hi)}
