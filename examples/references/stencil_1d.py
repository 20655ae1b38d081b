"""NumPy float64 reference for kernels/stencil_1d.cu."""
import numpy as np


def stencil_1d(x, n, wl, wc, wr, **_):
    """y[i] = wl*x[i-1] + wc*x[i] + wr*x[i+1], with x = 0 outside [0, n)."""
    x = np.asarray(x, dtype=np.float64).reshape(n)
    p = np.zeros(n + 2)
    p[1:-1] = x
    return {"y": wl * p[:-2] + wc * p[1:-1] + wr * p[2:]}
