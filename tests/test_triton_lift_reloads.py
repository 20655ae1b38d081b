"""A global element read again at the same address, with no store, atomic or barrier since and in the same loop
body, is the value already loaded, as nvcc keeps it in a register (memory.py `earlier_load`; the port issued one
load per mention): under the same predicate, or a narrower one (`a[i] > a[j] && up || a[i] < a[j] && !up`, then
the swap: six loads in a chain of masks became two), its threads past the narrower predicate zeroed as the masked
load would read them; from a buffer the kernel writes too. Every read is issued again where another thread's store
may be awaited on purpose: the kernel or what it calls reads `volatile` memory (a parameter, a local pointer, a
cast, `__ldcv`) or fences. Ports run under the Triton interpreter against NumPy, sizes off the block."""

from __future__ import annotations

import re

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import kernel_body, port
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, rng, run

SRC = """
// xlate: a: in[2 * n], b: in[2 * n], out: out[n], n: size(1..3000), rounds: size(1..5), grid: cdiv(n, 96), block: 96
__global__ void mixed_bits(const unsigned int* a, const unsigned int* b, unsigned int* out, int n, int rounds) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && (i % 3) != 1) {
        unsigned int acc = 0;
        for (int r = 0; r < rounds; r++) {
            unsigned int lo = a[2 * i] & b[2 * i + 1];
            unsigned int hi = a[2 * i] | b[2 * i + 1];
            unsigned int mid = a[2 * i + 1] ^ a[2 * i] ^ b[r];
            acc += (lo ^ hi) + mid * (unsigned int)r + b[r];
        }
        out[i] = acc;
    }
}

// xlate: x: inout[n], y: out[n], n: size(1..3000), grid: cdiv(n, 64), block: 64
__global__ void read_write_read(float* x, float* y, int n) {
    int i = blockIdx.x * 64 + threadIdx.x;
    if (i >= n) return;
    float before = x[i];
    x[i] = before * 2.0f + 1.0f;
    y[i] = x[i] - before;
}
"""


def test_an_element_read_again_is_loaded_once(tmp_path):
    t = port(SRC)
    assert t.kernels == ["mixed_bits", "read_write_read"], [d.format() for d in t.diagnostics]
    body = kernel_body(t.text, "mixed_bits")
    # a[2i] and a[2i+1] (one [BX, 2] block, layout.py), b[2i+1], b[r]: once each
    assert len(re.findall(r"tl\.load\(", body)) == 3 and "tl.arange(0, 2)" in body, body

    n, rounds = 1000, 4
    a = rng(1).integers(0, 2**32, 2 * n, dtype=np.uint64).astype(np.uint32)
    b = rng(2).integers(0, 2**32, 2 * n, dtype=np.uint64).astype(np.uint32)
    out = run(t.text, "mixed_bits", [buf("a", a), buf("b", b), buf("out", poisoned(n, np.uint32)),
                                      ScalarArg("n", n, "int32"), ScalarArg("rounds", rounds, "int32")], tmp_path)
    a64, b64 = a.astype(np.uint64), b.astype(np.uint64)
    idx = np.arange(n)
    acc = np.zeros(n, np.uint64)
    for r in range(rounds):
        lo = a64[2 * idx] & b64[2 * idx + 1]
        hi = a64[2 * idx] | b64[2 * idx + 1]
        mid = a64[2 * idx + 1] ^ a64[2 * idx] ^ b64[r]
        acc = (acc + (lo ^ hi) + mid * r + b64[r]) % 2**32
    want = np.where(idx % 3 != 1, acc, 99).astype(np.uint32)
    assert np.array_equal(out["out"], want)
    guards_intact(out, "out")


def test_a_buffer_the_kernel_writes_is_read_again(tmp_path):
    t = port(SRC)
    body = kernel_body(t.text, "read_write_read")
    assert len(re.findall(r"tl\.load\(x", body)) == 2, body
    n = 333
    x = rng(3).standard_normal(n).astype(np.float32)
    out = run(t.text, "read_write_read", [buf("x", x.copy()), buf("y", poisoned(n, np.float32)),
                                          ScalarArg("n", n, "int32")], tmp_path)
    np.testing.assert_allclose(out["x"], x * 2 + 1, rtol=1e-6)
    np.testing.assert_allclose(out["y"], (x * 2 + 1) - x, rtol=1e-5, atol=1e-6)
    guards_intact(out, "y")


SWAP_STEP = """
// xlate: a: inout[n], n: size(2..3000), half: size(1..64), grid: cdiv(n, 128), block: 128
__global__ void QUAL(int QPTR a, int n, int half) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = (i / half) % 2 == 0 ? i + half : -1;
    bool up = (i / (2 * half)) % 2 == 0;
    if (j >= 0 && j < n) {
        BODY
    }
}
"""
COMPARE_SWAP = """if ((a[i] > a[j] && up) || (a[i] < a[j] && !up)) {
            int t = a[i];
            a[i] = a[j];
            a[j] = t;
        }"""


def swap_step(name: str, ptr: str = "*", body: str = COMPARE_SWAP) -> str:
    return SWAP_STEP.replace("QUAL", name).replace("QPTR", ptr).replace("BODY", body)


def reference_step(a: np.ndarray, half: int) -> np.ndarray:
    out = a.astype(np.int64)
    for i in range(len(a)):
        j = i + half if (i // half) % 2 == 0 else -1
        up = (i // (2 * half)) % 2 == 0
        if 0 <= j < len(a) and ((out[i] > out[j] and up) or (out[i] < out[j] and not up)):
            out[i], out[j] = out[j], out[i]
    return out


def loads(text: str, kernel: str) -> int:
    return len(re.findall(r"tl\.load\(", kernel_body(text, kernel)))


def run_step(text: str, kernel: str, a: np.ndarray, half: int, tmp_path) -> np.ndarray:
    out = run(text, kernel, [buf("a", a.copy()), ScalarArg("n", len(a), "int32"), ScalarArg("half", half, "int32")],
              tmp_path)
    guards_intact(out, "a")
    return out["a"]


def test_a_compare_and_swap_loads_each_element_once(tmp_path):
    t = port(swap_step("step"))
    assert t.kernels == ["step"], [d.format() for d in t.diagnostics]
    assert loads(t.text, "step") == 2, kernel_body(t.text, "step")  # a[i] and a[j], not six
    for n, half, seed in ((1001, 1, 1), (777, 4, 2), (2049, 64, 3), (5, 2, 4)):
        a = rng(seed).integers(-50, 50, n).astype(np.int32)  # ties included
        assert run_step(t.text, "step", a, half, tmp_path).tolist() == reference_step(a, half).tolist(), (n, half)


def test_a_read_under_a_narrower_predicate_is_the_earlier_load(tmp_path):
    # x[i] is loaded under `i < n`; read again under `i < n && x[i] > 0` it is that load (its threads past the
    # narrower predicate zeroed): the block sum counts only the positive ones
    src = """
// xlate: x: in[n], total: out[cdiv(n, 64)], n: size(1..4000), grid: cdiv(n, 64), block: 64
__global__ void positive_sums(const float* x, float* total, int n) {
    __shared__ float s[64];
    int t = threadIdx.x, i = blockIdx.x * 64 + t;
    float v = 0.0f;
    if (i < n) {
        v = x[i] * 0.0f;
        if (x[i] > 0.0f) v = x[i];
    }
    s[t] = v;
    __syncthreads();
    for (int k = 32; k > 0; k >>= 1) {
        if (t < k) s[t] += s[t + k];
        __syncthreads();
    }
    if (t == 0) total[blockIdx.x] = s[0];
}
"""
    t = port(src)
    assert t.kernels == ["positive_sums"], [d.format() for d in t.diagnostics]
    assert loads(t.text, "positive_sums") == 1, kernel_body(t.text, "positive_sums")
    n = 1000
    x = rng(5).standard_normal(n).astype(np.float32)
    out = run(t.text, "positive_sums", [buf("x", x), buf("total", np.full(16, np.nan, np.float32)),
                                        ScalarArg("n", n, "int32")], tmp_path)
    want = np.add.reduceat(np.where(x > 0, x, 0).astype(np.float64), np.arange(0, n, 64))
    np.testing.assert_allclose(out["total"], want, rtol=1e-5, atol=1e-5)


def test_volatile_memory_or_a_fence_keeps_every_read(tmp_path):
    kernels = {
        "volatile_param": swap_step("volatile_param", "volatile *"),
        "volatile_local": swap_step("volatile_local", "*", COMPARE_SWAP.replace("a[", "v[")).replace(
            "bool up", "volatile int* v = a;\n    bool up"),
        "volatile_cast": swap_step("volatile_cast", "*", COMPARE_SWAP.replace("(a[i] > a[j]", "(((volatile int*)a)[i] > a[j]")),
        "ldcv": swap_step("ldcv", "*", COMPARE_SWAP.replace("(a[i] > a[j]", "(__ldcv(&a[i]) > a[j]")),
        "fenced": swap_step("fenced", "*", "__threadfence();\n        " + COMPARE_SWAP),
        "plain": swap_step("plain"),
    }
    t = port("\n".join(kernels.values()))
    assert t.kernels == list(kernels), [d.format() for d in t.diagnostics]
    assert loads(t.text, "plain") == 2
    # volatile behind a type alias, which the IR's types do not carry: the whole file keeps every read
    aliased = port("typedef volatile int vint;\n" + swap_step("aliased", "*", COMPARE_SWAP.replace("a[", "v[")).replace(
        "bool up", "vint* v = (vint*)a;\n    bool up"))
    assert aliased.kernels == ["aliased"], [d.format() for d in aliased.diagnostics]
    assert loads(aliased.text, "aliased") >= 5, kernel_body(aliased.text, "aliased")
    for k in kernels:
        if k != "plain":
            assert loads(t.text, k) >= 5, (k, kernel_body(t.text, k))
    a = rng(6).integers(-9, 9, 999).astype(np.int32)
    for k in kernels:
        assert run_step(t.text, k, a, 8, tmp_path).tolist() == reference_step(a, 8).tolist(), k
