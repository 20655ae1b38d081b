"""Lifting CUDA kernel bodies for the AscendC templates keeps C's semantics (integer literals, promotions, reads
after writes) and refuses what it cannot map, on small synthetic kernels; ports are run under the NumPy
EMULATION of the generated AscendC (not an NPU) against NumPy written here."""

from __future__ import annotations

import numpy as np
import pytest

from tests.emulator.ascendc import emulate
from xlate.parse import parse_string
from xlate.translate.ascendc.translator import CudaToAscendC
from xlate.translate.base import TranslateOptions

HEAD = "// xlate: {spec}, grid: cdiv({size}, 256), block: 256, op: elementwise\n"


def translate(body: str, params: str = "const float* x, float* y, int n",
              spec: str = "x: in[n], y: out[n], n: size(1..4096)", size: str = "n"):
    src = HEAD.format(spec=spec, size=size) + f"__global__ void k({params}) {{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n{body}\n}}\n"
    unit = parse_string(src, "k.cu")
    return CudaToAscendC().translate(unit, src, TranslateOptions())


def run(t, **args):
    arrays = {k: v for k, v in args.items() if isinstance(v, np.ndarray)}
    emulate(t.text, "k", args)
    return arrays


def test_integer_literal_division_truncates_like_c():
    t = translate("    if (i < n) { y[i] = x[i] * (1 / 2) + x[i] * (7 / 2); }")
    x = np.array([1.5, -2.0, 3.25], np.float32)
    out = run(t, x=x, y=np.zeros(3, np.float32), n=3)["y"]
    np.testing.assert_array_equal(out, x * np.float32(0) + x * np.float32(3))


def test_integer_size_arithmetic_stays_integer():
    t = translate("    if (i < n) { y[i] = x[i] + n / 4; }")
    assert "static_cast<float>((this->n_ / 4))" in t.text
    x = np.arange(7, dtype=np.float32)
    out = run(t, x=x, y=np.zeros(7, np.float32), n=7)["y"]
    np.testing.assert_array_equal(out, x + np.float32(1))  # 7 / 4 == 1 in C


def test_a_read_after_a_write_sees_the_written_value():
    t = translate("    if (i < n) { y[i] = x[i] * 2.0f; z[i] = y[i] + 1.0f; }", "const float* x, float* y, float* z, int n",
                  "x: in[n], y: out[n], z: out[n], n: size(1..4096)")
    x = np.linspace(-3, 3, 11, dtype=np.float32)
    out = run(t, x=x, y=np.zeros(11, np.float32), z=np.zeros(11, np.float32), n=11)
    np.testing.assert_array_equal(out["y"], x * np.float32(2))
    np.testing.assert_array_equal(out["z"], x * np.float32(2) + np.float32(1))


def test_double_literals_are_reported():
    t = translate("    if (i < n) { y[i] = x[i] * 0.1; }")
    assert t.kernels == ["k"]
    assert any(d.code == "XL3103" and "double" in d.message for d in t.diagnostics)


def test_locals_and_compound_assignments():
    t = translate("    if (i < n) { float v = x[i]; v *= 3.0f; v -= 1.0f; y[i] = v * v; }")
    x = np.linspace(-1, 1, 9, dtype=np.float32)
    v = x * np.float32(3) - np.float32(1)
    np.testing.assert_array_equal(run(t, x=x, y=np.zeros(9, np.float32), n=9)["y"], v * v)


@pytest.mark.parametrize("body, code", [
    ("    if (i < n) { if (x[i] > 0.0f) y[i] = 1.0f; }", "XL3101"),  # data-dependent control flow
    ("    if (i < n) { y[i] = x[(i + 1) % n]; }", "XL3101"),  # a neighbour
    ("    if (i < n) { y[i] = x[i] > 0.5f ? 2.0f : x[i]; }", "XL3102"),  # a select without a pattern
    ("    if (i < n) { y[i] = sinf(x[i]); }", "XL3102"),  # no sin instruction in ops.yaml
    ("    if (i < n) { atomicAdd(y, x[i]); }", "XL3101"),
    ("    y[i] = x[i];", "XL3101"),  # no bounds check: the CUDA kernel writes past n
])
def test_unmappable_bodies_are_refused(body, code):
    t = translate(body)
    assert t.kernels == [] and t.needs_llm == ["k"]
    assert [d.code for d in t.diagnostics if d.needs_llm] == [code]


def test_a_launch_that_does_not_cover_the_data_is_refused():
    src = ("// xlate: x: in[n], y: out[n], n: size(1..4096), grid: 4, block: 256, op: elementwise\n"
           "__global__ void k(const float* x, float* y, int n) {\n"
           "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) { y[i] = x[i]; }\n}\n")
    t = CudaToAscendC().translate(parse_string(src, "k.cu"), src, TranslateOptions())
    assert t.needs_llm == ["k"] and "does not cover" in t.diagnostics[0].message


def test_parameter_names_that_collide_with_the_templates_are_refused():
    t = translate("    if (i < count) { y[i] = x[i]; }", "const float* x, float* y, int count",
                  "x: in[count], y: out[count], count: size(1..4096)", size="count")
    assert t.needs_llm == ["k"] and "collide" in t.diagnostics[0].message


def test_macros_expand_as_c_expands_them():
    """The kernel goes through the preprocessor the Triton lifter uses: arguments are substituted as written (no
    parentheses C does not add), and a diagnostic inside an expansion points at the macro's use."""
    src = ("#define SCALE 2.0f\n#define AXPY(a, x, y) a * x + y\n"
           "// xlate: x: in[n], y: out[n], n: size(1..4096), grid: cdiv(n, 256), block: 256, op: elementwise\n"
           "__global__ void k(const float* x, float* y, int n) {\n"
           "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
           "    if (i < n) { y[i] = AXPY(SCALE, x[i], 1.0f) * 0.5f; }\n}\n")
    t = CudaToAscendC().translate(parse_string(src, "k.cu"), src, TranslateOptions())
    assert t.kernels == ["k"], [d.format() for d in t.diagnostics]
    x = np.linspace(-2, 2, 13, dtype=np.float32)
    out = run(t, x=x, y=np.zeros(13, np.float32), n=13)["y"]
    np.testing.assert_array_equal(out, np.float32(2) * x + np.float32(0.5))  # 2*x + 1*0.5, as C reads it
    bad = src.replace("AXPY(SCALE, x[i], 1.0f) * 0.5f", "NEXT(x)").replace("#define SCALE", "#define NEXT(v) v[i + 1]\n//")
    t = CudaToAscendC().translate(parse_string(bad, "k.cu"), bad, TranslateOptions())
    assert t.needs_llm == ["k"] and "access 'x[i + 1]'" in t.diagnostics[0].message  # the expansion, as C reads it
    assert (t.diagnostics[0].line, t.diagnostics[0].col) == (7, 25)  # the use of NEXT, not its definition
