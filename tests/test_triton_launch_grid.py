"""CUDA launches whose grid is a host value the kernel does not receive (`k<<<num_blocks, 128>>>(x, y, n)`): the
Triton port's launcher takes CUDA's gridDim as the keyword `grid=`, and xlate's Triton backend passes it the gate's
LaunchConfig grid. The port must use that grid exactly as CUDA does (gridDim, blockIdx over it; a grid larger than
needed is held by the kernel's own guards, a smaller one leaves elements unwritten).

Small host+kernel programs written here; ports run under the Triton interpreter (xlate's Triton backend, a worker
with TRITON_INTERPRET=1) on sizes that are not multiples of the block, with poisoned outputs and guard bands,
against independent NumPy float64 references; then the gate itself (`verify` with a reference) on CPU."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from xlate.backends.base import BufferArg, CompileOptions, LaunchConfig, ScalarArg
from xlate.backends.registry import get_backend

from xlate.parse import parse_string
from xlate.translate.base import TranslateOptions
from xlate.translate.triton.translator import CudaToTriton

ROOT = Path(__file__).resolve().parents[1]
GUARD = 6
SENTINEL = 777.0

STRIDED = """
#include <cuda_runtime.h>

// a grid-stride loop over n elements; how many blocks run it is the host's choice (and shows in the result)
__global__ void axpb_strided(const float* x, float* y, float a, int n)
{
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    y[i] = a * x[i] + (float)gridDim.x;
}

// no loop: only the first gridDim.x * blockDim.x elements are written, each tagged with gridDim.x
__global__ void tag_covered(const float* x, float* y, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] + (float)gridDim.x;
}

int main()
{
  const int n = 1000;
  const int num_blocks = 3;
  float *x, *y;
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&y, n * sizeof(float));
  axpb_strided<<<num_blocks, 128>>>(x, y, 2.0f, n);
  tag_covered<<<num_blocks, 128>>>(x, y, n);
  cudaDeviceSynchronize();
  return 0;
}
"""

ROWS = """
#include <cuda_runtime.h>

__global__ void scale_rows(const float* in, float* out, const float* w, int rows, int cols)
{
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  for (int r = blockIdx.y; r < rows; r += gridDim.y)
    if (c < cols) out[r * cols + c] = in[r * cols + c] * w[r] - (float)blockIdx.y;
}

int main()
{
  int rows = 37, cols = 300;
  int col_blocks = 3, row_blocks = 5;
  float *in, *out, *w;
  cudaMalloc(&in, rows * cols * sizeof(float));
  cudaMalloc(&out, rows * cols * sizeof(float));
  cudaMalloc(&w, rows * sizeof(float));
  dim3 grid(col_blocks, row_blocks);
  scale_rows<<<grid, 128>>>(in, out, w, rows, cols);
  return 0;
}
"""

COMPUTED = """
#include <cuda_runtime.h>

__global__ void add_one(const float* x, float* y, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] + 1.0f;
}

int main()
{
  int n = 1000;
  float *x, *y;
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&y, n * sizeof(float));
  add_one<<<(n + 127) / 128, 128>>>(x, y, n);
  return 0;
}
"""


def port(src: str, *kernels: str, path: str = "prog.cu"):
    unit = parse_string(src, path, "cuda")
    t = CudaToTriton().translate(unit, src, TranslateOptions())
    assert t.kernels == list(kernels), [d.format() for d in t.diagnostics]
    return t


def buf(name: str, data: np.ndarray) -> BufferArg:
    pad = np.full(GUARD, SENTINEL, dtype=data.dtype)
    return BufferArg(name, np.concatenate([pad, data, pad]), GUARD, len(data))


def run(text: str, kernel: str, args: list, grid: tuple[int, int, int], tmp_path: Path) -> dict[str, np.ndarray]:
    """The launcher run by the Triton backend as the gate runs it (LaunchConfig with CUDA's grid and block)."""
    b = get_backend("triton")
    f = tmp_path / f"{kernel}_triton.py"
    f.write_text(text)
    art = b.compile(text, kernel, CompileOptions(), path=str(f))
    res = b.run(art, args, LaunchConfig(grid, (128, 1, 1)))
    assert res.status == "ok", res.message + res.stderr
    for name, data in res.buffers.items():
        assert (data[:GUARD] == SENTINEL).all() and (data[-GUARD:] == SENTINEL).all(), f"{name}: write outside"
    return {k: v[GUARD:-GUARD] for k, v in res.buffers.items()}


def close(got: np.ndarray, want: np.ndarray) -> None:
    """float32 results against a float64 reference; NaN (poison left unwritten) must match NaN."""
    assert np.array_equal(np.isnan(got), np.isnan(want)), np.flatnonzero(np.isnan(got) != np.isnan(want))[:10]
    ok = ~np.isnan(want)
    np.testing.assert_allclose(got[ok].astype(np.float64), want[ok], rtol=2e-6, atol=1e-6)


def test_launcher_takes_the_grid_as_a_documented_keyword():
    t = port(STRIDED, "axpb_strided", "tag_covered")
    assert "def axpb_strided(x, y, a, n, *, grid):" in t.text
    assert "def tag_covered(x, y, n, *, grid):" in t.text
    header = t.text.split('"""')[1]  # the module docstring tells a human how to call it
    assert "axpb_strided: the grid, `num_blocks` in the source, reads 'num_blocks'" in header
    assert "pass CUDA's gridDim as grid=" in header
    assert "grid: num_blocks" in t.text  # the port's own spec keeps CUDA's grid for `xlate fuzz port.py`


@pytest.mark.parametrize("g", [1, 3, 8, 50])  # 8 * 128 and 50 * 128 threads exceed n: the kernel's guards hold
def test_grid_stride_kernel_runs_over_the_given_grid(g, tmp_path):
    t = port(STRIDED, "axpb_strided", "tag_covered")
    rng = np.random.default_rng(g)
    n = 1000
    x = rng.standard_normal(n).astype(np.float32)
    out = run(t.text, "axpb_strided", [buf("x", x), buf("y", np.full(n, np.nan, np.float32)), ScalarArg("a", -1.5, "float32"),
                                       ScalarArg("n", n, "int32")], (g, 1, 1), tmp_path)
    close(out["y"], -1.5 * x.astype(np.float64) + g)
    np.testing.assert_array_equal(out["x"], x)


@pytest.mark.parametrize("g", [1, 3, 8, 50])
def test_grid_decides_coverage_and_gridDim_as_in_cuda(g, tmp_path):
    t = port(STRIDED, "axpb_strided", "tag_covered")
    rng = np.random.default_rng(10 + g)
    n = 1001
    x = rng.standard_normal(n).astype(np.float32)
    out = run(t.text, "tag_covered", [buf("x", x), buf("y", np.full(n, np.nan, np.float32)), ScalarArg("n", n, "int32")],
              (g, 1, 1), tmp_path)
    want = np.full(n, np.nan)
    covered = min(n, g * 128)
    want[:covered] = x[:covered].astype(np.float64) + g
    close(out["y"], want)


@pytest.mark.parametrize("gx,gy", [(3, 5), (1, 1), (4, 40), (2, 7)])
def test_two_dimensional_grid_from_a_dim3_of_host_values(gx, gy, tmp_path):
    t = port(ROWS, "scale_rows")
    assert "def scale_rows(in_, out, w, rows, cols, *, grid):" in t.text
    rng = np.random.default_rng(gx * 100 + gy)
    rows, cols = 37, 300
    a = rng.standard_normal(rows * cols).astype(np.float32)
    w = rng.standard_normal(rows).astype(np.float32)
    out = run(t.text, "scale_rows", [buf("in", a), buf("out", np.full(rows * cols, np.nan, np.float32)), buf("w", w),
                                     ScalarArg("rows", rows, "int32"), ScalarArg("cols", cols, "int32")],
              (gx, gy, 1), tmp_path)
    want = np.full((rows, cols), np.nan)
    c = min(cols, gx * 128)
    r = np.arange(rows)
    want[:, :c] = a.reshape(rows, cols)[:, :c].astype(np.float64) * w[:, None].astype(np.float64) - (r % gy)[:, None]
    close(out["out"], want.ravel())


def test_computable_grid_is_unchanged():
    t = port(COMPUTED, "add_one")
    assert "def add_one(x, y, n):" in t.text
    assert "grid = (triton.cdiv(n, 128),)" in t.text
    assert "grid=" not in t.text.split('"""')[1]


def _interpreter_env() -> dict[str, str]:
    return {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT)}


def test_a_human_calls_the_launcher_with_grid(tmp_path):
    """Outside the gate: torch tensors and `grid=` as the header says; a missing grid or one with more
    dimensions than the kernel reads is a clear Python error, not a wrong answer."""
    t = port(ROWS, "scale_rows")
    (tmp_path / "rows_triton.py").write_text(t.text)
    script = """
import numpy as np, torch
import rows_triton as m
rows, cols = 5, 200
a = torch.arange(rows * cols, dtype=torch.float32)
w = torch.full((rows,), 2.0)
out = torch.full((rows * cols,), float("nan"))
m.scale_rows(a, out, w, rows, cols, grid=(2, 3))
want = a.double().reshape(rows, cols) * 2.0 - (torch.arange(rows) % 3).double()[:, None]
print("ok" if torch.equal(out.double().reshape(rows, cols), want) else "wrong")
for bad in ({}, {"grid": (2, 3, 2)}):
    try:
        m.scale_rows(a, out, w, rows, cols, **bad)
        print("no error")
    except (TypeError, ValueError) as exc:
        print(type(exc).__name__, exc)
"""
    res = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=_interpreter_env(), capture_output=True,
                         text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    lines = res.stdout.strip().splitlines()
    assert lines[0] == "ok", res.stdout
    assert lines[1].startswith("TypeError") and "grid" in lines[1], lines[1]
    assert lines[2].startswith("ValueError") and "reads 2" in lines[2], lines[2]


def test_gate_verifies_the_port_with_the_grid_it_launches(tmp_path):
    """The gate on CPU: the port (the pair form, source spec) and the port on its own (its `# xlate:` spec)
    against a NumPy reference. The spec's grid ranges over the host's values (1..3 blocks) and the kernel's
    result shows gridDim: a reference that ignores the grid must be rejected, so the drawn grid reaches the kernel."""
    from xlate.verify.api import verify

    t = port(STRIDED, "axpb_strided", "tag_covered")
    src = tmp_path / "prog.cu"
    src.write_text(STRIDED)
    py = tmp_path / "prog_triton.py"
    py.write_text(t.text)
    ref = tmp_path / "ref.py"
    ref.write_text("import numpy as np\n\n"
                   "def axpb_strided(x, a, n, num_blocks):\n"
                   "    return np.float64(a) * x.astype(np.float64) + num_blocks\n\n"
                   "def one_block(x, a, n):\n"
                   "    return np.float64(a) * x.astype(np.float64) + 1.0\n")
    pair = verify(str(src), candidate_text=t.text, candidate_language="triton", kernel="axpb_strided",
                  reference=f"{ref}:axpb_strided", examples=8)
    assert pair.status == "verified", pair.summary()
    alone = verify(str(py), kernel="axpb_strided", reference=f"{ref}:axpb_strided", examples=8)
    assert alone.status == "verified", alone.summary()
    wrong = verify(str(py), kernel="axpb_strided", reference=f"{ref}:one_block", examples=8)
    assert wrong.status == "rejected", wrong.summary()
