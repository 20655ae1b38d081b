"""Spec inference for buffers read or written through a wider type (issue #15 [infer]): a float4, __half2, uint4 or
`alignas` struct view of a float or half buffer faults on a misaligned address unless its element offset is a
multiple of the view's width, and a guard that bounds the view's first element is the buffer's end only when that
end is a multiple too. The spec says so with `where: S % W == 0` for the sizes in the offset (drawn as multiples
by the gate), buffer lengths stay what the program allocates, and a host value that is the width itself is pinned.
Each test is a small host+kernel program written for it, with the exact spec inferred."""

from __future__ import annotations

import textwrap

from tests.test_spec_infer_fixes import resolve, usable  # the same helpers: a program written out, its spec
from xlate.parse import parse_string


def item(res, key: str) -> str:
    return res.items[key][0] if key in res.items else ""


def test_float4_view_of_a_row_needs_the_row_stride_a_multiple_of_four(tmp_path):
    """`(const float4*)&x[r * cols]` read at [j]: the offset r * cols is a multiple of 4 floats only when cols is."""
    res = resolve(tmp_path, """
    #include <cstdlib>
    __global__ void row_sums(const float* x, float* out, int rows, int cols) {
      int r = blockIdx.x;
      int quads = cols / 4;
      const float4* row = reinterpret_cast<const float4*>(&x[r * cols]);
      float s = 0.f;
      for (int j = threadIdx.x; j < quads; j += blockDim.x) {
        float4 v = row[j];
        s += v.x + v.y + v.z + v.w;
      }
      if (threadIdx.x == 0) out[r] = s;
    }
    int main(int argc, char** argv) {
      int rows = atoi(argv[1]), cols = atoi(argv[2]);
      float *x, *out;
      cudaMalloc(&x, rows * cols * sizeof(float));
      cudaMalloc(&out, rows * sizeof(float));
      row_sums<<<rows, 128>>>(x, out, rows, cols);
      return 0;
    }
    """, "row_sums")
    usable(res)
    assert item(res, "where") == "where: cols % 4 == 0"
    assert item(res, "x") == "x: in[cols * rows]"
    assert item(res, "cols") == "cols: size(1..4096)"


def test_half2_view_at_an_odd_stride_and_lengths_sampled_at_multiples(tmp_path):
    """`*(const __half2*)(a + i * k)`: k must be even; `b + 2 * i` already is. The last pair read ends at
    (n - 1) * k + 1, inside k * n for every even k, so the buffer stays the allocation's k * n."""
    res = resolve(tmp_path, """
    #include <cuda_fp16.h>
    #include <cstdlib>
    __global__ void halves(const __half* a, __half* b, int n, int k) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) {
        __half2 v = *reinterpret_cast<const __half2*>(a + i * k);
        *reinterpret_cast<__half2*>(b + 2 * i) = __hadd2(v, v);
      }
    }
    int main(int argc, char** argv) {
      int n = atoi(argv[1]), k = atoi(argv[2]);
      __half *a, *b;
      cudaMalloc(&a, n * k * sizeof(__half));
      cudaMalloc(&b, 2 * n * sizeof(__half));
      halves<<<(n + 255) / 256, 256>>>(a, b, n, k);
      return 0;
    }
    """, "halves")
    usable(res)
    assert item(res, "where") == "where: k % 2 == 0"
    assert item(res, "a") == "a: in[k * n]"
    assert item(res, "b") == "b: out[2 * n]"


def test_guard_bounding_an_aligned_template_struct_makes_the_length_a_multiple(tmp_path):
    """`struct alignas(sizeof(T) * N) lanes { T v[N]; }` used as `lanes<T, W>` (a local alias) with the launch's
    <float, 2>: a view of 2 floats aligned to 8 bytes at i = 2 * thread + steps of 2, while `i < n`. Its offsets
    are aligned already; the last pair fits inside n floats only when n is even: `n % 2 == 0`, and the buffers
    are n long (not n + 1)."""
    res = resolve(tmp_path, """
    #include <cstdlib>
    template <typename T, int N>
    struct alignas(sizeof(T) * N) lanes { T v[N]; };

    template <typename T, int W>
    __global__ void scale(const T* in, T* out, unsigned n, float f) {
      using pack_t = lanes<T, W>;
      for (unsigned i = (blockIdx.x * blockDim.x + threadIdx.x) * W; i < n; i += gridDim.x * blockDim.x * W) {
        pack_t p = *reinterpret_cast<const pack_t*>(&in[i]);
        for (int j = 0; j < W; j++) p.v[j] *= f;
        *reinterpret_cast<pack_t*>(&out[i]) = p;
      }
    }
    int main(int argc, char** argv) {
      unsigned n = atoi(argv[1]);
      float *in, *out;
      cudaMalloc(&in, n * sizeof(float));
      cudaMalloc(&out, n * sizeof(float));
      scale<float, 2><<<64, 256>>>(in, out, n, 0.5f);
      return 0;
    }
    """, "scale")
    usable(res)
    assert item(res, "where") == "where: n % 2 == 0"
    assert item(res, "in") == "in: in[n]"
    assert item(res, "out") == "out: out[n]"


def test_uint4_alias_over_a_template_type_and_the_hosts_width_pinned(tmp_path):
    """`using wide_t = uint4` over `const T*` launched with T = float: 4 floats a load at h * dim + 4 * c, so dim
    % 4 == 0. The host's `per = 16 / sizeof(float)` in the grid is the width the kernel computes for itself:
    pinned at 4, not drawn 1..4."""
    res = resolve(tmp_path, """
    #include <cstdlib>
    template <typename T>
    __global__ void mix(T* out, const T* a, const T* b, int heads, int dim) {
      using wide_t = uint4;
      const int per = 16 / sizeof(T);
      int t = blockIdx.x * blockDim.x + threadIdx.x;
      int chunks = dim / per;
      if (t >= heads * chunks) return;
      int h = t / chunks;
      int c = t % chunks;
      const wide_t* pa = reinterpret_cast<const wide_t*>(a + h * dim);
      const wide_t* pb = reinterpret_cast<const wide_t*>(b + h * dim);
      wide_t* po = reinterpret_cast<wide_t*>(out + h * dim);
      wide_t x = pa[c], y = pb[c];
      x.x ^= y.x;
      po[c] = x;
    }
    int main(int argc, char** argv) {
      int heads = atoi(argv[1]), dim = atoi(argv[2]);
      const int per = 16 / sizeof(float);
      float *o, *a, *b;
      cudaMalloc(&o, heads * dim * sizeof(float));
      cudaMalloc(&a, heads * dim * sizeof(float));
      cudaMalloc(&b, heads * dim * sizeof(float));
      int total = heads * (dim / per);
      mix<float><<<(total + 127) / 128, 128>>>(o, a, b, heads, dim);
      return 0;
    }
    """, "mix")
    usable(res)
    assert item(res, "where") == "where: dim % 4 == 0"
    assert item(res, "per") == "per: size(4..4)"
    assert item(res, "a") == "a: in[dim * heads]"
    assert item(res, "out") == "out: out[dim * heads]"


STRUCT_PROGRAM = """
#include <cuda_fp16.h>
#include <cstdlib>
struct alignas(16) pack8 { __half v[8]; };
__global__ void copy_rows(const __half* src, __half* dst, int rows, int width) {
  int r = blockIdx.y;
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows && 8 * j < width) {
    pack8 p = *reinterpret_cast<const pack8*>(src + r * width + 8 * j);
    *reinterpret_cast<pack8*>(dst + r * width + 8 * j) = p;
  }
}
__global__ void copy_flat(const float* src, float* dst, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  reinterpret_cast<float4*>(dst)[i] = reinterpret_cast<const float4*>(src)[i];
}
__global__ void tiles(const float* src, float* dst, int n) {
  int row = blockIdx.y;
  int col = 4 * (blockIdx.x * blockDim.x + threadIdx.x);
  *reinterpret_cast<float4*>(&dst[row * n + col]) = *reinterpret_cast<const float4*>(&src[row * n + col]);
}
int main(int argc, char** argv) {
  int rows = atoi(argv[1]), width = atoi(argv[2]);
  __half *s, *d;
  cudaMalloc(&s, rows * width * sizeof(__half));
  cudaMalloc(&d, rows * width * sizeof(__half));
  dim3 grid((width / 8 + 63) / 64, rows);
  copy_rows<<<grid, 64>>>(s, d, rows, width);
  int n = 1 << 20;
  float *fs, *fd;
  cudaMalloc(&fs, n * sizeof(float));
  cudaMalloc(&fd, n * sizeof(float));
  copy_flat<<<n / 4 / 256, 256>>>(fs, fd, n);
  int m = atoi(argv[3]);
  float *ts, *td;
  cudaMalloc(&ts, m * m * sizeof(float));
  cudaMalloc(&td, m * m * sizeof(float));
  tiles<<<dim3(m / 1024, m), 256>>>(ts, td, m);
  return 0;
}
"""


def test_alignas_struct_of_eight_halves_and_a_scaled_guard(tmp_path):
    """`struct alignas(16) pack8 { __half v[8]; }` at r * width + 8 * j: width % 8 == 0. The guard `8 * j <
    width` bounds j (j < cdiv(width, 8)), so the last pack ends at the row's end: the buffers are rows * width."""
    res = resolve(tmp_path, STRUCT_PROGRAM, "copy_rows")
    usable(res)
    assert item(res, "where") == "where: width % 8 == 0"
    assert item(res, "src") == "src: in[rows * width]"
    assert item(res, "dst") == "dst: out[rows * width]"


def test_offsets_already_multiples_of_the_width_need_nothing(tmp_path):
    """`((float4*)dst)[i]`: the offset is 4 * i whatever the sizes; the only clause is the grid's exact division."""
    res = resolve(tmp_path, STRUCT_PROGRAM, "copy_flat")
    usable(res)
    assert item(res, "where") == "where: n % 1024 == 0"
    assert item(res, "src") == "src: in[n]"


def test_a_multiple_the_spec_already_draws_covers_the_view(tmp_path):
    """`grid = m / 1024` makes the spec draw m as a multiple of 1024 already: no `m % 4 == 0` beside it."""
    res = resolve(tmp_path, STRUCT_PROGRAM, "tiles")
    usable(res)
    assert item(res, "where") == "where: n % 1024 == 0"


def test_type_layout_of_vectors_and_aligned_structs(tmp_path):
    from xlate.specs.infer.kernel import type_layout
    from xlate.specs.infer.program import program_for

    path = tmp_path / "t.cu"
    path.write_text(textwrap.dedent("""
    template <typename T, int N> struct alignas(sizeof(T) * N) vec { T v[N]; };
    struct alignas(16) pack8 { short v[8]; };
    struct three { float a, b, c; };
    __global__ void k(float* x) { x[0] = 0.f; }
    """).lstrip())
    program = program_for(parse_string(path.read_text(), str(path), "cuda"))
    assert type_layout(program, "float4") == (16, 16)
    assert type_layout(program, "float3") == (12, 4)
    assert type_layout(program, "__half2") == (4, 4)
    assert type_layout(program, "double2") == (16, 16)
    assert type_layout(program, "vec<float, 2>") == (8, 8)
    assert type_layout(program, "pack8") == (16, 16)
    assert type_layout(program, "three") == (12, 4)
