"""A size the host passes from a counted loop's variable whose ends are other values of the program (a wavefront
launched once per anti-diagonal, `for (d = tiles - 1; d >= 1; d--) k<<<d, TILE>>>(.., d)`): the spec keeps it
inside the loop's range, its symbolic ends as `where` clauses. Drawn past the bound, such a kernel computes a
negative tile and faults on its own spec. Each program is written for its test (host and kernel), with the
exact spec inferred."""

from __future__ import annotations

import textwrap
from pathlib import Path

from hypothesis import HealthCheck, given, settings

from tests.spec_inference import resolve, usable
from xlate.parse import parse_string
from xlate.specs import resolve_spec
from xlate.verify.strategies import cases


def annotation(tmp_path: Path, program: str, kernel: str) -> str:
    path = tmp_path / "prog.cu"
    path.write_text(textwrap.dedent(program).lstrip())
    res = resolve_spec(parse_string(path.read_text(), str(path), "cuda"), kernel)
    usable(res)  # the gate draws cases that meet the loop's `where`
    return res.annotation()


LOWER = """
#define TILE 8
__global__ void sweep(float* cells, int tiles, int side, int diag) {
  int t = threadIdx.x;
  int b = blockIdx.x;
  int row = tiles - 1 - b;
  int col = b + tiles - diag;  // below 0 once diag > tiles
  cells[(row * TILE + t) * side + col * TILE + t] += 1.0f;
}
int main(int argc, char** argv) {
  int side = atoi(argv[1]);
  int tiles = side / TILE;
  float* cells;
  cudaMalloc(&cells, side * side * sizeof(float));
  for (int diag = tiles - 1; diag >= 1; diag--)
    sweep<<<diag, TILE>>>(cells, tiles, side, diag);
  return 0;
}
"""

UPPER = """
#define TILE 8
__global__ void fill_upper(float* cells, int side, int diag) {
  int t = threadIdx.x;
  int b = blockIdx.x;
  int row = diag - 1 - b;
  cells[(row * TILE + t) * side + b * TILE + t] = 2.0f;
}
int main(int argc, char** argv) {
  int side = atoi(argv[1]);
  float* cells;
  cudaMalloc(&cells, side * side * sizeof(float));
  for (int diag = 1; diag <= side / TILE; STEP)
    fill_upper<<<diag, TILE>>>(cells, side, diag);
  return 0;
}
"""


def test_a_size_from_a_counting_down_loop_stays_below_the_loops_start(tmp_path):
    # the loop gives diag = tiles - 1 down to 1, tiles = side / 8: `diag` drawn up to 4096 made col negative
    got = annotation(tmp_path, LOWER, "sweep")
    assert got == ("cells: inout[max(side * side, 8 * side * tiles - side + 8 * tiles)], tiles: const(side / 8), "
                   "side: size(1..4096), diag: size(1..4096), grid: diag, block: 8, where: diag <= side / 8 - 1")


def test_a_size_from_a_counting_up_loop_takes_every_value_to_its_bound(tmp_path):
    # diag = 1 .. side / 8 (inclusive); before, only the loop's first value was drawn (size(1..1))
    got = annotation(tmp_path, UPPER.replace("STEP", "diag++"), "fill_upper")
    assert got == ("cells: out[max(side * side, 8 * diag * side + 8 * diag - side)], side: size(1..4096), "
                   "diag: size(1..4096), grid: diag, block: 8, where: diag <= side / 8")


def test_a_loop_with_a_bound_written_the_other_way_round(tmp_path):
    got = annotation(tmp_path, UPPER.replace("diag <= side / TILE", "side / TILE >= diag").replace("STEP", "++diag"),
                     "fill_upper")
    assert got.endswith("diag: size(1..4096), grid: diag, block: 8, where: diag <= side / 8")


def test_a_loop_that_skips_values_keeps_its_first_value_only(tmp_path):
    # diag = 1, 3, 5, ...: a range would draw even values the program never passes
    got = annotation(tmp_path, UPPER.replace("STEP", "diag += 2"), "fill_upper")
    assert got == ("cells: out[max(side * side, 8 * diag * side + 8 * diag - side)], side: size(1..4096), "
                   "diag: size(1..1), grid: diag, block: 8")


def test_a_loop_whose_body_moves_its_bound_is_not_followed(tmp_path):
    program = UPPER.replace("STEP", "diag++").replace(
        "fill_upper<<<diag, TILE>>>(cells, side, diag);", "{ fill_upper<<<diag, TILE>>>(cells, side, diag); side--; }")
    got = annotation(tmp_path, program, "fill_upper")
    assert "where" not in got and "diag: size(1..1)" in got


def test_every_drawn_diagonal_keeps_the_kernels_tiles_inside_the_grid(tmp_path):
    # the kernel's own arithmetic over every block of every drawn case: col = b + tiles - diag >= 0 and the last
    # cell inside side * side (tiles = side / 8); some draws reach past the loop's first value
    res = resolve(tmp_path, LOWER, "sweep")
    seen: list[tuple[int, int]] = []

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(cases(res.spec, 1 << 16, 1 << 12))
    def run(case):
        side, diag = case.sizes["side"], case.sizes["diag"]
        tiles = side // 8
        seen.append((side, diag))
        for b in range(diag):
            row, col = tiles - 1 - b, b + tiles - diag
            assert row >= 0 and col >= 0
            assert (row * 8 + 7) * side + col * 8 + 7 < side * side

    run()
    assert any(diag > 1 for _, diag in seen)
