"""NumPy float64 reference for kernels/matrix_ld.cu."""
import numpy as np


def matrix_axpy_ld(rows, cols, alpha, X, ldx, Y, ldy, **_):
    """Y[r, c] = alpha * X[r, c] + Y[r, c] for c < cols; Y's padding columns are unchanged."""
    X = np.asarray(X, dtype=np.float64).reshape(rows, ldx)
    out = np.array(Y, dtype=np.float64).reshape(rows, ldy)
    out[:, :cols] = alpha * X[:, :cols] + out[:, :cols]
    return {"Y": out}
