"""A staging loop whose body copies global memory into shared memory by more than one path (a 16-byte vector copy
under an alignment test, an element-by-element fallback) stores, whichever path ran, the same global element at
each shared index. A read of the staged array is then that one element, loaded once under "some path wrote it",
instead of one masked load per store of each path. Where the paths copy different elements, or a value computed
from the load, each store stays a candidate. A vector loop followed by a tail loop for the elements it left
(`for (k = tid; k < m % 4; ...) s[4 * (m / 4) + k] = g[...]`) is one load per read too. Ports run under the Triton interpreter against NumPy."""

from __future__ import annotations

import re

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import port
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, rng, run

# the quads of g copied into shared memory: a 16-byte vector copy where both sides are aligned, else one by one
STAGE_QUADS = """
    extern __shared__ float sg[];
    int quads = m / 4;
    for (int q = threadIdx.x; q < quads; q += blockDim.x) {
        const float* from = &g[4 * q];
        float* to = &sg[4 * q];
        if (reinterpret_cast<uintptr_t>(from) % 16 == 0 && reinterpret_cast<uintptr_t>(to) % 16 == 0) {
            float4 v = *reinterpret_cast<const float4*>(from);
            *reinterpret_cast<float4*>(to) = v;
        } else {
            for (int j = 0; j < 4; ++j) sg[4 * q + j] = g[4 * q + j];
        }
    }
"""

SRC = """
// xlate: g: in[m + 9], x: in[n], y: out[n], n: size(1..3000), m: size(1..200), off: size(0..5), grid: cdiv(n, 64), block: 64, shmem: 4 * m
__global__ void three_taps(const float* g, const float* x, float* y, int n, int m, int off) {""" + STAGE_QUADS + """    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && quads > 0) {
        int q4 = 4 * quads;
        y[i] = x[i] * sg[i % q4] + sg[(i + off) % q4] - 0.5f * sg[(3 * i) % q4];
    }
}

// xlate: g: in[m], y: out[n], n: size(1..3000), m: size(1..200), grid: cdiv(n, 64), block: 64, shmem: 4 * m + 12
__global__ void two_paths_shifted(const float* g, float* y, int n, int m) {
    extern __shared__ float sg[];
    for (int k = threadIdx.x; k < m; k += blockDim.x) {
        if (k % 3 == 0) sg[k + 3] = g[k];
        else sg[k + 3] = g[k];
    }
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = sg[3 + i % m] - sg[3 + (5 * i) % m];
}

// xlate: g: in[m + 9], y: out[n], n: size(1..3000), m: size(1..200), grid: cdiv(n, 64), block: 64, shmem: 4 * m
__global__ void shifted_paths(const float* g, float* y, int n, int m) {
    extern __shared__ float sg[];
    int pairs = m / 2;
    for (int q = threadIdx.x; q < pairs; q += blockDim.x) {
        if (q % 2 == 0) {
            sg[2 * q] = g[2 * q];
            sg[2 * q + 1] = g[2 * q + 1];
        } else {
            sg[2 * q] = g[2 * q + 1];
            sg[2 * q + 1] = g[2 * q];
        }
    }
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && pairs > 0) y[i] = sg[i % (2 * pairs)];
}
"""


TAIL = """
// xlate: g: in[m], x: in[n], y: out[n], n: size(1..3000), m: size(1..200), grid: cdiv(n, 64), block: 64, shmem: 4 * m
__global__ void quads_then_tail(const float* g, const float* x, float* y, int n, int m) {""" + STAGE_QUADS + """    int start = 4 * quads;
    for (int k = threadIdx.x; k < m % 4; k += blockDim.x) sg[start + k] = {TAIL};
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * sg[i % m] + sg[(7 * i + 1) % m];
}
"""


def _tail_run(text: str, tmp_path, n: int, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    g = rng(m + 1).standard_normal(m).astype(np.float32)
    x = rng(n + 2).standard_normal(n).astype(np.float32)
    out = run(text, "quads_then_tail", [buf("g", g), buf("x", x), buf("y", poisoned(n, np.float32)),
                                        ScalarArg("n", n, "int32"), ScalarArg("m", m, "int32")], tmp_path)
    guards_intact(out, "y")
    return g, x, out["y"]


def test_a_vector_loop_and_its_tail_loop_are_one_load_per_read(tmp_path):
    t = port(TAIL.replace("{TAIL}", "g[start + k]"))
    assert t.kernels == ["quads_then_tail"], [d.format() for d in t.diagnostics]
    body = kernel_body(t.text, "quads_then_tail")
    assert len(re.findall(r"tl\.load\(g\b", body)) == 2, body  # one per read (two per read before)
    for n, m in ((1000, 37), (333, 128), (97, 3), (50, 1), (129, 6)):  # tails of 0-3 elements, no quad at all
        g, x, y = _tail_run(t.text, tmp_path, n, m)
        i = np.arange(n)
        np.testing.assert_allclose(y, x * g[i % m] + g[(7 * i + 1) % m], rtol=1e-6, atol=1e-6)


def test_a_tail_loop_that_stores_another_value_stays_a_second_load(tmp_path):
    t = port(TAIL.replace("{TAIL}", "2.0f * g[start + k]"))
    body = kernel_body(t.text, "quads_then_tail")
    assert len(re.findall(r"tl\.load\(g\b", body)) == 4, body
    n, m = 300, 39
    g, x, y = _tail_run(t.text, tmp_path, n, m)
    sg = g.copy()
    sg[m // 4 * 4:] *= 2
    i = np.arange(n)
    np.testing.assert_allclose(y, x * sg[i % m] + sg[(7 * i + 1) % m], rtol=1e-6, atol=1e-6)


def kernel_body(text: str, kernel: str) -> str:
    return text.split(f"def _{kernel}_kernel(", 1)[1].split("\ndef ", 1)[0]


def test_a_read_of_a_copy_by_several_paths_loads_the_element_once(tmp_path):
    t = port(SRC)
    assert t.kernels == ["three_taps", "two_paths_shifted", "shifted_paths"], [d.format() for d in t.diagnostics]
    body = kernel_body(t.text, "three_taps")
    assert len(re.findall(r"tl\.load\(g\b", body)) == 3, body  # one per read (4 + 4 stores per read before)
    for n, m, off in ((1000, 37, 0), (333, 128, 3), (97, 4, 1), (50, 3, 2)):
        g = rng(m).standard_normal(m + 9).astype(np.float32)
        x = rng(n).standard_normal(n).astype(np.float32)
        out = run(t.text, "three_taps", [buf("g", g), buf("x", x), buf("y", poisoned(n, np.float32)),
                                         ScalarArg("n", n, "int32"), ScalarArg("m", m, "int32"),
                                         ScalarArg("off", off, "int32")], tmp_path)
        q4 = m // 4 * 4
        if q4 == 0:
            assert np.isnan(out["y"]).all()
            continue
        sg = g[:q4]
        i = np.arange(n)
        want = x * sg[i % q4] + sg[(i + off) % q4] - np.float32(0.5) * sg[(3 * i) % q4]
        np.testing.assert_allclose(out["y"], want, rtol=1e-6, atol=1e-6)
        guards_intact(out, "y")

    body = kernel_body(t.text, "two_paths_shifted")  # s[k + 3] = g[k] on either path: s[e] is g[e - 3]
    assert len(re.findall(r"tl\.load\(g\b", body)) == 2, body
    n, m = 700, 53
    g = rng(6).standard_normal(m).astype(np.float32)
    out = run(t.text, "two_paths_shifted", [buf("g", g), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32"),
                                            ScalarArg("m", m, "int32")], tmp_path)
    i = np.arange(n)
    np.testing.assert_array_equal(out["y"], g[i % m] - g[(5 * i) % m])
    guards_intact(out, "y")


def test_paths_that_copy_different_elements_stay_candidates(tmp_path):
    t = port(SRC)
    body = kernel_body(t.text, "shifted_paths")
    assert len(re.findall(r"tl\.load\(g\b", body)) > 1, body
    n, m = 500, 41
    g = rng(5).standard_normal(m + 9).astype(np.float32)
    out = run(t.text, "shifted_paths", [buf("g", g), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32"),
                                        ScalarArg("m", m, "int32")], tmp_path)
    p2 = m // 2 * 2
    sg = g[:p2].copy()
    odd = np.arange(p2 // 2) % 2 == 1
    pairs = sg.reshape(-1, 2)
    pairs[odd] = pairs[odd][:, ::-1]
    np.testing.assert_array_equal(out["y"], sg.ravel()[np.arange(n) % p2])
    guards_intact(out, "y")


ROW_QUADS = """
// xlate: g: in[m], a: in[n * m], y: out[n], n: size(1..300), m: size(1..64), grid: cdiv(n, 64), block: 64, shmem: 4 * m
__global__ void row_dot_quads(const float* g, const float* a, float* y, int n, int m) {""" + STAGE_QUADS + """
    int start = 4 * quads;
    for (int k = threadIdx.x; k < m % 4; k += blockDim.x) sg[start + k] = g[start + k];
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float s = 0.0f;
    for (int q = 0; q < quads; ++q) {
        float4 w = *reinterpret_cast<const float4*>(&sg[4 * q]);
        const float* r = &a[i * m + 4 * q];
        s += r[0] * w.x + r[1] * w.y + r[2] * w.z + r[3] * w.w;
    }
    for (int k = start; k < m; ++k) s += a[i * m + k] * sg[k];
    y[i] = s;
}
"""


def test_a_vector_read_of_a_staged_row_is_one_vector_load(tmp_path):
    """fma's row kernel in small: a row staged into shared memory by a float4 loop (alignment test, scalar
    fallback) and a tail loop, then read back as float4 in a counted loop. Inside `for (q = 0; q < quads; ++q)`
    every lane of `sg[4q .. 4q+3]` was written by the vector loop (q < quads) and none by the tail loop (4q + j <
    4 * quads): the four lanes share one condition and are one [BX, 4] load of g, not four scalar loads."""
    t = port(ROW_QUADS)
    assert t.kernels == ["row_dot_quads"], [d.format() for d in t.diagnostics]
    body = kernel_body(t.text, "row_dot_quads")
    quad_loop = body.split("for q_it in", 1)[1].split("\n    for ", 1)[0]
    assert re.search(r"g_vec = tl\.load\(tl\.expand_dims\(.*tl\.arange\(0, 4\)", quad_loop), quad_loop
    assert not re.search(r"tl\.load\(g \+", quad_loop), quad_loop  # no scalar load of g left in the loop
    for n, m in ((300, 37), (65, 64), (129, 3), (1, 1), (200, 6)):  # tails of 0-3, no quad at all, one row
        g = rng(m + 3).standard_normal(m).astype(np.float32)
        a = rng(n + m).standard_normal(n * m).astype(np.float32)
        out = run(t.text, "row_dot_quads", [buf("g", g), buf("a", a), buf("y", poisoned(n, np.float32)),
                                            ScalarArg("n", n, "int32"), ScalarArg("m", m, "int32")], tmp_path)
        guards_intact(out, "y")
        want = a.astype(np.float64).reshape(n, m) @ g.astype(np.float64)
        np.testing.assert_allclose(out["y"], want, rtol=1e-5, atol=1e-5)
