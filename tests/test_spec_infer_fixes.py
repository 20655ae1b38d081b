"""Spec inference fixes from the H200 run of the inferred specs (issue #15 [infer]): complete specs the gate could
not use, and specs under which a correct source faulted. Each test is a small host+kernel program written for it,
with the exact spec inferred, and the gate's own case strategy drawn from on the CPU (bench/spec_coverage.py's
probe) where the fault was that the gate could not use the spec."""

from __future__ import annotations

import textwrap

from tests.spec_inference import resolve, usable
from xlate.parse import parse_string
from xlate.specs import resolve_spec

# -- template types the launch gives through a launcher ------------------------------------------------------


def test_template_types_deduced_at_the_launchers_call_and_defaults(tmp_path):
    """`finish<T, I><<<...>>>` inside `run(float*, int, int)` called without template arguments: T and I are
    deduced at the call (T from the pointer, I from its default), so the buffer is `n` floats, not
    `4 * n / sizeof(T)`, and `n` is an int size, not a float scalar."""
    res = resolve(tmp_path, """
    template <typename T, typename I>
    __global__ void finish(T* acc, I n, I m) {
      I i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) acc[i] = acc[i] / m;
    }
    template <typename T, typename I = int>
    void run(T* acc, I n, I m) {
      finish<T, I><<<(n + 127) / 128, 128>>>(acc, n, m);
    }
    int main(int argc, char** argv) {
      int n = atoi(argv[1]);
      float* d;
      cudaMalloc((void**)&d, n * sizeof(float));
      run(d, n, 7);
    }
    """, "finish")
    assert res.annotation() == ("acc: inout[n], n: size(1..4096), m: scalar(0..14), T: float32, I: int32, "
                                "grid: cdiv(n, 128), block: 128")
    usable(res)


def test_template_type_through_a_typedef_and_an_int_argument(tmp_path):
    """A kernel launched with no template arguments from a launcher: `Off` from an `off_t2*` allocation
    (`using off_t2 = int`), `Idx` from the launcher's own `Idx` parameter, bound to int at its call."""
    res = resolve(tmp_path, """
    using off_t2 = int;
    template <typename Off, typename Idx>
    __global__ void count(int* hist, const Off* begins, Idx segs) {
      Idx g = blockIdx.x * blockDim.x + threadIdx.x;
      if (g < segs) atomicAdd(&hist[begins[g] & 7], 1);
    }
    template <typename Off, typename Idx>
    void launch(int* hist, const Off* begins, const Idx segs) {
      count<<<(segs + 255) / 256, 256>>>(hist, begins, segs);
    }
    int main(int argc, char** argv) {
      int segs = atoi(argv[1]);
      off_t2* b;
      int* h;
      cudaMalloc((void**)&b, sizeof(off_t2) * (segs + 1));
      cudaMalloc((void**)&h, 8 * sizeof(int));
      launch(h, b, segs);
    }
    """, "count")
    assert res.annotation() == ("hist: inout[8], begins: in[segs + 1], segs: size(1..4096), Off: int32, Idx: int32, "
                                "grid: cdiv(segs, 256), block: 256")
    usable(res)


# -- specs the gate could not draw from are holes, or drawable -----------------------------------------------


def test_types_built_from_a_template_parameter_are_holes(tmp_path):
    """`typename V::Scalar` and `Acc<T, 2>` are not types the gate can draw: the spec is not complete (it was,
    and the fuzzer died on it)."""
    res = resolve(tmp_path, """
    template <typename T, int D> struct Acc { T* data; int stride[D]; };
    template <typename V>
    __global__ void axpy(int n, typename V::Scalar a, const typename V::Scalar* x, typename V::Scalar* y) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) y[i] = a * x[i] + y[i];
    }
    template <typename T>
    __global__ void fill(Acc<T, 2> out, T v) {
      out.data[threadIdx.x] = v;
    }
    """, "axpy")
    assert not res.complete and {"a", "x", "y"} <= set(res.holes)
    res = resolve(tmp_path, (tmp_path / "main.cu").read_text(), "fill")
    assert not res.complete and set(res.holes) == {"out"}


def test_divisors_are_at_least_one_and_nested_divisions_fold(tmp_path):
    """A kernel dividing by a scalar (`c % g`, `c / g`) gets it from 1 up, not -100..100 (the gate's length
    expression `(c - 1) / g` divided by zero); `n / 2 / 8 / 8` is `n / 128`, drawn as multiples of 128."""
    res = resolve(tmp_path, """
    __global__ void shuffle(int g, int k, const float* x, float* y) {
      int c = blockIdx.x;
      y[blockIdx.y * gridDim.x + c] = x[blockIdx.y * gridDim.x + (c % g) * k + c / g];
    }
    __global__ void groups(const float* in, float* out, int n) {
      int b = blockIdx.x;
      out[b * 8 + threadIdx.x] = in[b * 8 + threadIdx.x] * 2.0f;
    }
    int main(int argc, char** argv) {
      int g = atoi(argv[1]);
      int n = atoi(argv[2]);
      float *x, *y;
      cudaMalloc((void**)&x, n * sizeof(float));
      cudaMalloc((void**)&y, n * sizeof(float));
      shuffle<<<dim3(64, 4), 1>>>(g, 64 / g, x, y);
      groups<<<n / 2 / 8 / 8, 8>>>(x, y, n);
    }
    """, "shuffle")
    assert res.annotation() == ("g: scalar(1..16), k: const(64 / g), x: in[max(n, g * k - k + 63 / g + 193)], "
                                "y: out[max(256, n)], n: size(1..4096), grid: (64, 4), block: 1")
    usable(res)
    res = resolve(tmp_path, (tmp_path / "main.cu").read_text(), "groups")
    assert res.annotation() == "in: in[n], out: out[n], n: size(1..4096), grid: n / 128, block: 8, where: n % 128 == 0"
    usable(res)


def test_a_grid_that_rounds_up_an_interior_needs_no_exact_division(tmp_path):
    """`(nx + 13) / 16` covers the interior `nx - 2` rounded up: no `(nx + 13) % 16 == 0` (which the gate can
    only filter for, failing 255 draws in 256 with two such sizes), just a grid of at least one block."""
    res = resolve(tmp_path, """
    __global__ void relax(const float* u, float* v, int nx, int ny) {
      int i = blockIdx.x * blockDim.x + threadIdx.x + 1;
      int j = blockIdx.y * blockDim.y + threadIdx.y + 1;
      if (i < nx - 1 && j < ny - 1) v[j * nx + i] = 0.25f * (u[j * nx + i - 1] + u[j * nx + i + 1] + u[(j - 1) * nx + i] + u[(j + 1) * nx + i]);
    }
    int main(int argc, char** argv) {
      int nx = atoi(argv[1]), ny = atoi(argv[2]);
      float *u, *v;
      cudaMalloc((void**)&u, nx * ny * sizeof(float));
      cudaMalloc((void**)&v, nx * ny * sizeof(float));
      relax<<<dim3((nx + 13) / 16, (ny + 13) / 16), dim3(16, 16)>>>(u, v, nx, ny);
    }
    """, "relax")
    assert res.annotation() == ("u: in[nx * ny], v: out[nx * ny], nx: size(1..4096), ny: size(1..4096), "
                                "grid: ((nx + 13) / 16, (ny + 13) / 16), block: (16, 16), "
                                "where: (nx + 13) / 16 >= 1 and (ny + 13) / 16 >= 1")
    usable(res)


def test_buffers_beyond_the_gates_budget_and_huge_by_value_structs_are_holes(tmp_path):
    """A kernel compiled for `#define LEN 80000` samples of 8192 rows needs 1.3 G numbers whatever is drawn: more
    than the gate's largest case (LARGEST_CASE), so the spec is not complete; nor is a 4096 byte struct by value
    (Hypothesis cannot draw that many lanes)."""
    res = resolve(tmp_path, """
    #define ROWS 8192
    #define LEN 80000
    struct Big { char bytes[4096]; };
    __global__ void rows(const float* x, float* y) {
      int r = blockIdx.x * blockDim.x + threadIdx.x;
      if (r < ROWS) for (int t = 0; t < LEN; ++t) y[r * LEN + t] = 2.0f * x[r * LEN + t];
    }
    __global__ void big(Big b, int* out) { out[0] = b.bytes[7]; }
    int main() {
      float *x, *y;
      int* o;
      Big b;
      cudaMalloc((void**)&x, ROWS * LEN * sizeof(float));
      cudaMalloc((void**)&y, ROWS * LEN * sizeof(float));
      cudaMalloc((void**)&o, sizeof(int));
      rows<<<ROWS / 256, 256>>>(x, y);
      big<<<1, 1>>>(b, o);
    }
    """, "rows")
    assert not res.complete and len(res.holes) == 1 and "more than the gate fuzzes" in next(iter(res.holes.values()))
    res = resolve(tmp_path, (tmp_path / "main.cu").read_text(), "big")
    assert not res.complete and set(res.holes) == {"b"}


def test_a_template_value_given_by_an_unbound_name_is_a_hole(tmp_path):
    """`k<outs><<<...>>>` inside a launcher whose own `outs` nothing binds: `outs: outs` named nothing the gate
    knows; it is a hole."""
    res = resolve(tmp_path, """
    template <int outs>
    __global__ void split(const float* x, float* y, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) for (int o = 0; o < outs; ++o) y[o * n + i] = x[i];
    }
    template <int outs>
    void run(const float* x, float* y, int n) { split<outs><<<(n + 255) / 256, 256>>>(x, y, n); }
    """, "split")
    assert not res.complete and "outs" in res.holes


# -- specs under which a correct source faulted ---------------------------------------------------------------


def test_elements_passed_to_reference_parameters_and_auto_pointers_are_written(tmp_path):
    """`solve(out[i], out[i + n])` into `float& a, float& b` writes `out` (it was `in`, and the gate saw an input
    change: now it is compared); so does `auto c = count + b; *c = 0` (an alias the kernel declares with `auto`)."""
    res = resolve(tmp_path, """
    __device__ void solve(float x, float& a, float& b) { a = x * 2.0f; b = x + 1.0f; }
    __global__ void pairs(const float* in, float* out, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) solve(in[i], out[i], out[i + n]);
    }
    __global__ void tally(const float* s, int* count, int n) {
      auto c = count + blockIdx.x;
      if (threadIdx.x == 0) *c = 0;
      __syncthreads();
      for (int i = threadIdx.x; i < n; i += blockDim.x)
        if (s[blockIdx.x * n + i] > 0.5f) atomicAdd(&c[0], 1);
    }
    int main(int argc, char** argv) {
      int n = atoi(argv[1]), b = atoi(argv[2]);
      float *x, *y; int* k;
      cudaMalloc((void**)&x, b * n * sizeof(float));
      cudaMalloc((void**)&y, 2 * n * sizeof(float));
      cudaMalloc((void**)&k, b * sizeof(int));
      pairs<<<(n + 255) / 256, 256>>>(x, y, n);
      tally<<<b, 128>>>(x, k, n);
    }
    """, "pairs")
    assert res.items["out"][0] == "out: inout[2 * n]"  # compared as an output (the callee may also read it)
    res = resolve(tmp_path, (tmp_path / "main.cu").read_text(), "tally")
    assert res.annotation() == "s: in[n * b], count: inout[b], n: size(1..4096), b: size(1..4096), grid: b, block: 128"


def test_a_scalar_index_gets_a_buffer_that_holds_it(tmp_path):
    """`g[idx] += v` with `idx` a small scalar and `g` allocated `nx * ny * nz` floats: the sizes are drawn apart
    from the program's, so the buffer holds at least `idx + 1` (it was 1 element long when idx was 8)."""
    res = resolve(tmp_path, """
    typedef long long llint;
    __global__ void add_source(float* g, llint idx, float v) { g[idx] += v; }
    struct Grid { int nx, ny, nz; };
    void run(Grid gr, float v, llint at) {
      float* g;
      cudaMalloc((void**)&g, gr.nx * gr.ny * gr.nz * sizeof(float));
      add_source<<<1, 1>>>(g, at, v);
    }
    """, "add_source")
    assert res.items["g"][0] == "g: inout[max(idx + 1, nx * ny * nz)]"
    usable(res)


def test_a_variable_holding_a_sizeof_is_a_number_not_a_size(tmp_path):
    """`unsigned szf = sizeof(float)` in byte counts is 4, not a size drawn from 1..4 (which made every buffer
    `n * szf / 4` and a kernel write past a quarter-length buffer)."""
    res = resolve(tmp_path, """
    __global__ void scale(float* d, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) d[i] *= 2.0f;
    }
    int main(int argc, char** argv) {
      int n = atoi(argv[1]);
      unsigned szf = sizeof(float);
      float* d;
      cudaMalloc((void**)&d, n * szf);
      scale<<<(n + 255) / 256, 256>>>(d, n);
    }
    """, "scale")
    assert res.annotation() == "d: inout[n], n: size(1..4096), grid: cdiv(n, 256), block: 256"


def test_sizes_of_the_grids_y_and_z_stop_at_what_a_launch_allows(tmp_path):
    """`grid(cdiv(w, 16), cdiv(h, 16), b * c)`: gridDim.z stops at 65535, so b and c stop at 255 (drawn to 4096
    each, the launch failed with an invalid argument)."""
    res = resolve(tmp_path, """
    __global__ void up(const float* x, float* y, int b, int c, int h, int w) {
      int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y * blockDim.y + threadIdx.y;
      if (i < w && j < h) y[(blockIdx.z * h + j) * w + i] = x[(blockIdx.z * h + j) * w + i];
    }
    int main(int argc, char** argv) {
      int b = atoi(argv[1]), c = atoi(argv[2]), h = atoi(argv[3]), w = atoi(argv[4]);
      float *x, *y;
      cudaMalloc((void**)&x, b * c * h * w * sizeof(float));
      cudaMalloc((void**)&y, b * c * h * w * sizeof(float));
      dim3 block(16, 16);
      dim3 grid((w + 15) / 16, (h + 15) / 16, b * c);
      up<<<grid, block>>>(x, y, b, c, h, w);
    }
    """, "up")
    assert res.items["b"][0] == "b: size(1..255)" and res.items["c"][0] == "c: size(1..255)"
    usable(res)


def test_a_kernel_built_for_fixed_large_sizes_gets_a_spec_the_gate_fuzzes_at_that_size(tmp_path):
    """`#define N 100000000` (a kernel built for one large problem): 200 M numbers in its smallest case, more
    than the gate's usual budget but within its largest case: the spec is complete, and the gate on a GPU fuzzes
    it at that size with few examples, while an interpreter's budget refuses it with a reason."""
    from xlate.specs.model import LARGEST_CASE
    from xlate.verify.api import (
        CPU_BUDGET,
        CPU_SIZE_CAP,
        GPU_BUDGET,
        GPU_SIZE_CAP,
        LARGE_CASE_EXAMPLES,
        case_budget,
    )

    res = resolve(tmp_path, """
    #define N 100000000
    __global__ void twice(const float* x, float* y) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < N) y[i] = 2.0f * x[i];
    }
    int main() {
      float *x, *y;
      cudaMalloc((void**)&x, N * sizeof(float));
      cudaMalloc((void**)&y, N * sizeof(float));
      twice<<<(N + 255) / 256, 256>>>(x, y);
    }
    """, "twice")
    assert res.annotation() == "x: in[100000000], y: out[100000000], grid: 390625, block: 256"
    usable(res)
    budget, note, refusal = case_budget(res.spec, GPU_BUDGET, GPU_SIZE_CAP)
    assert budget == min(LARGEST_CASE, 400_000_000) and refusal is None
    assert "200000000 numbers" in note and f"at most {LARGE_CASE_EXAMPLES} examples" in note
    budget, note, refusal = case_budget(res.spec, CPU_BUDGET, CPU_SIZE_CAP)
    assert budget == CPU_BUDGET and note is None and "run it on a GPU" in refusal and "200000000" in refusal


def test_the_budget_is_checked_at_the_smallest_total_not_every_size_at_its_low(tmp_path):
    """`values: in[16777216 / step]` with `step: size(1..4)` fits the budget at step 4: the spec stays complete."""
    res = resolve(tmp_path, """
    #define N (1 << 24)
    __global__ void pack(const float* v, int* out, int step) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (v[i] > 0.0f) atomicAdd(out, 1);
    }
    int main() {
      float* v; int* o;
      cudaMalloc((void**)&o, sizeof(int));
      for (int step = 1; step <= 4; step++) {
        cudaMalloc((void**)&v, N / step * sizeof(float));
        pack<<<N / step / 256, 256>>>(v, o, step);
      }
    }
    """, "pack")
    assert res.complete, res.holes
    usable(res)


def test_a_scalar_flowing_through_locals_into_an_index_is_kept_small(tmp_path):
    """`int by = width - bx - 1; int at = base + TILE * cols * by;` with `TILE` from a header the program read
    does not include: `width` still reaches an index, so it is a small non-negative scalar, not -100..100 (which
    made a correct kernel index before its buffer)."""
    res = resolve(tmp_path, """
    __global__ void sweep(int* cells, int width, int cols, int penalty) {
      int bx = blockIdx.x;
      int by = width - bx - 1;
      int at = cols * TILE * by + threadIdx.x;
      cells[at] = cells[at] - penalty;
    }
    """, "sweep")
    assert res.items["width"][0] == "width: scalar(0..16)"
    assert res.items["penalty"][0] == "penalty: scalar(-100..100)"


def test_a_scalar_in_a_row_pointers_offset_is_an_index(tmp_path):
    """`float* row = (float*)((char*)base + y * pitch)`: `pitch` moves the pointer the kernel writes through, so
    it is not drawn from -100..100 (negative rows)."""
    res = resolve(tmp_path, """
    __global__ void rows(float* base, size_t pitch, int w, int h) {
      int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
      if (x < w && y < h) {
        float* row = (float*)((char*)base + y * pitch);
        row[x] = 1.0f;
      }
    }
    int main(int argc, char** argv) {
      int w = atoi(argv[1]), h = atoi(argv[2]);
      size_t pitch = atoi(argv[3]);
      float* d;
      cudaMalloc((void**)&d, w * h * sizeof(float));
      rows<<<dim3((w + 15) / 16, (h + 15) / 16), dim3(16, 16)>>>(d, pitch, w, h);
    }
    """, "rows")
    assert res.items["pitch"][0] == "pitch: scalar(0..16)"


def test_a_functor_parameter_is_a_hole(tmp_path):
    """`template <typename F> __global__ void k(int n, F f)` calling `f(i)`: a lambda, not a number the gate can
    draw (it was `f: scalar` with F bound to int from the launch's argument)."""
    res = resolve(tmp_path, """
    template <typename F>
    __global__ void apply(int n, F f) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) f(i);
    }
    template <typename F>
    void launch(int n, const F& f) { apply<<<(n + 255) / 256, 256>>>(n, f); }
    int main(int argc, char** argv) {
      int n = atoi(argv[1]);
      float* d;
      cudaMalloc((void**)&d, n * sizeof(float));
      launch(n, [=] __device__ (int i) { d[i] = 0.0f; });
    }
    """, "apply")
    assert not res.complete and set(res.holes) == {"f"}


def test_a_launch_in_a_branch_the_programs_values_rule_out_is_still_followed(tmp_path):
    """`if (mode == INJECT) { if (rank == 0) k<<<...>>>(state, ...); }` where the program's values (a global
    rank nobody sets here, a mode set otherwise) rule the branch out: the kernel's only launch is still read (a
    last pass enters such branches for kernels no launch was found for), and only its launch is recorded there."""
    res = resolve(tmp_path, """
    #define INJECT 6
    int rank;
    int mode = 2;
    __global__ void inject(float* state, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) state[i] = 50.0f * state[i];
    }
    __global__ void step(float* state, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) state[i] += 1.0f;
    }
    void halo(float* d, int n) {
      if (mode == INJECT) {
        if (rank == 0) inject<<<(n + 127) / 128, 128>>>(d, n);
      }
      if (mode != INJECT) step<<<(n + 255) / 256, 256>>>(d, n);
    }
    int main(int argc, char** argv) {
      int n = atoi(argv[1]);
      float* d;
      cudaMalloc((void**)&d, n * sizeof(float));
      halo(d, n);
    }
    """, "inject")
    assert res.annotation() == "state: inout[n], n: size(1..4096), grid: cdiv(n, 128), block: 128"
    usable(res)
    step = resolve(tmp_path, (tmp_path / "main.cu").read_text(), "step")
    assert step.annotation() == "state: inout[n], n: size(1..4096), grid: cdiv(n, 256), block: 256"


def test_file_scope_constants_of_another_file_give_the_kernels_indices_their_largest_value(tmp_path):
    """`const int ID_RHOT = 3;` in the program's main file, used by a kernel in a header: the largest index
    `ID_RHOT * rows * cols + ...` is known, so a buffer allocated `NVARS * rows * cols` with the program constant
    NVARS drawn smaller still covers what the kernel reaches."""
    (tmp_path / "k.h").write_text(textwrap.dedent("""
    __global__ void mix(double* state, int rows, int cols) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < rows * cols) state[ID_RHOT * rows * cols + i] = 2.0 * state[ID_DENS * rows * cols + i];
    }
    """).lstrip())
    (tmp_path / "main.cu").write_text(textwrap.dedent("""
    #define NVARS 4
    const int ID_DENS = 0;
    const int ID_RHOT = 3;
    #include "k.h"
    int main(int argc, char** argv) {
      int rows = atoi(argv[1]), cols = atoi(argv[2]);
      double* s;
      cudaMalloc((void**)&s, NVARS * rows * cols * sizeof(double));
      mix<<<(rows * cols + 255) / 256, 256>>>(s, rows, cols);
    }
    """).lstrip())
    path = tmp_path / "k.h"
    res = resolve_spec(parse_string(path.read_text(), str(path), "cuda"), "mix")
    state = res.items["state"][0]
    assert state in ("state: inout[max(NVARS * cols * rows, 4 * cols * rows)]",
                     "state: inout[max(4 * cols * rows, NVARS * cols * rows)]"), state
    usable(res)


def test_a_template_type_used_as_a_class_is_that_class_or_a_hole(tmp_path):
    """A template type whose values the kernel calls methods on (a generator object made in the kernel, a policy
    object passed by value): the gate must not instantiate it with float32, which has no members (the source
    would 'fail to compile' under its own spec). Bound by the launch to a class of the program, it is that class
    (`Gen: type(Counter)`); deduced from an object argument, which inference does not follow, a hole."""
    res = resolve(tmp_path, """
    struct Counter { unsigned s; __device__ unsigned step() { return s = s * 1664525u + 1013904223u; } };
    struct Above { float k; __device__ bool test(float v) const { return v > k; } };
    template <class T, class Gen>
    __global__ void draw(T* out, int n, unsigned seed) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      Gen g{seed + i};
      if (i < n) out[i] = (T)g.step();
    }
    template <class Pred>
    __global__ void mark(const float* x, int* hit, int n, Pred pred) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) hit[i] = pred.test(x[i]);
    }
    template <class T, class Gen>
    void run(T* out, int n) { draw<T, Gen><<<(n + 127) / 128, 128>>>(out, n, 7u); }
    int main(int argc, char** argv) {
      int n = atoi(argv[1]);
      unsigned* d; float* x; int* h;
      cudaMalloc((void**)&d, n * sizeof(unsigned));
      cudaMalloc((void**)&x, n * sizeof(float));
      cudaMalloc((void**)&h, n * sizeof(int));
      run<unsigned, Counter>(d, n);
      Above above{0.5f};
      mark<<<(n + 127) / 128, 128>>>(x, h, n, above);
    }
    """, "draw")
    assert res.complete and res.items["Gen"][0] == "Gen: type(Counter)"
    res = resolve(tmp_path, (tmp_path / "main.cu").read_text(), "mark")
    assert not res.complete and "Pred" in res.holes


def test_a_template_type_used_only_as_a_number_is_not_a_hole(tmp_path):
    res = resolve(tmp_path, """
    template <typename T>
    __global__ void scale(T* y, const T* x, T a, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      T v = x[i];
      if (i < n) y[i] = a * v;
    }
    """, "scale")
    usable(res)
