"""The shapes of the Triton port's memory accesses (xlate/translate/triton/layout.py): vector types and packed
structs load and store one contiguous [..., lanes] block, not `lanes` strided gathers; a shared-memory tiled
transpose loads each tile row-contiguous and turns it with `tl.trans`, not column gathers through a where-chain.

Each port is checked twice: its source (how it touches memory) and its results -- against the golden files
recorded from the CUDA originals on an H200, or, for the small kernels written here, against NumPy on sizes
that are not multiples of the block, with poisoned outputs and guard bands (Triton interpreter, xlate's backend).
Where Triton's NVIDIA compiler runs without a GPU, the vector port is compiled for sm_90 and its PTX must hold
128-bit accesses."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import port
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, ported, rng, run
from xlate.parse import parse_file
from xlate.translate.base import TranslateOptions
from xlate.translate.triton import sym as S
from xlate.translate.triton.translator import CudaToTriton
from xlate.verify.api import verify

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "examples" / "kernels"
GOLDEN = ROOT / "examples" / "golden"


def corpus_port(stem: str, kernel: str) -> str:
    unit = parse_file(KERNELS / f"{stem}.cu")
    t = CudaToTriton().translate(unit, unit.text, TranslateOptions(kernels=[kernel]))
    assert t.kernels == [kernel], [d.format() for d in t.diagnostics]
    return t.text


def body(text: str, kernel: str) -> str:
    """The @triton.jit body of `kernel`'s port."""
    m = re.search(rf"def _{kernel}_kernel\(.*?\n(.*?)\n\n", text, re.S)
    assert m, text
    return m.group(1)


def replays_golden(stem: str, kernel: str, text: str) -> None:
    v = verify(str(KERNELS / f"{stem}.cu"), None, kernel=kernel, candidate_text=text, candidate_language="triton",
               golden=str(GOLDEN / f"{stem}.{kernel}.xg"))
    assert v.status == "verified", v.summary()


# -- vector types ----------------------------------------------------------------------------------------------


def test_float4_port_moves_one_contiguous_block_per_buffer():
    text = corpus_port("vector_add_vec4", "vector_add_vec4")
    b = body(text, "vector_add_vec4")
    loads = re.findall(r"tl\.load\((.*)", b)
    stores = re.findall(r"tl\.store\((.*)", b)
    assert len(loads) == 2 and len(stores) == 1, b  # a and b read once each, c written once
    for access in loads + stores:
        assert "tl.arange(0, 4)" in access and "tl.expand_dims(" in access, access
    assert not re.search(r"\* 4\) \+ [123]\)", b), b  # no stride-4 per-lane offsets left
    assert b.count("tl.split(") == 6 and b.count("tl.join(") == 3, b
    replays_golden("vector_add_vec4", "vector_add_vec4", text)


def _ptx(text: str, kernel: str, signature: dict[str, str], constexprs: dict[str, int], tmp_path: Path,
         num_warps: int = 4, jit_name: str | None = None) -> str:
    """The port's jit kernel compiled for sm_90 by Triton's NVIDIA backend (no GPU needed); skips where the
    backend or its ptxas is missing, fails where Triton's front end refuses the port."""
    import importlib.util

    triton = pytest.importorskip("triton")
    try:
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource
    except ImportError:
        pytest.skip("this Triton has no ASTSource/GPUTarget")
    path = tmp_path / "port_for_ptx.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("port_for_ptx", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    sig = dict(signature) | {k: "constexpr" for k in constexprs}
    ptrs = [i for i, t in enumerate(sig.values()) if t.startswith("*")]
    src = ASTSource(fn=getattr(mod, jit_name or f"_{kernel}_kernel"), signature=sig, constexprs=constexprs,
                    attrs={(i,): [["tt.divisibility", 16]] for i in ptrs})
    try:
        from triton.compiler.errors import CompilationError
    except ImportError:
        CompilationError = ()  # type: ignore[assignment,misc]
    try:
        compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": num_warps})
    except CompilationError:
        raise  # the port itself does not compile: a defect, not a missing backend
    except Exception as exc:  # no NVIDIA backend or ptxas here: nothing to inspect
        pytest.skip(f"Triton cannot compile for sm_90 here: {type(exc).__name__}: {str(exc)[:200]}")
    return compiled.asm["ptx"]


def test_float4_port_compiles_to_128_bit_accesses(tmp_path):
    text = corpus_port("vector_add_vec4", "vector_add_vec4")
    ptx = _ptx(text, "vector_add_vec4", {"a": "*fp32", "b": "*fp32", "c": "*fp32", "n": "i32"}, {"BX": 256}, tmp_path)
    accesses = re.findall(r"\b(?:ld|st)\.global[.\w]*", ptx)
    assert accesses and all(".v4." in a for a in accesses), sorted(set(accesses))  # every access 4 x 32 bits


HALF2_SWAP = """
// xlate: x: in[n, 2] as float16, y: out[n, 2] as float16, n: size(1..5000), grid: cdiv(n, 128), block: 128
__global__ void half2_swap(const __half2* x, __half2* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        __half2 v = x[i];
        __half2 w;
        w.x = v.y;
        w.y = v.x;
        y[i] = w;
    }
}
"""


def test_half2_loads_and_stores_pairs(tmp_path):
    t = ported(HALF2_SWAP, "half2_swap")
    b = body(t.text, "half2_swap")
    assert len(re.findall(r"tl\.load\(", b)) == 1 and "tl.arange(0, 2)" in b and "tl.join(" in b, b
    n = 301
    x = rng(1).standard_normal(2 * n).astype(np.float16)
    out = run(t.text, "half2_swap", [buf("x", x), buf("y", poisoned(2 * n, np.float16)), ScalarArg("n", n, "int32")],
              tmp_path)
    assert np.array_equal(out["y"], x.reshape(n, 2)[:, ::-1].reshape(-1))
    guards_intact(out, "y")


INT4_2D = """
// xlate: src: in[h, w, 4] as int32, dst: out[h, w, 4] as int32, h: size(1..64), w: size(1..64),
// xlate: grid: (cdiv(w, 16), cdiv(h, 4)), block: (16, 4)
__global__ void int4_reverse_2d(const int4* src, int4* dst, int h, int w) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) {
        int4 v = src[y * w + x];
        dst[y * w + x] = make_int4(v.w, v.z, v.y + x, v.x - y);
    }
}
"""


def test_int4_in_a_2d_block_is_one_block_access(tmp_path):
    t = ported(INT4_2D, "int4_reverse_2d")
    b = body(t.text, "int4_reverse_2d")
    assert len(re.findall(r"tl\.load\(", b)) == 1 and "[BY, BX, 2, 2]" in b, b
    h, w = 7, 37
    src = rng(2).integers(-1000, 1000, size=h * w * 4).astype(np.int32)
    out = run(t.text, "int4_reverse_2d", [buf("src", src), buf("dst", poisoned(h * w * 4, np.int32)),
                                          ScalarArg("h", h, "int32"), ScalarArg("w", w, "int32")], tmp_path)
    v = src.reshape(h, w, 4)
    yy, xx = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    want = np.stack([v[..., 3], v[..., 2], v[..., 1] + xx, v[..., 0] - yy], axis=-1)
    assert np.array_equal(out["dst"], want.reshape(-1))
    guards_intact(out, "dst")


PACKED = """
#define LANES 4
struct alignas(16) Quad { float v[LANES]; };
typedef struct { float re; float im; } Complex;
template <typename T> struct Packed2 { T lo, hi; };

// xlate: a: in[n, 4], b: out[n, 4], k: size(0..3), n: size(1..5000), grid: cdiv(n, 64), block: 64
__global__ void quad_scale(const Quad* a, Quad* b, int k, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        Quad q = a[i];
        Quad r;
        for (int j = 0; j < LANES; ++j) r.v[j] = q.v[j] * (j + 1);
        r.v[k] += 100.0f;  // a run-time lane
        b[i] = r;
    }
}

// xlate: z: inout[n, 2], n: size(1..5000), grid: cdiv(n, 64), block: 64
__global__ void conj_inplace(Complex* z, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        Complex c = z[i];
        c.im = -c.im;
        z[i] = c;
    }
}

// xlate: x: in[n], y: out[n], n: size(2..5000), where: n % 2 == 0, grid: cdiv(n / 2, 64), block: 64
__global__ void pair_sum(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n / 2) {
        Packed2<float> p = reinterpret_cast<const Packed2<float>*>(x)[i];
        float s = p.lo + p.hi;
        Packed2<float> r;
        r.lo = s;
        r.hi = p.lo - p.hi;
        reinterpret_cast<Packed2<float>*>(y)[i] = r;
    }
}
"""


def test_packed_structs_are_block_accesses(tmp_path):
    t = port(PACKED)
    assert t.kernels == ["quad_scale", "conj_inplace", "pair_sum"], [d.format() for d in t.diagnostics]
    for k, lanes in (("quad_scale", 4), ("conj_inplace", 2), ("pair_sum", 2)):
        b = body(t.text, k)
        assert len(re.findall(r"tl\.load\(", b)) == 1 and len(re.findall(r"tl\.store\(", b)) == 1, b
        assert f"tl.arange(0, {lanes})" in b, b
    n = 263
    a = rng(3).standard_normal(4 * n).astype(np.float32)
    out = run(t.text, "quad_scale", [buf("a", a), buf("b", poisoned(4 * n, np.float32)), ScalarArg("k", 2, "int32"),
                                     ScalarArg("n", n, "int32")], tmp_path)
    want = a.reshape(n, 4) * np.float32([1, 2, 3, 4])
    want[:, 2] += np.float32(100)
    assert np.array_equal(out["b"], want.reshape(-1))
    guards_intact(out, "b")
    z = rng(4).standard_normal(2 * n).astype(np.float32)
    out = run(t.text, "conj_inplace", [buf("z", z.copy()), ScalarArg("n", n, "int32")], tmp_path)
    assert np.array_equal(out["z"], (z.reshape(n, 2) * np.float32([1, -1])).reshape(-1))
    x = rng(5).standard_normal(2 * n).astype(np.float32)
    out = run(t.text, "pair_sum", [buf("x", x), buf("y", poisoned(2 * n, np.float32)), ScalarArg("n", 2 * n, "int32")],
              tmp_path)
    lo, hi = x[0::2], x[1::2]
    assert np.array_equal(out["y"], np.stack([lo + hi, lo - hi], axis=-1).reshape(-1))
    guards_intact(out, "y")


def test_uniform_vector_reads_stay_scalar_and_correct(tmp_path):
    src = """
// xlate: c: in[4], y: out[n], n: size(1..3000), grid: cdiv(n, 128), block: 128
__global__ void poly4(const float4* c, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float4 k = c[0];
        float t = (float)i;
        y[i] = ((k.w * t + k.z) * t + k.y) * t + k.x;
    }
}
"""
    t = ported(src, "poly4")
    assert "tl.arange(0, 4)" not in body(t.text, "poly4")  # one address for every thread: nothing to vectorise
    n = 1000
    c = np.float32([0.5, -0.25, 0.125, 1e-6])
    out = run(t.text, "poly4", [buf("c", c), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32")], tmp_path)
    tt = np.arange(n, dtype=np.float32)
    want = ((c[3] * tt + c[2]) * tt + c[1]) * tt + c[0]
    np.testing.assert_allclose(out["y"], want, rtol=1e-6)


# -- tiled transposes --------------------------------------------------------------------------------------------


def test_tiled_transpose_loads_tiles_and_turns_them():
    text = corpus_port("transpose", "transpose_tiled")
    b = body(text, "transpose_tiled")
    assert len(re.findall(r"tl\.load\(", b)) == 4, b  # one per row group the threads store: 32 / 8
    assert b.count("tl.trans(") == 4 and "tl.where(" not in b, b
    for load in re.findall(r"tl\.load\((.*)", b):
        # the transposed orientation: threadIdx.x runs down the tile's rows, threadIdx.y along them
        assert "tl.arange(0, BX)[:, None]" in load and "tl.arange(0, BY)[None, :]" in load, load
    replays_golden("transpose", "transpose_tiled", text)


TRANSPOSES = """
#define T 16
// xlate: a: in[rows, cols], b: out[cols, rows], rows: size(1..200), cols: size(1..200),
// xlate: grid: (cdiv(cols, 16), cdiv(rows, 16)), block: (16, 16)
__global__ void transpose_square(const float* a, float* b, int rows, int cols) {
    __shared__ float tile[T][T + 1];
    int x = blockIdx.x * T + threadIdx.x, y = blockIdx.y * T + threadIdx.y;
    if (x < cols && y < rows) tile[threadIdx.y][threadIdx.x] = a[y * cols + x];
    __syncthreads();
    x = blockIdx.y * T + threadIdx.x;
    y = blockIdx.x * T + threadIdx.y;
    if (x < rows && y < cols) b[y * rows + x] = tile[threadIdx.x][threadIdx.y];
}

#define TW 32
#define ROWS 4
// xlate: a: in[rows, cols], b: out[cols, rows], rows: size(1..300), cols: size(1..300),
// xlate: grid: (cdiv(cols, 32), cdiv(rows, 32)), block: (32, 4)
__global__ void transpose_scaled(const double* a, double* b, int rows, int cols) {
    __shared__ double tile[TW][TW + 1];
    int bx = blockIdx.x * TW, by = blockIdx.y * TW;
    for (int j = threadIdx.y; j < TW; j += ROWS)
        if (bx + threadIdx.x < cols && by + j < rows) tile[j][threadIdx.x] = a[(by + j) * cols + bx + threadIdx.x];
    __syncthreads();
    for (int j = threadIdx.y; j < TW; j += ROWS)
        if (by + threadIdx.x < rows && bx + j < cols) b[(bx + j) * rows + by + threadIdx.x] = 2.0 * tile[threadIdx.x][j];
}
"""


@pytest.mark.parametrize(("kernel", "dtype", "shape"), [("transpose_square", np.float32, (37, 53)),
                                                        ("transpose_scaled", np.float64, (70, 33))])
def test_tile_shapes_and_padding_transpose_by_tl_trans(tmp_path, kernel, dtype, shape):
    t = port(TRANSPOSES)
    assert kernel in t.kernels, [d.format() for d in t.diagnostics]
    b = body(t.text, kernel)
    loads = len(re.findall(r"tl\.load\(", b))
    assert loads and b.count("tl.trans(") == loads and "tl.where(" not in b, b
    rows, cols = shape
    a = rng(5).standard_normal(rows * cols).astype(dtype)
    out = run(t.text, kernel, [buf("a", a), buf("b", poisoned(rows * cols, dtype)), ScalarArg("rows", rows, "int32"),
                               ScalarArg("cols", cols, "int32")], tmp_path)
    scale = 2.0 if kernel == "transpose_scaled" else 1.0
    assert np.array_equal(out["b"], (scale * a.reshape(rows, cols).T).reshape(-1).astype(dtype))
    guards_intact(out, "b")


def test_different_values_in_disjoint_tile_parts_stay_apart(tmp_path):
    """Two halves of a tile filled from two buffers: not one value, so not merged; each half read back right."""
    src = """
// xlate: p: in[n], q: in[n], y: out[n], n: size(1..4000), grid: cdiv(n, 64), block: (32, 2)
__global__ void halves(const float* p, const float* q, float* y, int n) {
    __shared__ float s[2][32];
    int base = blockIdx.x * 64;
    int i = base + threadIdx.y * 32 + threadIdx.x;
    if (threadIdx.y == 0) s[threadIdx.y][threadIdx.x] = i < n ? p[i] : 0.0f;
    else s[threadIdx.y][threadIdx.x] = i < n ? q[i] : 0.0f;
    __syncthreads();
    if (i < n) y[i] = s[1 - threadIdx.y][31 - threadIdx.x];
}
"""
    t = ported(src, "halves")
    n = 203
    p, q = rng(6).standard_normal(n).astype(np.float32), rng(7).standard_normal(n).astype(np.float32)
    out = run(t.text, "halves", [buf("p", p), buf("q", q), buf("y", poisoned(n, np.float32)),
                                 ScalarArg("n", n, "int32")], tmp_path)
    pp = np.concatenate([p, np.zeros(64, np.float32)])
    qq = np.concatenate([q, np.zeros(64, np.float32)])
    want = np.empty(n, np.float32)
    for i in range(n):
        blk, r = divmod(i, 64)
        ty, tx = divmod(r, 32)
        src_buf = qq if ty == 0 else pp  # row 1 - ty of the tile came from q (row 1) or p (row 0)
        want[i] = src_buf[blk * 64 + (1 - ty) * 32 + (31 - tx)]
    assert np.array_equal(out["y"], want)


# -- canonical forms ---------------------------------------------------------------------------------------------


def test_canonical_form_sees_through_ring_arithmetic_only():
    x, y = S.lane("x"), S.lane("y")
    pid = S.uni("pid_y", "unsigned int", nonneg=True)
    cols = S.uni("cols", "int")

    def i(v):
        return S.cast(v, "int")

    shifted = S.op("add", "int", S.op("add", "int", S.op("mul", "int", i(pid), S.const(32, "int")),
                                      S.op("sub", "int", i(x), S.const(8, "int"))), S.const(8, "int"))
    plain = S.op("add", "int", S.op("mul", "int", i(pid), S.const(32, "int")), i(x))
    assert S.canon(shifted) == S.canon(plain)
    assert S.canon(S.op("mul", "int", shifted, cols)) == S.canon(S.op("add", "int", S.op("mul", "int", cols, i(x)),
                                                                      S.op("mul", "int", cols, S.op("mul", "int", i(pid), S.const(32, "int")))))
    assert S.canon(plain) != S.canon(S.op("add", "int", plain, S.const(1, "int")))
    # division is not ring arithmetic: (x / 2) * 2 is not x (an exact signed (x * 2) / 2 is folded to x when
    # built, by sym._fold_known, not by the canonical form)
    assert S.canon(S.op("mul", "int", S.op("div", "int", i(x), S.const(2, "int")), S.const(2, "int"))) != S.canon(i(x))
    assert S.poly(S.op("sub", "int", i(y), i(y))) == {}
    # a comparison keeps its operands' types: signed and unsigned compares differ
    a = S.op("lt", "bool", i(x), cols)
    b = S.op("lt", "bool", S.cast(x, "unsigned int"), S.cast(cols, "unsigned int"))
    assert S.canon(a) != S.canon(b)


def test_shared_write_through_a_pointer_made_in_a_run_time_loop_is_not_missed(tmp_path):
    """A loop that rotates a shared array through a pointer it declares: reads inside it must not be forwarded
    from the writes before the loop (the next iteration sees the rotated array). The array is carried through the
    loop as a block tensor (carry.py): the port rotates it m times."""
    src = """
// xlate: x: in[n], y: out[n], n: size(1..4000), m: size(0..5), grid: cdiv(n, 64), block: 64
__global__ void rotate(const float* x, float* y, int n, int m) {
    __shared__ float s[64];
    int i = blockIdx.x * 64 + threadIdx.x;
    s[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int r = 0; r < m; ++r) {
        float v = s[(threadIdx.x + 1) % 64];
        __syncthreads();
        float* p = s;
        p[threadIdx.x] = v;
        __syncthreads();
    }
    if (i < n) y[i] = s[threadIdx.x];
}
"""
    t = port(src)
    assert t.kernels == ["rotate"], [d.format() for d in t.diagnostics]
    n = 150
    x = np.random.default_rng(5).standard_normal(n).astype(np.float32)
    for m in (0, 1, 3):
        out = run(t.text, "rotate", [buf("x", x), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32"),
                                     ScalarArg("m", m, "int32")], tmp_path)
        tiles = np.zeros(3 * 64, np.float32)
        tiles[:n] = x
        want = np.roll(tiles.reshape(3, 64), -m, axis=1).reshape(-1)[:n]
        np.testing.assert_array_equal(out["y"], want)
        guards_intact(out, "y")


def test_members_of_one_vector_element_are_one_load_until_a_store(tmp_path):
    """`p[i].x * p[i].w + p[i].y`: one block load; after a store to the buffer, and in each loop body, a new one."""
    src = """
// xlate: p: inout[n, 4], n: size(1..3000), m: size(0..4), grid: cdiv(n, 64), block: 64
__global__ void mix4(float4* p, int n, int m) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = p[i].x * p[i].w + p[i].y;
    p[i].z = a;
    float b = p[i].z + p[i].x;  // the stored z, read back
    for (int r = 0; r < m; ++r) p[i].w = p[i].w + p[i].z;
    p[i].x = b;
}
"""
    t = ported(src, "mix4")
    b = body(t.text, "mix4")
    assert len(re.findall(r"tl\.load\(", b)) == 3, b  # before the store, after it, and in the loop body
    n, m = 300, 3
    p = rng(9).standard_normal(4 * n).astype(np.float32)
    out = run(t.text, "mix4", [buf("p", p.copy()), ScalarArg("n", n, "int32"), ScalarArg("m", m, "int32")], tmp_path)
    q = p.reshape(n, 4).copy()
    a = q[:, 0] * q[:, 3] + q[:, 1]
    q[:, 2] = a
    bb = q[:, 2] + q[:, 0]
    for _ in range(m):
        q[:, 3] = q[:, 3] + q[:, 2]
    q[:, 0] = bb
    assert np.array_equal(out["p"], q.reshape(-1))
