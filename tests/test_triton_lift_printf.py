"""printf in a kernel: console output is no effect a Triton port can have nor one its verification compares, so
the call is dropped (with a note) and the kernel's memory effects are ported; a printf whose arguments assign
something (or call a device function, which might) is refused, since dropping it would drop that effect. Ports
run under the Triton interpreter against NumPy."""

from __future__ import annotations

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import port
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, rng, run

SRC = """
#include <cstdio>
// xlate: x: in[n], y: out[n], n: size(1..4096), grid: cdiv(n, 128), block: 128
__global__ void double_and_report(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = 2.0f * x[i];
        if (x[i] > 3.0f) printf("large value %f at %d\\n", fabsf(x[i]), i);
    }
}

// xlate: x: in[n], y: out[n], n: size(1..4096), grid: cdiv(n, 128), block: 128
__global__ void counts_in_printf(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int k = 0;
    if (i < n) printf("%d\\n", k++);
    if (i < n) y[i] = x[i] + k;
}
"""


def test_printf_is_dropped_unless_its_arguments_have_effects(tmp_path):
    t = port(SRC)
    assert t.kernels == ["double_and_report"], [d.format() for d in t.diagnostics]
    assert any(d.code == "XL2021" and "printf dropped" in d.message for d in t.diagnostics)
    assert [d.kernel for d in t.blocking] == ["counts_in_printf"]
    n = 1000
    x = (rng(41).standard_normal(n) * 2).astype(np.float32)
    out = run(
        t.text,
        "double_and_report",
        [buf("x", x), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32")],
        tmp_path,
    )
    np.testing.assert_array_equal(out["y"], 2 * x)
    guards_intact(out, "y")
