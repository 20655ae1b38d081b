"""A block max in two levels, as real code writes it: a shuffle butterfly per warp, each warp's lane 0 stores its
maximum to shared memory, then the first warp reads them back (`t < blockDim.x / 32.f ? part[lane] : -1e20f`)
and reduces again. The port was wrong: the exchange's data was built for lane 0 alone (the thread that writes
the result), so the gathers at lanes 16, 8, ... read that thread's warp maximum, and the block maximum became the
first warp's. A value past the first 32 columns (a vocabulary of 33 entries) was lost; the Triton port of a
log-softmax gave -inf where CUDA gave -605. Now the butterfly is the block max of the values and the constant
the idle lanes read. Ports run under the Triton interpreter against NumPy."""

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
__device__ float warp_top(float v) {
  for (int off = 16; off >= 1; off /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off, 32));
  return v;
}
__device__ float warp_total(float v) {
  for (int off = 16; off >= 1; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off, 32);
  return v;
}
__global__ void row_top(const float* x, float* top, float* total, int cols) {
  __shared__ float peak[32];
  __shared__ float part[32];
  const float* row = x + blockIdx.x * cols;
  float m = -3.0e38f, s = 0.f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) { m = fmaxf(m, row[c]); s += row[c]; }
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  m = warp_top(m);
  s = warp_total(s);
  if (lane == 0) { peak[warp] = m; part[warp] = s; }
  __syncthreads();
  m = (threadIdx.x < (blockDim.x / 32.f)) ? peak[lane] : -1e20f;
  s = (threadIdx.x < (blockDim.x / 32.f)) ? part[lane] : 0.f;
  m = warp_top(m);
  s = warp_total(s);
  if (threadIdx.x == 0) { top[blockIdx.x] = m; total[blockIdx.x] = s; }
}
void launch(const float* x, float* top, float* total, int rows, int cols) {
  row_top<<<rows, 256>>>(x, top, total, cols);
}
"""


def test_a_two_level_block_max_keeps_every_warp(tmp_path: Path):
    unit = parse_string(KERNEL, str(tmp_path / "row_top.cu"), "cuda")
    t = CudaToTriton().translate(unit, unit.text, TranslateOptions())
    assert t.kernels == ["row_top"], [d.format() for d in t.diagnostics]
    rows, cols = 7, 333  # columns past one warp and not a multiple of the block
    x = rng(3).uniform(-50, 50, (rows, cols)).astype(np.float32)
    x[np.arange(rows), [32, 40, 100, 255, 256, 300, 332]] = 1000.0 + np.arange(rows)  # each row's peak past warp 0
    x[6] = -1e30  # all below the idle lanes' -1e20: CUDA's answer is -1e20
    out = run_raw(t.text, "row_top", [buf("x", x.ravel()), buf("top", poisoned(rows, np.float32)),
                                      buf("total", poisoned(rows, np.float32)), ScalarArg("cols", cols, "int32")],
                  tmp_path)
    top, total = out["top"][GUARD:-GUARD], out["total"][GUARD:-GUARD]
    want = np.maximum(x.max(axis=1).astype(np.float64), np.float32(-1e20))
    assert np.array_equal(top, want.astype(np.float32)), (top, want)
    np.testing.assert_allclose(total[:6], x[:6].astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-3)
