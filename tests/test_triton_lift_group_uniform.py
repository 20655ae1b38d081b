"""Warp shuffles under a condition that every lane of an exchanging group agrees on: `if ((gid >> 3) < groups)`
around shuffles that stay within aligned groups of 8 lanes, or `(gid >> 3) < (m / 4) * 4` (a multiple of 4 groups:
whole warps) around full-warp exchanges. The lifter proves the agreement symbolically (the thread index's part
shifted past its lowest bits, the block offset a uniform multiple of the shift) and keeps refusing where lanes of
one group may disagree. Each port runs under the Triton interpreter against a NumPy reference of the CUDA
semantics (`__shfl_xor_sync` reads lane ^ mask), with sizes that are not multiples of the block."""

from __future__ import annotations

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import port
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, rng, run

OCTET_SORT = """
// xlate: x: in[n], y: out[n], n: size(1..4096), grid: cdiv(n, 128), block: 128
__global__ void octet_sort(const int* x, int* y, int n) {
    int gid = threadIdx.x + blockIdx.x * blockDim.x;
    int lane = threadIdx.x & 7;
    int groups = (n + 7) / 8;
    if ((gid >> 3) < groups) {
        int v = gid < n ? x[gid] : 2147483647;
        for (int k = 2; k <= 8; k <<= 1) {
            for (int j = k >> 1; j > 0; j >>= 1) {
                int p = __shfl_xor_sync(0xffffffff, v, j);
                bool up = (k == 8) || ((lane & k) == 0);
                bool low = (lane & j) == 0;
                v = (low == up) ? min(v, p) : max(v, p);
            }
        }
        if (gid < n) y[gid] = v;
    }
}

// xlate: x: in[n], y: out[n], n: size(1..4096), grid: cdiv(n, 64), block: 64
__global__ void quad_pairs(const float* x, float* y, int n) {
    unsigned g = (blockIdx.x * blockDim.x + threadIdx.x) / 4;
    if (g < (unsigned)n / 4) {
        float v = x[4 * g + (threadIdx.x & 3)];
        v += __shfl_xor_sync(0xffffffff, v, 1);
        v += __shfl_xor_sync(0xffffffff, v, 2);
        y[4 * g + (threadIdx.x & 3)] = v;
    }
}

// xlate: x: in[n], y: out[n], n: size(1..4096), grid: cdiv(n, 128), block: 128
__global__ void whole_warps(const int* x, int* y, int n) {
    int gid = threadIdx.x + blockIdx.x * blockDim.x;
    int octets = n / 8;
    if ((gid >> 3) < (octets / 4) * 4) {
        int v = x[gid];
        for (int m = 16; m > 0; m >>= 1)
            v = max(v, __shfl_xor_sync(0xffffffff, v, m));
        y[gid] = v;
    }
}
"""


def _sorted_octets(x: np.ndarray) -> np.ndarray:
    n = len(x)
    pad = np.full(-(-n // 8) * 8, np.iinfo(np.int32).max, dtype=np.int32)
    pad[:n] = x
    return np.sort(pad.reshape(-1, 8), axis=1).reshape(-1)[:n]


def test_shuffles_under_group_uniform_conditions(tmp_path):
    t = port(OCTET_SORT)
    assert t.kernels == ["octet_sort", "quad_pairs", "whole_warps"], [d.format() for d in t.blocking]
    for n in (1, 13, 1000):  # the last octet cut short; blocks past the data
        x = rng(n).integers(-1000, 1000, n).astype(np.int32)
        out = run(t.text, "octet_sort", [buf("x", x), buf("y", poisoned(n, np.int32)), ScalarArg("n", n, "int32")],
                  tmp_path)
        np.testing.assert_array_equal(out["y"], _sorted_octets(x))
        guards_intact(out, "y")

    n = 997  # the lanes past the last whole quad read nothing and write nothing
    xf = rng(7).standard_normal(n).astype(np.float32)
    out = run(t.text, "quad_pairs", [buf("x", xf), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32")],
              tmp_path)
    q = n // 4 * 4
    quads = xf[:q].reshape(-1, 4)
    want = np.repeat(quads.astype(np.float64).sum(axis=1), 4)  # the port may add the quad in another order
    np.testing.assert_allclose(out["y"][:q], want, rtol=1e-5, atol=1e-6)
    assert np.isnan(out["y"][q:]).all()
    guards_intact(out, "y")

    n = 1000  # 125 octets: 31 whole warps, the 32nd warp (lanes 992..999 and the block past n) skipped
    x = rng(8).integers(-10**6, 10**6, n).astype(np.int32)
    out = run(t.text, "whole_warps", [buf("x", x), buf("y", poisoned(n, np.int32)), ScalarArg("n", n, "int32")],
              tmp_path)
    w = (n // 8) // 4 * 32
    np.testing.assert_array_equal(out["y"][:w], np.repeat(x[:w].reshape(-1, 32).max(axis=1), 32))
    assert (out["y"][w:] == 99).all()
    guards_intact(out, "y")


DISAGREEING = """
// xlate: x: in[n], y: out[n], n: size(1..4096), grid: cdiv(n, 128), block: 128
__global__ void crosses_quads(const int* x, int* y, int n) {
    int gid = threadIdx.x + blockIdx.x * blockDim.x;
    if ((gid >> 2) < n / 4) {
        int v = x[gid];
        v += __shfl_xor_sync(0xffffffff, v, 4);  // lane ^ 4 is in the neighbouring quad, which may be out
        y[gid] = v;
    }
}

// xlate: x: in[n], y: out[n], n: size(1..4096), grid: cdiv(n, 128), block: 128
__global__ void shifted_groups(const int* x, int* y, int n) {
    int gid = threadIdx.x + blockIdx.x * blockDim.x;
    if (((gid + 3) >> 3) < n / 8) {  // groups of 8 that start at lane 5, not at a multiple of 8
        int v = x[gid];
        v += __shfl_xor_sync(0xffffffff, v, 1);
        y[gid] = v;
    }
}

// xlate: x: in[n], y: out[n], m: size(1..64), n: size(1..4096), grid: cdiv(n, 128), block: 128
__global__ void odd_block_offset(const int* x, int* y, int m, int n) {
    int gid = threadIdx.x + blockIdx.x * m * 4;  // a block offset that is a multiple of 4, not of 8
    if ((gid >> 3) < n / 8) {
        int v = x[threadIdx.x + blockIdx.x * blockDim.x];
        v += __shfl_xor_sync(0xffffffff, v, 4);
        y[threadIdx.x + blockIdx.x * blockDim.x] = v;
    }
}

// xlate: x: in[n], y: out[n], n: size(1..4096), grid: cdiv(n, 128), block: 128
__global__ void half_warps_bound(const int* x, int* y, int n) {
    int gid = threadIdx.x + blockIdx.x * blockDim.x;
    if ((gid >> 3) < (n / 16) * 2) {  // a multiple of 2 octets: half warps, while the exchange spans 32 lanes
        int v = x[gid];
        v += __shfl_xor_sync(0xffffffff, v, 16);
        y[gid] = v;
    }
}
"""


def test_shuffles_whose_groups_may_disagree_stay_refused():
    t = port(DISAGREEING)
    assert t.kernels == [], [d.format() for d in t.diagnostics]
    reasons = {d.kernel: d for d in t.blocking}
    assert set(reasons) == {"crosses_quads", "shifted_groups", "odd_block_offset", "half_warps_bound"}
    assert all(d.code == "XL2003" and "data-dependent condition" in d.message for d in reasons.values()), \
        [d.format() for d in reasons.values()]


CARRIED = """
// xlate: x: in[n], y: out[n], n: size(1..4096), reps: size(0..9), grid: cdiv(n, 64), block: 64
__global__ void smooth_steps(const float* x, float* y, int n, int reps) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[min(i, n - 1)];
    for (int r = 0; r < reps; ++r)  // a run-time loop: v is a loop-carried register, exchanged every step
        v = 0.5f * v + 0.25f * __shfl_down_sync(0xffffffff, v, 1, 16);
    if (i < n) y[i] = v;
}
"""


def _smooth_steps(x: np.ndarray, reps: int, block: int = 64, width: int = 16) -> np.ndarray:
    n = len(x)
    lanes = -(-n // block) * block
    i = np.arange(lanes)
    v = x[np.minimum(i, n - 1)].astype(np.float32)
    src = np.where(i % width + 1 < width, i + 1, i)  # __shfl_down_sync: past the segment, a lane keeps its own
    for _ in range(reps):
        v = np.float32(0.5) * v + np.float32(0.25) * v[src]
    return v[:n]


def test_shuffle_of_a_loop_carried_register(tmp_path):
    t = port(CARRIED)
    assert t.kernels == ["smooth_steps"], [d.format() for d in t.blocking]
    n = 203
    x = rng(9).standard_normal(n).astype(np.float32)
    for reps in (0, 1, 5):
        out = run(t.text, "smooth_steps", [buf("x", x), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32"),
                                           ScalarArg("reps", reps, "int32")], tmp_path)
        np.testing.assert_allclose(out["y"], _smooth_steps(x, reps), rtol=1e-6, atol=1e-7)
        guards_intact(out, "y")
