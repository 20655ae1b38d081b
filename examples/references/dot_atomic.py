"""NumPy float64 reference for kernels/dot_atomic.cu."""
import numpy as np


def dot_atomic(a, b, result, n, **_):
    """result += sum(a * b)."""
    a = np.asarray(a, dtype=np.float64).reshape(n)
    b = np.asarray(b, dtype=np.float64).reshape(n)
    r = np.asarray(result, dtype=np.float64).reshape(1)
    return {"result": r + np.dot(a, b)}
