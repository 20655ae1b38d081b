"""glm's vectors (a header-only library whose headers are not read: xlate/data/library_types.yaml) in kernels the
Triton lifter ports: their lanes are members x, y, z, w, their arithmetic is lane by lane with a number broadcast,
glm::make_vecN loads consecutive elements, glm::dot / length / normalize / cross as glm defines them; a glm function
with no rule is refused by name (matrices: test_triton_lift_library_matrices.py). Ports run under the Triton interpreter against
NumPy, on sizes that are no multiple of the block."""

from __future__ import annotations

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import port
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, rng, run

HEAD = """
#include <glm/glm.hpp>
using vec2 = glm::vec<2, float>;
using vec3 = glm::vec<3, float>;
using mat3 = glm::mat<3, 3, float>;
"""

ARITH = HEAD + """
// xlate: p: in[3 * n], q: in[3 * n], out: out[3 * n], n: size(1..4096), grid: cdiv(n, 128), block: 128
__global__ void bounce(const float *p, const float *q, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    vec3 a = glm::make_vec3(p + 3 * i);
    vec3 b = vec3(q[3 * i], q[3 * i + 1], q[3 * i + 2]);
    vec3 r = (a - 2.f * glm::dot(a, b) * b) * 0.5f;   // a number on either side of a vector
    r += -glm::cross(a, b) / 4.f + vec3(1.f);        // compound assignment, unary minus, glm's scalar constructor
    vec2 h{r.x, r.y};
    out[3 * i] = h.x;
    out[3 * i + 1] = h.y + glm::length(a);
    out[3 * i + 2] = glm::normalize(r).z;
}
"""


def test_glm_vector_arithmetic_lane_by_lane(tmp_path):
    t = port(ARITH)
    assert t.kernels == ["bounce"], [d.format() for d in t.diagnostics]
    n = 301
    g = rng(11)
    p = g.standard_normal(3 * n).astype(np.float32)
    q = g.standard_normal(3 * n).astype(np.float32)
    out = run(t.text, "bounce", [buf("p", p), buf("q", q), buf("out", poisoned(3 * n, np.float32)),
                                 ScalarArg("n", n, "int32")], tmp_path)
    a, b = p.reshape(n, 3).astype(np.float64), q.reshape(n, 3).astype(np.float64)
    dot = (a * b).sum(axis=1, keepdims=True)
    r = (a - 2 * dot * b) * 0.5 - np.cross(a, b) / 4 + 1
    want = np.stack([r[:, 0], r[:, 1] + np.linalg.norm(a, axis=1), r[:, 2] / np.linalg.norm(r, axis=1)], axis=1)
    np.testing.assert_allclose(out["out"].reshape(n, 3), want, rtol=1e-4, atol=1e-4)
    guards_intact(out, "out")


FOUR = HEAD + """
using vec4 = glm::vec<4, float>;

// xlate: p: in[4 * n], out: out[n], n: size(1..4096), grid: cdiv(n, 128), block: 128
__global__ void weigh4(const float *p, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    vec4 a = glm::make_vec4(p + 4 * i);
    vec4 k{0.25f};                  // braces call glm's constructor: the number in every lane
    out[i] = glm::dot(a, a * k);    // glm adds four lanes as (x + y) + (z + w)
}
"""


def test_glm_braced_splat_and_four_lane_dot_order(tmp_path):
    t = port(FOUR)
    assert t.kernels == ["weigh4"], [d.format() for d in t.diagnostics]
    n = 150
    p = rng(14).standard_normal(4 * n).astype(np.float32) * np.float32(1e3)
    out = run(t.text, "weigh4", [buf("p", p), buf("out", poisoned(n, np.float32)), ScalarArg("n", n, "int32")],
              tmp_path)
    q = p.reshape(n, 4)
    sq = q * (q * np.float32(0.25))
    want = (sq[:, 0] + sq[:, 1]) + (sq[:, 2] + sq[:, 3])  # float32 throughout, glm's order
    np.testing.assert_array_equal(out["out"], want)
    guards_intact(out, "out")


TEMPLATED = HEAD + """
__device__ float weigh(const vec3 &d, const float *w) {   // a vector by reference: its lanes read as members
    return d.x * w[0] + d.y * w[1] - d.z * w[2];
}

// xlate: xy: in[2 * n]
template <typename T>
__global__ void project(const vec3 *dirs, const T *xy, const float *w, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    vec2 m = glm::make_vec2(xy + 2 * i);     // a vector of T's lanes, converted to float's
    out[i] = weigh(dirs[i], w + 3 * i) + m.x * m.y;
}

void launch(const float *dirs, const double *xy, const float *w, float *out, int n) {
    project<double><<<(n + 63) / 64, 64>>>(reinterpret_cast<const vec3 *>(dirs), xy, w, out, n);
}
"""


def test_glm_vectors_of_a_template_type_and_in_memory(tmp_path):
    t = port(TEMPLATED)
    assert t.kernels == ["project"], [d.format() for d in t.diagnostics]
    n = 200
    g = rng(12)
    dirs = g.standard_normal(3 * n).astype(np.float32)
    xy = g.standard_normal(2 * n)
    w = g.standard_normal(3 * n).astype(np.float32)
    out = run(t.text, "project", [buf("dirs", dirs), buf("xy", xy), buf("w", w),
                                  buf("out", poisoned(n, np.float32)), ScalarArg("n", n, "int32")], tmp_path)
    d, ww = dirs.reshape(n, 3).astype(np.float64), w.reshape(n, 3).astype(np.float64)
    m = xy.reshape(n, 2).astype(np.float32).astype(np.float64)
    want = d[:, 0] * ww[:, 0] + d[:, 1] * ww[:, 1] - d[:, 2] * ww[:, 2] + m[:, 0] * m[:, 1]
    np.testing.assert_allclose(out["out"], want, rtol=1e-5, atol=1e-5)
    guards_intact(out, "out")


REFUSED = HEAD + """
// xlate: p: in[3 * n], out: out[n], n: size(1..4096), grid: cdiv(n, 128), block: 128
__global__ void apart(const float *p, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = glm::distance(glm::make_vec3(p + 3 * i), vec3(0.f));
}
"""


def test_unmapped_glm_functions_are_refused_by_name():
    # matrices lift (tests/test_triton_lift_library_matrices.py); a function with no rule is named
    t = port(REFUSED)
    assert t.kernels == []
    why = {d.kernel: d.message for d in t.blocking}
    assert "call of 'glm::distance', a glm function with no rule" in why["apart"], why["apart"]
    assert d_code(t, "apart") == "XL2008"


def d_code(t, kernel: str) -> str:
    return next(d.code for d in t.blocking if d.kernel == kernel)


LOCAL_NULL = """
__device__ void bump(float *dst, float x) {
    if (dst != nullptr) *dst += x;      // the address of a local is never null
}

// xlate: a: in[n], acc: inout[n], out: out[n], n: size(1..4096), grid: cdiv(n, 128), block: 128
__global__ void bumped(const float *a, float *acc, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float2 v = make_float2(a[i], 2.f * a[i]);
    bump(acc == nullptr ? nullptr : &v.y, 3.f);   // a buffer is never null: the local's address
    out[i] = v.x - v.y;
    gpuAtomicAdd(acc + i, v.y);                   // PyTorch's atomicAdd (ATen/cuda/Atomic.cuh)
}
"""


def test_a_local_address_compared_with_null(tmp_path):
    t = port(LOCAL_NULL)
    assert t.kernels == ["bumped"], [d.format() for d in t.diagnostics]
    n = 333
    g = rng(13)
    a = g.standard_normal(n).astype(np.float32)
    acc = g.standard_normal(n).astype(np.float32)
    out = run(t.text, "bumped", [buf("a", a), buf("acc", acc.copy()), buf("out", poisoned(n, np.float32)),
                                 ScalarArg("n", n, "int32")], tmp_path)
    np.testing.assert_allclose(out["out"], a - (2 * a + 3), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(out["acc"], acc + (2 * a + 3), rtol=1e-6, atol=1e-6)
    guards_intact(out, "out")
    guards_intact(out, "acc")
