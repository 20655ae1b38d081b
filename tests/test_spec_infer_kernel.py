"""Spec inference from the kernel's own code where the host code says nothing (issue [infer] item 1, "where
there is no host code, infer from the kernel"): buffers reached through the values of index buffers, index
values the kernel guards itself, index values that must stay above zero. Each test is a kernel written for it,
with the exact spec inferred."""

from __future__ import annotations

import textwrap
from pathlib import Path

from xlate.parse import parse_string
from xlate.specs import resolve_spec


def resolve(tmp_path: Path, text: str, kernel: str):
    path = tmp_path / "k.cu"
    path.write_text(textwrap.dedent(text).lstrip())
    return resolve_spec(parse_string(path.read_text(), str(path), "cuda"), kernel)


def test_csr_buffers_sized_by_the_largest_index_values(tmp_path):
    res = resolve(tmp_path, """
    __global__ void spmv(int rows, const int* rowptr, const int* col, const float* val, const float* x, float* y) {
      int r = blockIdx.x * blockDim.x + threadIdx.x;
      if (r < rows) {
        float s = 0.0f;
        for (int j = rowptr[r]; j < rowptr[r + 1]; j++) s += val[j] * x[col[j]];
        y[r] = s;
      }
    }
    """, "spmv")
    assert res.complete
    # nothing sizes val, col and x: the largest values of rowptr and col become sizes, and the index buffers'
    # values are drawn so that every access stays inside
    assert res.annotation() == (
        "rows: size(1..4096), rowptr: in[rows + 1](0..rowptr_max ascending), col: in[rowptr_max](0..col_max), "
        "val: in[rowptr_max], x: in[col_max + 1], y: out[rows], rowptr_max: size(1..4096), col_max: size(1..4096), "
        "grid: cdiv(rows, 256), block: 256")
    assert res.items["rowptr_max"][1].kind == "kernel"
    assert res.spec is not None and {p.name for p in res.spec.sizes} >= {"rowptr_max", "col_max"}


def test_an_index_value_less_one_must_be_at_least_one(tmp_path):
    res = resolve(tmp_path, """
    __global__ void gather(const int* idx, const float* src, float* dst, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) dst[i] = src[idx[i] - 1];
    }
    """, "gather")
    assert res.annotation() == ("idx: in[n](1..idx_max), src: in[idx_max], dst: out[n], n: size(1..4096), "
                                "idx_max: size(1..4096), grid: cdiv(n, 256), block: 256")


def test_segments_given_by_offset_and_length_share_the_buffer(tmp_path):
    res = resolve(tmp_path, """
    __global__ void seg(const int* off, const int* len, const float* data, float* out, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i >= n) return;
      float s = 0;
      for (int k = off[i]; k < off[i] + len[i]; k++) s += data[k];
      out[i] = s;
    }
    """, "seg")
    # off + len must stay within data: each gets half of its length (any split would do; halves are sound)
    assert res.annotation() == ("off: in[n](0..data_len / 2), len: in[n](0..data_len / 2), data: in[data_len], "
                                "out: out[n], n: size(1..4096), data_len: size(1..4096), grid: cdiv(n, 256), block: 256")


def test_index_values_the_kernel_guards_itself(tmp_path):
    res = resolve(tmp_path, """
    __global__ void rows(const int* idx, const float* a, float* c, int n, int na, int cols) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i >= n) return;
      int k = idx[i];
      if (k >= na) return;
      for (int j = 0; j < cols; j++) c[i * cols + j] = a[k * cols + j];
    }
    """, "rows")
    assert res.annotation() == ("idx: in[n](0..na - 1), a: in[cols * na], c: out[cols * n], n: size(1..4096), "
                                "na: size(1..4096), cols: size(1..4096), grid: cdiv(n, 256), block: 256")


def test_symbolic_strides_of_index_values(tmp_path):
    res = resolve(tmp_path, """
    __global__ void embed(const int* tok, const float* table, float* out, int n, int dim, int vocab) {
      int i = blockIdx.x;
      if (i >= n) return;
      for (int d = threadIdx.x; d < dim; d += blockDim.x) out[i * dim + d] = table[tok[i] * dim + d];
      if (threadIdx.x == 0 && tok[i] >= vocab) out[i * dim] = 0.0f;
    }
    int main() {
      int n = 128, dim = 64, vocab = 1000;
      int* tok; float *table, *out;
      cudaMalloc(&tok, n * sizeof(int));
      cudaMalloc(&table, vocab * dim * sizeof(float));
      cudaMalloc(&out, n * dim * sizeof(float));
      embed<<<n, 64>>>(tok, table, out, n, dim, vocab);
    }
    """, "embed")
    # table[tok[i] * dim + d] with table holding vocab * dim: tok's values stay below vocab
    assert res.items["tok"][0] == "tok: in[n](0..vocab - 1)"


def test_index_values_written_by_the_kernel_are_not_invented(tmp_path):
    res = resolve(tmp_path, """
    __global__ void relink(int* next, float* v, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) { next[i] = i + 1; v[next[i]] = 0.0f; }
    }
    """, "relink")
    assert not res.complete and "v" in res.holes and "v_max" not in res.items


def test_counters_increased_in_counted_loops(tmp_path):
    res = resolve(tmp_path, """
    __global__ void dot(int k, int index, const long* in, long* out, const unsigned* bm, int size) {
      const int w = 4;
      int idx = blockIdx.x * blockDim.x + threadIdx.x;
      if (idx >= size) return;
      long r = 0;
      for (int i = 0; i < k; i++) {
        long v = in[i * size + idx];
        for (int j = 0; j < w; j++) {
          r ^= v & bm[index];
          ++index;
        }
      }
      out[idx] = r;
    }
    """, "dot")
    # index runs from its value to index + 4 * k over the loops (one past the last read: an upper bound)
    assert res.annotation() == ("k: size(1..4096), index: size(1..4096), in: in[k * size], out: out[size], "
                                "bm: in[index + 4 * k + 1], size: size(1..4096), grid: cdiv(size, 256), block: 256")


def test_pointers_advanced_in_a_counted_loop(tmp_path):
    res = resolve(tmp_path, """
    __global__ void interleave(const float* in, float* out, int n, int m) {
      int t = blockIdx.x * blockDim.x + threadIdx.x;
      if (t >= n) return;
      const float* p = in + t * m;
      float* q = out + t * 2 * m;
      for (int i = 0; i < m; i++) { *q = *p; q++; *q = 0.0f; q++; p++; }
    }
    """, "interleave")
    assert res.annotation() == ("in: in[m * n + 1], out: out[2 * m * n + 1], n: size(1..4096), m: size(1..4096), "
                                "grid: cdiv(n, 256), block: 256")


def test_a_counter_increased_in_a_while_loop_is_not_bounded(tmp_path):
    res = resolve(tmp_path, """
    __global__ void scan(const int* flags, int* out, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i >= n) return;
      int pos = 0;
      while (flags[pos] != 0) pos++;
      out[i] = pos;
    }
    """, "scan")
    assert "flags" in res.holes


def test_a_block_set_at_run_time_ties_the_grid_and_shared_memory_to_the_guess(tmp_path):
    res = resolve(tmp_path, """
    __global__ void blocksum(const float* in, float* out, int n) {
      extern __shared__ float buf[];
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      buf[threadIdx.x] = i < n ? in[i] : 0.0f;
      __syncthreads();
      if (threadIdx.x == 0) { float s = 0; for (int k = 0; k < blockDim.x; k++) s += buf[k]; out[blockIdx.x] = s; }
    }
    void run(const float* in, float* out, int n, int threads) {
      int blocks = (n + threads - 1) / threads;
      blocksum<<<blocks, threads, threads * sizeof(float)>>>(in, out, n);
    }
    """, "blocksum")
    # `threads` is a launcher parameter nobody passes: the block the kernel allows stands for it everywhere
    assert res.annotation() == ("in: in[n], out: out[cdiv(n, 256)], n: size(1..4096), grid: cdiv(n, 256), "
                                "block: 256, shmem: 1024")
    assert res.items["block"][1].kind == "kernel"


def test_classes_of_one_number_type_with_methods_are_lanes_and_methods_may_write(tmp_path):
    res = resolve(tmp_path, """
    class Body {
     public:
      Body() : m(1.0f) {}
      __device__ float mass() const { return m; }
      __device__ void push(float f) { v[0] += f / m; }
      static int count;
     private:
      float p[3];
      float v[3];
      float m;
    };
    __global__ void step(const Body* in, Body* out, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) out[i].push(in[i].mass());
    }
    """, "step")
    # 7 floats per element (methods and the static member take no bytes); out's elements change through a method
    assert res.annotation() == ("in: in[n, 7] as float32, out: inout[n, 7] as float32, n: size(1..4096), "
                                "grid: cdiv(n, 256), block: 256")


def test_a_class_with_virtual_methods_is_not_plain_data(tmp_path):
    res = resolve(tmp_path, """
    struct Shape { virtual float area() const; float w, h; };
    __global__ void areas(const Shape* s, float* a, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) a[i] = s[i].w * s[i].h;
    }
    """, "areas")
    assert "s" in res.holes


def test_a_macro_of_statements_runs_where_it_stands_and_writes_through_pointers_count(tmp_path):
    res = resolve(tmp_path, """
    #define STORE_FIRST unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (out) *out = in[i];
    __global__ void first(const float* in, float* out, float* sum) {
      STORE_FIRST;
      atomicAdd(sum, in[0]);
    }
    int main() {
      float *a, *b, *s;
      cudaMalloc(&a, 64 * sizeof(float));
      cudaMalloc(&b, sizeof(float));
      first<<<1, 64>>>(a, b, s);
    }
    """, "first")
    # out is written through *out inside the macro (an output); an atomic's old value matters (inout). (With
    # nullptr for out at the launch it would be `out: null`: tests/test_null_pointer_specs.py.)
    assert res.annotation() == "in: in[64], out: out[1], sum: inout[1], grid: 1, block: 64"


def test_a_long_chain_of_additions_is_followed_in_full(tmp_path):
    # a 40-term stencil sum: each operand evaluated once. Evaluated again in an override, a chain of n additions
    # cost 2^n evaluations, ran out of the kernel's budget and left x without a length ("too large to follow")
    terms = " + ".join(f"x[i + {k}]" for k in range(40))
    res = resolve(tmp_path, f"""
    __global__ void wide(const float* x, float* y, int n) {{
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) y[i] = {terms};
    }}
    """, "wide")
    assert res.complete
    assert res.annotation() == "x: in[n + 39], y: out[n], n: size(1..4096), grid: cdiv(n, 256), block: 256"


def test_a_pointer_declared_first_and_set_later_is_followed(tmp_path):
    # C89-style kernels declare their locals at the top and point them into a buffer later
    res = resolve(tmp_path, """
    __global__ void fill_column(float* dist, int width, int k) {
      float* p;
      unsigned int x = blockIdx.x * blockDim.x + threadIdx.x;
      if (x < width) {
        p = dist + x;
        for (int l = 0; l < k; l++) p[l * width] = 1.0f;
      }
    }
    """, "fill_column")
    assert res.complete, res.holes
    assert res.items["dist"][0] == "dist: out[k * width]"


def test_library_vector_and_matrix_types_are_lanes_of_their_scalar(tmp_path):
    # glm's headers are not read (a system or vendored include): their layout comes from the library table
    res = resolve(tmp_path, """
    #include <glm/glm.hpp>
    using vec3 = glm::vec<3, float>;
    using mat3 = glm::mat<3, 3, float>;
    __global__ void apply(const vec3* __restrict__ p, const mat3* m, glm::vec2* out,
                          const Eigen::Matrix<double, 4, 1>* w, double* s, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) {
        out[i] = glm::vec2(p[i].x * m[i][0][0], p[i].y);
        s[i] = w[i][0] + w[i][3];
      }
    }
    """, "apply")
    assert res.complete, res.holes
    assert res.items["p"][0] == "p: in[n, 3] as float32"
    assert res.items["m"][0] == "m: in[n, 9] as float32"
    assert res.items["out"][0] == "out: out[n, 2] as float32"
    assert res.items["w"][0] == "w: in[n, 4] as float64"


def test_a_dynamic_library_extent_or_the_programs_own_type_is_not_taken_from_the_table(tmp_path):
    res = resolve(tmp_path, """
    struct vec2 { double a, b, c; };
    __global__ void k(const Eigen::Matrix<float, -1, 1>* v, const vec2* q, double* out, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) out[i] = q[i].a + q[i].c;
    }
    """, "k")
    assert "v" in res.holes
    assert res.items["q"][0] == "q: in[n, 3] as float64"


def test_an_enum_parameter_is_an_axis_of_its_enumerators_from_a_header_in_include(tmp_path):
    # the layout of a PyTorch extension: kernels in csrc/, the shared header in include/ (setup.py passes -I)
    (tmp_path / "include").mkdir()
    (tmp_path / "include" / "common.h").write_text(textwrap.dedent("""
    #pragma once
    namespace proj {
    enum Model { PINHOLE = 0, ORTHO = 1, FISHEYE = 4, OTHER };
    }
    """))
    (tmp_path / "csrc").mkdir()
    path = tmp_path / "csrc" / "k.cu"
    path.write_text(textwrap.dedent("""
    #include "common.h"
    namespace proj {
    __global__ void project(const float* x, float* y, const Model model, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i >= n) return;
      switch (model) {
        case PINHOLE: y[i] = x[i] * 2.0f; break;
        case FISHEYE: y[i] = x[i] - 1.0f; break;
        default: y[i] = x[i];
      }
    }
    }
    """).lstrip())
    res = resolve_spec(parse_string(path.read_text(), str(path), "cuda"), "project")
    assert res.complete, res.holes
    assert res.items["model"][0] == "model: const(model_enum)"
    assert res.items["model_enum"][0] == "model_enum: choice(0|1|4|5)"
    assert "the enumerators of Model" in res.items["model"][1].detail
    # the spec builds and the gate passes the enumerator as the enum's int
    from xlate.specs import build_spec

    spec = build_spec(parse_string(f"// xlate: {res.annotation()}\n" + path.read_text(), str(path), "cuda"), "project")
    assert spec.param("model").ctype == "int"
