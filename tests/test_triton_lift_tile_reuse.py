"""A shared tile the block fills from global memory once is loaded once in the port and reused (comm.py: the
reads of other threads' elements gather from the loaded block with `tl.gather`, instead of one shifted global
load per read), and scalar loads at consecutive addresses become one contiguous block load (layout.py).

Each kernel is written here; its port is checked for the shape of its memory accesses and run on the Triton
interpreter against a float64 NumPy reference on sizes that are not multiples of the block, outputs poisoned
and buffers between guard bands."""

from __future__ import annotations

import re

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift_layout import _ptx, body
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, ported, rng, run

GROUPS = """
// xlate: x: in[n], w: in[4], y: out[n], n: size(1..3000), grid: cdiv(n, 64), block: 64
__global__ void group_weights(const float* x, const float* w, float* y, int n) {
    __shared__ float tile[64];
    int t = threadIdx.x;
    int i = blockIdx.x * 64 + t;
    tile[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    if (i < n) {
        int first = (t / 4) * 4;
        float acc = 0.0f;
        for (int j = 0; j < 4; j++) acc += w[j] * tile[first + j];
        y[i] = acc;
    }
}
"""


def test_group_reads_of_a_shared_tile_gather_from_one_load(tmp_path):
    t = ported(GROUPS, "group_weights")
    b = body(t.text, "group_weights")
    # one load of the tile; each group member is picked from it in registers (comm.lane_gather: an aligned
    # group's member is a row sum of the [BX / 4, 4] view, `_xl_group_member`, not a tl.gather)
    assert len(re.findall(r"tl\.load\(x", b)) == 1 and b.count("_xl_group_member(") == 4, b
    n = 301
    x = rng(1).standard_normal(n).astype(np.float32)
    w = rng(2).standard_normal(4).astype(np.float32)
    out = run(t.text, "group_weights", [buf("x", x), buf("w", w), buf("y", poisoned(n, np.float32)),
                                        ScalarArg("n", n, "int32")], tmp_path)
    xp = np.zeros(n + 4)
    xp[:n] = x
    first = (np.arange(n) // 4) * 4
    want = sum(w[j].astype(np.float64) * xp[first + j] for j in range(4))
    np.testing.assert_allclose(out["y"], want, rtol=1e-5, atol=1e-5)
    guards_intact(out, "y")


ROW_HALO = """
// xlate: src: in[h, w], dst: out[h, w], h: size(1..64), w: size(1..300), grid: (cdiv(w, 16), cdiv(h, 4)),
// xlate: block: (16, 4)
__global__ void row_smooth(const float* src, float* dst, int h, int w) {
    __shared__ float row[4][18];
    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * 16 + tx, y = blockIdx.y * 4 + ty;
    bool inside = x < w && y < h;
    row[ty][tx + 1] = inside ? src[y * w + x] : 0.0f;
    if (tx == 0) row[ty][0] = (x > 0 && y < h) ? src[y * w + x - 1] : 0.0f;
    if (tx == 15) row[ty][17] = (x + 1 < w && y < h) ? src[y * w + x + 1] : 0.0f;
    __syncthreads();
    if (inside) dst[y * w + x] = 0.25f * row[ty][tx] + 0.5f * row[ty][tx + 1] - 0.125f * row[ty][tx + 2];
}
"""

COLUMN_HALO = """
// xlate: src: in[h, w], dst: out[h, w], h: size(1..300), w: size(1..64), grid: (cdiv(w, 8), cdiv(h, 8)),
// xlate: block: (8, 8)
__global__ void column_diff(const float* src, float* dst, int h, int w) {
    __shared__ float col[10][8];
    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * 8 + tx, y = blockIdx.y * 8 + ty;
    col[ty + 1][tx] = (x < w && y < h) ? src[y * w + x] : 0.0f;
    if (ty == 0) col[0][tx] = (x < w && y > 0) ? src[(y - 1) * w + x] : 0.0f;
    if (ty == 7) col[9][tx] = (x < w && y + 1 < h) ? src[(y + 1) * w + x] : 0.0f;
    __syncthreads();
    if (x < w && y < h) dst[y * w + x] = 3.0f * col[ty + 2][tx] - 2.0f * col[ty][tx] + col[ty + 1][tx];
}
"""


def _shifted(a: np.ndarray, dy: int, dx: int) -> np.ndarray:
    """a[y + dy, x + dx], 0 outside."""
    h, w = a.shape
    out = np.zeros_like(a)
    ys, xs = slice(max(0, -dy), min(h, h - dy)), slice(max(0, -dx), min(w, w - dx))
    out[ys, xs] = a[max(0, dy):min(h, h + dy), max(0, dx):min(w, w + dx)]
    return out


def test_a_row_tile_with_halo_is_loaded_once_and_gathered_along_x(tmp_path):
    t = ported(ROW_HALO, "row_smooth")
    b = body(t.text, "row_smooth")
    assert "tl.gather(" in b and ", -1)" in b, b
    assert len(re.findall(r"tl\.load\(src", b)) <= 3, b  # the tile and its two halo columns
    h, w = 7, 45
    src = rng(3).standard_normal(h * w).astype(np.float32)
    out = run(t.text, "row_smooth", [buf("src", src), buf("dst", poisoned(h * w, np.float32)),
                                     ScalarArg("h", h, "int32"), ScalarArg("w", w, "int32")], tmp_path)
    a = src.reshape(h, w).astype(np.float64)
    want = 0.25 * _shifted(a, 0, -1) + 0.5 * a - 0.125 * _shifted(a, 0, 1)
    np.testing.assert_allclose(out["dst"], want.reshape(-1), rtol=1e-5, atol=1e-5)
    guards_intact(out, "dst")


def test_a_column_tile_with_halo_is_gathered_along_y(tmp_path):
    t = ported(COLUMN_HALO, "column_diff")
    b = body(t.text, "column_diff")
    assert "tl.gather(" in b and ", -2)" in b, b
    assert len(re.findall(r"tl\.load\(src", b)) <= 3, b
    h, w = 29, 13
    src = rng(4).standard_normal(h * w).astype(np.float32)
    out = run(t.text, "column_diff", [buf("src", src), buf("dst", poisoned(h * w, np.float32)),
                                      ScalarArg("h", h, "int32"), ScalarArg("w", w, "int32")], tmp_path)
    a = src.reshape(h, w).astype(np.float64)
    want = 3.0 * _shifted(a, 1, 0) - 2.0 * _shifted(a, -1, 0) + a
    np.testing.assert_allclose(out["dst"], want.reshape(-1), rtol=1e-5, atol=1e-5)
    guards_intact(out, "dst")


ADJACENT = """
// xlate: a: in[4 * n], b: in[4 * n], y: out[n], n: size(1..3000), grid: cdiv(n, 128), block: 128
__global__ void quad_dot(const float* a, const float* b, float* y, int n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        size_t o = i * 4;
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < 4; k++) s += a[o + k] * b[o + k];
        y[i] = s;
    }
}

// xlate: a: in[4 * n], y: inout[n], n: size(1..3000), grid: cdiv(n, 64), block: 64
__global__ void triple_then_store(const float* a, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float p = a[4 * i] + 2.0f * a[4 * i + 1];
        y[i] = p;
        float q = a[4 * i + 2] - y[i];
        y[i] = p * q;
    }
}

// xlate: a: in[3 * n], y: out[n], n: size(1..3000), grid: cdiv(n, 64), block: 64
__global__ void odd_pairs(const float* a, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a[3 * i] * a[3 * i + 1] - a[3 * i + 2];
}
"""


def test_adjacent_scalar_loads_become_one_block_load(tmp_path):
    t = ported(ADJACENT, "quad_dot", "triple_then_store", "odd_pairs")
    b = body(t.text, "quad_dot")
    loads = re.findall(r"tl\.load\((.*)", b)
    assert len(loads) == 2 and all("tl.arange(0, 4)" in ld for ld in loads), b
    n = 333
    a = rng(5).standard_normal(4 * n).astype(np.float32)
    bb = rng(6).standard_normal(4 * n).astype(np.float32)
    out = run(t.text, "quad_dot", [buf("a", a), buf("b", bb), buf("y", poisoned(n, np.float32)),
                                   ScalarArg("n", n, "int32")], tmp_path)
    want = (a.astype(np.float64) * bb.astype(np.float64)).reshape(n, 4).sum(axis=1)
    np.testing.assert_allclose(out["y"], want, rtol=1e-5, atol=1e-5)
    guards_intact(out, "y")


def test_a_store_between_adjacent_loads_keeps_them_apart(tmp_path):
    t = ported(ADJACENT, "quad_dot", "triple_then_store", "odd_pairs")
    b = body(t.text, "triple_then_store")
    assert "tl.arange(0, 2)" in b, b  # a[4i], a[4i+1] merged; a[4i+2] comes after the store to y
    assert len(re.findall(r"tl\.load\((?:tl\.expand_dims\()?a ", b)) == 2, b
    n = 205
    a = rng(7).standard_normal(4 * n).astype(np.float32)
    out = run(t.text, "triple_then_store", [buf("a", a), buf("y", poisoned(n, np.float32)),
                                            ScalarArg("n", n, "int32")], tmp_path)
    v = a.astype(np.float64).reshape(n, 4)
    p = v[:, 0] + 2.0 * v[:, 1]
    want = p * (v[:, 2] - p)
    np.testing.assert_allclose(out["y"], want, rtol=1e-5, atol=1e-5)
    guards_intact(out, "y")


def test_misaligned_adjacent_loads_stay_scalar(tmp_path):
    """a[3i], a[3i+1]: a pair that is not 2-aligned would not become a vector access; its split would only add
    a layout conversion."""
    t = ported(ADJACENT, "quad_dot", "triple_then_store", "odd_pairs")
    b = body(t.text, "odd_pairs")
    assert "tl.arange(" not in b.replace("tl.arange(0, BX)", "") and b.count("tl.load(") == 3, b
    n = 190
    a = rng(10).standard_normal(3 * n).astype(np.float32)
    out = run(t.text, "odd_pairs", [buf("a", a), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32")],
              tmp_path)
    v = a.astype(np.float64).reshape(n, 3)
    np.testing.assert_allclose(out["y"], v[:, 0] * v[:, 1] - v[:, 2], rtol=1e-5, atol=1e-5)
    guards_intact(out, "y")


def test_merged_loads_compile_to_vector_accesses(tmp_path):
    t = ported(ADJACENT, "quad_dot", "triple_then_store", "odd_pairs")
    ptx = _ptx(t.text, "quad_dot", {"a": "*fp32", "b": "*fp32", "y": "*fp32", "n": "i32"}, {"BX": 128}, tmp_path)
    loads = re.findall(r"\bld\.global[.\w]*", ptx)
    assert loads and all(".v4." in ld for ld in loads), sorted(set(loads))


def test_the_gathering_port_batches_blocks(tmp_path):
    """Several CUDA blocks in one program (batching.py): each block's row of lanes picks its group members from
    its own row ([R, BX] rows through `_xl_group_member`)."""
    t = ported(GROUPS, "group_weights")
    assert "_xl_group_member(" in t.text.split("def _group_weights_kernel_blocks(", 1)[1]
    batched = re.sub(r'"group_weights": \[\{"blocks": 1, "num_warps": \d+\}',
                     '"group_weights": [{"blocks": 4, "num_warps": 4}', t.text)
    assert batched != t.text
    n = 301  # 5 CUDA blocks: two programs of 4, the last clamped onto the grid
    x = rng(8).standard_normal(n).astype(np.float32)
    w = rng(9).standard_normal(4).astype(np.float32)
    out = run(batched, "group_weights", [buf("x", x), buf("w", w), buf("y", poisoned(n, np.float32)),
                                         ScalarArg("n", n, "int32")], tmp_path)
    xp = np.zeros(n + 4)
    xp[:n] = x
    first = (np.arange(n) // 4) * 4
    want = sum(w[j].astype(np.float64) * xp[first + j] for j in range(4))
    np.testing.assert_allclose(out["y"], want, rtol=1e-5, atol=1e-5)
    guards_intact(out, "y")
