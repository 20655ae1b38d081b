"""A refusal inside a device function of another file (a header the kernel's file includes) is reported at the
call in the kernel's file, naming the header's file:line:col: its own line and column, given with the kernel's
path, pointed at an unrelated line (gsplat's Utils.cuh:536 was reported as ProjectionEWASimple.cu:536)."""

from __future__ import annotations

from xlate.parse import parse_file
from xlate.translate.base import TranslateOptions
from xlate.translate.triton.translator import CudaToTriton

HEADER = """#pragma once
__device__ float helper(float x) {
    float y = x * 2.0f;
    y += mystery_function(y);
    return y;
}
"""

KERNEL = """#include "util.cuh"

// xlate: x: in[n], y: out[n], n: size(1..4096), grid: cdiv(n, 64), block: 64
__global__ void scale(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = helper(x[i]);
}
"""


def test_a_refusal_in_a_header_points_at_the_call_and_names_the_header(tmp_path):
    (tmp_path / "util.cuh").write_text(HEADER)
    src = tmp_path / "k.cu"
    src.write_text(KERNEL)
    unit = parse_file(src)
    t = CudaToTriton().translate(unit, unit.text, TranslateOptions())
    assert t.kernels == []
    d = next(d for d in t.blocking if d.kernel == "scale")
    assert "mystery_function" in d.message
    assert "(at util.cuh:4:10, in 'helper', called here)" in d.message, d.message
    assert (d.line, d.col) == (6, 23), d.format()  # helper(...) in k.cu
