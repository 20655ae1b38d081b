"""A template kernel with explicit specialisations: the port of the primary template for the instantiation its
spec fixes lifts the body that instantiation compiles to -- the explicit specialisation where one matches
(`template <> __global__ void k<float>(...)`), by type or by value -- and a spec that leaves the parameter open
over a value with a specialisation of its own is refused. Ports run under the Triton interpreter against NumPy."""

from __future__ import annotations

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import port
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, rng, run

BODIES = """
template <typename T>
__global__ void affine(const T* x, T* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * (T)2;
}

template <>
__global__ void affine<float>(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * 3.0f + 1.0f;
}

template <int STEP>
__global__ void strided(const int* x, int* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] + STEP;
}

template <>
__global__ void strided<4>(const int* x, int* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[(i / 4) * 4] - 4;
}
"""


def with_specs(affine_t: str, step: str) -> str:
    src = BODIES.replace("template <typename T>\n", f"// xlate: x: in[n], y: out[n], n: size(1..2048), T: {affine_t}, "
                                                    "grid: cdiv(n, 64), block: 64\ntemplate <typename T>\n")
    return src.replace("template <int STEP>\n", f"// xlate: x: in[n], y: out[n], n: size(1..2048), STEP: {step}, "
                                                "grid: cdiv(n, 64), block: 64\ntemplate <int STEP>\n")


def test_the_matching_specialisation_is_lifted(tmp_path):
    t = port(with_specs("float32", "4"))
    assert "affine" in t.kernels and "strided" in t.kernels, [d.format() for d in t.diagnostics]
    n = 203
    x = rng(3).standard_normal(n).astype(np.float32)
    out = run(t.text, "affine", [buf("x", x), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32")], tmp_path)
    np.testing.assert_allclose(out["y"], x * np.float32(3) + np.float32(1), rtol=1e-6)
    guards_intact(out, "y")
    xi = rng(4).integers(-1000, 1000, n).astype(np.int32)
    out = run(t.text, "strided", [buf("x", xi), buf("y", poisoned(n, np.int32)), ScalarArg("n", n, "int32")], tmp_path)
    np.testing.assert_array_equal(out["y"], xi[np.arange(n) // 4 * 4] - 4)


def test_no_matching_specialisation_lifts_the_primary(tmp_path):
    t = port(with_specs("float64", "3"))
    assert "affine" in t.kernels and "strided" in t.kernels, [d.format() for d in t.diagnostics]
    n = 77
    x = rng(5).standard_normal(n)
    out = run(t.text, "affine", [buf("x", x), buf("y", poisoned(n, np.float64)), ScalarArg("n", n, "int32")], tmp_path)
    np.testing.assert_allclose(out["y"], x * 2, rtol=1e-12)
    xi = rng(6).integers(-1000, 1000, n).astype(np.int32)
    out = run(t.text, "strided", [buf("x", xi), buf("y", poisoned(n, np.int32)), ScalarArg("n", n, "int32")], tmp_path)
    np.testing.assert_array_equal(out["y"], xi + 3)


def test_open_over_a_specialised_value_is_refused():
    t = port(with_specs("float32|float64", "4"))
    assert "affine" not in t.kernels
    assert any("affine<float> has a body of its own" in d.message for d in t.diagnostics), [
        d.format() for d in t.diagnostics]


def test_the_gate_finds_the_launcher_of_an_explicit_specialisation(tmp_path, monkeypatch):
    # The port of `affine<float>` (its own kernel) is the launcher `affine_float_`; the gate looks it up from the
    # CUDA name and verifies it (against a NumPy oracle here: the CUDA source needs a GPU), or rejects a wrong one.
    from xlate.verify import api

    monkeypatch.setenv("TRITON_INTERPRET", "1")
    src = with_specs("float32", "4").replace(
        "template <>\n__global__ void affine<float>",
        "// xlate: x: in[n], y: out[n], n: size(1..300), grid: cdiv(n, 64), block: 64\n"
        "template <>\n__global__ void affine<float>", 1)
    cu = tmp_path / "k.cu"
    cu.write_text(src)
    t = port(src)
    assert "affine_float_" in t.kernels, [d.format() for d in t.diagnostics]
    py = tmp_path / "k_triton.py"
    py.write_text(t.text)
    assert api.identifier_spelling(["affine", "affine_float_"], "affine<float>") == "affine_float_"
    assert api.identifier_spelling(["affine"], "affine") is None
    # the gate spells the name by the emitter's own rule, private prefix and all
    assert api.identifier_spelling(["_xlk_int__"], "_xlk<int>") == "_xlk_int__"
    ref = tmp_path / "ref.py"
    ref.write_text("def right(x, n):\n    return {'y': x[:n] * 3 + 1}\n\n\ndef wrong(x, n):\n    return {'y': x[:n] * 2}\n")
    good = api.verify(str(cu), str(py), kernel="affine<float>", examples=6, reference=f"{ref}:right")
    assert good.status == "verified", good.reason
    bad = api.verify(str(cu), str(py), kernel="affine<float>", examples=6, reference=f"{ref}:wrong")
    assert bad.status == "rejected", bad.reason
