"""NumPy reference for kernels/threshold_u8.cu."""
import numpy as np


def threshold_u8(src, n, thresh, **_):
    """dst = 255 where src > thresh else 0."""
    src = np.asarray(src, dtype=np.int64)
    return {"dst": np.where(src > thresh, 255, 0).astype(np.int64)}
