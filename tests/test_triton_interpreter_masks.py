"""A port whose only guard is program-wide (`if (blockIdx.x >= rows) return;`, or a flag the block loads) masks
its block loads and stores with one boolean per program. The Triton interpreter computes `(pid >= n) == 0` as
int32 data under an int1 type and then refused the load ("mask has unsupported dtype"), so such ports could not
be verified on a CPU at all; the backend makes that data bool. Runs under the interpreter against NumPy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import run as run_raw
from tests.test_triton_realworld_patterns import GUARD, buf, poisoned, rng
from xlate.parse import parse_string
from xlate.translate.base import TranslateOptions
from xlate.translate.triton.translator import CudaToTriton

KERNEL = """
__global__ void scale_rows(const float* x, const int* skip, float* y, int rows) {
  if (blockIdx.x >= rows) return;
  if (skip[blockIdx.x] != 0) return;
  y[blockIdx.x * 64 + threadIdx.x] = 3.0f * x[blockIdx.x * 64 + threadIdx.x];
}
void run(const float* x, const int* s, float* y, int rows) { scale_rows<<<rows + 2, 64>>>(x, s, y, rows); }
"""


def test_a_program_wide_guard_runs_in_the_interpreter(tmp_path: Path):
    unit = parse_string(KERNEL, str(tmp_path / "rows.cu"), "cuda")
    t = CudaToTriton().translate(unit, unit.text, TranslateOptions())
    assert t.kernels == ["scale_rows"], [d.format() for d in t.diagnostics]
    rows = 13
    x = rng(7).standard_normal(rows * 64).astype(np.float32)
    skip = (np.arange(rows) % 4 == 1).astype(np.int32)
    y0 = poisoned(rows * 64, np.float32)
    out = run_raw(t.text, "scale_rows", [buf("x", x), buf("skip", np.concatenate([skip, [0, 0]]).astype(np.int32)),
                                         buf("y", y0.copy()), ScalarArg("rows", rows, "int32")], tmp_path)
    got = out["y"][GUARD:-GUARD].reshape(rows, 64)
    want = np.where(skip[:, None] == 0, 3.0 * x.reshape(rows, 64).astype(np.float64), y0.reshape(rows, 64))
    np.testing.assert_allclose(got, want, rtol=1e-6)
