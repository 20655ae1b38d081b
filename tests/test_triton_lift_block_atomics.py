"""A global integer atomic add/max/min that every thread of a block aims at one address, its result unused, lifts
to one atomic of the block's reduction (the per-thread atomics on one address serialise on a GPU; the sum, max
or min of integers is the same in any grouping). Floats and read results keep one atomic per thread. Ports run
under the Triton interpreter against NumPy, with a block that is not a power of two and sizes that are not
multiples of the block."""

from __future__ import annotations

import re

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import port
from tests.test_triton_realworld_patterns import buf, guards_intact, rng, run

SRC = """
// xlate: x: in[n], hits: inout[cdiv(n, 96)](0..0), n: size(1..5000), grid: cdiv(n, 96), block: 96
__global__ void above_per_block(const int* x, int* hits, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] > 3) atomicAdd(&hits[blockIdx.x], 1);
}

// xlate: x: in[n], total: inout[1](0..0), n: size(1..5000), grid: cdiv(n, 64), block: 64
__global__ void wrapping_total(const unsigned int* x, unsigned int* total, int n) {
    int i = blockIdx.x * 64 + threadIdx.x;
    if (i >= n) return;
    atomicAdd(total, x[i] * 3u);
}

// xlate: x: in[n], m: inout[3](-2147483648..-2147483648), k: inout[3](2147483647..2147483647), n: size(1..5000), grid: cdiv(n, 80), block: 80
__global__ void max_min_by_block(const int* x, int* m, int* k, int n) {
    int i = blockIdx.x * 80 + threadIdx.x;
    if (i < n) {
        atomicMax(m + blockIdx.x % 3, x[i]);
        atomicMin(&k[blockIdx.x % 3], x[i] - (int)threadIdx.x);
    }
}

// xlate: x: in[n], s: inout[1](0..0), n: size(1..5000), grid: cdiv(n, 64), block: 64
__global__ void float_total(const float* x, float* s, int n) {
    int i = blockIdx.x * 64 + threadIdx.x;
    if (i < n) atomicAdd(s, x[i]);
}
"""

KERNELS = ["above_per_block", "wrapping_total", "max_min_by_block", "float_total"]


def body(text: str, kernel: str) -> str:
    """`kernel`'s Triton function (atomics are not batched: one CUDA block per program is its only launch)."""
    return text.split(f"def _{kernel}_kernel(", 1)[1].split("\ndef ", 1)[0]


def atomics(text: str, kernel: str) -> list[str]:
    return re.findall(r"tl\.atomic_\w+\(.*", body(text, kernel))


def test_one_atomic_per_block_of_the_block_reduction(tmp_path):
    t = port(SRC)
    assert t.kernels == KERNELS, [d.format() for d in t.diagnostics]
    for k in KERNELS[:3]:  # one atomic per block, of a reduction: no per-thread block of pointers
        calls = atomics(t.text, k)
        assert calls and all("tl.zeros" not in c and "mask=" in c for c in calls), calls
        assert re.search(r"tl\.(sum|max|min)\(", body(t.text, k))
    assert "tl.zeros" in atomics(t.text, "float_total")[0]  # floats: regrouping would round differently

    n = 1001
    x = rng(1).integers(0, 8, n).astype(np.int32)
    blocks = -(-n // 96)
    padded = np.zeros(blocks * 96, np.int32)
    padded[:n] = x > 3
    out = run(t.text, "above_per_block", [buf("x", x), buf("hits", np.zeros(blocks, np.int32)),
                                          ScalarArg("n", n, "int32")], tmp_path)
    assert np.array_equal(out["hits"], padded.reshape(blocks, 96).sum(axis=1))
    guards_intact(out, "hits")

    n = 3001
    xu = rng(2).integers(2**31, 2**32, n, dtype=np.uint64).astype(np.uint32)
    out = run(t.text, "wrapping_total", [buf("x", xu), buf("total", np.zeros(1, np.uint32)),
                                         ScalarArg("n", n, "int32")], tmp_path)
    assert int(out["total"][0]) == int((xu.astype(np.uint64) * 3).sum()) % 2**32
    guards_intact(out, "total")

    n = 555  # 7 blocks of 80: blocks 0, 3, 6 share element 0
    x = rng(3).integers(-1000, 1000, n).astype(np.int32)
    imin, imax = np.iinfo(np.int32).min, np.iinfo(np.int32).max
    lane = np.arange(n) % 80
    block = np.arange(n) // 80
    out = run(t.text, "max_min_by_block", [buf("x", x), buf("m", np.full(3, imin, np.int32)),
                                           buf("k", np.full(3, imax, np.int32)), ScalarArg("n", n, "int32")], tmp_path)
    assert out["m"].tolist() == [int(x[block % 3 == r].max()) for r in range(3)]
    assert out["k"].tolist() == [int((x - lane)[block % 3 == r].min()) for r in range(3)]
    guards_intact(out, "m")
    guards_intact(out, "k")

    n = 300
    xf = rng(4).standard_normal(n).astype(np.float32)
    out = run(t.text, "float_total", [buf("x", xf), buf("s", np.zeros(1, np.float32)), ScalarArg("n", n, "int32")],
              tmp_path)
    np.testing.assert_allclose(out["s"][0], xf.astype(np.float64).sum(), rtol=1e-4, atol=1e-4)


USED_SRC = """
// xlate: x: in[n], slots: out[n], count: inout[1](0..0), n: size(1..5000), grid: cdiv(n, 64), block: 64
__global__ void take_slots(const int* x, int* slots, int* count, int n) {
    int i = blockIdx.x * 64 + threadIdx.x;
    if (i < n && x[i] > 0) slots[i] = atomicAdd(count, 1);
}
"""


def test_an_atomic_whose_result_is_read_stays_per_thread():
    t = port(USED_SRC)
    assert t.kernels == ["take_slots"], [d.format() for d in t.diagnostics]
    calls = atomics(t.text, "take_slots")
    assert len(calls) == 1 and "tl.zeros" in calls[0] and "tl.sum" not in calls[0], calls


ONE_THREAD_SRC = """
// xlate: x: in[n], total: inout[1](0..0), n: size(1..5000), grid: cdiv(n, 64), block: 64
__global__ void leader_adds(const int* x, int* total, int n) {
    int i = blockIdx.x * 64 + threadIdx.x;
    if (threadIdx.x == 0 && i < n) atomicAdd(total, x[i]);
}
"""


def test_an_atomic_of_one_thread_needs_no_reduction(tmp_path):
    t = port(ONE_THREAD_SRC)
    assert t.kernels == ["leader_adds"], [d.format() for d in t.diagnostics]
    assert "tl.sum" not in body(t.text, "leader_adds")
    n = 1000
    x = rng(5).integers(-50, 50, n).astype(np.int32)
    out = run(t.text, "leader_adds", [buf("x", x), buf("total", np.zeros(1, np.int32)), ScalarArg("n", n, "int32")],
              tmp_path)
    assert int(out["total"][0]) == int(x[::64].sum())


PAST_SRC = """
// xlate: x: in[n], sums: inout[cdiv(n, 64)](0..0), n: size(1..5000), grid: cdiv(n, 64) + 2, block: 64
__global__ void sums_past_the_end(const int* x, int* sums, int n) {
    int i = blockIdx.x * 64 + threadIdx.x;
    if (i < n) atomicAdd(&sums[blockIdx.x], x[i]);
}
"""


def test_blocks_without_an_active_thread_touch_no_address(tmp_path):
    t = port(PAST_SRC)
    assert t.kernels == ["sums_past_the_end"], [d.format() for d in t.diagnostics]
    n = 1000
    x = rng(6).integers(-3, 4, n).astype(np.int32)
    blocks = -(-n // 64)
    out = run(t.text, "sums_past_the_end", [buf("x", x), buf("sums", np.zeros(blocks, np.int32)),
                                            ScalarArg("n", n, "int32")], tmp_path)
    padded = np.zeros(blocks * 64, np.int64)
    padded[:n] = x
    assert np.array_equal(out["sums"], padded.reshape(blocks, 64).sum(axis=1))
    guards_intact(out, "sums")
    # the two extra blocks name sums[blocks] and sums[blocks + 1]: their total is 0 and their atomic is masked off
    # (an atomic of 0 would show nothing on the interpreter, but on a GPU it would access past the buffer)
    assert re.search(r'tl\.atomic_add\(sums \+ pid_x, (\w+), mask=\1 != 0, sem="relaxed"\)', body(t.text, "sums_past_the_end"))


UNCONDITIONAL = """
// xlate: x: in[n], out: inout[1](0..0), n: size(1..5000), grid: cdiv(n, 96), block: 96
__global__ void every_thread_adds(const float* x, float* out, int n) {
    int i = blockIdx.x * 96 + threadIdx.x;
    float v = 0.0f;
    if (i < n) v = x[i];
    atomicAdd(out, v);  // no condition around it: every thread, padding threads with 0
}

// xlate: x: in[n], out: inout[1](0..0), n: size(1..5000), grid: 1, block: 128
__global__ void strided_then_add(const double* x, double* out, int n) {
    double mine = 0.0;
    for (int k = threadIdx.x; k < n; k += 128) mine += x[k];
    atomicAdd(out, mine);
}
"""


def test_every_threads_float_atomic_at_one_address_without_a_condition(tmp_path):
    """Floats keep one atomic per thread; with no condition around it the address is one pointer for the whole
    block, which Triton takes with a block of values only as a block of pointers (it refused the port before)."""
    t = port(UNCONDITIONAL)
    assert t.kernels == ["every_thread_adds", "strided_then_add"], [d.format() for d in t.diagnostics]
    for n, seed in ((1000, 1), (96, 2), (1, 3)):
        x = rng(seed).standard_normal(n).astype(np.float32)
        out = run(t.text, "every_thread_adds", [buf("x", x), buf("out", np.zeros(1, np.float32)),
                                                ScalarArg("n", n, "int32")], tmp_path)
        np.testing.assert_allclose(out["out"], [x.astype(np.float64).sum()], rtol=1e-4, atol=1e-4)
        guards_intact(out, "out")
        d = rng(seed + 5).standard_normal(n)
        out = run(t.text, "strided_then_add", [buf("x", d), buf("out", np.zeros(1)), ScalarArg("n", n, "int32")],
                  tmp_path)
        np.testing.assert_allclose(out["out"], [d.sum()], rtol=1e-12, atol=1e-12)
        guards_intact(out, "out")
