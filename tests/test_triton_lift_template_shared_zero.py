"""A shared array of a template element type read where no write may have covered the element: CUDA leaves
such an element uninitialised, the port takes 0, and that 0 must be of the element type. It was a float 0.0,
which made `tl.where` promote the whole value to float: bitpacking's int8 minimum -128 cast to uint32 became 0
on the H200 (7 bits instead of 8); here int32 values past 2**24 lose their low bits the same way. Runs under the
Triton interpreter against NumPy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import run as run_raw
from tests.test_triton_realworld_patterns import GUARD, buf, poisoned
from xlate.parse import parse_string
from xlate.translate.base import TranslateOptions
from xlate.translate.triton.translator import CudaToTriton

KERNEL = """
template <typename T>
__global__ void rotate_left(const T* in, T* out, int n) {
  __shared__ T tile[128];
  int t = threadIdx.x;
  if (t < n) tile[t] = in[blockIdx.x * n + t];
  __syncthreads();
  if (t < n) out[blockIdx.x * n + t] = tile[(t + 1) % 128];
}
void run(const int* in, int* out, int rows, int n) { rotate_left<int><<<rows, 128>>>(in, out, n); }
"""


def test_an_uncovered_element_of_a_template_typed_tile_keeps_the_element_type(tmp_path: Path):
    unit = parse_string(KERNEL, str(tmp_path / "rot.cu"), "cuda")
    t = CudaToTriton().translate(unit, unit.text, TranslateOptions())
    assert t.kernels == ["rotate_left"], [d.format() for d in t.diagnostics]
    assert "0.0)" not in t.text
    rows, n = 3, 77
    x = (2**30 + np.arange(rows * n) * 3 + 1).astype(np.int32)  # not representable as float32
    out = run_raw(t.text, "rotate_left", [buf("in", x), buf("out", poisoned(rows * n, np.int32)),
                                               ScalarArg("n", n, "int32")], tmp_path)
    got = out["out"][GUARD:-GUARD].reshape(rows, n)
    want = x.reshape(rows, n)[:, 1:]  # the last column read an element no thread wrote: uninitialised in CUDA
    assert np.array_equal(got[:, :-1], want)
