"""Record element types (structs whose fields have different number types): the spec syntax read and written
back, C layouts against ctypes and NumPy, the gate's draws (each field from its own dtype and range, bool 0/1),
records passed as bytes, and outputs compared field by field naming the field. Kernels written for these tests;
the end-to-end runs use the NumPy toy backend of tests/toy_backend.py (CPU)."""

from __future__ import annotations

import ctypes
import os
import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from tests.conftest import ROOT
from xlate.errors import SpecError
from xlate.parse import parse_string
from xlate.specs import build_spec
from xlate.specs.language import spec_items
from xlate.specs.records import layout, leaves, parse_record, record_dtype, record_text
from xlate.verify.cases import environment, make_inputs, record_scalar, scalar_arg_value
from xlate.verify.runner import _record_result, guard_elements, poison
from xlate.verify.strategies import cases, explicit_cases

SPEC = ("opts: in[n] as {S: float32(1..100), X: float64, T: int32(1..50), call: bool}, "
        "res: out[n] as {v: float32, k: int32}, "
        "p: scalar as {dt: float32(0..1), steps: int32(0..9), m: float32[3], scale: float64}, "
        "n: size(1..4096), grid: cdiv(n, 128), block: 128")

CU = """
struct Option {{ float S; double X; int T; bool call; }};
struct Res {{ float v; int k; }};
struct Params {{ float dt; int steps; float m[3]; double scale; }};
// xlate: {spec}
__global__ void price(const Option* opts, Res* res, Params p, int n) {{ }}
"""


def _spec(spec: str = SPEC):
    return build_spec(parse_string(CU.format(spec=spec), "k.cu", "cuda"), "price")


# -- the language ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    "{S: float32, X: float32, T: int32}",
    "{a: int8, b: float64[2, 3](-1..1), c: bool align(8)}",
    "{x: float32, inner: {lo: int16(0..n - 1), hi: uint64} align(16)[2] align(32), y: bfloat16} align(64)",
])
def test_record_types_print_as_they_are_read(text):
    rec = parse_record(text)
    assert record_text(rec) == text
    assert parse_record(record_text(rec)) == rec


def test_spec_items_round_trip_record_buffers_and_by_value_records():
    spec = _spec()
    items = dict(spec_items(spec))
    assert items["opts"] == "opts: in[n] as {S: float32(1..100), X: float64, T: int32(1..50), call: bool}"
    assert items["p"] == "p: scalar as {dt: float32(0..1), steps: int32(0..9), m: float32[3], scale: float64}"
    again = _spec(", ".join(items.values()))
    assert [(p.name, p.role, p.ctype, p.dims) for p in again.params] == [
        (p.name, p.role, p.ctype, p.dims) for p in spec.params]
    # every existing form keeps working beside it
    plain = _spec(SPEC.replace("res: out[n] as {v: float32, k: int32}", "res: out[n, 2] as float32"))
    assert plain.param("res").ctype == "float32" and plain.param("res").dims == ["n", "2"]


@pytest.mark.parametrize("bad, words", [
    ("opts: in[n] as {S: float32, S: int32}", "repeated"),
    ("opts: in[n] as {S: float32, q: int33}", "int33"),
    ("opts: in[n] as {S: float32[x]}", "array sizes"),
    ("opts: in[n] as {S: float32} align(3)", "power of two"),
    ("opts: in[n] as {S: float32(0..k)}", "names k"),
    ("n: size(1..9) as {a: int32}", "record type"),
])
def test_malformed_record_types_are_errors_that_say_why(bad, words):
    spec = SPEC.replace("opts: in[n] as {S: float32(1..100), X: float64, T: int32(1..50), call: bool}", bad) \
        if bad.startswith("opts") else SPEC.replace("n: size(1..4096)", bad)
    with pytest.raises(SpecError, match=words):
        _spec(spec)


# -- layouts -----------------------------------------------------------------------------------------------------


class _Inner(ctypes.Structure):
    _fields_ = [("a", ctypes.c_int8), ("b", ctypes.c_double)]


class _Outer(ctypes.Structure):
    _fields_ = [("c", ctypes.c_char), ("m", ctypes.c_float * 3), ("s", ctypes.c_short), ("inner", _Inner * 2),
                ("flag", ctypes.c_bool), ("q", ctypes.c_int64), ("u", ctypes.c_uint8)]


def test_layouts_match_ctypes_with_padding_nested_structs_and_arrays():
    dt, align = layout(parse_record("{c: int8, m: float32[3], s: int16, inner: {a: int8, b: float64}[2], "
                                    "flag: bool, q: int64, u: uint8}"))
    assert dt.itemsize == ctypes.sizeof(_Outer) and align == ctypes.alignment(_Outer)
    assert [dt.fields[name][1] for name in dt.names] == [getattr(_Outer, name).offset for name in dt.names]
    # NumPy's C-compatible layout agrees for plain fields
    plain = np.dtype([("dt", "f4"), ("n", "i4"), ("scale", "f8"), ("ok", "?")], align=True)
    mine = record_dtype("{dt: float32, n: int32, scale: float64, ok: bool}")
    assert mine.itemsize == plain.itemsize == 24
    assert [mine.fields[k][1] for k in mine.names] == [plain.fields[k][1] for k in plain.names]


def test_alignas_moves_fields_and_pads_the_struct():
    dt, align = layout(parse_record("{a: float32, b: float32 align(16), c: int8} align(32)"))
    assert [dt.fields[k][1] for k in dt.names] == [0, 16, 20] and dt.itemsize == 32 and align == 32
    leaf = leaves(parse_record("{x: {a: int8, m: float32[2]}[3]}"), record_dtype("{x: {a: int8, m: float32[2]}[3]}"))
    assert [(lf.label, lf.count) for lf in leaf] == [("x.a", 3), ("x.m", 6)]
    assert leaf[1].element_label(5) == ".x[2].m[1]"


# -- drawing -----------------------------------------------------------------------------------------------------


def _draw(spec, examples: int = 30):
    seen = []

    @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(cases(spec, 1 << 16, 1 << 12))
    def collect(case):
        seen.append(case)

    collect()
    return [*explicit_cases(spec, 1 << 16, 1 << 12), *seen]


def test_each_field_is_drawn_from_its_own_dtype_and_range():
    spec = _spec()
    for case in _draw(spec):
        env = environment(spec, case)
        opts = make_inputs(spec, case, env)["opts"]
        assert opts.dtype == record_dtype(spec.param("opts").ctype) and opts.shape == (case.sizes["n"],)
        assert set(np.unique(opts.view(np.uint8).reshape(-1, 24)[:, 20]).tolist()) <= {0, 1}  # bool: 0 or 1
        assert ((opts["T"] >= 1) & (opts["T"] <= 50)).all()
        s = opts["S"][np.isfinite(opts["S"])]
        assert ((s >= 1) & (s <= 100)).all()
        p = case.scalars["p"]
        assert set(p) == {"dt", "steps", "m", "scale"} and len(p["m"]) == 3
        assert 0 <= p["dt"] <= 1 and 0 <= p["steps"] <= 9 and -4 <= p["scale"] <= 4


def test_inputs_replay_from_the_case():
    spec = _spec()
    case = _draw(spec, 3)[-1]
    env = environment(spec, case)
    a, b = make_inputs(spec, case, env)["opts"], make_inputs(spec, case, env)["opts"]
    assert a.tobytes() == b.tobytes()


def test_a_by_value_record_is_one_argument_of_its_c_bytes():
    spec = _spec()
    p = spec.param("p")
    dtype = record_dtype(p.ctype)
    value = {"dt": 0.25, "steps": 7, "m": [1.0, -2.0, 3.5], "scale": -1.5}
    raw, name = scalar_arg_value(p, value, dtype, _draw(spec, 1)[0])

    class Params(ctypes.Structure):
        _fields_ = [("dt", ctypes.c_float), ("steps", ctypes.c_int), ("m", ctypes.c_float * 3), ("scale", ctypes.c_double)]

    c = Params.from_buffer_copy(bytes(raw))
    assert name == "record8" and len(raw) == ctypes.sizeof(Params) == 32
    assert (c.dt, c.steps, list(c.m), c.scale) == (0.25, 7, [1.0, -2.0, 3.5], -1.5)
    assert record_scalar(p.ctype, value, dtype)["m"].tolist() == [[1.0, -2.0, 3.5]]
    from xlate.backends.cupy_runtime import _scalar

    arg = _scalar(raw, name)
    assert arg.itemsize == 32 and bytes(arg.tobytes()) == bytes(raw)


# -- outputs, field by field -------------------------------------------------------------------------------------


def test_written_masks_are_per_field_and_padding_is_nobodys_output():
    ctype = "{v: float32, k: int8, w: float64}"
    dtype = record_dtype(ctype)
    n = 7
    runs = []
    for pattern in (0, 1):
        a = poison(dtype, pattern, n).view(np.uint8).copy().view(dtype)
        a["v"][:5] = np.arange(5)  # the kernel writes v of five records and w of all; never k, never padding
        a["w"][:] = 2.0
        runs.append(a)
    res = _record_result(ctype, dtype, runs, "out", False, None)
    assert res.written.tolist() == [True] * n and res.nondeterministic is None
    assert res.fields_written["v"].reshape(-1).tolist() == [True] * 5 + [False] * 2
    assert not res.fields_written["k"].any() and res.fields_written["w"].all()
    assert guard_elements(dtype) * dtype.itemsize % 256 == 0


# -- end to end on the CPU (the NumPy toy backend) ---------------------------------------------------------------

ENTRY_POINTS = """[xlate.backends]
toy = tests.toy_backend:ToyBackend

[xlate.targets]
npy = tests.toy_backend:TARGET
"""

NPY = textwrap.dedent('''
    import numpy as np

    OPT = np.dtype({"names": ["S", "X", "T", "call"], "formats": ["f4", "f8", "i4", "?"], "offsets": [0, 8, 16, 20],
                    "itemsize": 24})
    RES = np.dtype({"names": ["v", "k"], "formats": ["f4", "i4"], "offsets": [0, 4], "itemsize": 8})
    PAR = np.dtype({"names": ["dt", "steps", "m", "scale"], "formats": ["f4", "i4", ("f4", 3), "f8"],
                    "offsets": [0, 4, 8, 24], "itemsize": 32})


    def price(opts, res, p, n):
        o, r, q = opts.view(OPT), res.view(RES), np.frombuffer(bytes(p), dtype=PAR)[0]
        r["v"][:] = (o["S"] * q["dt"] + o["X"] * q["scale"] + q["m"][1]).astype(np.float32)
        r["k"][:] = np.where(o["call"], o["T"] + q["steps"], -o["T"])
''')


@pytest.fixture
def toy(tmp_path, monkeypatch):
    from xlate.backends import registry

    from xlate import targets

    dist = tmp_path / "xlate_toy-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: xlate-toy\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(ENTRY_POINTS)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), str(ROOT), os.environ.get("PYTHONPATH", "")]))

    def clear() -> None:
        registry._entry_points.cache_clear()
        registry.get_backend.cache_clear()
        targets.all_targets.cache_clear()

    clear()
    yield
    clear()


def _fuzz(candidate: str):
    from xlate.verify.engine import FuzzConfig, Fuzzer, run_fuzz
    from xlate.verify.runner import Side

    source = Side("src.py", "price", text=NPY, language="npy", label="source")
    cand = Side("cand.py", "price", text=candidate, language="npy", label="candidate")
    return run_fuzz(Fuzzer(_spec(), cand, source, config=FuzzConfig(examples=8)), budget=1 << 15, size_cap=1 << 11)


def test_the_gate_verifies_records_and_names_the_field_that_differs(toy):
    right = _fuzz(NPY)
    assert right.failure is None and right.examples >= 8

    wrong = _fuzz(NPY.replace('-o["T"])', '-o["T"] - 1)'))
    cx = wrong.failure
    assert cx is not None and cx.failure == "mismatch" and cx.buffer == "res"
    assert f"'res[{cx.flat_index}].k'" in cx.message and "exact" in cx.message

    off = _fuzz(NPY.replace('q["m"][1]', 'q["m"][1] * 1.001'))  # a float field beyond the float tolerance
    assert off.failure is not None and ".v'" in off.failure.message

    partial = _fuzz(NPY.replace('    r["k"][:] =', '    r["k"][:-1] =').replace(
        'np.where(o["call"], o["T"] + q["steps"], -o["T"])', 'np.where(o["call"], o["T"] + q["steps"], -o["T"])[:-1]'))
    cx = partial.failure
    assert cx is not None and cx.failure == "unwritten output" and ".k'" in cx.message


def test_an_out_of_bounds_record_write_is_caught_by_the_guard_bands(toy):
    spill = NPY.replace('    r["k"][:] =', '    np.lib.stride_tricks.as_strided(res, shape=(res.size + 1,))[-1] = 1\n    r["k"][:] =')
    cx = _fuzz(spill).failure
    assert cx is not None and cx.failure == "out-of-bounds write" and cx.buffer == "res"


def test_the_triton_lifter_refuses_record_specs_with_a_reason():
    from xlate.translate.triton.structs import record_refusal

    why = record_refusal(_spec())  # buffers of records are read field by field; the record scalar is refused
    assert why is not None and "parameter p is a struct" in why and "mixed field types" in why and "opts" not in why
    lanes = _spec(SPEC.replace("opts: in[n] as {S: float32(1..100), X: float64, T: int32(1..50), call: bool}",
                               "opts: in[n, 2] as float32").replace("res: out[n] as {v: float32, k: int32}",
                                                                    "res: out[n]").replace(
        "p: scalar as {dt: float32(0..1), steps: int32(0..9), m: float32[3], scale: float64}", "p: scalar"))
    assert record_refusal(lanes) is None


def test_records_survive_a_golden_file_and_replay_against_a_port(toy, tmp_path):
    from xlate.verify.engine import FuzzConfig, Fuzzer, run_fuzz
    from xlate.verify.golden import Golden, read_golden, write_golden
    from xlate.verify.runner import Side

    spec = _spec()
    source = Side("src.py", "price", text=NPY, language="npy", label="source")
    recorded = run_fuzz(Fuzzer(spec, None, source, config=FuzzConfig(examples=6)), budget=1 << 12, size_cap=1 << 9,
                        record=True).recorded
    assert recorded
    path = str(tmp_path / "price.xg")
    write_golden(path, Golden("price", "sig", spec.to_dict(), {}, recorded))
    golden = read_golden(path)

    def replay(text: str):
        cand = Side("cand.py", "price", text=text, language="npy", label="candidate")
        return run_fuzz(Fuzzer(spec, cand, None, golden=golden), budget=1 << 12, size_cap=1 << 9,
                        cases=[g.case for g in golden.cases], golden=golden.cases)

    assert replay(NPY).failure is None
    cx = replay(NPY.replace('-o["T"])', '-o["T"] + 1)')).failure
    assert cx is not None and cx.failure == "mismatch" and ".k'" in cx.message


def test_a_reference_receives_and_returns_records(toy, tmp_path):
    from xlate.verify.engine import FuzzConfig, Fuzzer, run_fuzz
    from xlate.verify.oracle import ReferenceOracle
    from xlate.verify.runner import Side

    ref = tmp_path / "ref.py"
    ref.write_text(textwrap.dedent('''
        import numpy as np

        def price(opts, res, p, n):  # destination-passing: res arrives as zeroed records
            v = opts["S"] * np.float32(p["dt"]) + opts["X"] * p["scale"] + p["m"][1]
            res["v"][:] = v
            res["k"][:] = np.where(opts["call"], opts["T"] + p["steps"], -opts["T"])
    '''))
    oracle = ReferenceOracle(f"{ref}:price")

    def run(text: str):
        cand = Side("cand.py", "price", text=text, language="npy", label="candidate")
        return run_fuzz(Fuzzer(_spec(), cand, None, reference=oracle, config=FuzzConfig(examples=6)),
                        budget=1 << 12, size_cap=1 << 9)

    assert run(NPY).failure is None
    cx = run(NPY.replace('o["T"] + q["steps"]', 'o["T"] - q["steps"]')).failure
    assert cx is not None and cx.failure == "mismatch" and ".k'" in cx.message


def test_field_ranges_over_sizes_hold_in_random_and_edge_cases():
    spec = _spec(SPEC.replace("steps: int32(0..9)", "steps: int32(0..n - 1)").replace("T: int32(1..50)",
                                                                                       "T: int32(0..n - 1)"))
    for case in _draw(spec, 20):
        n = case.sizes["n"]
        assert 0 <= case.scalars["p"]["steps"] <= n - 1
        opts = make_inputs(spec, case, environment(spec, case))["opts"]
        assert ((opts["T"] >= 0) & (opts["T"] <= n - 1)).all()


def test_the_budget_counts_a_records_numbers_not_one():
    from xlate.verify.cases import budget_length, buffer_length

    spec = _spec(SPEC.replace("res: out[n] as {v: float32, k: int32}", "res: out[n] as {v: float32[1000], k: int32}"))
    case = _draw(spec, 1)[0]
    env = environment(spec, case)
    res = spec.param("res")
    assert budget_length(res, env, case, spec) == buffer_length(res, env, case, spec) * 1001
    assert all(sum(budget_length(p, environment(spec, c), c, spec) for p in spec.buffers) <= 1 << 16
               for c in _draw(spec, 10))
