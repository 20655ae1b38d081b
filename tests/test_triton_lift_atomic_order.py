"""The memory order of the port's atomics. CUDA's atomicAdd & co. are relaxed; Triton's atomics default to
acquire-release, which fences around each one (all-pairs-distance's port, an atomic per loop iteration, was
2.7x slower than CUDA on the H200 with them). A port's atomics are relaxed unless the kernel, or a device function it calls, fences: then they
keep Triton's order, which the fence (lowered to nothing) relies on to publish what was stored before it. Ports run
under the Triton interpreter against NumPy (the order is a keyword the interpreter accepts and ignores; the GPU
session verifies the ports that change)."""

from __future__ import annotations

import re

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import kernel_body, port
from tests.test_triton_realworld_patterns import buf, guards_intact, rng, run

SRC = """
// xlate: x: in[n], total: inout[1](0..0), n: size(1..5000), grid: cdiv(n, 96), block: 96
__global__ void float_total(const float* x, float* total, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(total, x[i]);
}

// xlate: x: in[n], bins: inout[10](0..0), top: inout[1](-2147483648..-2147483648), n: size(1..5000), grid: cdiv(n, 64), block: 64
__global__ void bins_and_max(const int* x, int* bins, int* top, int n) {
    int i = blockIdx.x * 64 + threadIdx.x;
    if (i < n) {
        atomicAdd(&bins[x[i] % 10], 1);
        atomicMax(top, x[i]);
    }
}

// xlate: x: in[n], flags: inout[n](0..0), n: size(1..5000), grid: cdiv(n, 64), block: 64
__global__ void claim(const int* x, int* flags, int n) {
    int i = blockIdx.x * 64 + threadIdx.x;
    if (i < n && x[i] > 2) atomicCAS(&flags[i], 0, x[i]);
}

__device__ void publish(float* out, int i, float v) {
    out[i] = v;
    __threadfence();
}

// xlate: x: in[n], out: out[n], done: inout[1](0..0), n: size(1..5000), grid: cdiv(n, 64), block: 64
__global__ void fenced_count(const float* x, float* out, int* done, int n) {
    int i = blockIdx.x * 64 + threadIdx.x;
    if (i < n) {
        publish(out, i, 2.0f * x[i]);
        atomicAdd(done, 1);
    }
}

__device__ void never_called(float* p) { __threadfence(); p[0] = 1.0f; }

// xlate: x: in[n], total: inout[1](0..0), n: size(1..5000), grid: cdiv(n, 64), block: 64
__global__ void unfenced_next_to_a_fence(const float* x, float* total, int n) {
    int i = blockIdx.x * 64 + threadIdx.x;
    if (i < n) atomicAdd(total, x[i] * x[i]);
}
"""

KERNELS = ["float_total", "bins_and_max", "claim", "fenced_count", "unfenced_next_to_a_fence"]


def atomics(text: str, kernel: str) -> list[str]:
    return re.findall(r"tl\.atomic_\w+\(.*", kernel_body(text, kernel))


def test_atomics_are_relaxed_unless_the_kernel_fences(tmp_path):
    t = port(SRC)
    assert t.kernels == KERNELS, [d.format() for d in t.diagnostics]
    for k in ("float_total", "bins_and_max", "claim", "unfenced_next_to_a_fence"):
        calls = atomics(t.text, k)
        assert calls and all(c.endswith('sem="relaxed")') for c in calls), (k, calls)
    assert len(atomics(t.text, "bins_and_max")) == 2
    # a fence in a device function the kernel calls: Triton's default (acquire-release) order, no keyword
    calls = atomics(t.text, "fenced_count")
    assert calls and not any("sem=" in c for c in calls), calls

    n = 1001  # not a multiple of any block
    xf = rng(1).standard_normal(n).astype(np.float32)
    out = run(t.text, "float_total", [buf("x", xf), buf("total", np.zeros(1, np.float32)),
                                      ScalarArg("n", n, "int32")], tmp_path)
    np.testing.assert_allclose(out["total"][0], xf.astype(np.float64).sum(), rtol=1e-4, atol=1e-4)
    guards_intact(out, "total")

    xi = rng(2).integers(0, 1000, n).astype(np.int32)
    out = run(t.text, "bins_and_max", [buf("x", xi), buf("bins", np.zeros(10, np.int32)),
                                       buf("top", np.full(1, np.iinfo(np.int32).min, np.int32)),
                                       ScalarArg("n", n, "int32")], tmp_path)
    assert out["bins"].tolist() == np.bincount(xi % 10, minlength=10).tolist()
    assert int(out["top"][0]) == int(xi.max())
    guards_intact(out, "bins")

    xs = rng(3).integers(0, 6, n).astype(np.int32)
    flags = np.where(rng(4).random(n) < 0.3, 9, 0).astype(np.int32)  # some already claimed
    out = run(t.text, "claim", [buf("x", xs), buf("flags", flags.copy()), ScalarArg("n", n, "int32")], tmp_path)
    assert out["flags"].tolist() == np.where((xs > 2) & (flags == 0), xs, flags).tolist()
    guards_intact(out, "flags")

    out = run(t.text, "fenced_count", [buf("x", xf), buf("out", np.full(n, np.nan, np.float32)),
                                       buf("done", np.zeros(1, np.int32)), ScalarArg("n", n, "int32")], tmp_path)
    np.testing.assert_array_equal(out["out"], 2.0 * xf)
    assert int(out["done"][0]) == n
