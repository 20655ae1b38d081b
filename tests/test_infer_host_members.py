"""Spec inference through C++ host code that hides allocations: a class whose constructor allocates (with a
deleted default constructor beside it), a statement macro that pastes a device pointer's name together, and a
helper that sets the caller's sizes through reference parameters. Each test is a small program written for it,
with the exact spec; sizes are not multiples of the block size."""

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


def test_table_allocated_in_the_constructor_beside_a_deleted_default_one(tmp_path):
    # `Slots() = delete;` is a method named like the class too: the constructor the declaration calls is the
    # one taking one argument, whose cudaMalloc sizes the member the launch passes
    res = resolve(tmp_path, """
    #include <cstdint>
    __global__ void place(uint32_t* slots, const uint32_t* keys, int len, int cap) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < len) slots[keys[i] % cap] = keys[i];
    }
    class Slots {
    public:
      Slots() = delete;
      Slots(int cap) {
        this->cap = cap;
        cudaMalloc(&mem, cap * sizeof(uint32_t));
      }
      uint32_t* data() { return mem; }
      int capacity() { return cap; }
    private:
      uint32_t* mem;
      int cap;
    };
    int main(int argc, char** argv) {
      int n = atoi(argv[1]);
      uint32_t* d_keys;
      cudaMalloc(&d_keys, n * sizeof(uint32_t));
      Slots table(n * 3 + 1);
      uint32_t* raw = table.data();
      int c = table.capacity();
      place<<<(n + 95) / 96, 96>>>(raw, d_keys, n, c);
    }
    """, "place")
    assert res.complete
    assert res.annotation() == ("slots: out[cap], keys: in[len](0..cap - 1), len: size(1..4096), "
                                "cap: const(3 * len + 1), "
                                "grid: cdiv(len, 96), block: 96")
    assert res.items["cap"][1].kind == "host"  # not a free size: the capacity the constructor allocated


def test_statement_macro_pasting_the_device_pointer_name(tmp_path):
    # ALLOC_ROWS(v) -> ALLOC_COPY(v, ...) declares `float *v_dev` and allocates it: the pasted name is the
    # argument's own tokens (not its parenthesised copy), and the body is statements, not one expression
    res = resolve(tmp_path, """
    #define ALLOC_COPY(A, s) A = (float*) malloc((s) * sizeof(float)); \\
                             float *A##_dev; \\
                             cudaMalloc((void**)&A##_dev, (s) * sizeof(float)); \\
                             cudaMemcpy(A##_dev, A, (s) * sizeof(float), cudaMemcpyHostToDevice);
    #define ALLOC_ROWS(A) ALLOC_COPY(A, rows * 3)
    __global__ void halve(float* x, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) x[i] *= 0.5f;
    }
    int main(int argc, char** argv) {
      int rows = atoi(argv[1]);
      float* data;
      ALLOC_ROWS(data);
      halve<<<(rows * 3 + 63) / 64, 64>>>(data_dev, rows * 3);
    }
    """, "halve")
    assert res.complete
    assert res.annotation() == "x: inout[n], n: size(1..4096), grid: cdiv(n, 64), block: 64"
    assert res.items["x"][1].kind == "host"
    assert "cudaMalloc((void**)&data_dev" in res.items["x"][1].detail


def test_sizes_set_through_reference_parameters_of_a_helper(tmp_path):
    # read_shape(path, rows, cols) fills the caller's variables: the allocation and the launch use those
    # values, so the buffer's length is the launch's count (not a length the kernel's guards guess)
    res = resolve(tmp_path, """
    #include <cstdio>
    __global__ void bump(int* counts, const int* ids, int m) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < m) counts[i] += ids[i] & 7;
    }
    void read_shape(const char* path, int &rows, int &cols) {
      FILE* f = fopen(path, "r");
      fscanf(f, "%d %d", &rows, &cols);
      fclose(f);
    }
    int main(int argc, char** argv) {
      int rows, cols;
      read_shape(argv[1], rows, cols);
      int *d_counts, *d_ids;
      cudaMalloc(&d_counts, rows * cols * sizeof(int));
      cudaMalloc(&d_ids, (rows * cols + 5) * sizeof(int));
      bump<<<(rows * cols + 95) / 96, 96>>>(d_counts, d_ids, rows * cols);
    }
    """, "bump")
    assert res.complete
    assert res.annotation() == ("counts: inout[m], ids: in[m + 5], m: size(1..4096), grid: cdiv(m, 96), "
                                "block: 96")
    assert res.items["counts"][1].kind == "host"
    assert res.items["ids"][1].kind == "host"


def test_a_reference_parameter_the_helper_leaves_alone_keeps_the_callers_value(tmp_path):
    # only what the callee assigns flows back: `n` passed by reference but only read keeps main's 1000
    res = resolve(tmp_path, """
    __global__ void fill(float* y, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) y[i] = 1.0f;
    }
    void show(const int &n, int &calls) { calls = calls + 1; }
    int main() {
      int n = 1000, calls = 0;
      show(n, calls);
      float* d;
      cudaMalloc(&d, n * sizeof(float));
      fill<<<(n + 127) / 128, 128>>>(d, n);
    }
    """, "fill")
    assert res.complete
    assert res.annotation() == "y: out[n], n: size(1..1000), grid: cdiv(n, 128), block: 128"


def test_sizes_read_from_a_stream_are_run_time_values_of_the_launch(tmp_path):
    # `in >> w >> h;` sets w and h: the grid is the launch's (rows of 8), not one the kernel's guards guess
    res = resolve(tmp_path, """
    #include <fstream>
    __global__ void scale(float* img, int w, int h, float g) {
      int x = blockIdx.x * blockDim.x + threadIdx.x;
      int y = blockIdx.y * blockDim.y + threadIdx.y;
      if (x < w && y < h) img[y * w + x] *= g;
    }
    int main(int argc, char** argv) {
      std::ifstream in(argv[1]);
      unsigned w;
      unsigned h;
      float gain;
      in >> w >> h;
      in >> gain;
      float* d;
      cudaMalloc(&d, sizeof(float) * w * h);
      dim3 grid((w + 15) / 16, (h + 7) / 8);
      scale<<<grid, dim3(16, 8)>>>(d, w, h, gain);
    }
    """, "scale")
    assert res.complete
    assert res.annotation() == ("img: inout[h * w], w: size(1..4096), h: size(1..4096), g: scalar, "
                                "grid: (cdiv(w, 16), cdiv(h, 8)), block: (16, 8)")
    assert res.items["grid"][1].kind == "host"
    assert res.items["img"][1].kind == "host"


def test_a_pointer_moved_by_increment_or_compound_assignment_before_the_launch(tmp_path):
    # `a++` then `a - 1` is the allocation's start again; `b += 4` leaves n + 3 elements behind b
    res = resolve(tmp_path, """
    __global__ void prefix(int* out, const int* in, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) out[i + 1] = in[i];
    }
    int main(int argc, char** argv) {
      int n = atoi(argv[1]);
      int *a, *b;
      cudaMalloc(&a, (n + 1) * sizeof(int));
      cudaMalloc(&b, (n + 7) * sizeof(int));
      a++;
      b += 4;
      prefix<<<(n + 99) / 100, 100>>>(a - 1, b, n);
    }
    """, "prefix")
    assert res.complete
    assert res.annotation() == "out: out[n + 1], in: in[n + 3], n: size(1..4096), grid: cdiv(n, 100), block: 100"


def test_a_pointer_moved_on_one_path_only_has_no_length(tmp_path):
    # after `if (skip) p += 2;` p may or may not have moved: no length is safer than the wrong one
    res = resolve(tmp_path, """
    __global__ void copy(float* dst, const float* src, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) dst[i] = src[i];
    }
    int main(int argc, char** argv) {
      int n = atoi(argv[1]);
      int skip = atoi(argv[2]);
      float *s, *d;
      cudaMalloc(&s, (n + 2) * sizeof(float));
      cudaMalloc(&d, n * sizeof(float));
      if (skip) s += 2;
      copy<<<(n + 99) / 100, 100>>>(d, s, n);
    }
    """, "copy")
    assert res.items["dst"][0] == "dst: out[n]"
    assert res.items["src"][1].kind != "host"


TIED_COUNT = """
const int Align = 32;
__global__ void add(const float* a, const float* b, int count, float* sum) {
  int i = threadIdx.x + blockIdx.x * blockDim.x;
  if (i >= count) return;
  sum[i] = a[i] + b[i];
}
inline int div_up(int n, int m) { return (n + m - 1) / m; }
inline int pad_to(int n, int m = Align) {
  int r = n % m;
  if (r)
    return n + m - r;
  else
    return n;
}
static void run_add(const float* a, const float* b, int count, float* sum) {
  dim3 threads(192);
  dim3 blocks(div_up(count, threads.x));
  add<<<blocks, threads>>>(a, b, count, sum);
}
void read_image(const char* path, int &w, int &h, int &s) {
  FILE* f = fopen(path, "r");
  fscanf(f, "%d %d", &w, &h);
  s = pad_to(w);
}
int main(int argc, char** argv) {
  int w, h, stride;
  read_image(argv[1], w, h, stride);
  float *x, *y;
  const int bytes = stride * h * sizeof(float);
  cudaMalloc(&x, bytes);
  cudaMalloc(&y, bytes);
  run_add(x, y, h * stride, x);
}
"""


def test_a_count_passed_as_a_product_keeps_the_grid_tied_to_it(tmp_path):
    # count = h * pad_to(w) (the default alignment applied); the grid's div_up(count, 192) reaches the spec
    # expanded: it is still cdiv(count, 192), not a grid over free sizes h, w and the alignment
    res = resolve(tmp_path, TIED_COUNT, "add")
    assert res.complete
    assert res.annotation() == ("a: in[count], b: in[count], count: size(1..4096), sum: out[count], "
                                "grid: cdiv(count, 192), block: 192")
    assert res.items["a"][1].kind == "host"
    assert res.items["grid"][1].kind == "host"


def test_a_launcher_called_without_its_defaulted_block_size(tmp_path):
    # launch(d, n) runs with threads = 160 (the default argument), not a block size of the gate's choosing
    res = resolve(tmp_path, """
    __global__ void twice(float* x, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) x[i] *= 2.0f;
    }
    void launch(float* x, int n, int threads = 160) {
      if (n <= 0) return;
      twice<<<(n + threads - 1) / threads, threads>>>(x, n);
    }
    int main(int argc, char** argv) {
      int n = atoi(argv[1]);
      float* d;
      cudaMalloc(&d, n * sizeof(float));
      launch(d, n);
    }
    """, "twice")
    assert res.complete
    assert res.annotation() == "x: inout[n], n: size(1..4096), grid: cdiv(n, 160), block: 160"
    assert res.items["block"][1].kind == "host"


def test_a_launch_inside_a_variadic_dispatch_macro(tmp_path):
    # LAUNCH_BY_SIZE(size, Func, T, grid, ...) launches Func<T, n><<<grid, n>>>(__VA_ARGS__): the kernel's name
    # and type are pasted as names (not parenthesised), the trailing arguments are the kernel's arguments
    res = resolve(tmp_path, """
    #define LAUNCH_BY_SIZE(size, Func, T, grid_dim, ...)                  \\
      do {                                                                \\
        if (size >= 128) {                                                \\
          Func<T, 128><<<grid_dim, 128>>>(__VA_ARGS__);                   \\
        } else {                                                          \\
          Func<T, 32><<<grid_dim, 32>>>(__VA_ARGS__);                     \\
        }                                                                 \\
      } while (false)
    template <typename T, int kThreads>
    __global__ void row_sum(int cols, const T* x, T* out) {
      int r = blockIdx.x;
      T acc = 0;
      for (int c = threadIdx.x; c < cols; c += kThreads) acc += x[r * cols + c];
      atomicAdd(&out[r], acc);
    }
    typedef float real_t;
    int main(int argc, char** argv) {
      int rows = atoi(argv[1]), cols = atoi(argv[2]);
      float *x, *out;
      cudaMalloc(&x, rows * cols * sizeof(float));
      cudaMalloc(&out, rows * sizeof(float));
      LAUNCH_BY_SIZE(cols, row_sum, real_t, rows, cols, x, out);
    }
    """, "row_sum")
    assert res.complete
    assert res.annotation() == ("cols: size(1..4096), x: in[cols * rows], out: inout[rows], rows: size(1..4096), "
                                "T: float32, kThreads: 128, grid: rows, block: 128")
    assert res.items["grid"][1].kind == "host"


def test_an_argument_computed_from_another_argument_stays_tied_to_it(tmp_path):
    # hd = C / H beside H: a fixed hd = 50 with C drawn from 1..300 would let the kernel (width = heads * hd)
    # write past an out of C * rows elements; hd: const(C / heads) keeps the program's relation
    res = resolve(tmp_path, """
    __global__ void split_heads(const float* in, float* out, int rows, int heads, int hd) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      int width = heads * hd;
      if (i < rows * width) {
        int r = i / width, c = i % width;
        out[(c % heads) * rows * hd + r * hd + c / heads] = in[i];
      }
    }
    int main(int argc, char** argv) {
      const int rows = atoi(argv[1]);
      const int C = 300;
      const int H = 6;
      float *a, *b;
      cudaMalloc(&a, rows * C * sizeof(float));
      cudaMalloc(&b, rows * C * sizeof(float));
      split_heads<<<(rows * C + 127) / 128, 128>>>(a, b, rows, H, C / H);
    }
    """, "split_heads")
    assert res.complete
    # every item the host gives, exactly (a where-clause the kernel's own analysis adds is not this test's)
    assert [res.items[k][0] for k in ("in", "out", "rows", "heads", "hd", "C", "grid", "block")] == [
        "in: in[max(C * rows, hd * heads * rows)]", "out: out[C * rows]", "rows: size(1..4096)", "heads: scalar(6..6)",
        "hd: const(C / heads)", "C: size(1..300)", "grid: cdiv(C * rows, 128)", "block: 128"]
    assert res.items["hd"][1].kind == "host"


def test_a_tie_through_a_literal_keeps_the_literal(tmp_path):
    # half = halves(n, 2): the 2 is the program's own number, so half is cdiv(n, 2) (a size drawn for the 2
    # would let both halves swap the same elements: a race the program never has)
    res = resolve(tmp_path, """
    int halves(int a, int parts) {
      if (parts <= 0) return a;
      return (a + parts - 1) / parts;
    }
    __global__ void fold(float* x, int n, int half) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < half) {
        float t = x[i];
        x[i] = x[n - 1 - i];
        x[n - 1 - i] = t;
      }
    }
    int main(int argc, char** argv) {
      int n = atoi(argv[1]);
      float* d;
      cudaMalloc(&d, n * sizeof(float));
      fold<<<(n + 127) / 128, 128>>>(d, n, halves(n, 2));
    }
    """, "fold")
    assert res.complete
    assert res.annotation() == ("x: inout[max(half, n)], n: size(1..4096), half: const(cdiv(n, 2)), "
                                "grid: cdiv(n, 128), block: 128")



# A plain struct of sizes (no constructor, no pointer member), built field by field in a helper that returns it
# and passed by value to the functions that allocate and launch: every function reads the same fields.
PLAIN_STRUCT_PROGRAM = """
typedef long long int wide_t;
struct layout_t { wide_t n, pad, ld, first, last; };
__global__ void shift(const float* a, float* b, wide_t ld, wide_t first, wide_t last, wide_t pad) {
  wide_t i = first + blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= last) return;
  b[(wide_t)(i + pad)] = 2.0f * a[(wide_t)(i + pad - 1)];
}
struct layout_t make_layout(wide_t n) {
  struct layout_t g;
  g.n = n;
  g.pad = 3;
  g.ld = n + 2 * g.pad;
  g.first = 7 / 2.0f;
  g.last = g.n - 1;
  return g;
}
size_t bytes_of(struct layout_t g) { return g.ld * sizeof(float); }
float* device_buffer(struct layout_t g) {
  float* p;
  cudaMalloc((void**)&p, bytes_of(g));
  return p;
}
void run(const struct layout_t g) {
  float* d_a = device_buffer(g);
  float* d_b = device_buffer(g);
  shift<<<(g.last - g.first + 127) / 128, 128>>>(d_a, d_b, g.ld, g.first, g.last, g.pad);
}
int main(int argc, char** argv) {
  wide_t n = atoi(argv[1]);
  const struct layout_t g = make_layout(n);
  run(g);
  return 0;
}
"""


def test_a_plain_struct_of_sizes_ties_the_launch_to_the_allocations(tmp_path):
    # before: each helper's `g.ld` was a size of its own (a: in[ld_], b: in[ld__]), drawn apart from the `ld`
    # the kernel received, so the source indexed past its buffers under its own spec; `g.first = 7 / 2.0f`
    # into a long member is the integer 3, and `(wide_t)(i + pad)` is a cast to a typedef (the grammar reads
    # it as a call), whose index is still followed
    res = resolve(tmp_path, PLAIN_STRUCT_PROGRAM, "shift")
    assert res.complete
    # n is a value the kernel does not receive: the first argument computed from it (ld = n + 6) stands for it,
    # and the others are written over that one (last = n - 1 = ld - 7); the grid is the program's,
    # (n - 1 - 3 + 127) / 128
    assert res.annotation() == (
        "a: in[max(ld, last + pad - 1)], b: out[max(ld, last + pad)], ld: size(1..4096), first: const(3), "
        "last: const(ld - 7), pad: const(3), grid: (ld + 117) / 128, block: 128, where: (ld + 117) / 128 >= 1")


def test_a_kernel_launched_through_a_local_that_names_it(tmp_path):
    # `auto k = scale<float, 4>;` then `k<<<...>>>(...)`: the launch is the kernel's, with its template arguments
    res = resolve(tmp_path, """
    template <typename T, int R>
    __global__ void scale(T* y, const T* x, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) y[i] = x[i] * R;
    }
    int main(int argc, char** argv) {
      int n = atoi(argv[1]);
      double *x, *y;
      cudaMalloc(&x, n * sizeof(double));
      cudaMalloc(&y, n * sizeof(double));
      auto k = scale<double, 3>;
      k<<<(n + 63) / 64, 64>>>(y, x, n);
      return 0;
    }
    """, "scale")
    assert res.complete
    assert res.annotation() == ("y: out[n], x: in[n], n: size(1..4096), T: float64, R: 3, grid: cdiv(n, 64), "
                                "block: 64")
