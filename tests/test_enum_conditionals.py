"""Enumerators under `#ifdef`/`#else`: `#ifdef N_VALUE / enum { N = N_VALUE }; / #else / enum { N = 4 }; / #endif`
is read as the preprocessor reads it, the enumerator of the branch not taken left out (it named a macro nothing
defines, and the lifter refused the kernel as using an unknown identifier), the build's `-D` flag choosing the
other branch. The kernel's port runs under the Triton interpreter against NumPy."""

from __future__ import annotations

import textwrap

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, rng, run
from xlate.parse import parse_file
from xlate.specs.infer.program import program_for
from xlate.translate.base import TranslateOptions
from xlate.translate.triton.translator import CudaToTriton

SIZES_H = """
#pragma once
#ifdef NU_COUNT
enum { NU = NU_COUNT };
#else
enum { NU = 3 };
#endif
enum { NU2 = NU * 2 };
"""

KERNEL = """
#include "sizes.h"
// xlate: x: in[n], y: out[n], n: size(1..2048), grid: cdiv(n, 64), block: 64
__global__ void times_nu(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
    for (int u = 0; u < NU; ++u) acc += x[i];
    y[i] = acc + NU2;
}
"""


def _write(tmp_path, files: dict[str, str]) -> str:
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text).lstrip())
    return str(tmp_path / "k.cu")


def test_enumerator_of_the_else_branch(tmp_path):
    path = _write(tmp_path, {"sizes.h": SIZES_H, "k.cu": KERNEL})
    unit = parse_file(path)
    assert program_for(unit).macros["NU"].body == "3"
    t = CudaToTriton().translate(unit, unit.text, TranslateOptions())
    assert t.kernels == ["times_nu"], [d.format() for d in t.blocking]
    n = 201
    x = rng(12).standard_normal(n).astype(np.float32)
    out = run(t.text, "times_nu", [buf("x", x), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32")],
              tmp_path)
    want = (x + x + x) + np.float32(6)  # three additions from 0, then NU2 = 6
    np.testing.assert_array_equal(out["y"], want)
    guards_intact(out, "y")


def test_enumerator_of_the_ifdef_branch_under_a_build_flag(tmp_path):
    path = _write(tmp_path, {"sizes.h": SIZES_H, "k.cu": KERNEL,
                             "Makefile": "CFLAGS = -O3 -DNU_COUNT=5\nall:\n\tnvcc $(CFLAGS) k.cu\n"})
    program = program_for(parse_file(path))
    assert program.macros["NU"].body == "NU_COUNT"
    assert program.macros["NU_COUNT"].body == "5"
