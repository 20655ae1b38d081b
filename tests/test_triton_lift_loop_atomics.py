"""Integer atomics a loop issues at one address become one atomic of each thread's total after the loop
(xlate/cir/hoist.py), which the lifter then combines into one atomic per program: a per-iteration block
reduction and atomic were what made all-pairs-distance's port slower than CUDA. Where the rewrite could change
what the kernel computes (the buffer reachable another way, a return in the loop, floats, a fence) the atomic
stays in the loop. Ports run under the Triton interpreter against NumPy, sizes not multiples of the block,
buffers between guard bands."""

from __future__ import annotations

import re

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import kernel_body as body
from tests.test_triton_lift import port
from tests.test_triton_realworld_patterns import buf, guards_intact, rng, run

SRC = """
#define ROW 300
// xlate: a: in[rows * 300], dist: inout[rows * rows](0..0), rows: size(1..12), grid: (rows, rows), block: 64
__global__ void mismatches(const signed char* a, int* dist, int rows) {
    int gx = blockIdx.x, gy = blockIdx.y;
    for (int i = threadIdx.x; i < ROW; i += 64) {
        int diff = a[gx * ROW + i] != a[gy * ROW + i];
        if (diff) atomicAdd(&dist[gx * rows + gy], diff);
    }
}

// xlate: x: in[n], bits: inout[cdiv(n, 32)](0..0), total: inout[1](0..0), n: size(1..3000), grid: cdiv(n, 96), block: 96
__global__ void nested(const unsigned int* x, unsigned int* bits, unsigned int* total, int n) {
    int t = blockIdx.x * 96 + threadIdx.x;
    if (t >= n) return;
    for (int k = 0; k < 3; k++) {
        for (int j = 0; j < (int)(x[t] % 5u); j++) atomicSub(total, 1u - (x[t] >> j));
    }
    int w = t / 32;
    for (int j = 0; j < (int)(x[t] % 3u); j++) atomicOr(&bits[w], 1u << ((t + j) % 32));
}

// xlate: x: in[n], hist: inout[16](0..0), n: size(1..3000), grid: cdiv(n, 64), block: 64
__global__ void histogram(const int* x, int* hist, int n) {
    for (int i = blockIdx.x * 64 + threadIdx.x; i < n; i += gridDim.x * 64)
        atomicAdd(&hist[x[i] & 15], 1);
}

// xlate: x: in[n], out: inout[cdiv(n, 64)](0..0), n: size(1..3000), grid: cdiv(n, 64), block: 64
__global__ void returns_inside(const int* x, int* out, int n) {
    int t = blockIdx.x * 64 + threadIdx.x;
    for (int j = 0; j < 4; j++) {
        if (t + j >= n) return;
        atomicAdd(&out[blockIdx.x], x[t + j]);
    }
}

// xlate: x: in[n], other: inout[n](0..3), out: inout[cdiv(n, 64)](0..0), n: size(1..3000), grid: cdiv(n, 64), block: 64
__global__ void maybe_aliased(const int* x, int* other, int* out, int n) {
    int t = blockIdx.x * 64 + threadIdx.x;
    if (t >= n) return;
    for (int j = 0; j < 3; j++) atomicAdd(&out[blockIdx.x], x[t] + other[t]);
}

// xlate: x: in[n], s: inout[1](0..0), n: size(1..3000), grid: cdiv(n, 64), block: 64
__global__ void float_sum(const float* x, float* s, int n) {
    int t = blockIdx.x * 64 + threadIdx.x;
    for (int j = t; j < n; j += 100000) atomicAdd(s, x[j]);
}

// xlate: x: in[n], y: out[n], c: inout[1](0..0), n: size(1..3000), grid: cdiv(n, 64), block: 64
__global__ void fenced(const int* x, int* y, int* c, int n) {
    int t = blockIdx.x * 64 + threadIdx.x;
    if (t >= n) return;
    y[t] = x[t];
    __threadfence();
    for (int j = 0; j < 2; j++) atomicAdd(c, 1);
}

// xlate: x: in[n], out: inout[m](0..0), n: size(1..3000), m: size(1..64), grid: cdiv(n, 64), block: 64
__global__ void while_counts(const int* x, int* out, int n, int m) {
    int t = blockIdx.x * 64 + threadIdx.x;
    if (t >= n) return;
    int v = x[t] & 7;
    while (v > 0) {
        atomicAdd(out + t % m, v);
        v--;
    }
}
"""

KERNELS = ["mismatches", "nested", "histogram", "returns_inside", "maybe_aliased", "float_sum", "fenced",
           "while_counts"]



def atomic_depths(text: str, kernel: str) -> list[int]:
    """The indentation (in levels below the kernel's body) of each atomic of the kernel: 0 outside every loop."""
    return [(len(ln) - len(ln.lstrip())) // 4 - 1 for ln in body(text, kernel).splitlines() if "tl.atomic_" in ln]


def test_loop_atomics_at_one_address_leave_the_loop(tmp_path):
    t = port(SRC)
    assert t.kernels == KERNELS, [d.format() for d in t.diagnostics]
    hoisted = {d.kernel for d in t.diagnostics if d.code == "XL2022"}
    assert hoisted == {"mismatches", "nested", "while_counts"}, hoisted
    for k in ("mismatches", "nested"):  # after the loop, each a block total: no atomic left inside a loop
        assert atomic_depths(t.text, k) and all(d == 0 for d in atomic_depths(t.text, k)), (k, body(t.text, k))
    assert len(atomic_depths(t.text, "mismatches")) == 1 and "tl.sum(" in body(t.text, "mismatches")
    for k in ("histogram", "float_sum"):  # run-time loops: the atomic stays inside
        assert any(d > 0 for d in atomic_depths(t.text, k)), (k, body(t.text, k))
    for k, trips in (("returns_inside", 4), ("maybe_aliased", 3), ("fenced", 2)):  # unrolled: one per iteration
        assert len(atomic_depths(t.text, k)) == trips, (k, body(t.text, k))

    rows = 7
    a = rng(1).integers(0, 3, rows * 300).astype(np.int8)
    out = run(t.text, "mismatches", [buf("a", a), buf("dist", np.zeros(rows * rows, np.int32)),
                                     ScalarArg("rows", rows, "int32")], tmp_path)
    m = a.reshape(rows, 300)
    want = (m[:, None, :] != m[None, :, :]).sum(axis=2).reshape(-1)
    assert out["dist"].tolist() == want.tolist()
    guards_intact(out, "dist")

    n = 1001
    x = rng(2).integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    words = -(-n // 32)
    out = run(t.text, "nested", [buf("x", x), buf("bits", np.zeros(words, np.uint32)),
                                 buf("total", np.zeros(1, np.uint32)), ScalarArg("n", n, "int32")], tmp_path)
    total = 0
    bits = np.zeros(words, np.uint64)
    for i, v in enumerate(x.astype(np.uint64)):
        total += 3 * sum(int(v) >> j for j in range(int(v % 5))) - 3 * int(v % 5)
        for j in range(int(v % 3)):
            bits[i // 32] |= 1 << ((i + j) % 32)
    assert int(out["total"][0]) == total % 2**32
    assert out["bits"].tolist() == bits.tolist()
    guards_intact(out, "bits")
    guards_intact(out, "total")

    n, mm = 999, 13
    xi = rng(3).integers(-50, 50, n).astype(np.int32)
    out = run(t.text, "while_counts", [buf("x", xi), buf("out", np.zeros(mm, np.int32)), ScalarArg("n", n, "int32"),
                                       ScalarArg("m", mm, "int32")], tmp_path)
    v = xi & 7
    want = np.zeros(mm, np.int64)
    np.add.at(want, np.arange(n) % mm, v * (v + 1) // 2)
    assert out["out"].tolist() == want.tolist()
    guards_intact(out, "out")

    # the atomics left in their loops still compute what the source does
    out = run(t.text, "returns_inside", [buf("x", xi), buf("out", np.zeros(-(-n // 64), np.int32)),
                                         ScalarArg("n", n, "int32")], tmp_path)
    want = np.zeros(-(-n // 64), np.int64)
    for tt in range(n):
        for j in range(4):
            if tt + j >= n:
                break
            want[tt // 64] += xi[tt + j]
    assert out["out"].tolist() == want.tolist()


def test_a_loop_that_never_runs_touches_no_address(tmp_path):
    """Threads whose loop runs no iteration add nothing: the atomic after the loop is skipped for them, and a
    block none of whose threads ran the loop touches no address (here: past the end of the buffer)."""
    src = """
// xlate: x: in[n], per: inout[cdiv(n, 64)](0..0), n: size(1..3000), grid: cdiv(n, 64) + 2, block: 64
__global__ void per_block(const int* x, int* per, int n) {
    for (int i = blockIdx.x * 64 + threadIdx.x; i < n; i += 1 << 20)
        atomicAdd(&per[blockIdx.x], x[i] & 3);
}
"""
    t = port(src)
    assert t.kernels == ["per_block"], [d.format() for d in t.diagnostics]
    assert any(d.code == "XL2022" for d in t.diagnostics)
    assert re.search(r"tl\.atomic_add\(.*mask=", body(t.text, "per_block"))
    n = 700
    x = rng(4).integers(0, 100, n).astype(np.int32)
    blocks = -(-n // 64)
    out = run(t.text, "per_block", [buf("x", x), buf("per", np.zeros(blocks, np.int32)), ScalarArg("n", n, "int32")],
              tmp_path)
    padded = np.zeros(blocks * 64, np.int64)
    padded[:n] = x & 3
    assert out["per"].tolist() == padded.reshape(blocks, 64).sum(axis=1).tolist()
    guards_intact(out, "per")  # the two blocks past the data write nothing


def test_max_and_min_keep_the_threads_extreme(tmp_path):
    """atomicMax/atomicMin in a loop: the thread's largest/smallest operand (converted as the atomic converts it),
    from the type's lowest/highest value, one atomic after the loop; signed and unsigned, 32 and 64 bits. The
    three buffers are of three element types: two writable buffers of one type could be one (not hoisted)."""
    src = """
// xlate: x: in[n], hi: inout[4](-2147483648..-2147483648), lo: inout[4](9223372036854775807..9223372036854775807), um: inout[1](0..0), n: size(1..3000), grid: cdiv(n, 64), block: 64
__global__ void extremes(const int* x, int* hi, long long* lo, unsigned int* um, int n) {
    int t = blockIdx.x * 64 + threadIdx.x;
    for (int i = t; i < n; i += 640) {
        atomicMax(&hi[blockIdx.x % 4], x[i] - 2000000);  // all below 0: an identity of 0 would lose them
        atomicMin(lo + blockIdx.x % 4, (long long)x[i] * 5000 + 10000000000LL - t);  // all above 0
        atomicMax(um, (unsigned int)x[i]);
    }
}
"""
    t = port(src)
    assert t.kernels == ["extremes"], [d.format() for d in t.diagnostics]
    assert sum(d.code == "XL2022" for d in t.diagnostics) == 3
    assert len(atomic_depths(t.text, "extremes")) == 3 and all(d == 0 for d in atomic_depths(t.text, "extremes"))
    n = 1500
    x = rng(5).integers(-10**6, 10**6, n).astype(np.int32)
    imin = np.iinfo(np.int32).min
    out = run(t.text, "extremes", [buf("x", x), buf("hi", np.full(4, imin, np.int32)), buf("lo", np.full(4, 2**63 - 1, np.int64)),
                                   buf("um", np.zeros(1, np.uint32)), ScalarArg("n", n, "int32")], tmp_path)
    hi, lo = np.full(4, imin, np.int64), [2**63 - 1] * 4
    um = 0
    for tt in range(-(-n // 64) * 64):
        for i in range(tt, n, 640):
            b = tt // 64 % 4
            hi[b] = max(hi[b], int(x[i]) - 2000000)
            lo[b] = min(lo[b], int(x[i]) * 5000 + 10**10 - tt)
            um = max(um, int(x[i]) % 2**32)
    assert out["hi"].tolist() == hi.tolist() and out["lo"].tolist() == lo
    assert int(out["um"][0]) == um
    for name in ("hi", "lo", "um"):
        guards_intact(out, name)

