"""Cooperative groups' grid and block handles (intrinsics.py): `this_grid().thread_rank()` is the thread's rank
in the whole grid (its block's linear index, x fastest, times the block's threads, plus its rank in the block),
`size()` the grid's threads; the namespace may be spelled `cg::`, `cooperative_groups::` or left out under `using
namespace`. A grid-wide barrier has no Triton equivalent and is refused.

Each kernel is written here; its port runs on the Triton interpreter against a NumPy model on sizes that are not
multiples of the block, outputs poisoned and buffers between guard bands."""

from __future__ import annotations

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import port
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, ported, rng, run

GRID_STRIDE = """
#include <cooperative_groups.h>
// xlate: x: in[n], y: out[n], n: size(1..5000), grid: (3, 2), block: (32, 4)
__global__ void ranked(const float* x, float* y, int n) {
    auto grid = cooperative_groups::this_grid();
    for (unsigned int r = grid.thread_rank(); r < n; r += grid.size()) {
        y[r] = 2.0f * x[r] + (float)(r % 7u);
    }
}
"""


def test_grid_rank_and_size_in_a_two_dimensional_grid_stride_loop(tmp_path):
    t = ported(GRID_STRIDE, "ranked")
    for n in (1, 700, 1537, 4999):  # the grid has 768 threads: none, one and several strides each
        x = rng(n).standard_normal(n).astype(np.float32)
        out = run(t.text, "ranked", [buf("x", x), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32")],
                  tmp_path)
        r = np.arange(n)
        np.testing.assert_allclose(out["y"], np.float32(2.0) * x + (r % 7).astype(np.float32), rtol=1e-6)
        guards_intact(out, "y")


RANK_ORDER = """
#include <cooperative_groups.h>
using namespace cooperative_groups;
// xlate: y: out[n], n: size(1..2000), grid: (4, 3), block: (16, 2)
__global__ void numbering(int* y, int n) {
    thread_block b = this_thread_block();
    unsigned int r = this_grid().thread_rank();
    unsigned int expect = ((blockIdx.y * gridDim.x + blockIdx.x) * b.size() + threadIdx.y * blockDim.x + threadIdx.x);
    if (r < n) y[r] = (int)(r - expect) * 1000 + (int)this_grid().block_rank();
}
"""


def test_grid_rank_numbers_blocks_x_fastest_unqualified_names(tmp_path):
    # rank - CUDA's own numbering is 0 on every thread; the block rank is the block's linear index
    t = ported(RANK_ORDER, "numbering")
    n = 389  # 12 blocks of 32 threads: 384 ranks, the rest stay poisoned
    out = run(t.text, "numbering", [buf("y", poisoned(n, np.int32)), ScalarArg("n", n, "int32")], tmp_path)
    covered = min(n, 384)
    assert (out["y"][:covered] == np.arange(covered) // 32).all()
    assert (out["y"][covered:] == poisoned(n - covered, np.int32)).all()
    guards_intact(out, "y")


def test_grid_barrier_is_refused():
    t = port("""
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
// xlate: x: inout[n], n: size(1..1000), grid: cdiv(n, 128), block: 128
__global__ void two_phase(float* x, int n) {
    cg::grid_group g = cg::this_grid();
    unsigned int r = g.thread_rank();
    if (r < n) x[r] += 1.0f;
    g.sync();
    if (r < n && r + 1 < n) x[r] = x[r + 1];
}
""")
    assert t.kernels == [] and t.blocking, t.text
    assert any("grid member sync" in d.message for d in t.blocking), [d.format() for d in t.blocking]
