"""NumPy float64 reference for kernels/gather.cu."""
import numpy as np


def gather(x, idx, n, m, **_):
    """y[i] = x[idx[i]] (an out-of-range index reads 0, as the kernel's guard does)."""
    x = np.asarray(x, dtype=np.float64).reshape(n)
    idx = np.asarray(idx, dtype=np.int64).reshape(m)
    ok = (idx >= 0) & (idx < n)
    return {"y": np.where(ok, x[np.where(ok, idx, 0)], 0.0)}
