"""A program's own device function named like a math function (`int log2(int)`, an exact integer logarithm, in
another header) is what C++ calls for arguments of exactly its parameter types; the math library's float/double
overload stays for the others. The difference is real: the math library's double log2(8) is 2.9999999999999996
on a GPU (libdevice), which truncates to 2. Ports run under the Triton interpreter against NumPy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import run as run_raw
from tests.test_triton_realworld_patterns import GUARD, buf, poisoned, rng
from xlate.parse import parse_file
from xlate.translate.base import TranslateOptions
from xlate.translate.triton.translator import CudaToTriton

BITS_H = """
#pragma once
__device__ inline int log2(int u) {  // floor(log2(u)) for u >= 1 (0 below), by halving
    int r = 0;
    if (u >= 65536) { u >>= 16; r += 16; }
    if (u >= 256) { u >>= 8; r += 8; }
    if (u >= 16) { u >>= 4; r += 4; }
    if (u >= 4) { u >>= 2; r += 2; }
    if (u >= 2) { r += 1; }
    return r;
}
"""

KERNELS_CU = """
#include "bits.h"
__global__ void levels(const int* sizes, int* lv, float* lf, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        lv[i] = log2(sizes[i]);            // the program's int log2(int)
        lf[i] = log2((float)sizes[i]);     // the math library's float log2
    }
}
"""

MAIN_CU = """
#include "kernels.cu"
int main() {
    int n = 1000; int *s, *l; float* f;
    levels<<<(n + 127) / 128, 128>>>(s, l, f, n);
    return 0;
}
"""


def test_program_function_named_like_a_math_function(tmp_path: Path):
    d = tmp_path / "prog"
    d.mkdir()
    for name, text in (("bits.h", BITS_H), ("kernels.cu", KERNELS_CU), ("main.cu", MAIN_CU)):
        (d / name).write_text(text)
    unit = parse_file(d / "kernels.cu")
    t = CudaToTriton().translate(unit, unit.text, TranslateOptions())
    assert t.kernels == ["levels"], [d.format() for d in t.diagnostics]
    n = 999
    sizes = np.concatenate([2 ** rng(1).integers(0, 30, n // 2), rng(2).integers(1, 2 ** 31 - 1, n - n // 2)])
    sizes[:40] = np.arange(-20, 20)  # the program's log2 is 0 there; the math library's -inf or NaN
    sizes = sizes.astype(np.int32)
    out = run_raw(t.text, "levels", [buf("sizes", sizes), buf("lv", poisoned(n, np.int32)),
                                     buf("lf", poisoned(n, np.float32)), ScalarArg("n", n, "int32")], tmp_path)
    lv, lf = out["lv"][GUARD:-GUARD], out["lf"][GUARD:-GUARD]
    with np.errstate(divide="ignore", invalid="ignore"):
        want_f = np.log2(sizes.astype(np.float32).astype(np.float64))
    want_i = np.where(sizes >= 1, np.floor(np.where(sizes >= 1, want_f, 0)), 0).astype(np.int32)
    assert np.array_equal(lv, want_i)
    np.testing.assert_allclose(lf, want_f, rtol=1e-6)
