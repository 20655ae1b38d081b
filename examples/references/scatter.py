"""NumPy float64 references for kernels/scatter.cu."""
import numpy as np


def scatter_perm(x, idx, y, n, **_):
    """y[idx[i]] = x[i]; slots not named by idx keep their old value (idx is a permutation)."""
    x = np.asarray(x, dtype=np.float64).reshape(n)
    idx = np.asarray(idx, dtype=np.int64).reshape(n)
    out = np.array(y, dtype=np.float64).reshape(n)
    out[idx] = x
    return {"y": out}


def scatter_add(x, idx, y, n, m, **_):
    """y[idx[i]] += x[i] for every in-range index (repeats accumulate)."""
    x = np.asarray(x, dtype=np.float64).reshape(n)
    idx = np.asarray(idx, dtype=np.int64).reshape(n)
    out = np.array(y, dtype=np.float64).reshape(m)
    ok = (idx >= 0) & (idx < m)
    np.add.at(out, idx[ok], x[ok])
    return {"y": out}
