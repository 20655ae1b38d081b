"""NumPy float64 reference for kernels/dynamic_shared.cu."""
import numpy as np

BLOCK = 256


def segment_reverse(x, n, **_):
    """Reverse each 256-element block segment in place; the last one over its valid length."""
    x = np.asarray(x, dtype=np.float64).reshape(n)
    i = np.arange(n)
    base = (i // BLOCK) * BLOCK
    length = np.minimum(BLOCK, n - base)
    return {"y": x[base + length - 1 - (i - base)]}
