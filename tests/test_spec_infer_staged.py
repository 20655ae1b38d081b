"""Spec inference of buffer lengths, index ranges and launches through spellings real programs use: allocation
sizes written `n * sizeof(d_x[0])` or `n * sizeof(*d_x)`, indices staged through a `__shared__` array (a tile of
column indices loaded by one thread and read by another), a launch whose block is `dim3(32, rows)` with `rows` read
at run time, and launch sizes a helper writes through pointer parameters. Each test is a small program written for
it, with the exact spec items; sizes are not multiples of the block size."""

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


def item(res, key: str) -> str:
    return res.items[key][0]


SHIFT = """
__global__ void shift(const double* in, double* out, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] + 1.0;
}
"""


def test_sizeof_of_an_element_or_a_dereference_is_the_pointer_element_size(tmp_path):
    res = resolve(tmp_path, SHIFT + """
    #include <cstdlib>
    int main(int argc, char** argv) {
      long n = atol(argv[1]);
      double *d_in = nullptr, *d_out = nullptr;
      cudaMalloc((void**)&d_in, (n + 3) * sizeof(d_in[0]));
      cudaMalloc((void**)&d_out, n * sizeof(*d_out));
      shift<<<(n + 127) / 128, 128>>>(d_in, d_out, n);
    }
    """, "shift")
    assert res.complete
    # 8-byte elements: the byte counts divide back to n + 3 and n elements (a 4-byte guess would double them)
    assert item(res, "in") == "in: in[n + 3]"
    assert item(res, "out") == "out: out[n]"
    assert res.items["in"][1].kind == "host"


GATHER = """
#include <cstdlib>
__global__ void gather_rows(const int* ptr, const int* col, const float* val, const float* x, float* y,
                            int rows, int width) {
  __shared__ int cols[128];
  int r = blockIdx.x;
  int t = threadIdx.x;
  if (r >= rows) return;
  float acc = 0.0f;
  for (int base = ptr[r]; base < ptr[r + 1]; base += 128) {
    if (base + t < ptr[r + 1]) cols[t] = width * col[base + t];
    EXTRA
    __syncthreads();
    for (int k = 0; k < 128 && base + k < ptr[r + 1]; k++) acc += val[base + k] * x[cols[k] + t % width];
    __syncthreads();
  }
  y[r * 128 + t] = acc;
}

int main(int argc, char** argv) {
  int rows = atoi(argv[1]);
  int nnz = atoi(argv[2]);
  int ncols = atoi(argv[3]);
  int width = 7;
  int *d_ptr, *d_col;
  float *d_val, *d_x, *d_y;
  cudaMalloc((void**)&d_ptr, (rows + 1) * sizeof(int));
  cudaMalloc((void**)&d_col, nnz * sizeof(int));
  cudaMalloc((void**)&d_val, nnz * sizeof(float));
  cudaMalloc((void**)&d_x, ncols * width * sizeof(float));
  cudaMalloc((void**)&d_y, rows * 128 * sizeof(float));
  gather_rows<<<rows, 128>>>(d_ptr, d_col, d_val, d_x, d_y, rows, width);
}
"""


def test_indices_staged_through_shared_memory_bound_the_buffer_they_come_from(tmp_path):
    res = resolve(tmp_path, GATHER.replace("EXTRA", ""), "gather_rows")
    assert res.complete
    # x[width * col[p] + t % width] with x of width * ncols elements: col's values stay below ncols
    assert item(res, "col") == "col: in[nnz](0..ncols - 1)"
    assert item(res, "x") == "x: in[width * ncols]"
    # the largest element read, at the range's top, is the buffer's last one, for any width and ncols
    for width, ncols in ((7, 1), (7, 300), (3, 1000)):
        assert width * (ncols - 1) + (width - 1) == width * ncols - 1


def test_a_shared_array_also_written_through_an_atomic_gives_no_range(tmp_path):
    # the atomic changes what a thread reads back: the values in cols are not col's any more, so no range of col
    # keeps x[cols[k] + ...] in bounds; the spec says so instead of drawing col freely
    res = resolve(tmp_path, GATHER.replace("EXTRA", "if (t == 0) atomicAdd(&cols[0], 3);"), "gather_rows")
    assert not res.complete
    assert "col" in res.holes
    assert "its values index 'x'" in res.holes["col"]


def test_a_shared_array_holding_thread_indices_is_not_taken_for_the_buffer_values(tmp_path):
    # cols[t] = col[...] + t: each element is a different function of col: no one form to read back
    res = resolve(tmp_path, GATHER.replace("cols[t] = width * col[base + t];", "cols[t] = col[base + t] + t;")
                  .replace("EXTRA", ""), "gather_rows")
    assert "col" in res.holes


def test_a_store_later_in_the_loop_is_one_the_load_may_read(tmp_path):
    # the next round reads what the end of this one stored (the thread's own index): no range of col stands
    res = resolve(tmp_path, GATHER.replace("EXTRA", "").replace(
        "    __syncthreads();\n  }", "    __syncthreads();\n    cols[t] = t;\n  }"), "gather_rows")
    assert "cols[t] = t;" in GATHER.replace("EXTRA", "").replace(
        "    __syncthreads();\n  }", "    __syncthreads();\n    cols[t] = t;\n  }")
    assert "col" in res.holes


TILED = """
#include <cstdlib>
__global__ void row_sums(const float* a, float* s, int n, int m) {
  extern __shared__ float part[];
  int row = blockIdx.x * blockDim.y + threadIdx.y;
  float acc = 0.0f;
  if (row < n)
    for (int j = threadIdx.x; j < m; j += 32) acc += a[row * m + j];
  part[threadIdx.y * 32 + threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.x == 0 && row < n) {
    float t = 0.0f;
    for (int k = 0; k < 32; k++) t += part[threadIdx.y * 32 + k];
    s[row] = t;
  }
}

int main(int argc, char** argv) {
  int n = atoi(argv[1]);
  int m = atoi(argv[2]);
  int rows = atoi(argv[3]);
  float *d_a, *d_s;
  cudaMalloc(&d_a, n * m * sizeof(float));
  cudaMalloc(&d_s, n * sizeof(float));
  row_sums<<<(n + rows - 1) / rows, dim3(32, rows), 32 * rows * sizeof(float)>>>(d_a, d_s, n, m);
}
"""


def test_a_block_of_a_literal_and_a_value_read_at_run_time_keeps_the_literal(tmp_path):
    res = resolve(tmp_path, TILED, "row_sums")
    assert res.complete
    # the 32 the program writes stands; rows, read at run time, takes the guessed 16 in the block, the grid and
    # the shared memory alike (32 * 16 floats)
    assert item(res, "block") == "block: (32, 16)"
    assert item(res, "grid") == "grid: cdiv(n, 16)"
    assert item(res, "shmem") == "shmem: 2048"
    assert 32 * 16 * 4 == 2048


PLANNED = """
#include <cstdlib>
__global__ void twice(const float* in, float* out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = 2.0f * in[i];
}
__global__ void halve(const float* in, float* out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = 0.5f * in[i];
}
void plan_fixed(int n, int* blocks, int* threads) {
  *threads = 96;
  *blocks = (n + 95) / 96;
}
void plan_capped(int n, int* blocks) {
  if (n > 100000) *blocks = 1000;
  else *blocks = (n + 95) / 96;
}
int main(int argc, char** argv) {
  int n = atoi(argv[1]);
  int blocks, threads, capped;
  plan_fixed(n, &blocks, &threads);
  plan_capped(n, &capped);
  float *d_in, *d_out;
  cudaMalloc(&d_in, n * sizeof(float));
  cudaMalloc(&d_out, n * sizeof(float));
  twice<<<blocks, threads>>>(d_in, d_out, n);
  halve<<<capped, threads>>>(d_in, d_out, n);
}
"""


def test_launch_sizes_a_helper_writes_through_pointer_parameters(tmp_path):
    res = resolve(tmp_path, PLANNED, "twice")
    assert res.complete
    assert item(res, "grid") == "grid: cdiv(n, 96)"
    assert item(res, "block") == "block: 96"
    assert res.items["grid"][1].kind == "host"


def test_a_launch_size_written_on_one_path_only_is_a_value_picked_at_run_time(tmp_path):
    # 1000 blocks or cdiv(n, 96): neither holds on every path, so the grid is a size of its own (the grid-stride
    # loop covers n whatever it is), not one of the two values taken for both
    res = resolve(tmp_path, PLANNED, "halve")
    assert res.complete
    assert item(res, "grid") == "grid: capped"
    assert item(res, "capped").startswith("capped: size(")
    assert item(res, "block") == "block: 96"


UNUSED = """
__global__ void bump(float* x, const int* spare, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}
void run(float* x, const int* spare, int n) {
  bump<<<(n + 127) / 128, 128>>>(x, spare, n);
}
int main() {
  int n = 1000;
  float* x;
  cudaMalloc(&x, n * sizeof(float));
  run(x, lookup_table(), n);
}
"""


def test_a_buffer_the_kernel_never_names_needs_one_element(tmp_path):
    # `spare` comes from a call the code read does not show: no allocation, but no element of it is touched
    res = resolve(tmp_path, UNUSED, "bump")
    assert res.complete
    assert item(res, "spare") == "spare: in[1]"
    assert res.items["spare"][1].kind == "kernel"
    assert item(res, "x") == "x: inout[n]"
