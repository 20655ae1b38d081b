"""glm's matrices in kernels the Triton lifter ports (xlate/translate/triton/libmatrices.py): a local matrix kept as
its numbers column after column, `m[c]` and `m[c][r]` read and assigned (constant and run-time subscripts),
the constructors (diagonal, columns, numbers), products of matrices and vectors, transpose, determinant,
inverse, outerProduct, matrixCompMult and make_mat3. Ports run under the Triton interpreter against NumPy
float64 on sizes that are no multiple of the block, outputs poisoned and guard bands checked. A quaternion is
still refused by name."""

from __future__ import annotations

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import port
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, rng, run

HEAD = """
#include <glm/glm.hpp>
using vec2 = glm::vec<2, float>;
using vec3 = glm::vec<3, float>;
using vec4 = glm::vec<4, float>;
using mat2 = glm::mat<2, 2, float>;
using mat3 = glm::mat<3, 3, float>;
using mat3x2 = glm::mat<3, 2, float>;
"""

COVARIANCE = HEAD + """
// a rotation from a quaternion, scaled, and its covariance R S S^T R^T written row by row
__device__ mat3 rotation(const vec4 q) {
    float w = q[0], x = q[1], y = q[2], z = q[3];
    float inv = rsqrtf(x * x + y * y + z * z + w * w);
    x *= inv; y *= inv; z *= inv; w *= inv;
    return mat3(1.f - 2.f * (y * y + z * z), 2.f * (x * y + w * z), 2.f * (x * z - w * y),
                2.f * (x * y - w * z), 1.f - 2.f * (x * x + z * z), 2.f * (y * z + w * x),
                2.f * (x * z + w * y), 2.f * (y * z - w * x), 1.f - 2.f * (x * x + y * y));
}

// xlate: q: in[4 * n], s: in[3 * n], cov: out[9 * n], n: size(1..4096), grid: cdiv(n, 128), block: 128
__global__ void covariance(const float *q, const float *s, float *cov, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    mat3 R = rotation(glm::make_vec4(q + 4 * i));
    vec3 sc = glm::make_vec3(s + 3 * i);
    mat3 S = mat3(sc[0], 0.f, 0.f, 0.f, sc[1], 0.f, 0.f, 0.f, sc[2]);
    mat3 M = R * S;
    mat3 C = M * glm::transpose(M);
    cov += 9 * i;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            cov[r * 3 + c] = C[c][r];
}
"""


def rotations(q: np.ndarray) -> np.ndarray:
    w, x, y, z = (q / np.linalg.norm(q, axis=1, keepdims=True)).T
    return np.stack([np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
                     np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
                     np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1)], 1)


def test_a_covariance_from_a_quaternion_and_scales(tmp_path):
    t = port(COVARIANCE)
    assert t.kernels == ["covariance"], [d.format() for d in t.diagnostics]
    for n in (1, 203):
        g = rng(n)
        q = g.standard_normal(4 * n).astype(np.float32)
        s = g.uniform(0.1, 2.0, 3 * n).astype(np.float32)
        out = run(t.text, "covariance", [buf("q", q), buf("s", s), buf("cov", poisoned(9 * n, np.float32)),
                                         ScalarArg("n", n, "int32")], tmp_path)
        m = rotations(q.reshape(n, 4).astype(np.float64)) * s.reshape(n, 1, 3).astype(np.float64)  # R @ diag(s)
        want = m @ m.transpose(0, 2, 1)
        np.testing.assert_allclose(out["cov"].reshape(n, 3, 3), want, rtol=1e-4, atol=1e-5)
        guards_intact(out, "cov")


ALGEBRA = HEAD + """
// xlate: a: in[9 * n], v: in[3 * n], k: in[n](0..2), out: out[16 * n], n: size(1..4096), grid: cdiv(n, 64),
// xlate: block: 64
__global__ void algebra(const float *a, const float *v, const int *k, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    mat3 m = glm::make_mat3(a + 9 * i);           // column after column
    vec3 x = glm::make_vec3(v + 3 * i);
    mat3 inv = glm::inverse(m);
    vec3 y = inv * (m * x);                        // x again, up to rounding
    vec3 z = x * m;                                // row vector times matrix
    float det = glm::determinant(m);
    mat3 d = mat3(2.f);                            // 2 on the diagonal
    d[1] = x;                                      // a column assigned
    d[2][0] += det;                                // an element assigned
    int c = k[i];
    d[c][c] = -1.f;                                // run-time subscripts
    mat3 o = glm::outerProduct(x, z);
    mat3 w = glm::matrixCompMult(d, o) - 0.5f * m;
    out += 16 * i;
    out[0] = y.x; out[1] = y.y; out[2] = y.z;
    out[3] = z[0]; out[4] = z[1]; out[5] = z[2];
    out[6] = det;
    for (int j = 0; j < 3; j++) out[7 + j] = w[j][c] + d[c][j];
    mat3 cols = mat3(x, z, y);
    out[10] = cols[1][2] + cols[c][0];
    mat2 p = mat2(m[0][0], m[0][1], m[1][0], m[1][1]);
    mat2 q = glm::inverse(p);
    out[11] = q[0][0] + 3.f * q[1][1]; out[12] = q[0][1] + 5.f * q[1][0];
    mat3x2 r = mat3x2(1.f, 2.f, 3.f, 4.f, 5.f, 6.f);
    vec2 rx = r * x;                               // a 3-column, 2-row matrix times a 3-vector
    out[13] = rx.x; out[14] = rx.y;
    vec3 e = x;
    e[c] = 7.f;                                    // a vector's lane by subscript
    out[15] = e[0] + e[1] * 10.f + e[2] * 100.f;
}
"""


def test_matrix_algebra_against_numpy(tmp_path):
    t = port(ALGEBRA)
    assert t.kernels == ["algebra"], [d.format() for d in t.diagnostics]
    n = 101
    g = rng(5)
    a = (g.standard_normal(9 * n) + np.tile(np.eye(3).ravel() * 3, n)).astype(np.float32)  # well conditioned
    v = g.standard_normal(3 * n).astype(np.float32)
    k = g.integers(0, 3, n).astype(np.int32)
    out = run(t.text, "algebra", [buf("a", a), buf("v", v), buf("k", k), buf("out", poisoned(16 * n, np.float32)),
                                  ScalarArg("n", n, "int32")], tmp_path)
    got = out["out"].reshape(n, 16).astype(np.float64)
    cols = a.reshape(n, 3, 3).astype(np.float64)       # cols[i, c] is column c
    m = cols.transpose(0, 2, 1)                        # m[i] as a row-major matrix
    x = v.reshape(n, 3).astype(np.float64)
    np.testing.assert_allclose(got[:, 0:3], x, rtol=1e-3, atol=1e-3)
    z = np.einsum("ir,irc->ic", x, m)
    np.testing.assert_allclose(got[:, 3:6], z, rtol=1e-4, atol=1e-4)
    det = np.linalg.det(m)
    np.testing.assert_allclose(got[:, 6], det, rtol=1e-4, atol=1e-4)
    for i in range(n):
        c = k[i]
        d = np.eye(3) * 2.0   # d[col][row] as cols
        d[1] = x[i]
        d[2][0] += det[i]
        d[c][c] = -1.0
        o = np.outer(z[i], x[i])            # outerProduct(x, z): [col j][row r] = x[r] * z[j]
        w = d * o - 0.5 * cols[i]
        want = [w[j][c] + d[c][j] for j in range(3)]
        np.testing.assert_allclose(got[i, 7:10], want, rtol=1e-4, atol=1e-4)
        cm = np.stack([x[i], z[i], x[i]])   # columns x, z, y (y is x up to rounding)
        np.testing.assert_allclose(got[i, 10], cm[1][2] + cm[c][0], rtol=1e-3, atol=1e-3)
        p = cols[i][:2, :2].T               # row-major 2x2 of m's upper left
        q = np.linalg.inv(p)
        np.testing.assert_allclose(got[i, 11:13], [q[0, 0] + 3 * q[1, 1], q[1, 0] + 5 * q[0, 1]], rtol=1e-3,
                                   atol=1e-3)  # glm's q[c][r] is q[r, c]
        r = np.array([[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]])  # columns (1,2), (3,4), (5,6)
        np.testing.assert_allclose(got[i, 13:15], r @ x[i], rtol=1e-4, atol=1e-4)
        e = x[i].copy()
        e[c] = 7.0
        np.testing.assert_allclose(got[i, 15], e[0] + e[1] * 10 + e[2] * 100, rtol=1e-4, atol=1e-3)
    guards_intact(out, "out")


QUATERNION = HEAD + """
// xlate: p: in[4 * n], out: out[n], n: size(1..4096), grid: cdiv(n, 128), block: 128
__global__ void spin(const float *p, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    glm::quat q;
    out[i] = p[4 * i] + q.w;
}

// xlate: p: in[16 * n], out: out[n], n: size(1..4096), grid: cdiv(n, 128), block: 128
__global__ void big_inverse(const float *p, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    glm::mat4 m = glm::make_mat4(p + 16 * i);
    out[i] = glm::inverse(m)[0][0];
}
"""


def test_quaternions_and_4x4_inverses_are_refused_by_name():
    t = port(QUATERNION)
    assert t.kernels == []
    why = {d.kernel: d.message for d in t.blocking}
    assert "glm::quat is a library quaternion" in why["spin"], why["spin"]
    assert "glm::inverse of a 4x4 matrix" in why["big_inverse"], why["big_inverse"]


CALLS = HEAD + """
enum Projection { PERSPECTIVE = 0, ORTHOGRAPHIC = 1 };

struct Ray { vec3 dir; bool valid; };

__device__ Ray toward(const vec3 p) {
    return {p / length(p), p.z > 0.f};             // a braced return; glm's length found by its argument
}

// xlate: p: in[3 * n], mode: scalar(0..1) as int32, out: out[4 * n], n: size(1..4096), grid: cdiv(n, 128),
// xlate: block: 128
__global__ void project(const float *p, int mode, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    vec3 v = glm::make_vec3(p + 3 * i);
    Ray r = toward(v);
    vec2 uv;
    switch (mode) {
    case Projection::PERSPECTIVE: uv = vec2({v.x / v.z, v.y / v.z}); break;   // an enumerator by its enum's name
    default: uv = vec2({v.x, v.y}); break;
    }
    vec2 e = glm::exp(uv * 0.1f);                  // glm's math of a vector, lane by lane
    out[4 * i] = glm::atan(uv.y, uv.x);            // glm::atan of two numbers is atan2
    out[4 * i + 1] = e.x + e.y;
    out[4 * i + 2] = r.dir.x + r.dir.y * 2.f;
    out[4 * i + 3] = r.valid ? 1.f : 0.f;
}
"""


def test_glm_calls_braced_values_and_qualified_enumerators(tmp_path):
    t = port(CALLS)
    assert t.kernels == ["project"], [d.format() for d in t.diagnostics]
    n = 157
    p = rng(9).standard_normal(3 * n).astype(np.float32)
    v = p.reshape(n, 3).astype(np.float64)
    for mode in (0, 1):
        out = run(t.text, "project", [buf("p", p), ScalarArg("mode", mode, "int32"),
                                      buf("out", poisoned(4 * n, np.float32)), ScalarArg("n", n, "int32")], tmp_path)
        uv = v[:, :2] / v[:, 2:3] if mode == 0 else v[:, :2]
        d = v / np.linalg.norm(v, axis=1, keepdims=True)
        want = np.stack([np.arctan2(uv[:, 1], uv[:, 0]), np.exp(uv * 0.1).sum(axis=1), d[:, 0] + 2 * d[:, 1],
                         (v[:, 2] > 0).astype(np.float64)], axis=1)
        np.testing.assert_allclose(out["out"].reshape(n, 4), want, rtol=1e-4, atol=1e-4)
        guards_intact(out, "out")
