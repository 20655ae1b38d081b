"""Spec inference through more of the host code (issue [infer] item 1): launch configurations built field by
field, in arrays, from enums, template arguments and device properties; values set on some paths only or by
functions the inference cannot follow. Each test is a small program written for it, with the exact spec."""

from __future__ import annotations

import textwrap
from pathlib import Path

from xlate.parse import parse_string
from xlate.specs import resolve_spec


def resolve(tmp_path: Path, text: str, kernel: str, name: str = "main.cu"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip())
    unit = parse_string(path.read_text(), str(path), "cuda")
    return resolve_spec(unit, kernel)


SCALE_2D = """
__global__ void scale(const float* in, float* out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) out[y * w + x] = 2.0f * in[y * w + x];
}
"""


def test_dim3_declared_bare_then_set_field_by_field_from_an_enum(tmp_path):
    res = resolve(tmp_path, """
    enum { TILE = 16, NSTEP };
    """ + SCALE_2D + """
    int main() {
      int w = 1000, h = 600;
      float *a, *b;
      cudaMalloc(&a, w * h * sizeof(float));
      cudaMalloc(&b, w * h * sizeof(float));
      dim3 block(TILE, TILE / 2), grid;
      grid.x = (w + block.x - 1) / block.x;
      grid.y = (h + block.y - 1) / block.y;
      scale<<<grid, block>>>(a, b, w, h);
    }
    """, "scale")
    assert res.complete
    assert res.annotation() == ("in: in[h * w], out: out[h * w], w: size(1..1000), h: size(1..600), "
                                "grid: (cdiv(w, 16), cdiv(h, 8)), block: (16, 8)")


def test_a_dim3_field_set_to_a_value_not_followed_is_not_taken_as_one(tmp_path):
    res = resolve(tmp_path, SCALE_2D + """
    int main() {
      int w = 1000, h = 600;
      float *a, *b;
      cudaMalloc(&a, w * h * sizeof(float));
      cudaMalloc(&b, w * h * sizeof(float));
      dim3 grid;
      grid.x = (w + 15) / 16;
      grid.y = opaque_rows(h);
      scale<<<grid, dim3(16, 16)>>>(a, b, w, h);
    }
    """, "scale")
    # the grid's y is unknown: the kernel's guards give the grid, never (cdiv(w, 16), 1)
    assert res.items["grid"][0] == "grid: (cdiv(w, 16), cdiv(h, 16))"
    assert res.items["grid"][1].kind == "kernel"
    assert "the launch site's values are not shown" in res.items["grid"][1].detail


def test_launch_sizes_in_array_elements_and_brace_initialised_scalars(tmp_path):
    res = resolve(tmp_path, SCALE_2D + """
    void launch(float* a, float* b, int width, int height) {
      size_t local[2];
      size_t global[2];
      size_t tile = {16};
      local[0] = tile;
      local[1] = tile;
      global[0] = (width + tile - 1) / tile;
      global[1] = (height + tile - 1) / tile;
      dim3 g(global[0], global[1]);
      dim3 b2(local[0], local[1]);
      scale<<<g, b2>>>(a, b, width, height);
    }
    int main() {
      int w = 512, h = 256;
      float *a, *b;
      cudaMalloc(&a, w * h * sizeof(float));
      cudaMalloc(&b, w * h * sizeof(float));
      launch(a, b, w, h);
    }
    """, "scale")
    assert res.annotation() == ("in: in[h * w], out: out[h * w], w: size(1..512), h: size(1..256), "
                                "grid: (cdiv(w, 16), cdiv(h, 16)), block: (16, 16)")
    assert "through main -> launch" in res.notes[0]


def test_template_value_parameters_of_a_host_launcher(tmp_path):
    res = resolve(tmp_path, """
    template <int VEC>
    __global__ void copy(const float* in, float* out, int n) {
      int i = (blockIdx.x * blockDim.x + threadIdx.x) * VEC;
      for (int k = 0; k < VEC; k++)
        if (i + k < n) out[i + k] = in[i + k];
    }
    template <int vec, typename T>
    void run(T* d_in, T* d_out, int n) {
      const int threads = 128;
      const int work = threads * vec;
      copy<vec><<<(n + work - 1) / work, threads>>>(d_in, d_out, n);
    }
    int main() {
      int n = 1 << 16;
      float *x, *y;
      cudaMalloc(&x, n * sizeof(float));
      cudaMalloc(&y, n * sizeof(float));
      run<4, float>(x, y, n);
    }
    """, "copy")
    assert res.annotation() == "in: in[n], out: out[n], n: size(1..65536), VEC: 4, grid: cdiv(n, 512), block: 128"


def test_device_properties_fixed_and_device_dependent(tmp_path):
    res = resolve(tmp_path, """
    __global__ void fill(float* out, int n) {
      for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) out[i] = 1.0f;
    }
    int main() {
      int n = 100000;
      float* d;
      cudaMalloc(&d, n * sizeof(float));
      cudaDeviceProp prop;
      cudaGetDeviceProperties(&prop, 0);
      int sms = 0;
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
      fill<<<4 * sms, prop.warpSize * 8>>>(d, n);
    }
    """, "fill")
    # warpSize is 32 on every NVIDIA GPU; the SM count varies: a size of its own, up to an H200's
    assert res.annotation() == ("out: out[n], n: size(1..100000), multiProcessorCount: size(1..132), "
                                "grid: 4 * multiProcessorCount, block: 256")
    assert "132 on an H200" in res.items["multiProcessorCount"][1].detail


def test_a_value_set_on_one_path_only_is_not_the_value_after_the_branch(tmp_path):
    res = resolve(tmp_path, """
    enum mode_t { PLAIN, FAST };
    __global__ void twice(const float* in, float* out, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) out[i] = 2.0f * in[i];
    }
    int main(int argc, char** argv) {
      int n = 4096;
      mode_t mode = PLAIN;
      if (argc > 2) mode = FAST;
      float *a, *b;
      cudaMalloc(&a, n * sizeof(float));
      cudaMalloc(&b, n * sizeof(float));
      if (mode != FAST) twice<<<(n + 255) / 256, 256>>>(a, b, n);
    }
    """, "twice")
    # before: `mode` was FAST after the branch, and the launch under `mode != FAST` was never seen
    assert res.annotation() == "in: in[n], out: out[n], n: size(1..4096), grid: cdiv(n, 256), block: 256"
    assert {o.kind for _, o in res.items.values()} == {"host"}


def test_numbers_set_through_their_address_by_code_not_followed(tmp_path):
    res = resolve(tmp_path, SCALE_2D + """
    int main(int argc, char** argv) {
      int w, h;
      read_image_size(argv[1], &w, &h);
      const size_t bytes = (size_t)w * h * sizeof(float);
      float *a, *b;
      cudaMalloc(&a, bytes);
      cudaMalloc(&b, bytes);
      scale<<<dim3((w + 31) / 32, (h + 7) / 8), dim3(32, 8)>>>(a, b, w, h);
    }
    """, "scale")
    # w and h are the program's run-time values: the buffers stay tied to them (not a free `bytes`)
    assert res.annotation() == ("in: in[h * w], out: out[h * w], w: size(1..4096), h: size(1..4096), "
                                "grid: (cdiv(w, 32), cdiv(h, 8)), block: (32, 8)")
    assert res.items["w"][1].kind == "default"


def test_block_sizes_from_a_doubling_loop_and_sizes_capped_by_the_block(tmp_path):
    res = resolve(tmp_path, """
    __global__ void rows(const float* in, float* out, int cols) {
      int r = blockIdx.x;
      for (int c = threadIdx.x; c < cols; c += blockDim.x) out[r * cols + c] = in[r * cols + c];
    }
    __global__ void one_block(float* v, int n) {
      if (threadIdx.x < n) v[threadIdx.x] += 1.0f;
    }
    int main(int argc, char** argv) {
      int R = 64, C = atoi(argv[1]);
      float *a, *b;
      cudaMalloc(&a, R * C * sizeof(float));
      cudaMalloc(&b, R * C * sizeof(float));
      for (int bs = 32; bs <= 1024; bs = bs * 2) rows<<<R, bs>>>(a, b, C);
      one_block<<<1, C>>>(a, C);
    }
    """, "rows")
    assert res.annotation() == ("in: in[R * cols], out: out[R * cols], cols: size(1..4096), R: size(1..64), "
                                "bs: choice(32|64|128|256|512|1024), grid: R, block: bs")
    unit = parse_string((tmp_path / "main.cu").read_text(), str(tmp_path / "main.cu"), "cuda")
    one = resolve_spec(unit, "one_block")
    # a size that is the block's thread count stops at 1024 (the program's own guards are not followed)
    assert one.annotation() == "v: inout[R * n], n: size(1..1024), R: size(1..64), grid: 1, block: n"
    assert "at most what one launch allows" in one.items["n"][1].detail


def test_a_program_value_named_like_a_spec_key(tmp_path):
    res = resolve(tmp_path, """
    __global__ void partial(const float* in, float* out, int n) {
      float s = 0.0f;
      for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) s += in[i];
      atomicAdd(out, s);
    }
    int main() {
      int n = 1 << 20;
      float *a, *r;
      cudaMalloc(&a, n * sizeof(float));
      cudaMalloc(&r, sizeof(float));
      for (int grid = 1024; grid >= 64; grid = grid / 2) partial<<<grid, 128>>>(a, r, n);
    }
    """, "partial")
    assert res.complete
    assert res.annotation() == ("in: in[n], out: inout[1], n: size(1..1048576), grid_2: choice(1024|512|256|128|64), "
                                "grid: grid_2, block: 128")


def test_fields_of_structs_the_code_never_sets_stay_one_value(tmp_path):
    res = resolve(tmp_path, """
    struct Tile { int nnz; int* idx; };
    __global__ void scatter(const float* in, float* out, int nnz) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < nnz) out[i] = in[i];
    }
    void run(Tile* tiles, int t, const float* d_in, float* d_out, int threads) {
      dim3 grid;
      grid.x = (tiles[t].nnz + 127) / 128;
      scatter<<<grid, 128>>>(d_in, d_out, tiles[t].nnz);
    }
    """, "scatter")
    # tiles[t].nnz is filled where the code read does not show: one run-time value for the grid and the argument
    assert res.annotation() == "in: in[nnz], out: out[nnz], nnz: size(1..4096), grid: cdiv(nnz, 128), block: 128"


def test_a_parameter_passed_as_a_difference_keeps_the_buffers_tied_to_it(tmp_path):
    res = resolve(tmp_path, """
    __global__ void tail(const float* in, float* out, int m) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < m) out[i] = in[i];
    }
    int main(int argc, char** argv) {
      int total = atoi(argv[1]), skip = atoi(argv[2]);
      float *a, *b;
      cudaMalloc(&a, total * sizeof(float));
      cudaMalloc(&b, total * sizeof(float));
      tail<<<(total - skip + 255) / 256, 256>>>(a + skip, b, total - skip);
    }
    """, "tail")
    # m stands for total - skip: `a + skip` holds m floats and b holds m + skip (never a free `total` below m)
    assert res.annotation() == ("in: in[m], out: out[m + skip], m: size(1..4096), skip: size(1..4096), "
                                "grid: cdiv(m, 256), block: 256")


def test_pointers_offset_into_a_buffer_leave_an_element(tmp_path):
    res = resolve(tmp_path, """
    __global__ void first(const float* in, float* out) { out[0] = in[0]; }
    int main(int argc, char** argv) {
      int total = atoi(argv[1]), skip = atoi(argv[2]);
      float *a, *b;
      cudaMalloc(&a, total * sizeof(float));
      cudaMalloc(&b, sizeof(float));
      first<<<1, 1>>>(a + skip, b);
    }
    """, "first")
    assert res.annotation() == ("in: in[-skip + total], out: out[1], skip: size(1..4096), total: size(1..4096), "
                                "grid: 1, block: 1, where: -skip + total >= 1")


def test_an_allocation_the_kernel_may_read_past_under_the_spec_is_widened(tmp_path):
    res = resolve(tmp_path, """
    __global__ void copy(const float* in, float* out, int count) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < count) out[i] = in[i];
    }
    int main(int argc, char** argv) {
      int n = atoi(argv[1]), count = atoi(argv[2]);
      float *a, *b;
      cudaMalloc(&a, n * sizeof(float));
      cudaMalloc(&b, n * sizeof(float));
      copy<<<(count + 255) / 256, 256>>>(a, b, count);
    }
    """, "copy")
    # the program keeps count <= n; the spec draws them apart, so the buffers hold what the kernel reaches
    assert res.annotation() == ("in: in[max(count, n)], out: out[max(count, n)], count: size(1..4096), "
                                "n: size(1..4096), grid: cdiv(count, 256), block: 256")
    assert "at least what the kernel's accesses reach" in res.items["in"][1].detail


def test_a_gather_through_an_index_buffer_does_not_hide_the_direct_reads(tmp_path):
    # `x[i]` under the guard reaches `count`; `x[nbr[i]]` reaches what nbr's range allows. The unknown reach of
    # the gather must not stop the widening that the direct read needs (else x's tail past n is read: garbage)
    res = resolve(tmp_path, """
    __global__ void smooth(const float* x, const int* nbr, float* y, int count) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < count) y[i] = x[i] + x[nbr[i]];
    }
    int main(int argc, char** argv) {
      int n = atoi(argv[1]), count = atoi(argv[2]);
      float *x, *y; int* nbr;
      cudaMalloc(&x, n * sizeof(float));
      cudaMalloc(&y, count * sizeof(float));
      cudaMalloc(&nbr, count * sizeof(int));
      smooth<<<(count + 127) / 128, 128>>>(x, nbr, y, count);
    }
    """, "smooth")
    assert res.items["x"][0] == "x: in[max(count, n)]"
    assert "at least what the kernel's accesses reach" in res.items["x"][1].detail
    assert res.items["nbr"][0].startswith("nbr: in[count](0..")


def test_a_backward_sweep_needs_sizes_that_keep_its_fixed_offsets_in_the_buffer(tmp_path):
    # the last row's update reads row m - 2: m = 1 would read before the buffer, which the program never does
    res = resolve(tmp_path, """
    __global__ void sweep(float* x, const float* c, int m, int batch) {
      int t = blockIdx.x * blockDim.x + threadIdx.x;
      if (t >= batch) return;
      int last = batch * (m - 1) + t;
      x[last] -= c[last] * x[last - batch];
      for (int i = last - batch; i >= t; i -= batch) x[i] -= c[i] * x[i + batch];
    }
    int main(int argc, char** argv) {
      int m = atoi(argv[1]), batch = atoi(argv[2]);
      float *x, *c;
      cudaMalloc(&x, m * batch * sizeof(float));
      cudaMalloc(&c, m * batch * sizeof(float));
      sweep<<<(batch + 63) / 64, 64>>>(x, c, m, batch);
    }
    """, "sweep")
    assert res.items["where"][0] == "where: m >= 2"
    assert "no index falls below 0" in res.items["where"][1].detail


def test_a_lower_guard_is_not_read_as_a_size_bound(tmp_path):
    # `x[i - 1]` under `i > 0`: the lowest index is a lone -1, which says nothing about sizes
    res = resolve(tmp_path, """
    __global__ void diff(const float* x, float* y, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i > 0 && i < n) y[i] = x[i] - x[i - 1];
    }
    int main(int argc, char** argv) {
      int n = atoi(argv[1]);
      float *x, *y;
      cudaMalloc(&x, n * sizeof(float));
      cudaMalloc(&y, n * sizeof(float));
      diff<<<(n + 127) / 128, 128>>>(x, y, n);
    }
    """, "diff")
    assert "where" not in res.items


def test_std_integer_types_system_typedefs_and_float_ceil_division(tmp_path):
    res = resolve(tmp_path, """
    #include <cstdint>
    __global__ void stamp(clock_t* t, float* out, const std::uint64_t seed, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) { out[i] = (float)(seed % 7); t[i] = clock(); }
    }
    int main() {
      int n = 5000;
      clock_t* t; float* o;
      cudaMalloc(&t, n * sizeof(clock_t));
      cudaMalloc(&o, n * sizeof(float));
      int blocks = ceil(n / 256.0);
      stamp<<<blocks, 256>>>(t, o, 42, n);
    }
    """, "stamp")
    assert res.annotation() == ("t: out[n], out: out[n], seed: const(42), n: size(1..5000), grid: cdiv(n, 256), "
                                "block: 256")
    assert res.spec is not None and res.spec.param("t").ctype == "long"  # clock_t read as what it is


def test_template_arguments_given_by_name_and_single_thread_kernels(tmp_path):
    res = resolve(tmp_path, """
    template <int BS, int ITEMS>
    __global__ void tile(const float* a, float* out, int n) {
      int i = (blockIdx.x * BS + threadIdx.x) * ITEMS;
      for (int k = 0; k < ITEMS; k++) if (i + k < n) out[i + k] = a[i + k];
    }
    __global__ void dump(const int* v, const int len) {
      int idx = blockIdx.x * blockDim.x + threadIdx.x;
      if (idx == 0) for (int i = 0; i < len; i++) printf("%d ", v[i]);
    }
    int main() {
      const int n = 1 << 12, block_size = 128, items = 4;
      float *a, *o;
      cudaMalloc(&a, n * sizeof(float));
      cudaMalloc(&o, n * sizeof(float));
      tile<block_size, items><<<(n + block_size * items - 1) / (block_size * items), block_size>>>(a, o, n);
    }
    """, "tile")
    assert res.annotation() == ("a: in[n], out: out[n], n: size(1..4096), BS: 128, ITEMS: 4, grid: cdiv(n, 512), "
                                "block: 128")
    unit = parse_string((tmp_path / "main.cu").read_text(), str(tmp_path / "main.cu"), "cuda")
    dump = resolve_spec(unit, "dump")
    # only thread 0 works: one block holds it (no launch site to say more)
    assert dump.annotation() == "v: in[len], len: size(1..4096), grid: 1, block: 256"


def test_a_typedef_in_preprocessor_branches_takes_the_branch_the_build_selects(tmp_path):
    # `real` is double unless the build defines USE_SP (it does not here; a Makefile -D would turn it to float)
    header = """
    #ifndef COMMON_H
    #define COMMON_H
    #ifdef USE_SP
    typedef float real;
    #else
    typedef double real;
    #endif
    #endif
    """
    single = tmp_path / "single"  # the same program built with -DUSE_SP
    single.mkdir()
    for folder in (tmp_path, single):
        (folder / "common.h").write_text(textwrap.dedent(header).lstrip())
    (single / "Makefile").write_text("CFLAGS = -O3 -DUSE_SP\nall:\n\tnvcc $(CFLAGS) main.cu\n")
    main = """
    #include "common.h"
    __global__ void zero(int n, real* a) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) a[i] = 0;
    }
    int main() { real* a; int n = 1000; cudaMalloc(&a, n * sizeof(real)); zero<<<(n + 255) / 256, 256>>>(n, a); }
    """
    res = resolve(tmp_path, main, "zero")
    assert res.spec is not None and res.spec.param("a").ctype == "double"
    res = resolve(single, main, "zero")
    assert res.spec is not None and res.spec.param("a").ctype == "float"


def test_an_accessor_macro_assigned_to_is_a_write(tmp_path):
    # `#define F(i, j) F[(i) * (N + 2) + (j)]`: `F(i, j) = ...` writes F, which is an output, not an input
    res = resolve(tmp_path, """
    #define N 64
    #define F(I, J) F[((I) * ((N) + 2)) + (J)]
    #define U(I, J) U[((I) * ((N) + 2)) + (J)]
    __global__ void copy_rows(const float* U, float* F) {
      int i = blockIdx.x + 1, j = threadIdx.x + 1;
      F(i, j) = 2.0f * U(i, j);
    }
    int main() {
      float *u, *f; size_t size = (N + 2) * (N + 2);
      cudaMalloc(&u, size * sizeof(float)); cudaMalloc(&f, size * sizeof(float));
      copy_rows<<<N, N>>>(u, f);
    }
    """, "copy_rows")
    assert res.spec is not None
    assert res.spec.param("F").role == "out" and res.spec.param("U").role == "in"


def test_a_length_divided_from_a_byte_count_must_hold_an_element(tmp_path):
    # `result_bytes / 4` floats: a byte count below 4 would be an empty buffer the kernel still writes
    res = resolve(tmp_path, """
    __global__ void dot(const float* a, const float* b, float* result, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) atomicAdd(result, a[i] * b[i]);
    }
    int main() {
      const int n = 1 << 20;
      const size_t result_bytes = 4;
      float *a, *b, *r;
      cudaMalloc(&a, n * sizeof(float)); cudaMalloc(&b, n * sizeof(float)); cudaMalloc(&r, result_bytes);
      dot<<<(n + 127) / 128, 128>>>(a, b, r, n);
    }
    """, "dot")
    assert "result: inout[result_bytes / 4]" in res.annotation()
    assert res.annotation().endswith("where: result_bytes / 4 >= 1")


def test_definitions_inside_an_if_group_are_read(tmp_path):
    # `#if 1` groups hold typedefs and device functions like any other code (their #if expression is not a body)
    res = resolve(tmp_path, """
    #if 1
    typedef double real;
    __device__ real twice(real x) { return 2 * x; }
    #endif
    __global__ void k(real* a, int n) { int i = threadIdx.x; if (i < n) a[i] = twice(a[i]); }
    int main() { real* a; cudaMalloc(&a, 100 * sizeof(real)); k<<<1, 100>>>(a, 100); }
    """, "k")
    assert res.spec is not None and res.spec.param("a").ctype == "double"


def test_a_bound_narrowed_by_a_data_dependent_search_is_not_the_value_it_started_from(tmp_path):
    # `lo` starts as a copy of the run-time `cols` and a search over data that inference cannot read narrows it:
    # after the loop it is some column in 0..cols, not `cols` itself. Taking the value it started from tied the
    # launch to the path where the search finds nothing (lo = cols - 1, hi = 1: a grid that is empty or negative).
    res = resolve(tmp_path, """
    #define MIN_OF(a, b) ((a) < (b) ? (a) : (b))
    #define MAX_OF(a, b) ((a) > (b) ? (a) : (b))
    __global__ void band(const float* in, float* out, int lo, int hi, int cols) {
      int c = lo + blockIdx.x * blockDim.x + threadIdx.x;
      if (c <= hi) out[c] = in[c] + 1.0f;
    }
    int main(int argc, char** argv) {
      int cols = atoi(argv[1]);
      float* h = (float*)malloc(cols * sizeof(float));
      read_values(h, cols);
      int lo = cols, hi = 1;
      for (int c = 1; c < cols; c++) {
        if (h[c] > 0.5f) {
          lo = MIN_OF(lo, c);
          hi = MAX_OF(hi, c);
        }
      }
      lo = MAX_OF(lo - 1, 0);
      float *a, *b;
      cudaMalloc(&a, cols * sizeof(float));
      cudaMalloc(&b, cols * sizeof(float));
      band<<<(hi - lo + 128) / 128, 128>>>(a, b, lo, hi, cols);
    }
    """, "band")
    spec = res.annotation()
    assert "lo: const(" not in spec and "cols - 1" not in spec, spec
