"""A pointer moved by an amount the kernel interpreter cannot evaluate (`p += f(r)` with `f` not followed): its
accesses used to be dropped while the spec stayed complete, the buffer's length then taken from the host's
allocation (sized for the program's own sizes, not for the drawn ones) and an index buffer read through it drawn
with no range. The buffer is now a hole naming the move; a move by a loaded offset is still followed. Each
program is written for its test (host and kernel), with the exact spec inferred."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from xlate.parse import parse_string
from xlate.specs import resolve_spec

SHIFT = """
__device__ int skip_of(int r);
__global__ void shift_rows(float* out, const float* in, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* p = in;
  MOVE;
  for (int c = 0; c < cols; c++) out[r * cols + c] = p[c];
}
int main() {
  int rows = 45, cols = 13;
  float *out, *in;
  cudaMalloc(&out, rows * cols * sizeof(float));
  cudaMalloc(&in, rows * cols * sizeof(float));
  shift_rows<<<(rows + 63) / 64, 64>>>(out, in, rows, cols);
  return 0;
}
"""


def resolve(tmp_path: Path, program: str, kernel: str):
    path = tmp_path / "prog.cu"
    path.write_text(textwrap.dedent(program).lstrip())
    return resolve_spec(parse_string(path.read_text(), str(path), "cuda"), kernel)


@pytest.mark.parametrize("move, amount", [
    ("p += skip_of(r)", "skip_of(r)"),
    ("p = p + skip_of(r)", "skip_of(r)"),
    ("p -= 2 * skip_of(r)", "2 * skip_of(r)"),
    ("p += (int)sqrtf((float)r)", "(int)sqrtf((float)r)"),
])
def test_a_pointer_moved_by_an_amount_not_evaluated_makes_its_buffer_a_hole(tmp_path, move, amount):
    # the kernel reads in[skip_of(r) + c]: rows * cols, the program's allocation, need not cover it
    res = resolve(tmp_path, SHIFT.replace("MOVE", move), "shift_rows")
    assert not res.complete
    assert res.holes == {"in": (f"cannot infer the length of 'in' in 'shift_rows': it is accessed through a pointer "
                                f"moved by '{amount}', which xlate cannot evaluate; annotate it, e.g. "
                                "'// xlate: in: in[n]'")}
    assert res.annotation() == ("out: out[cols * rows], rows: size(1..45), cols: size(1..13), grid: cdiv(rows, 64), "
                                "block: 64")


def test_a_pointer_moved_but_never_used_after_keeps_the_host_length(tmp_path):
    program = SHIFT.replace("MOVE;", "out[r] = in[r];\n  p += skip_of(r)").replace(
        "for (int c = 0; c < cols; c++) out[r * cols + c] = p[c];", "")
    res = resolve(tmp_path, program, "shift_rows")
    assert res.complete, res.holes
    assert res.annotation() == ("out: out[cols * rows], in: in[cols * rows], rows: size(1..45), cols: size(1..13), "
                                "grid: cdiv(rows, 64), block: 64")


def test_an_index_buffer_read_through_a_moved_pointer_is_not_drawn_freely(tmp_path):
    # before: `idx: in[n]` with no range (the access p[idx[r]] was dropped), so in[idx[r] - lane_skip(r)] faulted
    res = resolve(tmp_path, """
    __device__ int lane_skip(int r);
    __global__ void pick(float* out, const float* in, const int* idx, int n) {
      int r = blockIdx.x * blockDim.x + threadIdx.x;
      if (r >= n) return;
      const float* p = in - lane_skip(r);
      out[r] = p[idx[r]];
    }
    int main() {
      int n = 300, m = 77;
      float *out, *in; int* idx;
      cudaMalloc(&out, n * sizeof(float));
      cudaMalloc(&in, m * sizeof(float));
      cudaMalloc(&idx, n * sizeof(int));
      pick<<<(n + 127) / 128, 128>>>(out, in, idx, n);
      return 0;
    }
    """, "pick")
    assert set(res.holes) == {"in", "idx"}
    assert "moved by 'lane_skip(r)'" in res.holes["in"]
    assert res.holes["idx"].startswith("cannot fuzz the values of 'idx' in 'pick'")
    assert res.annotation() == "out: out[n], n: size(1..300), grid: cdiv(n, 128), block: 128"


def test_a_pointer_moved_by_a_loaded_offset_is_followed(tmp_path):
    # the move is evaluated (a value of `starts`): its range keeps every row of `cols` inside `in`
    res = resolve(tmp_path, """
    __global__ void gather_rows(float* out, const float* in, const int* starts, int rows, int cols) {
      int r = blockIdx.x * blockDim.x + threadIdx.x;
      if (r >= rows) return;
      const float* p = in;
      p += starts[r];
      for (int c = 0; c < cols; c++) out[r * cols + c] = p[c];
    }
    int main() {
      int rows = 45, cols = 13, total = 700;
      float *out, *in; int* starts;
      cudaMalloc(&out, rows * cols * sizeof(float));
      cudaMalloc(&in, total * sizeof(float));
      cudaMalloc(&starts, rows * sizeof(int));
      gather_rows<<<(rows + 63) / 64, 64>>>(out, in, starts, rows, cols);
      return 0;
    }
    """, "gather_rows")
    assert res.complete, res.holes
    assert res.annotation() == ("out: out[cols * rows], in: in[total], starts: in[rows](0..-cols + total), "
                                "rows: size(1..45), cols: size(1..13), total: size(1..700), grid: cdiv(rows, 64), "
                                "block: 64, where: -cols + total >= 0")
