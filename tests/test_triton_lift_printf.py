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


FREXP = """
// xlate: x: in[n], m: out[n], e: out[n], n: size(1..4096), grid: cdiv(n, 128), block: 128
__global__ void split_float(const float* x, float* m, int* e, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int k;
        m[i] = frexpf(x[i], &k);
        e[i] = k;
    }
}
"""


def test_frexpf_from_the_bits(tmp_path):
    # not printf, but also a call with an effect through a pointer argument (the exponent's local)
    t = port(FREXP)
    assert t.kernels == ["split_float"], [d.format() for d in t.diagnostics]
    g = rng(42)
    special = np.array(
        [0.0, -0.0, 1.0, -1.0, 0.5, 3.0, np.inf, -np.inf, 1e-40, -3e-42, 1.4e-45, 3.4e38], np.float32
    )
    x = np.concatenate(
        [special, (g.standard_normal(500) * 10.0 ** g.integers(-30, 30, 500)).astype(np.float32)]
    )
    n = len(x)
    out = run(
        t.text,
        "split_float",
        [
            buf("x", x),
            buf("m", poisoned(n, np.float32)),
            buf("e", poisoned(n, np.int32)),
            ScalarArg("n", n, "int32"),
        ],
        tmp_path,
    )
    wm, we = np.frexp(x)
    np.testing.assert_array_equal(out["m"], wm)
    np.testing.assert_array_equal(out["e"], we)
