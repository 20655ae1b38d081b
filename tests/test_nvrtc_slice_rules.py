"""Sources nvcc compiles must compile on the gate's NVRTC route too (issue #15, item 3): each test writes a small
host+kernel program in the shape that broke, and compiles a kernel of it through the real NVRTC (no GPU needed),
as the gate compiles a source side (device slice, bundled headers, xlate's NVRTC environment)."""

from __future__ import annotations

from pathlib import Path

import pytest
from xlate.backends.base import Artifact, CompileOptions
from xlate.backends.nvrtc import nvrtc_version
from xlate.backends.registry import get_backend

pytestmark = pytest.mark.skipif(nvrtc_version() is None, reason="NVRTC not installed")


def build(path: Path, kernel: str, template_args: list[str] | None = None) -> Artifact:
    text = path.read_bytes().decode("utf-8", "surrogateescape")
    options = CompileOptions(compile_only=True, template_args=template_args or [], context_path=str(path))
    return get_backend("cuda").compile(text, kernel, options, path=str(path))


def test_code_guarded_by_nvcc_macro_is_seen(tmp_path):
    """`#ifdef __NVCC__` around a vector-type operator: nvcc defines __NVCC__, the slice must too."""
    (tmp_path / "ops.h").write_text(
        "#ifdef __NVCC__\n"
        "inline __host__ __device__ void operator+=(float2 &a, const float2 &b) { a.x += b.x; a.y += b.y; }\n"
        "#endif\n"
        "__global__ void accumulate(float2 *acc, const float2 *v, int n) {\n"
        "  int i = threadIdx.x; if (i < n) acc[i] += v[i];\n}\n"
    )
    (tmp_path / "prog.cu").write_text(
        '#include <cstdio>\n#include "ops.h"\nint main() { printf("%d\\n", 1); return 0; }\n'
    )
    assert build(tmp_path / "ops.h", "accumulate").compile.ok


def test_kernel_file_included_through_a_header_gets_the_unit_context(tmp_path):
    """app.cu includes solver.h, which includes steps.cu: steps.cu's kernels use a macro app.cu's headers
    define before that, through the header."""
    (tmp_path / "sizes.h").write_text("#define TILE 8\n")
    (tmp_path / "steps.cu").write_text(
        "__global__ void tile_copy(float *out, const float *in) {\n"
        "  __shared__ float t[TILE];\n  t[threadIdx.x % TILE] = in[threadIdx.x];\n  __syncthreads();\n"
        "  out[threadIdx.x] = t[threadIdx.x % TILE];\n}\n"
    )
    (tmp_path / "solver.h").write_text(
        '#include <vector>\n#include "steps.cu"\nvoid run_steps(std::vector<float> &v) { (void)v; }\n'
    )
    (tmp_path / "app.cu").write_text('#include "sizes.h"\n#include "solver.h"\nint main() { return 0; }\n')
    assert build(tmp_path / "steps.cu", "tile_copy").compile.ok
