"""NumPy float64 reference for kernels/gelu.cu (tanh approximation of GELU)."""
import math

import numpy as np


def gelu_tanh(x, n, **_):
    """y = 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))."""
    x = np.asarray(x, dtype=np.float64)
    inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)
    return {"y": 0.5 * x * (1.0 + np.tanh(inner))}
