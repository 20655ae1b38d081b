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
