"""NumPy float64 reference for kernels/constant_poly.cu.

Uses the static initialiser of the __constant__ array c_poly_coeffs, {1, -0.5, 0.25, -0.125}
(lowest degree first); a launch after set_poly_coeffs() with other values is not covered.
"""
import numpy as np

C_POLY_COEFFS = (1.0, -0.5, 0.25, -0.125)


def poly_eval(x, n, **_):
    """y = c0 + c1 x + c2 x^2 + c3 x^3 (Horner)."""
    x = np.asarray(x, dtype=np.float64)
    acc = np.full_like(x, C_POLY_COEFFS[-1])
    for c in reversed(C_POLY_COEFFS[:-1]):
        acc = acc * x + c
    return {"y": acc}
