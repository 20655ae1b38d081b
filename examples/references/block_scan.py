"""NumPy float64 references for kernels/block_scan.cu (per-block segmented scans)."""
import numpy as np


def _segmented(x, n, seg):
    x = np.asarray(x, dtype=np.float64).reshape(n)
    nseg = -(-n // seg)
    padded = np.zeros(nseg * seg)
    padded[:n] = x
    return padded.reshape(nseg, seg)


def block_scan_inclusive(x, n, **_):
    """Inclusive prefix sum restarted at every 256-element block boundary."""
    s = _segmented(x, n, 256)
    return {"y": np.cumsum(s, axis=1).reshape(-1)[:n]}


def block_scan_exclusive(x, n, **_):
    """Exclusive prefix sum restarted at every 512-element block boundary (first of each is 0)."""
    s = _segmented(x, n, 512)
    inc = np.cumsum(s, axis=1)
    exc = inc - s
    return {"y": exc.reshape(-1)[:n]}
