"""A global element read again at the same address under the same mask, with no store, atomic or barrier since
and in the same loop body, is the value already loaded (nvcc keeps it in a register; the port issued one load
per mention). A buffer the kernel also writes is read again each time. Ports run under the Triton interpreter
against NumPy."""

from __future__ import annotations

import re

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import port
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


def kernel_body(text: str, kernel: str) -> str:
    return text.split(f"def _{kernel}_kernel(", 1)[1].split("\ndef ", 1)[0]


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
