"""What nvcc accepts, NVRTC must accept on the gate's route too: the implicit environment nvcc gives every .cu
file, project headers, host-only declarations the device slice must drop, and how NVRTC is asked to name a
kernel. Each test compiles through the real NVRTC (no GPU needed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from xlate.backends.base import Artifact, CompileOptions
from xlate.backends.nvrtc import implicit_includes, nvrtc_version
from xlate.backends.registry import get_backend

pytestmark = pytest.mark.skipif(nvrtc_version() is None, reason="NVRTC not installed")


def build(path: Path, kernel: str, template_args: list[str] | None = None) -> Artifact:
    """Compile `kernel` of the file at `path` as the gate compiles a source side."""
    text = path.read_bytes().decode("utf-8", "surrogateescape")
    options = CompileOptions(compile_only=True, template_args=template_args or [], context_path=str(path))
    return get_backend("cuda").compile(text, kernel, options, path=str(path))


def test_source_with_a_latin1_comment_compiles(tmp_path):
    src = tmp_path / "scale.cu"
    src.write_bytes(b"// author: Jos\xe9 (Latin-1, not UTF-8)\n"
                    b"__global__ void scale(float* y, int n) { int i = threadIdx.x; if (i < n) y[i] *= 2.0f; }\n")
    assert build(src, "scale").compile.ok


def test_angle_bracket_include_of_a_project_header(tmp_path):
    """`#include <coeffs.hpp>` finds the project's header under nvcc through the Makefile's -I."""
    (tmp_path / "coeffs.hpp").write_text("#pragma once\n#define GAIN 3.0f\n")
    src = tmp_path / "gain.cu"
    src.write_text("#include <coeffs.hpp>\n#include <vector>\n"
                   "__global__ void gain(float* y, int n) { int i = threadIdx.x; if (i < n) y[i] *= GAIN; }\n"
                   "int main() { std::vector<float> v(3); return 0; }\n")
    assert build(src, "gain").compile.ok


def test_host_string_pointers_in_a_header_are_left_out(tmp_path):
    """`const char *f = "..."` is a mutable host pointer (NVRTC refuses it); `const char *const` is a constant."""
    from xlate.backends.nvrtc import system_include_dirs

    from xlate.parse import parse_file
    from xlate.parse.slice import device_slice

    (tmp_path / "config.h").write_text('const char *data_file = "./input.dat";\nconst char *names[] = {"a", "b"};\n'
                                       'const char *const tag = "t";\nconst int LANES = 4;\n')
    src = tmp_path / "fill.cu"
    src.write_text('#include "config.h"\n'
                   "__global__ void fill(int* y, int n) { int i = threadIdx.x; if (i < n) y[i] = LANES + tag[0]; }\n")
    unit = parse_file(src)
    sliced = device_slice(unit, unit.text, system_dirs=system_include_dirs())
    assert "data_file" not in sliced and "names" not in sliced and "const char *const tag" in sliced
    assert build(src, "fill").compile.ok


def test_file_scope_chrono_typedefs_compile(tmp_path):
    src = tmp_path / "timed.cu"
    src.write_text("#include <chrono>\nusing namespace std::chrono;\ntypedef high_resolution_clock clk;\n"
                   "typedef duration<float> secs;\ntypedef std::chrono::duration<double, std::milli> msecs;\n"
                   "__global__ void inc(int* y, int n) { int i = threadIdx.x; if (i < n) y[i] += 1; }\n"
                   "int main() { auto t0 = clk::now(); (void)t0; return 0; }\n")
    assert build(src, "inc").compile.ok


def test_standard_and_thrust_names_without_their_includes(tmp_path):
    """nvcc's cuda_runtime.h pulls in <type_traits> and <utility>; Thrust's tuple and functors are device code.
    A file that names them without including them still compiles, and one that does not pays nothing."""
    src = tmp_path / "pairs.cu"
    src.write_text(
        "#include <thrust/sort.h>\n"
        "template <typename T> __device__ T twice(T v) {\n"
        "  if constexpr (std::is_same<T, int>::value) return v << 1; else return v + v; }\n"
        "struct Pick { __host__ __device__ float operator()(const thrust::tuple<float, int>& t) const {\n"
        "  return thrust::get<1>(t) ? thrust::get<0>(t) : 0.0f; } };\n"
        "template <typename T> __global__ void mix(T* y, std::pair<int, int> lim) {\n"
        "  int i = threadIdx.x; if (i < lim.second) y[i] = twice(y[i]) + Pick()(thrust::make_tuple(1.0f, lim.first)); }\n")
    assert build(src, "mix", ["float"]).compile.ok
    assert implicit_includes("__global__ void k(float* y) { y[0] = std::max(1.0f, y[0]); }") == []


def test_typedef_of_a_host_class_member_is_left_out(tmp_path):
    src = tmp_path / "mesh.cu"
    src.write_text("typedef double real;\nclass Mesh {\n public:\n  Mesh(int n);\n  real& x(int i);\n};\n"
                   "typedef real &(Mesh::* Field)(int);\nusing FieldList = Field*;\n"
                   "__global__ void damp(real* v, int n) { int i = threadIdx.x; if (i < n) v[i] *= 0.5; }\n")
    assert build(src, "damp").compile.ok


def test_kernel_inside_a_namespace_of_the_same_name(tmp_path):
    src = tmp_path / "shift.cu"
    src.write_text("namespace shift::gpu {\n"
                   "__global__ void shift(const float* x, float* y, int n) { int i = threadIdx.x; if (i < n) y[i] = x[i] + 1; }\n"
                   "}\nnamespace { __global__ void local_k(float* y) { y[0] = 0; } }\n")
    art = build(src, "shift")
    assert art.compile.ok and art.entry.startswith("_ZN5shift3gpu5shiftE")
    assert build(src, "local_k").compile.ok


def test_overloaded_kernels_pick_the_first_signature(tmp_path):
    src = tmp_path / "accum.cu"
    src.write_text("#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"
                   "__global__ void accum(__half* r, int n) { if (threadIdx.x < n) atomicAdd(r, __float2half(1.f)); }\n"
                   "__global__ void accum(__nv_bfloat16* r, int n) { if (threadIdx.x < n) atomicAdd(r, __float2bfloat16(1.f)); }\n"
                   "template <typename T> __global__ void step(T* y, int n) { y[0] = n; }\n"
                   "template <typename T> __global__ void step(T* y, const T* x, int n) { y[0] = x[n]; }\n")
    art = build(src, "accum")
    assert art.compile.ok and "6__half" in art.entry and "bfloat" not in art.entry
    art = build(src, "step", ["double"])
    assert art.compile.ok and art.entry == "_Z4stepIdEvPT_i"


def test_designated_initializers_as_nvcc_takes_them(tmp_path):
    """nvcc accepts `{.r = 0, ...}` in C++17 mode (GNU extension); NVRTC needs C++20 for it."""
    src = tmp_path / "border.cu"
    src.write_text("struct rgb { unsigned char r, g, b; };\n__constant__ rgb EDGE = {.r = 0, .g = 10, .b = 255};\n"
                   "__global__ void paint(rgb* p, int n) { int i = threadIdx.x; if (i < n) p[i] = EDGE; }\n")
    assert build(src, "paint").compile.ok


def test_cuda_host_library_headers_are_dropped_where_the_toolkit_has_them(tmp_path):
    """cuBLASLt, cuSPARSE, cuFFT... declare host functions only: a machine whose CUDA ships them (the H200's
    /usr/local/cuda) must not let NVRTC open them, or every unannotated declaration is an error."""
    from xlate.parse import parse_file
    from xlate.parse.slice import device_slice

    toolkit = tmp_path / "toolkit"
    toolkit.mkdir()
    for name in ("cublasLt.h", "cusparse.h", "cufftXt.h", "cusolverDn.h", "nvtx3/nvToolsExt.h"):
        (toolkit / name).parent.mkdir(parents=True, exist_ok=True)
        (toolkit / name).write_text("int cublasLtHostOnly(int);\n")  # a host declaration NVRTC refuses
    src = tmp_path / "bias.cu"
    src.write_text("#include <cublasLt.h>\n#include <cusparse.h>\n#include <cufftXt.h>\n#include <cusolverDn.h>\n"
                   "#include <nvtx3/nvToolsExt.h>\n#include <curand_kernel.h>\n"
                   "__global__ void bias(float* y, int n) { int i = threadIdx.x; if (i < n) y[i] += 1.0f; }\n")
    unit = parse_file(src)
    sliced = device_slice(unit, unit.text, system_dirs=[str(toolkit)])
    for name in ("cublasLt.h", "cusparse.h", "cufftXt.h", "cusolverDn.h", "nvToolsExt.h"):
        assert name not in sliced
    assert "bias" in sliced
