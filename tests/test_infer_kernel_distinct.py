"""Inference of `distinct` index buffers and of the clauses that keep rows written by different threads apart
(docs/spec.md, "Buffers" and "Sizes"): a plain write through an index buffer makes it distinct, an atomic one does
not; a stride no smaller than the row written adds `ld >= n`. Each program is written for its test (host and
kernel), with the exact spec inferred."""

from __future__ import annotations

import textwrap
from pathlib import Path

from xlate.parse import parse_string
from xlate.specs import resolve_spec

HOST = """
int main(int argc, char** argv) {
  int nrows = 300, width = 40, total = 1000;
  float *a, *c; int* rows;
  cudaMalloc(&a, nrows * width * sizeof(float));
  cudaMalloc(&c, total * width * sizeof(float));
  cudaMalloc(&rows, nrows * sizeof(int));
  KERNEL<<<(nrows * width + 127) / 128, 128>>>(a, c, rows, nrows, width);
  return 0;
}
"""


def annotation(tmp_path: Path, kernel_text: str, host: str, kernel: str) -> str:
    path = tmp_path / "prog.cu"
    path.write_text(textwrap.dedent(kernel_text).lstrip() + textwrap.dedent(host).replace("KERNEL", kernel))
    res = resolve_spec(parse_string(path.read_text(), str(path), "cuda"), kernel)
    assert res.complete, res.holes
    return res.annotation()


def test_plain_accumulation_through_an_index_makes_it_distinct(tmp_path):
    # each row of `a` is added into the row of `c` that `rows` names, without atomics: two equal values would be
    # two threads updating one element
    got = annotation(tmp_path, """
    __global__ void add_rows(const float* a, float* c, const int* rows, int nrows, int width) {
      int t = blockIdx.x * blockDim.x + threadIdx.x;
      if (t >= nrows * width) return;
      int r = t / width;
      int j = t % width;
      c[rows[r] * width + j] += a[r * width + j];
    }
    """, HOST, "add_rows")
    assert got == ("a: in[nrows * width], c: inout[width * total], rows: in[nrows](0..total - 1 distinct), "
                   "nrows: size(1..300), width: size(1..40), total: size(1..1000), grid: cdiv(nrows * width, 128), "
                   "block: 128, where: total >= nrows")


def test_atomic_accumulation_through_an_index_keeps_repeats(tmp_path):
    got = annotation(tmp_path, """
    __global__ void add_rows_atomic(const float* a, float* c, const int* rows, int nrows, int width) {
      int t = blockIdx.x * blockDim.x + threadIdx.x;
      if (t >= nrows * width) return;
      int r = t / width;
      atomicAdd(&c[rows[r] * width + t % width], a[t]);
    }
    """, HOST, "add_rows_atomic")
    assert got == ("a: in[nrows * width], c: inout[width * total], rows: in[nrows](0..total - 1), "
                   "nrows: size(1..300), width: size(1..40), total: size(1..1000), grid: cdiv(nrows * width, 128), "
                   "block: 128")


def test_reading_through_an_index_or_writing_runs_from_it_is_not_distinct(tmp_path):
    # a gather reads through `rows` (repeats are harmless); a run `out[start[s] + k]` is not kept apart by distinct
    # starts, so it is left as it was
    got = annotation(tmp_path, """
    __global__ void gather_rows(const float* a, float* c, const int* rows, int nrows, int width) {
      int t = blockIdx.x * blockDim.x + threadIdx.x;
      if (t < nrows * width) c[t] = a[rows[t / width] * width + t % width];
    }
    """, HOST.replace("nrows * width * sizeof", "total * width * sizeof").replace(
        "total * width * sizeof(float));\n  cudaMalloc(&rows", "nrows * width * sizeof(float));\n  cudaMalloc(&rows"),
        "gather_rows")
    assert "distinct" not in got and "rows: in[nrows](0..total - 1)" in got
    got = annotation(tmp_path, """
    __global__ void fill_runs(const int* start, const int* len, float* out, int nseg) {
      int s = blockIdx.x * blockDim.x + threadIdx.x;
      if (s >= nseg) return;
      for (int k = 0; k < len[s]; k++) out[start[s] + k] = 1.0f;
    }
    """, """
    int main() {
      int nseg = 50, total = 1000;
      float* out; int *start, *len;
      cudaMalloc(&out, total * sizeof(float));
      cudaMalloc(&start, nseg * sizeof(int));
      cudaMalloc(&len, nseg * sizeof(int));
      KERNEL<<<1, 64>>>(start, len, out, nseg);
    }
    """, "fill_runs")
    assert "distinct" not in got and "where" not in got


def test_rows_written_at_a_stride_need_the_stride_to_cover_the_row(tmp_path):
    # thread (i, j) writes c[i * ld + j] for j < n: rows overlap unless ld >= n; a stride that is the guard's own
    # bound (y * w + x under x < w) needs nothing
    got = annotation(tmp_path, """
    __global__ void pad_copy(const float* a, float* c, int n, int ld, int rows) {
      int j = blockIdx.x * blockDim.x + threadIdx.x;
      int i = blockIdx.y * blockDim.y + threadIdx.y;
      if (j < n && i < rows) c[i * ld + j] = a[i * n + j];
    }
    __global__ void tight_copy(const float* a, float* c, int w, int h) {
      int x = blockIdx.x * blockDim.x + threadIdx.x;
      int y = blockIdx.y * blockDim.y + threadIdx.y;
      if (x < w && y < h) c[y * w + x] = a[y * w + x];
    }
    """, """
    int main(int argc, char** argv) {
      int n = atoi(argv[1]), ld = atoi(argv[2]), rows = atoi(argv[3]);
      float *a, *c;
      cudaMalloc(&a, rows * n * sizeof(float));
      cudaMalloc(&c, rows * ld * sizeof(float));
      dim3 block(16, 16), grid((n + 15) / 16, (rows + 15) / 16);
      pad_copy<<<grid, block>>>(a, c, n, ld, rows);
      tight_copy<<<grid, block>>>(a, c, n, rows);
    }
    """, "pad_copy")
    assert got == ("a: in[n * rows], c: out[max(ld * rows, ld * rows - ld + n)], n: size(1..4096), "
                   "ld: size(1..4096), rows: size(1..4096), grid: (cdiv(n, 16), cdiv(rows, 16)), block: (16, 16), "
                   "where: ld >= n")
