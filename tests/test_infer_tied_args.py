"""Spec inference: kernel arguments the host computes from one another (issue #15, the "tied" class of source
faults). `pitch = side + 1; tiles = (pitch - 1) / 16; k<<<..>>>(d, tiles, pitch)` passes two arguments made of
one run-time value: the spec ties the first to the second (`tiles: const((pitch - 1) / 16)`) whatever order they
come in, and an argument the program only ever computes as a multiple of its constant (`side = tiles * 32`) is
drawn as such multiples (`where: side % 32 == 0`). Each test is a small host+kernel program written for it; the
spec is asserted exactly, its expressions are evaluated against the program's own C arithmetic, and the gate's
case strategy is drawn from on the CPU."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings

from tests.spec_inference import resolve, usable
from xlate.specs import expr
from xlate.verify.strategies import cases


def item(res, name: str) -> str:
    return next(p for p in res.annotation().split(", ") if p.startswith(f"{name}: "))


def drawn(spec, examples: int = 40) -> list[dict[str, int]]:
    """The sizes of cases the gate draws from `spec`."""
    out: list[dict[str, int]] = []

    @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(cases(spec, 1 << 16, 1 << 12))
    def run(case):
        out.append(dict(case.sizes))

    run()
    return out


# -- an argument computed from a value that a later argument is passed as -------------------------------------

BANDS_PROGRAM = """
#define TILE 16
__global__ void bands(int* cells, const int tiles, const int pitch, const int step)
{
  int t = threadIdx.x;
  for (int k = 0; k < TILE; k++) {
    int row = (tiles - 1) * TILE + k;
    cells[row * pitch + blockIdx.x * TILE + t + 1] += step * k;
  }
}
int main(int argc, char** argv)
{
  int side = atoi(argv[1]);
  const int pitch = side + 1;
  const int tiles = (pitch - 1) / TILE;
  int* d;
  cudaMalloc((void**)&d, pitch * pitch * sizeof(int));
  bands<<<tiles, TILE>>>(d, tiles, pitch, 3);
  return 0;
}
"""


def test_a_count_computed_before_the_argument_it_derives_from_is_tied_to_it(tmp_path):
    """`tiles` is passed before `pitch`, and both are computed from `side`: read in order, `tiles` found no
    parameter to be written over and was drawn as a small scalar of its own (`tiles: scalar(0..16)`), so the last
    band's rows ran past the `pitch * pitch` cells. Tied once `pitch` is known, it is what C computes from it."""
    res = resolve(tmp_path, BANDS_PROGRAM, "bands")
    assert item(res, "tiles") == "tiles: const((pitch - 1) / 16)"
    assert item(res, "pitch") == "pitch: size(1..4096)"
    assert res.annotation() == ("cells: inout[max(pitch * pitch, 16 * pitch * tiles - pitch + 16 * ((pitch - 1) / 16) + 1)], "
                                "tiles: const((pitch - 1) / 16), pitch: size(1..4096), step: const(3), "
                                "grid: (pitch - 1) / 16, block: 16, where: (pitch - 1) / 16 >= 1")
    usable(res)
    text = item(res, "tiles").split("const(", 1)[1][:-1]
    for side in (16, 17, 31, 32, 33, 100, 4000):
        pitch = side + 1
        assert expr.evaluate(text, {"pitch": pitch}) == (pitch - 1) // 16  # C: the host's own tiles
    for sizes in drawn(res.spec):
        tiles = (sizes["pitch"] - 1) // 16
        assert tiles >= 1
        pitch = sizes["pitch"]
        last = ((tiles - 1) * 16 + 15) * pitch + (tiles - 1) * 16 + 15 + 1  # the largest index written
        assert last < max(pitch * pitch, 16 * pitch * tiles - pitch + 16 * tiles + 1)


# -- a rounded count and the multiple of it, passed together ------------------------------------------------------

TILED_PROGRAM = """
#define TILE 32
__global__ void relax(float* dist, const int side, const int last)
{
  int y = blockIdx.x / last;
  int x = blockIdx.x % last;
  int r = y * TILE + threadIdx.x / TILE;
  int c = x * TILE + threadIdx.x % TILE;
  dist[r * side + c] = fminf(dist[r * side + c], dist[c * side + r] + 1.0f);
}
__global__ void seed(float* dist, const int side)
{
  int r = threadIdx.x / TILE;
  int c = threadIdx.x % TILE;
  dist[r * side + c] = (r == c) ? 0.0f : 1.0e9f;
}
int main(int argc, char** argv)
{
  int vertices = atoi(argv[1]);
  const int tiles = (vertices + TILE - 1) / TILE;
  const int side = tiles * TILE;
  const int last = tiles - 1;
  float* d;
  cudaMalloc((void**)&d, side * side * sizeof(float));
  seed<<<1, TILE * TILE>>>(d, side);
  relax<<<last * last, TILE * TILE>>>(d, side, last);
  return 0;
}
"""


def test_a_multiple_of_a_rounded_count_is_tied_to_the_count_less_one(tmp_path):
    """`side = tiles * 32` and `last = tiles - 1`, with `tiles = cdiv(vertices, 32)`: both arguments are made of
    the rounded quotient, which is solved for as a whole (`side = 32 * last + 32`), so `side` is never drawn
    apart from the tiles the grid walks (drawn apart, a tile's rows `r * side` reached past the matrix)."""
    res = resolve(tmp_path, TILED_PROGRAM, "relax")
    assert item(res, "side") == "side: const(32 * last + 32)"
    assert item(res, "last") == "last: size(1..4096)"
    assert item(res, "grid") == "grid: last * last"
    usable(res)
    text = item(res, "side").split("const(", 1)[1][:-1]
    for vertices in (33, 63, 64, 65, 100, 1000):
        tiles = -(-vertices // 32)
        assert expr.evaluate(text, {"last": tiles - 1}) == tiles * 32  # C: the host's own side


def test_a_size_the_program_computes_as_a_multiple_of_its_constant_is_drawn_as_multiples(tmp_path):
    """`seed` receives only `side = tiles * 32` and writes a 32 x 32 tile with rows `side` apart: with a side
    below 32, or not a multiple of it, rows of the tile overlap (two threads write one element), which the
    program never does. The spec says the program's multiple, and the gate draws only such sides."""
    res = resolve(tmp_path, TILED_PROGRAM, "seed")
    assert res.annotation() == ("dist: out[side * side], side: size(1..4096), grid: 1, block: 1024, "
                                "where: side >= 32 and side % 32 == 0")
    usable(res)
    sides = [s["side"] for s in drawn(res.spec)]
    assert sides and all(s % 32 == 0 and s >= 32 for s in sides)
    for side in set(sides):  # every thread of the tile writes its own element, inside the matrix
        written = {(t // 32) * side + t % 32 for t in range(1024)}
        assert len(written) == 1024 and max(written) < side * side


def test_a_size_passed_as_it_is_read_or_times_a_literal_adds_no_multiple(tmp_path):
    """Only a factor the kernel's own constants give makes a multiple: a size read at run time and passed as is
    (or plus a constant), or times a literal the kernel never names (`3 * k` for a guarded `n`), is drawn as
    before, non-multiples included."""
    for passed in ("k + 3", "3 * k"):
        res = resolve(tmp_path, """
        __global__ void fill(float* x, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) x[i] = 1.0f;
        }
        int main(int argc, char** argv) {
          int k = atoi(argv[1]);
          int n = PASSED;
          float* d;
          cudaMalloc((void**)&d, n * sizeof(float));
          fill<<<(n + 255) / 256, 256>>>(d, n);
        }
        """.replace("PASSED", passed), "fill")
        assert "%" not in res.annotation(), passed
        assert item(res, "n") == "n: size(1..4096)"
        usable(res)


# -- a vector view indexed by the element it stands for -------------------------------------------------------

PAIRS_PROGRAM = """
#include <cuda_fp16.h>
__global__ void shift_pairs(__half* x, const __half* b, int cols, int rows)
{
  int r = blockIdx.x;
  int base = blockIdx.y * cols * rows + r * cols;
  for (int c = threadIdx.x * 2; c < cols; c += blockDim.x * 2) {
    half2 v = ((half2*)x)[(base + c) >> 1];
    half2 w = ((const half2*)b)[c >> 1];
    ((half2*)x)[(base + c) >> 1] = __hadd2(v, w);
  }
}
int main(int argc, char** argv)
{
  int cols = atoi(argv[1]);
  int rows = atoi(argv[2]);
  int batch = 3;
  __half *x, *b;
  cudaMalloc((void**)&x, batch * rows * cols * sizeof(__half));
  cudaMalloc((void**)&b, cols * sizeof(__half));
  dim3 grid(rows, batch);
  shift_pairs<<<grid, 128>>>(x, b, cols, rows);
}
"""


def test_a_pair_view_counted_by_a_loop_with_no_initializer_needs_even_rows_too(tmp_path):
    """`int c = threadIdx.x * 2; for (; c < cols; c += ...)`: the loop counts from the value `c` holds, as
    `for (int c = threadIdx.x * 2; ...)` does; read as a value it could not follow, the pair view's element was
    unknown and nothing was required of `cols`."""
    program = PAIRS_PROGRAM.replace("for (int c = threadIdx.x * 2; c < cols;",
                                    "int c = threadIdx.x * 2;\n  for (; c < cols;")
    assert "for (; c < cols;" in program
    res = resolve(tmp_path, program, "shift_pairs")
    assert res.annotation() == ("x: inout[cols * rows * batch], b: in[cols], cols: size(1..4096), "
                                "rows: size(1..4096), batch: size(1..3), grid: (rows, batch), block: 128, "
                                "where: cols % 2 == 0")
    usable(res)


def test_a_pair_view_indexed_by_the_element_halved_needs_even_rows(tmp_path):
    """`((half2*)x)[(base + c) >> 1]` loads the pair holding element `base + c`: that pair starts at the element
    only when `base = ... + r * cols` is even, so with an odd `cols` the last pair of one row is the first of the
    next, and two blocks update it at once. The program's rows are even; the spec says so, and in every case the
    gate draws the pairs the (row, thread) couples update are distinct and inside the buffer."""
    res = resolve(tmp_path, PAIRS_PROGRAM, "shift_pairs")
    assert res.annotation() == ("x: inout[cols * rows * batch], b: in[cols], cols: size(1..4096), "
                                "rows: size(1..4096), batch: size(1..3), grid: (rows, batch), block: 128, "
                                "where: cols % 2 == 0")
    usable(res)
    checked = 0
    for sizes in drawn(res.spec):
        cols, rows, batch = sizes["cols"], sizes["rows"], sizes["batch"]
        assert cols % 2 == 0
        if cols * rows * batch > 1 << 16:
            continue
        pairs = [((z * cols * rows + r * cols + c) >> 1) for z in range(batch) for r in range(rows)
                 for t in range(128) for c in range(2 * t, cols, 256)]
        assert len(pairs) == len(set(pairs)) and max(pairs) < cols * rows * batch // 2
        checked += 1
    assert checked


# -- fields of an element written at fixed offsets -------------------------------------------------------------

FIELDS_PROGRAM = """
__global__ void tint(const float* in, float* out, int w, int h, int ch, float k)
{
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  float r = in[(y * w + x) * ch + 0];
  float g = in[(y * w + x) * ch + 1];
  float b = in[(y * w + x) * ch + 2];
  out[w * ch * y + x * ch + 0] = k * r + g;
  out[w * ch * y + x * ch + 1] = k * g + b;
  out[w * ch * y + x * ch + 2] = k * b + r;
}
int main(int argc, char** argv)
{
  int w = atoi(argv[1]);
  int h = atoi(argv[2]);
  int ch = 4;
  if (w % 16 != 0 || h % 16 != 0) return 1;
  float *in, *out;
  cudaMalloc((void**)&in, w * h * ch * sizeof(float));
  cudaMalloc((void**)&out, w * h * ch * sizeof(float));
  dim3 grid(w / 16, h / 16);
  dim3 block(16, 16);
  tint<<<grid, block>>>(in, out, w, h, ch, 0.5f);
}
"""


def test_three_fields_written_per_element_need_a_stride_of_three(tmp_path):
    """Each thread writes fields 0, 1 and 2 of its pixel, `ch` apart from the next pixel's: with ch = 1 or 2 (the
    program's is 4) the pixels' fields overlap and neighbouring threads write one element. The channel count
    starts at 3; the gate's cases write every element once, and the result is the kernel's own (NumPy)."""
    res = resolve(tmp_path, FIELDS_PROGRAM, "tint")
    assert item(res, "ch") == "ch: size(3..4)"
    assert res.annotation() == ("in: in[ch * h * w], out: out[ch * h * w], w: size(1..4096), h: size(1..4096), "
                                "ch: size(3..4), k: scalar(0.25..1), grid: (w / 16, h / 16), block: (16, 16), "
                                "where: w % 16 == 0 and h % 16 == 0 and w % 16 == 0 and h % 16 == 0")
    usable(res)
    checked = 0
    for sizes in drawn(res.spec):
        w, h, ch = sizes["w"], sizes["h"], sizes["ch"]
        assert ch >= 3 and w % 16 == 0 and h % 16 == 0
        if w * h * ch > 1 << 16:
            continue
        src = np.arange(w * h * ch, dtype=np.float64) % 7
        dst = np.full(w * h * ch, np.nan)
        writes = np.zeros(w * h * ch, dtype=int)
        for y in range(h):
            for x in range(w):  # the kernel's threads, one pixel each
                p = (y * w + x) * ch
                r, g, b = src[p], src[p + 1], src[p + 2]
                for f, v in enumerate((0.5 * r + g, 0.5 * g + b, 0.5 * b + r)):
                    dst[w * ch * y + x * ch + f] = v
                    writes[w * ch * y + x * ch + f] += 1
        assert writes.max() == 1  # no element written by two threads
        pix = src.reshape(h * w, ch)
        want = np.stack([0.5 * pix[:, 0] + pix[:, 1], 0.5 * pix[:, 1] + pix[:, 2], 0.5 * pix[:, 2] + pix[:, 0]], 1)
        assert np.allclose(dst.reshape(h * w, ch)[:, :3], want)
        checked += 1
    assert checked
