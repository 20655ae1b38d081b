"""NumPy reference for kernels/histogram.cu."""
import numpy as np

NUM_BINS = 256


def histogram_shared(data, bins, n, **_):
    """bins += counts of each byte value in data (int32 bins, wrapping like the device)."""
    data = np.asarray(data, dtype=np.int64).reshape(n) & 0xFF  # unsigned char values
    counts = np.bincount(data, minlength=NUM_BINS)[:NUM_BINS]
    total = np.asarray(bins, dtype=np.int64).reshape(NUM_BINS) + counts
    total = (total + 2**31) % 2**32 - 2**31
    return {"bins": total}
