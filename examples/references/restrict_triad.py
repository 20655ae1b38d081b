"""NumPy float64 reference for kernels/restrict_triad.cu."""
import numpy as np


def triad(b, c, s, n, **_):
    """a = b + s * c."""
    return {"a": np.asarray(b, dtype=np.float64) + s * np.asarray(c, dtype=np.float64)}
