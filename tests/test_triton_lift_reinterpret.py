"""Pointer reinterpretations: between types of the same representation (a buffer of `unsigned long long` read
through `ulong2*`, two 64-bit lanes of `unsigned long`, the same bits on LP64; `long*` for `long long`), and a
buffer of one scalar type read or written through a pointer to a scalar of another size (`(unsigned int*)bytes`,
`(unsigned char*)floats`): the buffer's pointer bit-cast, offsets rescaled by the size ratio. Ports run under the
Triton interpreter against NumPy (whose `.view` is the same reinterpretation)."""

from __future__ import annotations

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import port
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, rng, run

SRC = """
// xlate: a: in[2 * n], b: out[2 * n], n: size(1..2048), grid: cdiv(n, 64), block: 64
__global__ void swap_halves(const unsigned long long* a, unsigned long long* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        ulong2 v = reinterpret_cast<const ulong2*>(a)[i];
        reinterpret_cast<ulong2*>(b)[i] = make_ulong2(v.y, v.x + 1);
    }
}

// xlate: a: in[n], b: out[n], n: size(1..2048), grid: cdiv(n, 64), block: 64
__global__ void as_long(const long long* a, long long* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    const long* p = (const long*)a;
    if (i < n) b[i] = p[i] * 3;
}

// xlate: bytes: inout[4 * n], n: size(1..2048), grid: cdiv(n, 64), block: 64
__global__ void words_of_bytes(char* bytes, int n) {
    unsigned int* w = (unsigned int*)bytes;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) w[i] = w[i] * 3u + 1u;
}

// xlate: f: in[n], out: out[4 * n], n: size(1..2048), grid: cdiv(n, 64), block: 64
__global__ void bytes_of_floats(const float* f, unsigned char* out, int n) {
    const unsigned char* b = reinterpret_cast<const unsigned char*>(f + 0);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) for (int k = 0; k < 4; ++k) out[4 * i + k] = b[4 * i + 3 - k];
}
"""


def test_same_representation_casts(tmp_path):
    t = port(SRC)
    assert t.kernels == ["swap_halves", "as_long", "words_of_bytes", "bytes_of_floats"], [
        d.format() for d in t.diagnostics
    ]
    n = 300
    a = rng(31).integers(0, 2**63, 2 * n, dtype=np.uint64)
    out = run(
        t.text,
        "swap_halves",
        [buf("a", a), buf("b", poisoned(2 * n, np.uint64)), ScalarArg("n", n, "int32")],
        tmp_path,
    )
    want = np.empty_like(a)
    want[0::2], want[1::2] = a[1::2], a[0::2] + np.uint64(1)
    np.testing.assert_array_equal(out["b"], want)
    guards_intact(out, "b")
    al = rng(32).integers(-(2**40), 2**40, n, dtype=np.int64)
    out = run(
        t.text,
        "as_long",
        [buf("a", al), buf("b", poisoned(n, np.int64)), ScalarArg("n", n, "int32")],
        tmp_path,
    )
    np.testing.assert_array_equal(out["b"], al * 3)
    bytes_ = rng(33).integers(-128, 128, 4 * n, dtype=np.int8)
    out = run(t.text, "words_of_bytes", [buf("bytes", bytes_.copy()), ScalarArg("n", n, "int32")], tmp_path)
    want_words = bytes_.view(np.uint32) * np.uint32(3) + np.uint32(1)
    np.testing.assert_array_equal(out["bytes"].view(np.uint32), want_words)
    f = rng(34).standard_normal(n).astype(np.float32)
    out = run(
        t.text,
        "bytes_of_floats",
        [buf("f", f), buf("out", poisoned(4 * n, np.uint8)), ScalarArg("n", n, "int32")],
        tmp_path,
    )
    np.testing.assert_array_equal(out["out"], f.view(np.uint8).reshape(n, 4)[:, ::-1].reshape(-1))
