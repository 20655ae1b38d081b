"""NumPy float64 reference for kernels/saxpy.cu."""
import numpy as np


def saxpy(n, a, x, y, **_):
    """y = a * x + y."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    return {"y": a * x + y}
