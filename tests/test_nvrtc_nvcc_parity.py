"""Whatever nvcc compiles, the gate's NVRTC route compiles: one case per cause found on real programs, each in a
small file of its own. Each test compiles through the real NVRTC (no GPU needed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from xlate.backends.base import Artifact, CompileOptions
from xlate.backends.nvrtc import nvrtc_version, system_include_dirs
from xlate.backends.registry import get_backend

from xlate.parse import parse_file
from xlate.parse.buildflags import parse_makefile
from xlate.parse.slice import device_slice

pytestmark = pytest.mark.skipif(nvrtc_version() is None, reason="NVRTC not installed")


def build(path: Path, kernel: str, template_args: list[str] | None = None) -> Artifact:
    """Compile `kernel` of the file at `path` as the gate compiles a source side."""
    text = path.read_bytes().decode("utf-8", "surrogateescape")
    options = CompileOptions(compile_only=True, template_args=template_args or [], context_path=str(path))
    return get_backend("cuda").compile(text, kernel, options, path=str(path))


def sliced(path: Path) -> str:
    unit = parse_file(path)
    return device_slice(unit, unit.text, system_dirs=system_include_dirs())


MAKEFILE = """\
CC = nvcc
DEBUG = no
ARCH = sm_60
KINDS = -Dindex_t=int \\
        -DTILE=16
CFLAGS := $(EXTRA_CFLAGS) -std=c++17 -Xcompiler -Wall -arch=$(ARCH) \\
          -Dreal_t=float $(KINDS) -I../shared_hdr
ifeq ($(DEBUG),yes)
  CFLAGS += -g -DCHECKED=broken syntax
else
  CFLAGS += -O3 -DFAST
endif

main: main.o
\t$(CC) $(CFLAGS) -DNOT_A_FLAG -o $@ $^
"""


def test_makefile_flags_are_read_with_its_defaults(tmp_path):
    (tmp_path / "shared_hdr").mkdir()
    prog = tmp_path / "prog"
    prog.mkdir()
    flags = parse_makefile(MAKEFILE, str(prog))
    assert dict(flags.defines) == {"real_t": "float", "index_t": "int", "TILE": "16", "FAST": "1"}
    assert flags.include_dirs == (str(tmp_path / "shared_hdr"),)


def test_makefile_defines_and_include_dirs_reach_nvrtc(tmp_path):
    """A type and a header that only the Makefile's -D and -I give the source (nvcc builds it through make)."""
    (tmp_path / "shared_hdr").mkdir()
    (tmp_path / "shared_hdr" / "blend.h").write_text("#pragma once\n__device__ real_t blend(real_t a, real_t b)"
                                                    " { return a * 0.25f + b * 0.75f; }\n")
    prog = tmp_path / "prog"
    prog.mkdir()
    (prog / "Makefile").write_text(MAKEFILE)
    src = prog / "mix.cu"
    src.write_text('#include "blend.h"\n'
                   "__global__ void mix(real_t* y, const real_t* x, index_t n) {\n"
                   "  index_t i = blockIdx.x * TILE + threadIdx.x;\n"
                   "#ifdef CHECKED\n  this line only compiles in a debug build\n#endif\n"
                   "  if (i < n) y[i] = blend(x[i], y[i]);\n}\n"
                   "int main() { return 0; }\n")
    text = sliced(src)
    assert "#define real_t float" in text and "blend(real_t a" in text
    assert build(src, "mix").compile.ok


def test_gnu_statement_expression_macros_compile(tmp_path):
    """`#define larger(a,b) ({ __typeof__(a) _a = (a); ...; _a > _b ? _a : _b; })`: GNU C that nvcc takes."""
    src = tmp_path / "clip.cu"
    src.write_text("#define larger(a,b) ({ __typeof__ (a) _p = (a); __typeof__ (b) _q = (b); _p > _q ? _p : _q; })\n"
                   "#define smaller(a,b) ({ __typeof__(a) _p = (a); \\\n"
                   "                        __typeof__(b) _q = (b); \\\n"
                   "                        _p < _q ? _p : _q; })\n"
                   "__device__ static inline float clip(const float v, float lo, float hi) {\n"
                   "  return smaller(larger(v, lo), hi);\n}\n"
                   "__global__ void clip_all(float* y, int n) {\n"
                   "  for (int i = threadIdx.x; i < smaller(n, 1000); i += blockDim.x) y[i] = clip(y[i], -1.f, 1.f);\n"
                   "}\n")
    text = sliced(src)
    assert "({" not in text and text.count("[&]()") == 2
    assert len(text.splitlines()) == len(src.read_text().splitlines())  # lines kept: messages point at the source
    assert build(src, "clip_all").compile.ok


def test_device_error_check_helper_compiles(tmp_path):
    """An unused device-side check helper names cudaGetErrorString, which nvcc declares for device code."""
    src = tmp_path / "guarded.cu"
    src.write_text("#include <cstdio>\n#include <cassert>\n"
                   "__device__ __forceinline__ void check(cudaError_t e, const char* f, int line) {\n"
                   "  if (e != cudaSuccess) { printf(\"%s at %s:%d\\n\", cudaGetErrorString(e), f, line); assert(0); }\n"
                   "}\n"
                   "__global__ void halve(float* y, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x;"
                   " if (i < n) y[i] *= 0.5f; }\n")
    assert build(src, "halve").compile.ok


def test_host_only_project_header_is_left_out_when_no_device_code_uses_it(tmp_path):
    """A header-only host library (templates over std containers NVRTC lacks) that only main() uses goes;
    a device-free header whose typedef the kernel names stays."""
    (tmp_path / "memo.h").write_text(
        "#pragma once\n#include <unordered_map>\n#include <functional>\n#include <cstring>\n"
        "namespace memo {\n"
        "template <typename K, typename V, typename H = std::hash<K>>\n"
        "class Table {\n public:\n  V& at(const K& k) { return items_[k]; }\n"
        "  bool has(const K& k) const { return items_.count(k) != 0; }\n"
        " private:\n  std::unordered_map<K, V, H> items_;\n};\n"
        "template <typename K> struct Counter : public Table<K, long> {};\n"
        "inline std::function<int(int)> twice = [](int v) { return 2 * v; };\n"
        "}  // namespace memo\n")
    (tmp_path / "kinds.h").write_text("#pragma once\ntypedef float value_t;\nenum { WIDTH = 4 };\n")
    src = tmp_path / "accumulate.cu"
    src.write_text('#include "kinds.h"\n#include "memo.h"\n'
                   "__global__ void accumulate(value_t* y, const value_t* x, int n) {\n"
                   "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                   "  if (i < n) y[i] += WIDTH * x[i];\n}\n"
                   "int main() { memo::Counter<int> c; c.at(3) += 1; return c.has(3) ? 0 : 1; }\n")
    text = sliced(src)
    assert "typedef float value_t;" in text and "WIDTH = 4" in text
    assert "class Table" not in text and "unordered_map<K, V, H>" not in text
    assert build(src, "accumulate").compile.ok


def test_host_marked_members_are_left_out(tmp_path):
    """A class device code uses, with members marked `__host__` alone (NVRTC refuses any such function)."""
    src = tmp_path / "pool.cu"
    src.write_text("#include <cuda_runtime.h>\n"
                   "template <typename T>\nstruct Pool {\n"
                   "  T* data; int size;\n"
                   "  __host__ void release() {\n    cudaFree(data);\n    data = nullptr;\n  }\n"
                   "  __host__ void upload(const T* from, int n);\n"
                   "  __host__ __device__ T& operator[](int i) const { return data[i]; }\n"
                   "};\n"
                   "__global__ void bump(Pool<int> p, int n) {\n"
                   "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) p[i] += 1;\n}\n")
    text = sliced(src)
    assert "release" not in text and "upload" not in text and "operator[]" in text
    assert build(src, "bump").compile.ok


def test_constexpr_host_helpers_that_device_code_calls_are_kept(tmp_path):
    """nvcc --expt-relaxed-constexpr lets a kernel call unannotated constexpr functions (and constants made
    of them); NVRTC gets them marked __host__ __device__, the others stay out."""
    src = tmp_path / "tiles.cu"
    src.write_text("constexpr int per_thread() { return 4; }\n"
                   "constexpr int per_block() { return per_thread() * 64; }\n"
                   "template <typename T> constexpr T sentinel() { return T(-1); }\n"
                   "template <typename T> const T EMPTY = sentinel<T>();\n"
                   "constexpr int host_only_default() { return 7; }\n"
                   "__global__ void mark(int* y, int n) {\n"
                   "  for (int k = 0; k < per_thread(); ++k) {\n"
                   "    int i = blockIdx.x * per_block() + k * 64 + threadIdx.x;\n"
                   "    if (i < n) y[i] = EMPTY<int>;\n  }\n}\n"
                   "int main() { return host_only_default(); }\n")
    text = sliced(src)
    assert text.count("__host__ __device__ constexpr") == 3 and "host_only_default() {" not in text
    assert build(src, "mark").compile.ok


def test_kernel_with_a_stale_prototype_in_a_header(tmp_path):
    """A header declares the kernel with other parameters than its definition: an overload for NVRTC's name
    lookup, which nvcc (compiling, never naming it) does not mind."""
    (tmp_path / "walk.h").write_text("#pragma once\n__global__ void walk(int* cells, int n, int steps);\n")
    src = tmp_path / "walk.cu"
    src.write_text('#include "walk.h"\n'
                   "__global__\nvoid walk(int* __restrict__ cells, float* __restrict__ weight, int n, int steps) {\n"
                   "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                   "  if (i < n) cells[i] += steps * (weight[i] > 0.5f);\n}\n")
    assert build(src, "walk").compile.ok
