"""A read of member j of the thread's own aligned group of w threads from a shared tile the block loaded
(`s[(t / w) * w + j]`) is emitted as the tile seen as [BX / w, w] rows, the member picked along each row and spread
back (comm.lane_gather). A CUDA block (one lane a thread at the default launch) picks it with tl.gather, one warp
shuffle (`shfl.sync.idx`) per 32 bits in the sm_90 code; a batched program ([R, BX], several lanes a thread, where
tl.gather goes through shared memory) keeps a row sum whose other terms are 0, floats summed as their bit
patterns. Either way the picked value is exact: signed zeros, NaN and 64-bit patterns included. A group that is
not a power of two is a plain tl.gather. Kernels written here run on the Triton interpreter against NumPy on sizes that are not multiples of
the block or of the group."""

from __future__ import annotations

import re

import numpy as np
import pytest
from xlate.backends.base import ScalarArg

from tests.test_triton_lift_layout import _ptx, body
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, ported, rng, run

LEADER = """
// xlate: x: in[n], y: out[n], n: size(1..3000), grid: cdiv(n, 128), block: 128
__global__ void group_member(const float* x, float* y, int n) {
    __shared__ float tile[128];
    int t = threadIdx.x;
    int i = blockIdx.x * 128 + t;
    tile[t] = i < n ? x[i] : 1.5f;
    __syncthreads();
    if (i < n) y[i] = tile[(t / 8) * 8 + 5];
}
"""


def _member_ref(x: np.ndarray, w: int, j: int, block: int, fill) -> np.ndarray:
    n = len(x)
    padded = np.full(-(-n // block) * block, fill, dtype=x.dtype)
    padded[:n] = x
    i = np.arange(n)
    return padded[(i // w) * w + j]


@pytest.mark.parametrize("n", [1000, 37])
def test_group_member_of_a_float_tile_is_bit_exact(tmp_path, n):
    t = ported(LEADER, "group_member")
    b = body(t.text, "group_member")
    assert "tl.gather(" not in b and "_xl_group_member(" in b, b
    x = rng(5).standard_normal(n).astype(np.float32)
    x[::7] = -0.0
    x[3::11] = np.nan
    x[5::13] = -np.inf
    out = run(t.text, "group_member", [buf("x", x), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32")],
              tmp_path)
    want = _member_ref(x, 8, 5, 128, np.float32(1.5))
    np.testing.assert_array_equal(out["y"].view(np.uint32), want.view(np.uint32))
    guards_intact(out, "y")


XOR_GROUPS = """
// xlate: x: in[n] as int64, mask: in[4] as int64, y: out[n] as int64, n: size(1..3000), grid: cdiv(n, 64),
// xlate: block: 64
__global__ void xor_groups(const long* x, const long* mask, long* y, int n) {
    __shared__ long tile[64];
    int t = threadIdx.x;
    int i = blockIdx.x * 64 + t;
    tile[t] = i < n ? x[i] : 0;
    __syncthreads();
    if (i >= n) return;
    int first = (t / 4) * 4;
    long acc = 0;
    for (int j = 0; j < 4; j++) acc ^= mask[j] & tile[first + j];
    y[i] = acc;
}
"""


def test_xor_over_a_group_of_64_bit_members(tmp_path):
    t = ported(XOR_GROUPS, "xor_groups")
    b = body(t.text, "xor_groups")
    assert "tl.gather(" not in b and b.count("_xl_group_member(") == 4, b
    n = 203
    x = rng(6).integers(-2**63, 2**63 - 1, size=n, dtype=np.int64)
    m = rng(7).integers(-2**63, 2**63 - 1, size=4, dtype=np.int64)
    out = run(t.text, "xor_groups", [buf("x", x), buf("mask", m), buf("y", poisoned(n, np.int64)),
                                     ScalarArg("n", n, "int32")], tmp_path)
    want = np.zeros(n, dtype=np.int64)
    for j in range(4):
        want ^= m[j] & _member_ref(x, 4, j, 64, np.int64(0))
    np.testing.assert_array_equal(out["y"], want)
    guards_intact(out, "y")


THIRDS = """
// xlate: x: in[n], y: out[n], n: size(1..3000), grid: cdiv(n, 96), block: 96
__global__ void group_of_three(const float* x, float* y, int n) {
    __shared__ float tile[96];
    int t = threadIdx.x;
    int i = blockIdx.x * 96 + t;
    tile[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    if (i < n) y[i] = tile[(t / 3) * 3 + 2] - tile[(t / 3) * 3];
}
"""


def test_group_that_is_not_a_power_of_two_keeps_the_gather(tmp_path):
    t = ported(THIRDS, "group_of_three")
    b = body(t.text, "group_of_three")
    assert b.count("tl.gather(") == 2 and "_xl_group_member(" not in b, b
    n = 301
    x = rng(8).standard_normal(n).astype(np.float32)
    out = run(t.text, "group_of_three", [buf("x", x), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32")],
              tmp_path)
    want = _member_ref(x, 3, 2, 96, np.float32(0)) - _member_ref(x, 3, 0, 96, np.float32(0))
    np.testing.assert_array_equal(out["y"], want)
    guards_intact(out, "y")


def _batched(text: str, kernel: str) -> str:
    """The port with its launcher's first configuration running 4 CUDA blocks per program (batching.py)."""
    out = re.sub(rf'"{kernel}": \[\{{"blocks": 1, "num_warps": \d+\}}', f'"{kernel}": [{{"blocks": 4, "num_warps": 4}}',
                 text)
    assert out != text, text[-800:]
    return out


def test_batched_blocks_pick_group_members_from_their_own_rows(tmp_path):
    """[R, BX] rows of R CUDA blocks: the helper's 2-D path (XOR_GROUPS), and tl.gather's (THIRDS)."""
    t = ported(XOR_GROUPS, "xor_groups")
    assert "_xl_group_member(" in t.text.split("def _xor_groups_kernel_blocks(", 1)[1]
    n = 333  # 6 CUDA blocks: two programs of 4, the last clamped onto the grid
    x = rng(9).integers(-2**63, 2**63 - 1, size=n, dtype=np.int64)
    m = rng(10).integers(-2**63, 2**63 - 1, size=4, dtype=np.int64)
    out = run(_batched(t.text, "xor_groups"), "xor_groups", [buf("x", x), buf("mask", m),
                                                             buf("y", poisoned(n, np.int64)), ScalarArg("n", n, "int32")],
              tmp_path)
    want = np.zeros(n, dtype=np.int64)
    for j in range(4):
        want ^= m[j] & _member_ref(x, 4, j, 64, np.int64(0))
    np.testing.assert_array_equal(out["y"], want)
    guards_intact(out, "y")
    t = ported(THIRDS, "group_of_three")
    n = 500
    x = rng(11).standard_normal(n).astype(np.float32)
    out = run(_batched(t.text, "group_of_three"), "group_of_three",
              [buf("x", x), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32")], tmp_path)
    want = _member_ref(x, 3, 2, 96, np.float32(0)) - _member_ref(x, 3, 0, 96, np.float32(0))
    np.testing.assert_array_equal(out["y"], want)
    guards_intact(out, "y")


def test_a_group_member_is_one_index_shuffle_at_the_cuda_warps(tmp_path):
    # 128 threads: 4 warps, one lane a thread; member 5 of groups of 8 floats is one shfl.sync.idx (a row sum
    # of the eight took three butterfly shuffles), no shared memory
    t = ported(LEADER, "group_member")
    ptx = _ptx(t.text, "group_member", {"x": "*fp32", "y": "*fp32", "n": "i32"}, {"BX": 128}, tmp_path, num_warps=4)
    assert re.findall(r"shfl\.sync\.\w+", ptx) == ["shfl.sync.idx"]
    assert "bar.sync" not in ptx and "st.shared" not in ptx


def test_the_batched_float_group_member_compiles_for_sm90(tmp_path):
    # the batched kernel's row sum reads a float as its bits: one compile-time branch per width (a dtype-valued
    # conditional expression ran on the interpreter and failed Triton's compiler)
    t = ported(LEADER, "group_member")
    assert "_group_member_kernel_blocks" in t.text
    ptx = _ptx(t.text, "group_member", {"x": "*fp32", "y": "*fp32", "n": "i32", "_xl_gx": "i32"},
               {"BX": 128, "_xl_r": 8}, tmp_path, num_warps=4, jit_name="_group_member_kernel_blocks")
    assert "shfl.sync" in ptx
