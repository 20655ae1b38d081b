"""Sources nvcc compiles must compile on the gate's NVRTC route too (issue #15, item 3): each test writes a small
host+kernel program in the shape that broke, and compiles a kernel of it through the real NVRTC (no GPU needed),
as the gate compiles a source side (device slice, bundled headers, xlate's NVRTC environment)."""

from __future__ import annotations

import pytest
from xlate.backends.nvrtc import nvrtc_version

from tests.test_nvrtc_env import build  # the gate's compile of a source side

pytestmark = pytest.mark.skipif(nvrtc_version() is None, reason="NVRTC not installed")


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
    define before that, through the header (whose include guard the context leaves open, and closes)."""
    (tmp_path / "sizes.h").write_text("#define TILE 8\n")
    (tmp_path / "steps.cu").write_text(
        "__global__ void tile_copy(float *out, const float *in) {\n"
        "  __shared__ float t[TILE];\n  t[threadIdx.x % TILE] = in[threadIdx.x];\n  __syncthreads();\n"
        "  out[threadIdx.x] = t[threadIdx.x % TILE];\n}\n"
    )
    (tmp_path / "solver.h").write_text(
        '#ifndef SOLVER_H\n#define SOLVER_H\n#include <vector>\n#include "steps.cu"\n'
        "void run_steps(std::vector<float> &v) { (void)v; }\n#endif\n"
    )
    (tmp_path / "app.cu").write_text('#include "sizes.h"\n#include "solver.h"\nint main() { return 0; }\n')
    assert build(tmp_path / "steps.cu", "tile_copy").compile.ok


def test_other_kernels_needing_what_nvrtc_lacks_do_not_stop_this_one(tmp_path):
    """A sibling kernel uses Thrust's sequential sort and random engine (host-side headers the slice drops), and a
    host-only struct holds a std::string: the kernel under test needs none of it, and its closure compiles."""
    src = tmp_path / "mixed.cu"
    src.write_text(
        "#include <string>\n#include <thrust/sort.h>\n#include <thrust/random.h>\nusing namespace std;\n"
        "typedef struct record_t { string *label; double weight; } record_t;\n"
        "__constant__ float gain;\n"
        "__device__ int twice(int v) { return 2 * v; }\n"
        "__global__ void shuffle_rows(int *rows, int n) {\n"
        "  thrust::default_random_engine rng(threadIdx.x);\n"
        "  thrust::sort(thrust::seq, rows, rows + n);\n  rows[0] = (int)rng();\n}\n"
        "__global__ void scale(float *y, const int *k, int n) {\n"
        "  int i = threadIdx.x; if (i < n) y[i] = gain * twice(k[i]);\n}\n"
        "int main() { record_t r; r.weight = 1; return 0; }\n"
    )
    assert build(src, "scale").compile.ok


def test_header_struct_with_a_host_constructor_is_kept_for_the_kernels_using_it(tmp_path):
    """body.hpp has no device code, but the includer's kernels copy its struct; its unannotated constructor
    (host-only under nvcc, refused by NVRTC) goes, the struct stays."""
    (tmp_path / "body.hpp").write_text(
        "#pragma once\nstruct Body {\n public:\n  Body() : pos{}, mass{} {};\n  float pos[3];\n  float mass;\n"
        "  void dump() const;\n};\n"
    )
    (tmp_path / "step.hpp").write_text(
        "__global__ void drift(Body *b, int n, float dt) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;\n"
        "  auto p = b[i]; p.pos[0] += dt * p.mass; b[i] = p;\n}\n"
    )
    (tmp_path / "sim.cu").write_text(
        '#include <vector>\n#include "body.hpp"\n#include "step.hpp"\n'
        "void run(std::vector<Body> &v) { drift<<<1, 1>>>(v.data(), 1, 0.1f); }\n"
    )
    assert build(tmp_path / "step.hpp", "drift").compile.ok


def test_class_with_friend_functions_behind_a_qualifier_macro(tmp_path):
    """`QUAL friend inline T norm(...)` (QUAL standing for __host__ __device__) is device code; an unannotated
    default constructor and a `friend std::ostream& operator<<` are host-only and go."""
    (tmp_path / "cplx.h").write_text(
        "#include <iostream>\n"
        "#if defined(__NVCC__)\n#define QUAL __host__ __device__\n#else\n#define QUAL\n#endif\n"
        "template <class T> class Cplx {\n public:\n  T re; T im;\n  explicit Cplx() { re = 0; im = 0; }\n"
        "  QUAL Cplx(const T &a, const T &b) { re = a; im = b; }\n"
        "  friend std::ostream &operator<<(std::ostream &os, const Cplx<T> &c) { return os << c.re; }\n"
        "  QUAL\n  friend inline T norm2(const Cplx<T> &c) { return c.re * c.re + c.im * c.im; }\n};\n"
    )
    (tmp_path / "kern.h").write_text(
        "__global__ void norms(const double *a, double *out, int n) {\n"
        "  int i = threadIdx.x; if (i < n) { Cplx<double> c(a[i], 1.0); out[i] = norm2(c); }\n}\n"
    )
    (tmp_path / "main.cu").write_text('#include "cplx.h"\n#include "kern.h"\nint main() { return 0; }\n')
    assert build(tmp_path / "kern.h", "norms").compile.ok


def test_conditionally_defined_qualifier_macro_and_register_variables(tmp_path):
    """`#if defined(__CUDACC__) #define DEV __inline__ __device__ #else #define DEV inline`: the functions it marks
    are device code (the front end reads the last definition); `register` (removed in C++17, ignored by nvcc)
    goes."""
    (tmp_path / "mod.h").write_text(
        "#if defined(__CUDACC__)\n  #define DEV __inline__ __device__\n#else\n  #define DEV inline\n#endif\n"
        "typedef unsigned int u32;\nDEV\nu32 fold(u32 x) { return (x >> 16) ^ (x & 0xffffu); }\n"
    )
    src = tmp_path / "main.cu"
    src.write_text(
        '#include <cstdio>\n#include "mod.h"\n'
        "__global__ void folds(u32 *v, int n) {\n"
        "  register u32 t = v[threadIdx.x];\n  if ((int)threadIdx.x < n) v[threadIdx.x] = fold(t);\n}\n"
        'int main() { printf("x\\n"); return 0; }\n'
    )
    assert build(src, "folds").compile.ok


def test_conditional_in_a_host_function_signature_stays_balanced(tmp_path):
    """A host function whose parameter list differs under `#ifdef`: blanking it keeps the #ifdef/#else/#endif."""
    src = tmp_path / "bench.hpp"
    src.write_text(
        "#include <vector>\n"
        "__global__ void axpy(const float *x, float *y, float a, int n) {\n"
        "  int i = threadIdx.x;\n  if (i < n)\n#ifdef FUSED\n    y[i] = fmaf(a, x[i], y[i]);\n#else\n"
        "    y[i] += a * x[i];\n#endif\n}\n"
        "#ifdef FUSED\ndouble run(const std::vector<float> &x,\n#else\ndouble run(std::vector<float> &x,\n#endif\n"
        "           int iterations) {\n  return (double)x.size() * iterations;\n}\n"
    )
    (tmp_path / "main.cu").write_text('#include "bench.hpp"\nint main() { return 0; }\n')
    assert build(src, "axpy").compile.ok


def test_host_qualifier_macro_goes_with_its_host_member(tmp_path):
    """`#define HOST __host__`: a class's `HOST Acc(...) {...}` constructor and `HOST void check() const`
    are host code; the macro must not be left on its own before the class's closing brace."""
    (tmp_path / "acc.h").write_text(
        "#include <algorithm>\n#define HOST __host__\n#define HOST_DEVICE __host__ __device__\n"
        "template <typename T> class Acc {\n public:\n"
        "  HOST Acc(T *d, const int *s) : data_(d) { std::copy(s, s + 2, sizes_); }\n"
        "  HOST_DEVICE T &at(int i) { return data_[i]; }\n"
        " protected:\n  T *data_;\n  int sizes_[2];\n"
        "  // checks an index on the host\n  HOST void check(int i) const { (void)i; }\n};\n"
    )
    src = tmp_path / "main.cu"
    src.write_text(
        '#include "acc.h"\n'
        "__global__ void bump(Acc<float> a, int n) { int i = threadIdx.x; if (i < n) a.at(i) += 1.f; }\n"
        "int main() { return 0; }\n"
    )
    assert build(src, "bump").compile.ok


def test_template_kernel_with_class_parameters_keeps_its_loop(tmp_path):
    """`template <class T, class Op> __global__ void k(...)` is a function, not a class: its body's
    declarations (`for (unsigned i = ...; ...)`) are no members to blank."""
    src = tmp_path / "apply.cu"
    src.write_text(
        "struct Twice { __device__ float operator()(float v) const { return 2.f * v; } };\n"
        "template <class T, class Op>\n__global__\nvoid apply(T *out, const unsigned n) {\n"
        "  const auto stride = blockDim.x * gridDim.x;\n  Op op;\n"
        "  for (unsigned i = threadIdx.x; i < n; i += stride)\n    out[i] = op(out[i]);\n}\n"
        "int main() { apply<float, Twice><<<1, 32>>>(nullptr, 0); return 0; }\n"
    )
    assert build(src, "apply", ["float", "Twice"]).compile.ok


def test_function_pointer_members_are_data_not_host_functions(tmp_path):
    """`void (*hook)(int);` in a struct a kernel takes is a data member: blanking it would change the struct's
    layout (the static_assert checks it stays); `Holder()` is the host-only member that goes."""
    src = tmp_path / "hooks.cu"
    src.write_text(
        "struct __align__(8) Holder {\n  Holder() : hook(nullptr), scale(1.f) {}\n  void (*hook)(int);\n"
        '  float scale;\n};\nstatic_assert(sizeof(Holder) == 16, "layout");\n'
        "__global__ void use(Holder h, float *y) { y[threadIdx.x] *= h.scale; }\n"
        "int main() { Holder h; (void)h; return 0; }\n"
    )
    assert build(src, "use").compile.ok


def test_host_function_after_a_device_qualifier_macro_definition_is_still_host(tmp_path):
    """`#define DEV __device__` just before a host function: the directive is no part of its declaration."""
    src = tmp_path / "after_define.cu"
    src.write_text(
        "#include <vector>\n#define DEV __device__\n"
        "std::vector<float> make(int n) { return std::vector<float>(n); }\n"
        "DEV float sq(float v) { return v * v; }\n"
        "__global__ void square(float *y) { y[threadIdx.x] = sq(y[threadIdx.x]); }\n"
        "int main() { return (int)make(2).size(); }\n"
    )
    from xlate.backends.nvrtc import system_include_dirs

    from xlate.parse import parse_file
    from xlate.parse.slice import device_slice

    unit = parse_file(src)
    sliced = device_slice(unit, unit.text, system_dirs=system_include_dirs())
    assert "make(int n)" not in sliced and "sq(float v)" in sliced
    assert build(src, "square").compile.ok


def test_a_macro_that_instantiates_a_host_launcher_is_left_out_of_the_slice(tmp_path):
    """PyTorch-extension style: a host launcher template instantiated for each width by a macro
    (`#define FOR_WIDTH(W) template void launch<W>(...);` then `FOR_WIDTH(5)`). The slice blanks the host
    template, and the macro's uses then named a template NVRTC never saw ("launch is not a template"): the
    gate called the source uncompilable. A macro that instantiates the kernel itself stays."""
    (tmp_path / "widths.cu").write_text(
        "template <int W>\n__global__ void widen(const float* a, float* b, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) b[i] = a[i] * W;\n}\n"
        "template <int W>\nvoid launch(const float* a, float* b, int n) { widen<W><<<(n + 63) / 64, 64>>>(a, b, n); }\n"
        "template void launch<2>(const float*, float*, int);\n"
        "#define FOR_WIDTH(W) template void launch<W>(const float*, float*, int);\n"
        "FOR_WIDTH(3)\nFOR_WIDTH(5);\n"
        "#define KERNEL_FOR(W) template __global__ void widen<W>(const float*, float*, int);\n"
        "KERNEL_FOR(7)\n"
    )
    for w in ("2", "3", "5", "7"):
        assert build(tmp_path / "widths.cu", "widen", [w]).compile.ok
