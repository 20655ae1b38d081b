"""Shared helper for the per-block references (kept local to examples/references)."""
import numpy as np


def segments(x, seg, fill=0.0):
    """Zero-pad a 1-D array to a multiple of `seg` and view it as [num_segments, seg]."""
    x = np.asarray(x)
    n = x.shape[0]
    nseg = -(-n // seg)
    padded = np.full(nseg * seg, fill, dtype=x.dtype)
    padded[:n] = x
    return padded.reshape(nseg, seg)
