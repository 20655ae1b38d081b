"""Structs in CUDA -> Triton ports. Buffers of records (structs of mixed number fields, `opts: in[n] as {S: float32,
T: int32}`) reach a Triton launcher as their bytes; the port reads and writes each field through a pointer of the
field's type at its C offset (xlate/translate/triton/records.py). Vectors and packed structs passed by value
(`float3 w`, `std::pair<uint64_t, uint64_t>`) reach it as the sequence of their lanes, which the launcher hands
the kernel as one scalar each.

Every port runs through the gate's runner (poisoned outputs, guard bands, two runs) under the Triton interpreter,
on the spec the CUDA source states, against NumPy; sizes are not multiples of the block. Every kernel was written
for these tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.test_triton_module_globals import gate_run, write
from tests.test_triton_realworld_patterns import ported

MIXED = """
struct Item { float w; int k; double s; unsigned char flag; };
struct Out { double acc; short tag; float v[3]; };
// xlate: items: in[n] as {w: float32, k: int32(-50..50), s: float64, flag: uint8},
// xlate: res: out[n] as {acc: float64, tag: int16, v: float32[3]}, n: size(1..3000), grid: cdiv(n, 128), block: 128
__global__ void mix(const Item* items, Out* res, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        Item it = items[i];
        res[i].acc = it.s * it.w + items[i].k;
        res[i].tag = (short)(it.k * 2 + it.flag);
        for (int j = 0; j < 3; j++) res[i].v[j] = it.w * (j + 1);
    }
}
"""

MIXED_REFERENCE = """
import numpy as np

def mix(items, res, n):
    res["acc"][:] = items["s"] * items["w"].astype(np.float64) + items["k"]
    res["tag"][:] = (items["k"] * 2 + items["flag"]).astype(np.int16)
    res["v"][:] = items["w"][:, None] * np.arange(1, 4, dtype=np.float32)
"""


def _mixed_want(items: np.ndarray) -> dict[str, np.ndarray]:
    return {"acc": items["s"] * items["w"].astype(np.float64) + items["k"],
            "tag": (items["k"].astype(np.int64) * 2 + items["flag"]).astype(np.int16),
            "v": items["w"][:, None] * np.arange(1, 4, dtype=np.float32)}


@pytest.mark.parametrize("n", [1, 301, 1000])
def test_a_buffer_of_records_is_read_and_written_field_by_field(tmp_path, n):
    path = write(tmp_path, MIXED)
    _, inputs, run, t = gate_run(path, "mix", n)
    items = inputs["items"]
    assert items.dtype.itemsize == 24 and items.dtype.fields["flag"][1] == 16  # C's layout: padding after flag
    res = run.buffers["res"]
    want = _mixed_want(items)
    np.testing.assert_allclose(res.values["acc"], want["acc"], rtol=1e-12)
    assert np.array_equal(res.values["tag"], want["tag"])
    assert np.array_equal(res.values["v"], want["v"])
    assert all(m.all() for m in (res.fields_written or {}).values())
    # fields at their offsets in units of their own type: `k` is int32 element 1 of record i (24 bytes: 6 ints)
    assert "items_int32 + ((i * 6) + 1)" in t.text and "res_int16 + ((i * 12) + 4)" in t.text
    assert "res: out[n] as {acc: float64, tag: int16, v: float32[3]}" in t.text


BANK = """
#define SLOTS 200
struct Bank { int count; bool on; double vals[SLOTS]; float scale; bool off; };
// xlate: b: inout[1] as {count: int32(0..10), on: bool, vals: float64[200], scale: float32, off: bool}, x: in[n],
// xlate: n: size(1..200), grid: cdiv(n, 64), block: 64
__global__ void bank(Bank* b, const float* x, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) {
        if (b->on) b->vals[t] += x[t] * b->scale;
        else b->vals[t] = -1.0;
        atomicAdd(&b->count, 1);
        if (t == 0) b->off = !b->on;
    }
}
"""


@pytest.mark.parametrize("seed", [3, 4, 5, 6])
def test_array_and_bool_members_through_an_arrow_and_an_atomic_on_a_member(tmp_path, seed):
    path = write(tmp_path, BANK)
    _, inputs, run, _ = gate_run(path, "bank", 137, seed)
    b, x = inputs["b"][0], inputs["x"]
    assert inputs["b"].dtype.itemsize == 1616 and inputs["b"].dtype.fields["scale"][1] == 1608
    got = run.buffers["b"].values[0]
    vals = b["vals"].copy()  # the float product in float32, added to the double; the slots past n untouched
    vals[:137] = b["vals"][:137] + (x * b["scale"]).astype(np.float64) if b["on"] else -1.0
    np.testing.assert_allclose(got["vals"], vals, rtol=1e-12)
    assert got["count"] == b["count"] + 137
    assert bool(got["off"]) == (not b["on"]) and got["on"] == b["on"]
    assert got["scale"] == b["scale"]


FLIP = """
struct Pt { short id; double w; signed char tag; };
// xlate: src: in[n] as {id: int16, w: float64, tag: int8}, dst: out[n] as {id: int16, w: float64, tag: int8},
// xlate: n: size(1..3000), grid: cdiv(n, 128), block: 128
__global__ void flip(const Pt* src, Pt* dst, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        Pt p = src[n - 1 - i];
        Pt q = {(short)(p.id + 1), p.w * 2.0};
        q.tag = p.tag;
        if (i % 3 == 0) dst[i] = p;
        else dst[i] = q;
    }
}
"""


def test_records_copied_whole_and_built_from_a_braced_list(tmp_path):
    path = write(tmp_path, FLIP)
    _, inputs, run, _ = gate_run(path, "flip", 250)
    src = inputs["src"][::-1]
    got = run.buffers["dst"].values
    keep = np.arange(250) % 3 == 0
    assert np.array_equal(got["id"], np.where(keep, src["id"], (src["id"] + 1).astype(np.int16)))
    assert np.array_equal(got["w"], np.where(keep, src["w"], src["w"] * 2.0))
    assert np.array_equal(got["tag"], src["tag"])


SPIN = """
// xlate: d: inout[n], n: size(1..3000), a: scalar(-2..2), w: scalar(-1..1), g: scalar(-5..5), h: scalar(-3..3)
// xlate: grid: cdiv(n, 128), block: 128
__global__ void spin(int n, float a, float3 w, int2 g, double2 h, float3* d) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float3 v = d[i];
        v.x = v.x * w.x + a + g.x + (float)h.y;
        v.y = v.y * w.y - g.y;
        v.z = v.z * w.z + (float)(h.x * h.y);
        d[i] = v;
    }
}
"""


def test_vectors_passed_by_value_reach_the_kernel_as_one_scalar_per_lane(tmp_path):
    """Through the gate's runner: the lanes of `w`, `g` and `h` as the gate passes them (a list each)."""
    from xlate.parse import parse_string
    from xlate.specs import build_spec
    from xlate.verify.cases import Case, environment, make_inputs
    from xlate.verify.runner import Side

    path = write(tmp_path, SPIN)
    unit = parse_string(path.read_text(), str(path), "cuda")
    t = ported(SPIN, "spin")
    assert "def _spin_kernel(n, a, w_x, w_y, w_z, g_x, g_y, h_x, h_y, d," in t.text
    spec = build_spec(unit, "spin")
    assert [(p.name, p.lanes) for p in spec.params if p.role == "scalar"] == [("a", 1), ("w", 3), ("g", 2), ("h", 2)]
    w, g, h = [0.5, -0.25, 0.75], [3, -2], [1.5, -2.25]
    case = Case({"n": 333}, {}, {"a": 1.25, "w": w, "g": g, "h": h}, {}, 7)
    inputs = make_inputs(spec, case, environment(spec, case))
    side = Side(str(path.with_suffix(".py")), "spin", text=t.text, language="triton", context_path=str(path))
    run = side.run_case(spec, case, inputs)
    assert run.failure is None, run.failure
    d, f = inputs["d"].reshape(-1, 3), np.float32
    want = d.copy()
    want[:, 0] = d[:, 0] * f(w[0]) + f(1.25) + f(g[0]) + f(h[1])
    want[:, 1] = d[:, 1] * f(w[1]) - f(g[1])
    want[:, 2] = d[:, 2] * f(w[2]) + f(h[0] * h[1])
    np.testing.assert_allclose(run.buffers["d"].values.reshape(-1, 3), want, rtol=1e-6)


def test_a_pair_passed_by_value_is_its_first_and_second(tmp_path):
    from xlate.backends.base import ScalarArg

    from tests.test_triton_realworld_patterns import buf, poisoned, run

    src = """
#include <utility>
#include <cstdint>
// xlate: x: in[n], y: out[n], n: size(1..3000), s: scalar(0..1000), grid: cdiv(n, 128), block: 128
__global__ void affine(const unsigned long long* x, unsigned long long* y, int n, std::pair<uint64_t, uint64_t> s) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * s.first + s.second;
}
"""
    t = ported(src, "affine")
    n = 201
    x = np.arange(n, dtype=np.uint64) * np.uint64(977)
    s = [(1 << 40) + 3, (1 << 63) + 5]  # past int64: the launcher hands Triton the numbers as they are
    out = run(t.text, "affine", [buf("x", x), buf("y", poisoned(n, np.uint64)), ScalarArg("n", n, "int32"),
                                 ScalarArg("s", s, "uint64")], tmp_path)
    want = [(int(v) * s[0] + s[1]) % (1 << 64) for v in x]
    assert out["y"].tolist() == want


def test_by_value_lanes_against_numpy(tmp_path):
    """The same kernel run directly on the interpreter with lanes of known values (a sequence, as the gate
    passes them)."""
    from xlate.backends.base import ScalarArg

    from tests.test_triton_realworld_patterns import buf, guards_intact, rng, run

    t = ported(SPIN, "spin")
    n = 333
    d = rng(2).uniform(-4, 4, (n, 3)).astype(np.float32)
    w, g, h = [0.5, -0.25, 0.75], [3, -2], [1.5, -2.25]
    out = run(t.text, "spin", [ScalarArg("n", n, "int32"), ScalarArg("a", 1.25, "float32"),
                               ScalarArg("w", w, "float32"), ScalarArg("g", g, "int32"), ScalarArg("h", h, "float64"),
                               buf("d", d.reshape(-1))], tmp_path)
    f = np.float32
    want = d.copy()
    want[:, 0] = d[:, 0] * f(w[0]) + f(1.25) + f(g[0]) + f(h[1])
    want[:, 1] = d[:, 1] * f(w[1]) - f(g[1])
    want[:, 2] = d[:, 2] * f(w[2]) + f(h[0] * h[1])
    np.testing.assert_allclose(out["d"].reshape(-1, 3), want, rtol=1e-6)
    guards_intact(out, "d")


def _verify(tmp_path: Path, text: str):
    from xlate.verify.api import verify

    path = write(tmp_path, MIXED)
    port = tmp_path / "g_mix.py"
    port.write_text(text)
    ref = tmp_path / "ref.py"
    ref.write_text(MIXED_REFERENCE)
    return verify(str(path), str(port), kernel="mix", reference=f"{ref}:mix", examples=6)


def test_the_gate_verifies_a_record_port_against_numpy_and_rejects_a_wrong_offset(tmp_path):
    from xlate.backends.registry import get_backend

    if get_backend("cuda").detect().can_run:
        pytest.skip("a GPU is here: the CUDA source is the oracle (the lead's GPU run covers that side)")
    path = write(tmp_path, MIXED)
    from tests.test_triton_module_globals import ported as ported_file

    _, t = ported_file(path, "mix")
    good = _verify(tmp_path, t.text)
    assert good.status == "verified", good.to_dict()
    # the int field read one int32 further: the low half of the double, as a layout slip would
    wrong = t.text.replace("items_int32 + ((i * 6) + 1)", "items_int32 + ((i * 6) + 2)")
    assert wrong != t.text
    bad = _verify(tmp_path, wrong)
    assert bad.status == "rejected", bad.to_dict()


@pytest.mark.parametrize("body, why", [
    ("float* f = (float*)items; res[i].acc = f[i];", "cast of a pointer to records"),
    ("res[i] = items[i];", "store of a value that is not the record"),
])
def test_what_records_cannot_do_is_refused(body, why):
    src = MIXED.replace("""        Item it = items[i];
        res[i].acc = it.s * it.w + items[i].k;
        res[i].tag = (short)(it.k * 2 + it.flag);
        for (int j = 0; j < 3; j++) res[i].v[j] = it.w * (j + 1);""", "        " + body)
    from tests.test_triton_lift import port

    t = port(src)
    assert t.kernels == []
    assert any(why in d.message for d in t.diagnostics), [d.format() for d in t.diagnostics]


def test_a_record_passed_by_value_is_refused_with_its_name():
    from tests.test_triton_lift import port

    src = """
struct P { float dt; int steps; };
// xlate: x: inout[n], n: size(1..100), p: scalar as {dt: float32, steps: int32(0..3)}, grid: cdiv(n, 32), block: 32
__global__ void step(float* x, int n, P p) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += p.dt;
}
"""
    t = port(src)
    assert t.kernels == []
    assert any("parameter p is a struct of mixed field types passed by value" in d.message for d in t.diagnostics)


NESTED = """
struct In { signed char a; double b; };
struct Big { float m[2][3]; In in[2]; unsigned short u; };
// xlate: g: in[n] as {m: float32[2, 3], in: {a: int8, b: float64}[2], u: uint16}, y: out[n] as float64,
// xlate: n: size(1..3000), grid: cdiv(n, 128), block: 128
__global__ void nest(const Big* g, double* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        double s = 0.0;
        for (int r = 0; r < 2; r++)
            for (int c = 0; c < 3; c++) s += g[i].m[r][c] * (r + 1);
        y[i] = s + g[i].in[i % 2].b * g[i].in[0].a + g[i].u;
    }
}
"""


def test_nested_records_and_arrays_of_arrays_are_read_field_by_field(tmp_path):
    path = write(tmp_path, NESTED)
    _, inputs, run, _ = gate_run(path, "nest", 259)
    g = inputs["g"]
    assert g.dtype.itemsize == 64 and g.dtype.fields["in"][1] == 24 and g.dtype.fields["u"][1] == 56
    m = g["m"].astype(np.float32)
    s = np.zeros(len(g))
    for r in range(2):
        for c in range(3):
            s = s + (m[:, r, c] * np.float32(r + 1)).astype(np.float64)
    k = np.arange(len(g)) % 2
    want = s + g["in"]["b"][np.arange(len(g)), k] * g["in"]["a"][:, 0] + g["u"]
    np.testing.assert_allclose(run.buffers["y"].values, want, rtol=1e-12)


def test_a_braced_initialiser_gives_a_vector_its_fields(tmp_path):
    """`float3 v = {x[i], 1.0f, 2.0f}` once lifted to a zero vector: each listed field now takes its value."""
    from tests.test_triton_realworld_patterns import run_xy

    src = """
// xlate: x: in[n], y: out[n], n: size(1..3000), grid: cdiv(n, 128), block: 128
__global__ void braced(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float3 v = {x[i], 1.0f}; int k = {3}; y[i] = v.x * k + v.y + v.z; }
}
"""
    t = ported(src, "braced")
    x = np.linspace(-2, 2, 301, dtype=np.float32)
    out = run_xy(t.text, "braced", x, tmp_path)
    assert np.array_equal(out["y"], x * np.float32(3) + np.float32(1))


REFS = """
struct Acc { double sum; int hits; };
// xlate: acc: inout[n] as {sum: float64, hits: int32(0..100)}, x: in[n], y: out[n] as int32,
// xlate: n: size(1..3000), grid: cdiv(n, 128), block: 128
__global__ void tally(Acc* acc, const float* x, int* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        Acc& a = acc[i];
        a.sum += x[i];
        a.hits++;
        const Acc* q = &acc[i];
        y[i] = (int)sizeof(Acc) + q->hits;
    }
}
"""


def test_a_reference_and_a_pointer_to_a_record_and_its_size(tmp_path):
    path = write(tmp_path, REFS)
    _, inputs, run, _ = gate_run(path, "tally", 299)
    acc, x = inputs["acc"], inputs["x"]
    got = run.buffers["acc"].values
    np.testing.assert_allclose(got["sum"], acc["sum"] + x.astype(np.float64), rtol=1e-12)
    assert np.array_equal(got["hits"], acc["hits"] + 1)
    assert np.array_equal(run.buffers["y"].values, 16 + acc["hits"] + 1)  # sizeof: 12 bytes padded to 16


BRACED_STORES = """
struct Pt { short id; double w; };
// xlate: x: in[n], d: out[n], e: out[n] as {id: int16, w: float64}, n: size(1..3000), grid: cdiv(n, 128), block: 128
__global__ void scatter(const float* x, float4* d, Pt* e, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float2 v;
        v = {x[i], 2.0f};
        d[i] = {v.x, v.y * x[i], 3.0f};
        e[i] = {(short)(i - 7), (double)x[i] * 0.5};
    }
}
"""


def test_a_braced_list_assigned_takes_the_type_of_its_target(tmp_path):
    path = write(tmp_path, BRACED_STORES)
    _, inputs, run, _ = gate_run(path, "scatter", 300)
    x = inputs["x"]
    d = run.buffers["d"].values.reshape(-1, 4)
    want = np.stack([x, np.float32(2) * x, np.full_like(x, 3), np.zeros_like(x)], axis=1)  # the 4th lane: zero
    assert np.array_equal(d, want)
    e = run.buffers["e"].values
    assert np.array_equal(e["id"], (np.arange(300) - 7).astype(np.int16))
    assert np.array_equal(e["w"], x.astype(np.float64) * 0.5)


def test_a_braced_list_of_unknown_type_is_refused():
    from tests.test_triton_lift import port

    src = """
__device__ float first(float2 p) { return p.x; }
// xlate: x: in[n], y: out[n], n: size(1..300), grid: cdiv(n, 32), block: 32
__global__ void pick(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = first({x[i], 1.0f});
}
"""
    t = port(src)
    assert t.kernels == []
    assert any("braced list" in d.message for d in t.diagnostics), [d.format() for d in t.diagnostics]


LOCALS = """
typedef struct { int type; float strike; } Pay;
typedef struct { float t; float f; } Curve;
typedef struct { Pay pay; float x0; Curve c; int k[2]; } Opt;
__device__ float value(Opt o, float s) { return (o.pay.type ? s - o.pay.strike : o.pay.strike - s) * o.c.f + o.k[1]; }
__device__ void fill(Opt& o, float v) { o.x0 = v; o.k[1] = 3; }
// xlate: x: in[n], y: out[n], n: size(1..3000), grid: cdiv(n, 128), block: 128
__global__ void price(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        Pay p;
        p.type = i % 2;
        p.strike = 1.5f;
        Curve c = {0.5f, 2.0f};
        Opt o;
        o.pay = p;
        o.c = c;
        fill(o, x[i]);
        Opt q = {{1, 2.0f}, 0.f, {1.f, 3.f}};
        y[i] = value(o, x[i]) + o.x0 + value(q, 1.0f);
    }
}
"""


def test_locals_of_nested_structs_of_mixed_fields(tmp_path):
    """Structs of the program that no buffer holds: values field by field, nested ones nested, passed by value
    and by reference to device functions, built from nested braced lists."""
    from tests.test_triton_realworld_patterns import run_xy

    t = ported(LOCALS, "price")
    x = np.linspace(-3, 3, 333, dtype=np.float32)
    out = run_xy(t.text, "price", x, tmp_path)
    f = np.float32
    odd = np.arange(333) % 2 == 1
    want = (np.where(odd, x - f(1.5), f(1.5) - x) * f(2) + f(3)) + x + f(-3)
    np.testing.assert_allclose(out["y"], want, rtol=1e-6)


@pytest.mark.parametrize("decl", ["struct P { float a = 1.f; float b; };",
                                  "struct P { float a; float b; __device__ P() : a(1.f), b(0.f) {} };",
                                  "struct P { float a; int b; __device__ P() : a(1.f), b(0) {} };",
                                  "struct P { float a; int b = 4; };"])
def test_a_local_whose_constructor_gives_its_first_value_is_refused(decl):
    from tests.test_triton_lift import port

    t = port(decl + """
// xlate: x: in[n], y: out[n], n: size(1..3000), grid: cdiv(n, 128), block: 128
__global__ void k(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { P p; y[i] = p.a + x[i]; }
}
""")
    assert t.kernels == [], t.text


SPIN_REFERENCE = """
import numpy as np

def spin(n, a, w, g, h, d):
    f = np.float32
    d = d.reshape(-1, 3).copy()
    x, y, z = d[:, 0].copy(), d[:, 1].copy(), d[:, 2].copy()
    d[:, 0] = x * f(w[0]) + f(a) + f(g[0]) + f(h[1])
    d[:, 1] = y * f(w[1]) - f(g[1])
    d[:, 2] = z * f(w[2]) + f(h[0] * h[1])
    return {"d": d.reshape(-1)}


def wrong(n, a, w, g, h, d):
    out = spin(n, a, w, g, h, d)["d"].reshape(-1, 3)
    out[:, 2] += 1.0
    return {"d": out.reshape(-1)}
"""


def test_a_port_fuzzed_alone_from_its_own_header_passes_vectors_as_lanes(tmp_path):
    """The port's `# xlate:` header says how many lanes a by-value vector has (`w: scalar as float32[3]`): fuzzed
    on its own against a reference, the gate draws and passes each lane, and a wrong reference is told apart."""
    from xlate.parse import parse_string
    from xlate.specs import build_spec
    from xlate.verify.api import verify

    t = ported(SPIN, "spin")
    port = tmp_path / "spin_triton.py"
    port.write_text(t.text)
    header = " ".join(line for line in t.text.splitlines() if line.startswith("# xlate:"))
    assert "w: scalar(-1..1) as float32[3]" in header and "g: scalar(-5..5) as int32[2]" in header
    assert "h: scalar(-3..3) as float64[2]" in header
    spec = build_spec(parse_string(t.text, str(port), "triton"), "spin")
    assert [(p.name, p.lanes) for p in spec.params if p.role == "scalar"] == [("a", 1), ("w", 3), ("g", 2), ("h", 2)]
    ref = tmp_path / "ref.py"
    ref.write_text(SPIN_REFERENCE)
    good = verify(str(port), kernel="spin", reference=f"{ref}:spin", examples=6)
    assert good.status == "verified", good.reason
    bad = verify(str(port), kernel="spin", reference=f"{ref}:wrong", examples=6)
    assert bad.status == "rejected", bad.reason
