"""NumPy reference for kernels/ballot.cu."""
import numpy as np


def count_above(x, n, thresh, count, **_):
    """count += number of x[i] > thresh."""
    x = np.asarray(x, dtype=np.float64).reshape(n)
    c = np.asarray(count, dtype=np.int64).reshape(1)
    return {"count": c + np.count_nonzero(x > thresh)}
