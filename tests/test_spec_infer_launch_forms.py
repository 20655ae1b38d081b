"""Launch sites written in forms PyTorch extensions use: a kernel template named through its namespace
(`dev::k<float, 16, 32><<<...>>>`), `dim3 g = {a, b, c};`, and a block capped by the program's own `min` helper
among overloads for vector types (`min(int, int)` beside `min(uint4, uint4)`)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from xlate.parse import parse_string
from xlate.specs import resolve_spec

PROGRAM = """
#include <cstdlib>
struct quad { unsigned x, y, z, w; };
inline quad make_quad(unsigned a, unsigned b, unsigned c, unsigned d) { quad q = {a, b, c, d}; return q; }
inline quad min(quad a, quad b) { return make_quad(a.x < b.x ? a.x : b.x, a.y, a.z, a.w); }
inline int min(int a, int b) { return a < b ? a : b; }

namespace dev {
template <typename T, int BX, int BY>
__global__ void tile_fill(T* out, int rows, int cols) {
  int r = blockIdx.x * BY + threadIdx.y;
  int c = threadIdx.x;
  if (r < rows && c < cols && c < BX) out[r * cols + c] = (T)(r + c);
}
__global__ void clip_copy(const float* in, float* out, int total) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += blockDim.x * gridDim.x) out[i] = in[i];
}
__global__ void plane(float* out, int h, int w) {
  int x = blockIdx.y * blockDim.x + threadIdx.x;
  int y = blockIdx.z;
  if (x < w && y < h) out[blockIdx.x * h * w + y * w + x] = 1.0f;
}
}

int main(int argc, char** argv) {
  int rows = atoi(argv[1]);
  int total = atoi(argv[2]);
  float *out, *in, *o2, *o3;
  cudaMalloc(&out, rows * 16 * sizeof(float));
  cudaMalloc(&in, total * sizeof(float));
  cudaMalloc(&o2, total * sizeof(float));
  dim3 tb(16, 32);
  dev::tile_fill<float, 16, 32><<<(rows + 31) / 32, tb>>>(out, rows, 16);
  int cap = 512;
  dim3 threads = dim3(min(cap, total));
  dev::clip_copy<<<(total + threads.x - 1) / threads.x, threads>>>(in, o2, total);
  unsigned n = 3, h = 5, w = 40;
  cudaMalloc(&o3, n * h * w * sizeof(float));
  dim3 pb = {32, 1, 1};
  dim3 pg = {n, (w + 31) / 32, h};
  dev::plane<<<pg, pb>>>(o3, h, w);
  return 0;
}
"""


def spec_of(tmp_path: Path, kernel: str) -> str:
    path = tmp_path / "main.cu"
    path.write_text(textwrap.dedent(PROGRAM).lstrip())
    res = resolve_spec(parse_string(path.read_text(), str(path), "cuda"), kernel)
    assert res.complete, res.holes
    return res.annotation()


def test_a_namespaced_template_launch_gives_its_arguments(tmp_path):
    assert spec_of(tmp_path, "tile_fill") == ("out: out[max(16 * rows, cols * rows - cols + min(16, cols))], "
                                              "rows: size(1..4096), cols: const(16), T: float32, BX: 16, BY: 32, "
                                              "grid: cdiv(rows, 32), block: (16, 32)")


def test_the_programs_int_min_is_chosen_among_overloads(tmp_path):
    assert spec_of(tmp_path, "clip_copy") == ("in: in[total], out: out[total], total: size(1..4096), "
                                              "grid: cdiv(total, min(512, total)), block: min(512, total)")


def test_a_brace_initialised_dim3_is_the_grid(tmp_path):
    assert spec_of(tmp_path, "plane") == ("out: out[h * w * n], h: size(1..5), w: size(1..40), n: size(1..3), "
                                          "grid: (n, cdiv(w, 32), h), block: 32")


ITERATOR_KERNEL = """
#include <cstdlib>
#include <functional>
template <typename Iter, class Combine>
__global__ void fold_pairs(Iter src, float* dst, int pairs, Combine combine) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < pairs) dst[i] = combine(src[2 * i], src[2 * i + 1]);
}
int main(int argc, char** argv) {
  int pairs = atoi(argv[1]);
  float *src, *dst;
  cudaMalloc(&src, 2 * pairs * sizeof(float));
  cudaMalloc(&dst, pairs * sizeof(float));
  fold_pairs<<<(pairs + 127) / 128, 128>>>(src, dst, pairs, std::plus<float>());
  return 0;
}
"""


def test_a_template_type_deduced_from_a_pointer_or_a_functor_is_a_hole(tmp_path):
    """`Iter src` given a `float*` is a pointer and `Combine` a class: the gate's float32 for either would not
    compile, so the spec says so rather than drawing numbers for them."""
    path = tmp_path / "main.cu"
    path.write_text(textwrap.dedent(ITERATOR_KERNEL).lstrip())
    res = resolve_spec(parse_string(path.read_text(), str(path), "cuda"), "fold_pairs")
    assert not res.complete
    assert "a pointer the launch passes for 'src'" in res.holes["Iter"]
    assert "a function object the launch passes for 'combine' (std::plus<float>())" in res.holes["Combine"]


OPTIONAL_GRAD = """
#include <cstdlib>
__global__ void accumulate_rows(const float* g, float* grad_rows, int rows, int width) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  if (grad_rows != nullptr) {
    for (int k = 0; k < 3; ++k) gpuAtomicAdd(grad_rows + r * width + k, g[r]);
  }
}
void run(const float* g, float* grad_rows, int rows, int width, bool want) {
  accumulate_rows<<<(rows + 63) / 64, 64>>>(g, want ? grad_rows : nullptr, rows, width);
}
int main(int argc, char** argv) {
  int rows = atoi(argv[1]);
  float *g, *gr;
  cudaMalloc(&g, rows * sizeof(float));
  cudaMalloc(&gr, rows * 3 * sizeof(float));
  run(g, gr, rows, 3, argc > 2);
  return 0;
}
"""


def test_a_buffer_or_null_on_an_unknown_flag_is_the_buffer(tmp_path):
    """`want ? grad_rows : nullptr`: the buffer (its allocation gives the length), and PyTorch's gpuAtomicAdd is an
    atomic whose address counts for the reach like atomicAdd's."""
    path = tmp_path / "main.cu"
    path.write_text(textwrap.dedent(OPTIONAL_GRAD).lstrip())
    res = resolve_spec(parse_string(path.read_text(), str(path), "cuda"), "accumulate_rows")
    assert res.complete, res.holes
    assert res.spec is not None and res.spec.param("grad_rows").dims == ["3 * rows"]
    assert res.spec.param("grad_rows").role == "inout"


def test_gpu_atomic_add_reaches_like_atomic_add(tmp_path):
    """No allocation in sight (a launcher nobody here calls): the length is what the atomics reach."""
    path = tmp_path / "main.cu"
    path.write_text(textwrap.dedent(OPTIONAL_GRAD.split("int main")[0]).lstrip())
    res = resolve_spec(parse_string(path.read_text(), str(path), "cuda"), "accumulate_rows")
    assert res.spec is not None and res.complete, res.holes
    reach = res.spec.param("grad_rows").dims
    with_atomic_add = path.read_text().replace("gpuAtomicAdd", "atomicAdd")
    path.write_text(with_atomic_add)
    again = resolve_spec(parse_string(path.read_text(), str(path), "cuda"), "accumulate_rows")
    assert again.spec is not None and reach == again.spec.param("grad_rows").dims == ["rows * width - width + 3"]


SHMEM_CONSTANT = """
#include <cstdint>
#include <cstdlib>
__global__ void halve(float* x, int n) {
  extern __shared__ float stage[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 0.5f;
}
__global__ void window(const float* in, float* out, int n) {
  extern __shared__ float win[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  win[threadIdx.x] = i < n ? in[i] : 0.0f;
  __syncthreads();
  if (i < n) out[i] = win[threadIdx.x] + win[(threadIdx.x + 1) % blockDim.x];
}
void launch(float* x, const float* in, float* out, int n) {
  dim3 threads(128);
  dim3 grid((n + threads.x - 1) / threads.x);
  int64_t no_shared = 0;
  halve<<<grid, threads, no_shared>>>(x, n);
  const size_t window_bytes = 128 * sizeof(float);
  window<<<grid, threads, window_bytes>>>(in, out, n);
}
int main(int argc, char** argv) {
  int n = atoi(argv[1]);
  float *x, *in, *out;
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&in, n * sizeof(float));
  cudaMalloc(&out, n * sizeof(float));
  launch(x, in, out, n);
  return 0;
}
"""


def test_a_program_constant_given_only_as_dynamic_shared_memory_is_that_many_bytes(tmp_path):
    """`int64_t no_shared = 0;` (PyTorch extensions' `shmem_size = 0`) and `const size_t bytes = 128 *
    sizeof(float)` passed as the launch's shared memory are exact: drawing them as sizes (1..4096) would hand the
    kernel's `extern __shared__` array other sizes than the program's, or none at all where it passes 0."""
    path = tmp_path / "main.cu"
    path.write_text(textwrap.dedent(SHMEM_CONSTANT).lstrip())
    unit = parse_string(path.read_text(), str(path), "cuda")
    halve = resolve_spec(unit, "halve")
    assert halve.complete, halve.holes
    assert halve.annotation() == "x: inout[n], n: size(1..4096), grid: cdiv(n, 128), block: 128, shmem: 0"
    window = resolve_spec(unit, "window")
    assert window.complete, window.holes
    assert window.annotation() == ("in: in[n], out: out[n], n: size(1..4096), grid: cdiv(n, 128), block: 128, "
                                   "shmem: 512")


GRID_RANK = """
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void axpy_rank(const float* x, float* y, float a, unsigned int n) {
  auto idx = cg::this_grid().thread_rank();
  if (idx >= n) return;
  y[idx] = a * x[idx] + y[idx];
}
__global__ void tile_rank(float* y, unsigned int n) {
  cg::thread_block b = cg::this_thread_block();
  unsigned int i = blockIdx.x * b.size() + b.thread_rank();
  if (i < n) y[i] = 1.0f;
}
"""


def test_cooperative_groups_ranks_are_thread_indices(tmp_path):
    """`cg::this_grid().thread_rank()` is the global thread index (on the one-dimensional launch its guard gives),
    and a block's `size()` and `thread_rank()` are blockDim and threadIdx: the guards bound them as they would
    `blockIdx.x * blockDim.x + threadIdx.x` (before, the rank was an unknown value and the launch one thread)."""
    path = tmp_path / "main.cu"
    path.write_text(textwrap.dedent(GRID_RANK).lstrip())
    unit = parse_string(path.read_text(), str(path), "cuda")
    for kernel, expected in (
            ("axpy_rank", "x: in[n], y: inout[n], a: scalar, n: size(1..4096), grid: cdiv(n, 256), block: 256"),
            ("tile_rank", "y: out[n], n: size(1..4096), grid: cdiv(n, 256), block: 256")):
        res = resolve_spec(unit, kernel)
        assert res.complete, res.holes
        assert res.annotation() == expected


PER_IMAGE = """
#include <cooperative_groups.h>
#include <cstdlib>
namespace cg = cooperative_groups;
__global__ void per_image(const float* src, float* dst, int h, int w) {
  auto block = cg::this_thread_block();
  int img = block.group_index().x;
  int r = block.group_index().y * 8 + block.thread_index().y;
  int c = block.group_index().z * 8 + block.thread_index().x;
  src += img * h * w;
  dst += img * h * w;
  if (r < h && c < w) dst[r * w + c] = 2.0f * src[r * w + c];
}
int main(int argc, char** argv) {
  int images = atoi(argv[1]), h = atoi(argv[2]), w = atoi(argv[3]), len = atoi(argv[4]);
  float *src, *dst;
  cudaMalloc(&src, len * sizeof(float));
  cudaMalloc(&dst, images * h * w * sizeof(float));
  dim3 grid(images, (h + 7) / 8, (w + 7) / 8);
  dim3 block(8, 8);
  per_image<<<grid, block>>>(src, dst, h, w);
  return 0;
}
"""


def test_cooperative_groups_block_and_thread_indices_are_the_builtins(tmp_path):
    """`block.group_index().x` is blockIdx.x and `block.thread_index().y` threadIdx.y: the per-image pointer move
    `src += img * h * w` is followed, so the length the program allocates apart (`len`) is raised to what the
    kernel reaches (before, `src: in[len]`, and a case with len < images * h * w read past the buffer)."""
    path = tmp_path / "main.cu"
    path.write_text(PER_IMAGE)
    res = resolve_spec(parse_string(path.read_text(), str(path), "cuda"), "per_image")
    assert res.complete, res.holes
    assert res.annotation() == ("src: in[max(len, h * w * images)], dst: out[h * w * images], h: size(1..4096), "
                                "w: size(1..4096), images: size(1..4096), len: size(1..4096), "
                                "grid: (images, cdiv(h, 8), cdiv(w, 8)), block: (8, 8)")
