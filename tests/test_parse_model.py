"""The source model on small, targeted sources: every fact the model claims is asserted."""

from __future__ import annotations

import pytest

from xlate.errors import InputError
from xlate.parse import parse_string


def roles(fn):
    return {p.name: ("r" if p.reads else "") + ("w" if p.writes else "") for p in fn.params if p.is_pointer}


def test_param_types_and_qualifiers():
    u = parse_string(
        """
template <typename T, int BLOCK = 128>
__global__ void __launch_bounds__(256, 2) k(int n, T a, const T* __restrict__ x, T* y, float* const z, double& r) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i];
}
"""
    )
    k = u.kernel("k")
    assert k is not None and k.qualifiers == ["__global__"]
    assert [(t.kind, t.name, t.default) for t in k.template_params] == [("type", "T", None), ("value", "BLOCK", "128")]
    assert k.launch_bounds == ["256", "2"]
    p = {q.name: q for q in k.params}
    assert p["x"].pointer_depth == 1 and p["x"].is_const and p["x"].is_restrict and p["x"].is_template_dependent
    assert p["x"].type == "const T* __restrict__"
    assert not p["y"].is_const and p["y"].base_type == "T"
    assert p["z"].pointer_depth == 1 and not p["z"].is_const  # the pointer is const, not the pointee
    assert p["r"].is_reference
    assert p["n"].pointer_depth == 0 and not p["n"].is_template_dependent
    assert roles(k) == {"x": "r", "y": "w", "z": ""}


@pytest.mark.parametrize(
    "body, expected",
    [
        ("y[i] = x[i];", {"x": "r", "y": "w"}),
        ("y[i] += x[i];", {"x": "r", "y": "rw"}),
        ("y[i]++;", {"x": "", "y": "rw"}),
        ("*(y + i) = *(x + i);", {"x": "r", "y": "w"}),
        ("float* q = y + 4; q[i] = 1.0f;", {"x": "", "y": "w"}),
        ("atomicAdd(&y[0], x[i]);", {"x": "r", "y": "rw"}),
        ("atomicAdd(y + 1, 1.0f);", {"x": "", "y": "rw"}),
        ("reinterpret_cast<float4*>(y)[i] = reinterpret_cast<const float4*>(x)[i];", {"x": "r", "y": "w"}),
        ("((float2*)y)[i].x = __ldg(x + i);", {"x": "r", "y": "w"}),
        ("if (y != nullptr && x) { }", {"x": "", "y": ""}),
        ('printf("%f", x[0]);', {"x": "r", "y": ""}),
    ],
)
def test_pointer_access_analysis(body, expected):
    u = parse_string(f"__global__ void k(const float* x, float* y, int i) {{ {body} }}")
    assert roles(u.kernel("k")) == expected


def test_interprocedural_access_through_device_functions():
    u = parse_string(
        """
__device__ void store(float* out, int i, float v) { out[i] = v; }
__device__ void relay(float* dst, const float* src, int i) { store(dst, i, src[i] * 2.0f); }
__device__ float load(const float* p, int i) { return p[i]; }
__global__ void k(const float* a, float* b, float* c, int n) {
  int i = threadIdx.x;
  relay(b, a, i);
  c[i] = load(c, i) + 1.0f;
}
"""
    )
    k = u.kernel("k")
    assert roles(k) == {"a": "r", "b": "w", "c": "rw"}
    assert k.calls == ["relay", "load"]
    assert u.call_graph["relay"] == ["store"]
    assert [f.name for f in u.reachable("k")] == ["k", "relay", "store", "load"]
    assert roles(u.function("store")) == {"out": "w"}


def test_shared_memory_static_dynamic_and_sizes():
    u = parse_string(
        """
#define TILE 32
constexpr int WARPS = 256 / 32;
__global__ void k(float* y) {
  __shared__ float tile[TILE][TILE + 1];
  __shared__ double partial[WARPS];
  __shared__ int flag;
  extern __shared__ float dyn[];
  y[0] = tile[0][0] + partial[0] + flag + dyn[0];
}
"""
    )
    shared = {s.name: s for s in u.kernel("k").shared}
    assert shared["tile"].dims == ["TILE", "TILE + 1"] and shared["tile"].size_bytes == 32 * 33 * 4
    assert shared["partial"].size_bytes == 8 * 8
    assert shared["flag"].dims == [] and shared["flag"].size_bytes == 4
    assert shared["dyn"].dynamic and shared["dyn"].size_bytes is None


def test_intrinsics_atomics_asm_barriers():
    u = parse_string(
        """
__global__ void k(unsigned* out, float* v) {
  unsigned lane = threadIdx.x & 31;
  float x = v[threadIdx.x];
  for (int o = 16; o > 0; o >>= 1) x += __shfl_down_sync(0xffffffff, x, o);
  unsigned b = __ballot_sync(__activemask(), x > 0);
  __syncthreads();
  if (lane == 0) atomicAdd(out, __popc(b));
  int w = warpSize;
  unsigned id; asm volatile("mov.u32 %0, %%laneid;" : "=r"(id));
  __syncwarp();
}
"""
    )
    k = u.kernel("k")
    names = [(i.name, i.category) for i in k.intrinsics]
    assert ("__shfl_down_sync", "shuffle") in names
    assert ("__ballot_sync", "ballot") in names and ("__activemask", "activemask") in names
    assert ("__popc", "popcount") in names and ("warpSize", "warpsize") in names
    assert ("__syncthreads", "barrier") in names and ("__syncwarp", "barrier") in names
    shfl = next(i for i in k.intrinsics if i.name == "__shfl_down_sync")
    assert shfl.args == ["0xffffffff", "x", "o"] and shfl.span.line == 5
    assert [a.name for a in k.atomics] == ["atomicAdd"]
    assert k.asm[0].text == "mov.u32 %0, %%laneid;"
    assert k.barriers == 1


def test_launch_sites_all_forms():
    u = parse_string(
        """
template <typename T> __global__ void k(T* y, int n) { y[0] = n; }
void host(float* y, int n, cudaStream_t s) {
  k<float><<<(n + 255) / 256, 256, 0, s>>>(y, n);
  k<float><<<dim3(4, 2), dim3(16, 16)>>>(y, n);
  hipLaunchKernelGGL(HIP_KERNEL_NAME(k<float>), dim3(1), dim3(64), 128, s, y, n);
  void* args[] = {&y, &n};
  cudaLaunchKernel((void*)k<float>, dim3(1), dim3(32), args, 0, s);
}
"""
    )
    sites = u.launches
    assert [s.form for s in sites] == ["chevron", "chevron", "hipLaunchKernelGGL", "cudaLaunchKernel"]
    assert all(s.kernel == "k" and s.template_args == ["float"] and s.function == "host" for s in sites)
    assert (sites[0].grid, sites[0].block, sites[0].shmem, sites[0].stream) == ("(n + 255) / 256", "256", "0", "s")
    assert sites[0].args == ["y", "n"]
    assert (sites[1].grid, sites[1].block, sites[1].shmem) == ("dim3(4, 2)", "dim3(16, 16)", None)
    assert (sites[2].grid, sites[2].block, sites[2].shmem, sites[2].stream, sites[2].args) == ("dim3(1)", "dim3(64)", "128", "s", ["y", "n"])
    assert (sites[3].grid, sites[3].block, sites[3].shmem, sites[3].stream) == ("dim3(1)", "dim3(32)", "0", "s")


def test_api_calls_by_family_includes_macros():
    u = parse_string(
        """
#include <cuda_runtime.h>
#include "cublas_v2.h"
#define CHECK(x) do { if ((x) != cudaSuccess) return; } while (0)
#define N 1024
void host(float* d, cublasHandle_t h) {
  CHECK(cudaMalloc(&d, N));
  cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, nullptr, d, 1, d, 1, nullptr, d, 1);
  cuMemAlloc(nullptr, 4);
  thrust::sort(d, d + N);
  curandCreateGenerator(nullptr, 0);
}
"""
    )
    fam = {c.name: c.family for c in u.api_calls}
    assert fam["cudaMalloc"] == "runtime" and fam["cublasSgemm"] == "cublas" and fam["cuMemAlloc"] == "driver"
    assert fam["thrust::sort"] == "thrust" and fam["curandCreateGenerator"] == "curand"
    assert all(c.function == "host" for c in u.api_calls)
    assert [(i.path, i.system) for i in u.includes] == [("cuda_runtime.h", True), ("cublas_v2.h", False)]
    macros = {m.name: m for m in u.macros}
    assert macros["CHECK"].params == ["x"] and macros["N"].params is None and macros["N"].value == "1024"
    assert [h.name for h in u.host_functions] == ["host"]


def test_device_functions_qualifiers_and_annotations():
    u = parse_string(
        """
static __device__ __forceinline__ float sq(float x) { return x * x; }
__host__ __device__ inline float id(float x) { return x; }
// some prose
// xlate: x: in[n], y: out[n],
// xlate: n: size(1..4096), grid: cdiv(n, 128), block: 128
// xlate-note: hand-checked
extern "C" __global__ void k(const float* x, float* y, int n) { int i = threadIdx.x; if (i < n) y[i] = sq(id(x[i])); }
"""
    )
    sq = u.function("sq")
    assert sq.kind == "device" and sq.qualifiers == ["static", "__device__", "__forceinline__"]
    assert u.function("id").qualifiers == ["__host__", "__device__", "inline"]
    k = u.kernel("k")
    assert k.qualifiers[0] == 'extern "C"'
    assert k.annotation == "x: in[n], y: out[n], n: size(1..4096), grid: cdiv(n, 128), block: 128"
    assert k.notes == ["hand-checked"]
    assert k.annotation_span.line == 5
    assert k.calls == ["sq", "id"]


def test_spans_are_one_based_character_columns():
    u = parse_string("// é\n__global__ void k(float* y) { y[0] = 1.0f; }\n")
    k = u.kernel("k")
    assert (k.span.line, k.span.col) == (2, 1)
    assert k.params[0].span.col == len("__global__ void k(") + 1


def test_triton_module_model():
    src = '''
import triton
import triton.language as tl

@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)

# xlate: x: in[n], y: in[n], out: out[n], n: size(0..5000)
def add(x, y, out, n):
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
'''
    u = parse_string(src, "m.py")
    assert u.language == "triton"
    k = u.triton_kernels[0]
    assert k.name == "add_kernel" and k.decorators == ["triton.jit"]
    assert [(p.name, p.constexpr) for p in k.params][-2:] == [("n", False), ("BLOCK", True)]
    launcher = next(f for f in u.py_functions if f.name == "add")
    assert launcher.launches == ["add_kernel"] and launcher.annotation.startswith("x: in[n]")
    assert u.launches[0].grid == "(triton.cdiv(n, 1024),)"


def test_syntax_errors_are_located():
    with pytest.raises(InputError) as info:  # strict: model output must be plain C++
        parse_string("__global__ void k(float* y) {\n  y[0] = ;\n}\n", "bad.cu", strict=True)
    lines = info.value.lines()
    assert lines and lines[0].startswith("bad.cu:2:")
    assert "error" in lines[0]


def test_grammar_gaps_are_located_warnings_not_errors():
    u = parse_string("__global__ void k(float* y) {\n  y[0] = ;\n}\n", "bad.cu")
    assert [k.name for k in u.kernels] == ["k"]
    lines = [w.format() for w in u.warnings]
    assert lines and lines[0].startswith("bad.cu:2:") and ": warning: grammar gap" in lines[0]
    assert lines[0].endswith("[XL0002]")


def test_ascendc_qualifiers_survive_blanking():
    u = parse_string(
        '#include "kernel_operator.h"\n'
        'extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR z, uint32_t n) { }\n',
        "k.cpp",
    )
    assert u.language == "ascendc"
    k = u.kernel("add_custom")
    assert k is not None and "__aicore__" in k.qualifiers and "__global__" in k.qualifiers


def test_columns_count_characters_not_bytes():
    """A non-ASCII character before a construct on the same line moves its column by one, not by its bytes."""
    ascii_unit = parse_string("/*e*/ __global__ void k(float* y) { y[0] = 1.0f; }\n")
    utf8_unit = parse_string("/*é*/ __global__ void k(float* y) { y[0] = 1.0f; }\n")
    assert ascii_unit.kernels[0].params[0].span.col == utf8_unit.kernels[0].params[0].span.col
    assert utf8_unit.kernels[0].span.start_byte == ascii_unit.kernels[0].span.start_byte + 1
