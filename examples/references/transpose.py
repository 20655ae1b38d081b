"""NumPy float64 reference for kernels/transpose.cu."""
import numpy as np


def transpose_tiled(idata, rows, cols, **_):
    """odata[c, r] = idata[r, c]."""
    x = np.asarray(idata, dtype=np.float64).reshape(rows, cols)
    return {"odata": np.ascontiguousarray(x.T)}
