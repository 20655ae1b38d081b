"""Structs passed by value that hold pointers (tensor-info structs: a data pointer with its sizes and strides): the
record syntax of pointer fields (`data: in[r, c] as float32`) and computed fields (`size: int32[3] const(r, c)`),
the C layout against ctypes (8-byte pointer slots), the record's bytes with the buffers' addresses written in, and
the gate end to end on the CPU through the NumPy toy backend (tests/toy_backend.py), whose kernels dereference the
addresses they are given. Kernels written for these tests."""

from __future__ import annotations

import ctypes
import textwrap

import numpy as np
import pytest
from xlate.backends.base import BufferArg, ScalarArg, fill_slots

from tests.test_record_specs import toy  # noqa: F401  (the fixture: the toy backend registered)
from xlate.errors import SpecError
from xlate.parse import parse_string
from xlate.specs import build_spec
from xlate.specs.language import spec_items
from xlate.specs.records import leaves, parse_record, pointer_slots, record_dtype, record_text
from xlate.verify.cases import Case, buffer_arg, environment, make_inputs, member_slots, scalar_arg

INFO = "{data: in[r, c](-2..2) as float32, size: int32[3] const(r, c), stride: int32[3] const(c, 1), dims: int32 const(2)}"
SPEC = (f"x: scalar as {INFO}, out: out[r], r: size(1..300), c: size(1..40), grid: cdiv(r, 128), block: 128")

CU = """
struct View {{ const float* data; int size[3]; int stride[3]; int dims; }};
// xlate: {spec}
__global__ void row_sums(View x, float* out) {{ }}
"""


def _spec(spec: str = SPEC, cu: str = CU, kernel: str = "row_sums"):
    return build_spec(parse_string(cu.format(spec=spec), "k.cu", "cuda"), kernel)


class View(ctypes.Structure):  # what a C compiler lays out for the struct above
    _fields_ = [("data", ctypes.c_void_p), ("size", ctypes.c_int * 3), ("stride", ctypes.c_int * 3),
                ("dims", ctypes.c_int)]


# -- the language ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    INFO,
    "{src: in[n] as T, dst: out[n, 2](0..1) as float64, n: int64 const(n), bias: null}",
    "{h: {p: inout[m + 1] as int32, k: uint8} align(16), scale: float32(0..1)}",
])
def test_pointer_and_computed_fields_print_as_they_are_read(text):
    rec = parse_record(text)
    assert record_text(rec) == text and parse_record(record_text(rec)) == rec


@pytest.mark.parametrize("bad, words", [
    ("{data: in[n]}", "element type"),
    ("{data: in[] as float32}", "no length"),
    ("{data: in[n](perm) as int32}", "LO..HI only"),
    ("{n: int32[2] const(a, b, c)}", "holds 2 numbers"),
    ("{n: int32(0..9) const(4)}", "without a range"),
])
def test_malformed_pointer_fields_are_errors_that_say_why(bad, words):
    with pytest.raises(SpecError, match=words):
        parse_record(bad)


def test_the_layout_gives_pointers_eight_aligned_bytes_as_ctypes_does():
    dtype = record_dtype(INFO)
    assert dtype.itemsize == ctypes.sizeof(View)
    assert {n: dtype.fields[n][1] for n in dtype.names} == {n: getattr(View, n).offset for n, _ in View._fields_}
    slots = pointer_slots(parse_record(INFO), dtype)
    assert [(s.label, s.offset) for s in slots] == [("data", 0)]
    # a char before a pointer pads to 8; a pointer inside a nested struct keeps its offset within the outer one

    class Inner(ctypes.Structure):
        _fields_ = [("k", ctypes.c_uint8), ("p", ctypes.c_void_p)]

    class Outer(ctypes.Structure):
        _fields_ = [("flag", ctypes.c_bool), ("h", Inner), ("q", ctypes.c_void_p), ("w", ctypes.c_float)]

    text = "{flag: bool, h: {k: uint8, p: inout[n] as int32}, q: out[n] as float64, w: float32}"
    dtype = record_dtype(text)
    assert dtype.itemsize == ctypes.sizeof(Outer)
    assert [(s.label, s.offset) for s in pointer_slots(parse_record(text), dtype)] == [
        ("h.p", Outer.h.offset + Inner.p.offset), ("q", Outer.q.offset)]
    assert [leaf.label for leaf in leaves(parse_record(text), dtype)] == ["flag", "h.k", "w"]  # pointers are not drawn


# -- the spec ----------------------------------------------------------------------------------------------------


def test_pointer_fields_are_buffers_of_the_spec_and_round_trip():
    spec = _spec()
    assert dict(spec_items(spec))["x"] == f"x: scalar as {INFO}"
    (data,) = spec.member_buffers
    assert (data.name, data.role, data.dims, data.ctype, data.member, data.position) == (
        "x.data", "in", ["r", "c"], "float32", "x", -1)
    assert [p.name for p in spec.buffers] == ["out", "x.data"] and spec.param("x.data") == data


def test_specs_the_gate_cannot_fill_are_refused():
    with pytest.raises(SpecError, match="buffer of structs holding pointers"):
        _spec(SPEC.replace(f"x: scalar as {INFO}", f"x: in[r] as {INFO}"))
    with pytest.raises(SpecError, match="names k, not a parameter"):
        _spec(SPEC.replace("in[r, c]", "in[r, k]"))


def test_the_record_carries_computed_fields_and_its_buffers_addresses():
    spec = _spec()
    case = Case({"r": 7, "c": 5}, {}, {}, {}, seed=3)
    env = environment(spec, case)
    inputs = make_inputs(spec, case, env)
    data = inputs["x.data"]
    assert data.dtype == np.float32 and data.size == 35 and data.min() >= -2 and data.max() <= 2
    slots = member_slots(spec, case)
    assert slots == {"x.data": ("x", 0)}
    arg = scalar_arg(spec.param("x"), case, env, spec)
    whole = np.concatenate([np.zeros(4, np.float32), data, np.zeros(4, np.float32)])
    buf = buffer_arg("x.data", whole, 4, data.size, slots["x.data"])
    passed = fill_slots([arg, buf, ScalarArg("n", 1, "int32")], lambda b: b.data.ctypes.data + b.offset * 4)
    assert [a.name for a in passed] == ["x", "n"]  # the field's buffer is no argument of its own
    view = View.from_buffer_copy(bytes(passed[0].value))
    assert view.data == whole.ctypes.data + 16
    assert list(view.size) == [7, 5, 0] and list(view.stride) == [5, 1, 0] and view.dims == 2
    seen = np.ctypeslib.as_array((ctypes.c_float * data.size).from_address(view.data))
    assert np.array_equal(seen, data)


def test_fill_slots_refuses_a_pointer_field_of_a_number_argument():
    buf = BufferArg("p.q", np.zeros(2, np.float32), 0, 2, slot=("p", 0))
    with pytest.raises(TypeError, match="not passed as a record"):
        fill_slots([ScalarArg("p", 1.0, "float32"), buf], lambda b: 0)


# -- end to end on the CPU (the NumPy toy backend) ---------------------------------------------------------------

# row_sums: out[i] = sum over j of x.data[i * stride[0] + j * stride[1]] for j < size[1], i < size[0]; and
# scale_copy: io.dst[i] = io.src[i] * 2 for i < io.n (a struct holding an output pointer)
NPY = textwrap.dedent('''
    import ctypes

    import numpy as np

    VIEW = np.dtype({"names": ["data", "size", "stride", "dims"], "formats": ["u8", ("i4", 3), ("i4", 3), "i4"],
                     "offsets": [0, 8, 20, 32], "itemsize": 40})
    PAIR = np.dtype({"names": ["src", "dst", "n"], "formats": ["u8", "u8", "i4"], "offsets": [0, 8, 16],
                     "itemsize": 24})


    def _floats(address, count):
        return np.ctypeslib.as_array((ctypes.c_float * max(count, 1)).from_address(int(address)))[:count]


    def row_sums(x, out):
        v = np.frombuffer(bytes(x), dtype=VIEW)[0]
        rows, cols = int(v["size"][0]), int(v["size"][1])
        s0, s1 = int(v["stride"][0]), int(v["stride"][1])
        data = _floats(v["data"], (rows - 1) * s0 + (cols - 1) * s1 + 1)
        for i in range(rows):
            out[i] = np.float32(sum(np.float64(data[i * s0 + j * s1]) for j in range(cols)))


    def scale_copy(io):
        q = np.frombuffer(bytes(io), dtype=PAIR)[0]
        n = int(q["n"])
        _floats(q["dst"], n)[:] = _floats(q["src"], n) * np.float32(2)
''')

PAIR_SPEC = "io: scalar as {src: in[n] as float32, dst: out[n] as float32, n: int32 const(n)}, n: size(1..500), " \
            "grid: cdiv(n, 64), block: 64"
PAIR_CU = """
struct Pair {{ const float* src; float* dst; int n; }};
// xlate: {spec}
__global__ void scale_copy(Pair io) {{ }}
"""


def _fuzz(candidate: str, kernel: str = "row_sums"):
    from xlate.verify.engine import FuzzConfig, Fuzzer, run_fuzz
    from xlate.verify.runner import Side

    spec = _spec() if kernel == "row_sums" else _spec(PAIR_SPEC, PAIR_CU, kernel)
    source = Side("src.py", kernel, text=NPY, language="npy", label="source")
    cand = Side("cand.py", kernel, text=candidate, language="npy", label="candidate")
    return run_fuzz(Fuzzer(spec, cand, source, config=FuzzConfig(examples=6)), budget=1 << 14, size_cap=1 << 10)


def test_the_gate_fills_pointer_fields_and_verifies_a_right_port(toy):  # noqa: F811
    res = _fuzz(NPY)
    assert res.failure is None and res.examples >= 6
    res = _fuzz(NPY, "scale_copy")
    assert res.failure is None and res.examples >= 6


def test_a_port_reading_the_wrong_stride_is_a_mismatch(toy):  # noqa: F811
    wrong = NPY.replace("data[i * s0 + j * s1]", "data[min(i * s1 + j * s0, data.size - 1)]")
    cx = _fuzz(wrong).failure
    assert cx is not None and cx.failure == "mismatch" and cx.buffer == "out"


def test_an_output_field_left_unwritten_or_overrun_is_named(toy):  # noqa: F811
    short = NPY.replace("_floats(q[\"dst\"], n)[:] = _floats(q[\"src\"], n)",
                        "_floats(q[\"dst\"], n)[: n - 1] = _floats(q[\"src\"], n)[: n - 1]")
    cx = _fuzz(short, "scale_copy").failure
    assert cx is not None and cx.failure == "unwritten output" and cx.buffer == "io.dst"
    spill = NPY.replace("_floats(q[\"dst\"], n)[:] = _floats(q[\"src\"], n)",
                        "_floats(q[\"dst\"], n + 1)[:] = np.append(_floats(q[\"src\"], n), np.float32(1))")
    cx = _fuzz(spill, "scale_copy").failure
    assert cx is not None and cx.failure == "out-of-bounds write" and cx.buffer == "io.dst"


def test_a_port_writing_its_input_field_is_caught(toy):  # noqa: F811
    writes = NPY.replace("n = int(q[\"n\"])", "n = int(q[\"n\"])\n    _floats(q[\"src\"], n)[:1] = 7")
    cx = _fuzz(writes, "scale_copy").failure
    assert cx is not None and cx.failure == "input modified" and cx.buffer == "io.src"


def test_a_reference_receives_the_pointer_fields_in_the_record(toy, tmp_path):  # noqa: F811
    from xlate.verify.engine import FuzzConfig, Fuzzer, run_fuzz
    from xlate.verify.oracle import ReferenceOracle
    from xlate.verify.runner import Side

    ref = tmp_path / "ref.py"
    ref.write_text(textwrap.dedent('''
        def scale_copy(io):  # destination-passing: io["dst"] arrives zeroed, io["n"] is the computed field
            io["dst"][: io["n"]] = io["src"][: io["n"]] * 2
    '''))
    oracle = ReferenceOracle(f"{ref}:scale_copy")

    def run(text: str):
        cand = Side("cand.py", "scale_copy", text=text, language="npy", label="candidate")
        return run_fuzz(Fuzzer(_spec(PAIR_SPEC, PAIR_CU, "scale_copy"), cand, None, reference=oracle,
                               config=FuzzConfig(examples=6)), budget=1 << 12, size_cap=1 << 9)

    assert run(NPY).failure is None
    cx = run(NPY.replace("* np.float32(2)", "* np.float32(3)")).failure
    assert cx is not None and cx.failure == "mismatch" and cx.buffer == "io.dst"
