"""The C layer the Triton and AscendC translators share (xlate.cir): the one C type table and its accessor
checked against NumPy and C's rules, literals and macro expansion as C has them, and IR built from the front
end's tree."""

from __future__ import annotations

import numpy as np
import pytest

from tests.emulator.cscalar import ctype_of
from xlate.cir import cpre, ctype, ir
from xlate.cir.build import build_function, parse_number
from xlate.model import Macro
from xlate.parse import parse_string
from xlate.parse.consteval import ctype_sizes

# -- the one table -----------------------------------------------------------------------------------------------


def test_every_spelling_is_a_row_of_its_canonical_type():
    table = ctype.table()
    for spelling, row in table.items():
        assert row["c"] in table, spelling
        assert table[row["c"]] == row, spelling  # an alias carries the canonical type's facts, not its own
        assert table[row["c"]]["c"] == row["c"]


def test_scalar_facts_agree_with_numpy():
    kinds = {"f": "float", "i": "int", "u": "uint", "b": "bool"}
    for spelling, row in ctype.table().items():
        if row["kind"] == "vector":
            component = ctype.table()[row["scalar"]]
            assert row["size"] == row["lanes"] * component["size"], spelling
            assert row["numpy"] is None
            continue
        if row["numpy"] == "bfloat16":  # no NumPy dtype: 8 exponent bits in 16
            assert (row["size"], row["bits"], row["kind"], row["tl"]) == (2, 16, "float", "tl.bfloat16")
            continue
        dt = np.dtype(row["numpy"])
        assert dt.itemsize == row["size"], spelling
        assert kinds[dt.kind] == row["kind"], spelling
        assert row["bits"] == (1 if dt.kind == "b" else 8 * dt.itemsize), spelling
        assert row["tl"] == ("tl.int1" if dt.kind == "b" else f"tl.{dt.name}"), spelling


def test_integer_ranks_follow_c():
    order = ["bool", "char", "short", "int", "long", "long long"]
    ranks = [ctype.row(t)["rank"] for t in order]
    assert ranks == sorted(ranks) and len(set(ranks)) == len(ranks)
    for t in order[1:]:
        u = "unsigned " + t if t != "char" else "unsigned char"
        assert ctype.row(u)["rank"] == ctype.row(t)["rank"]


def test_canonical_spellings():
    assert ctype.canonical("const unsigned") == "unsigned int"
    assert ctype.canonical("std::uint32_t") == "unsigned int"
    assert ctype.canonical("volatile size_t") == "unsigned long"
    assert ctype.canonical("long long int") == "long long"
    assert ctype.canonical("half") == "__half"
    assert ctype.canonical("T") == "T"  # a template parameter stays symbolic
    assert ctype.row("uint32_t") is None and ctype.row("unsigned int")["bits"] == 32  # the IR speaks canonical names
    assert ctype.is_symbolic("T") and not ctype.is_symbolic("float")
    assert ctype.vector("float4") == {"scalar": "float", "fields": ["x", "y", "z", "w"]}
    assert ctype.vector(ctype.canonical("half2")) == {"scalar": "__half", "fields": ["x", "y"]}
    assert ctype.np_dtype("unsigned short") is np.uint16 and ctype.np_dtype("__nv_bfloat16") is None


def test_usual_arithmetic_conversions():
    # C11 6.3.1.1 and 6.3.1.8 on an LP64 target (long is 64 bits)
    assert ctype.arith("int", "unsigned int") == "unsigned int"
    assert ctype.arith("unsigned char", "int") == "int"
    assert ctype.arith("unsigned short", "unsigned char") == "int"  # both promote to int
    assert ctype.arith("int", "float") == "float"
    assert ctype.arith("float", "double") == "double"
    assert ctype.arith("__half", "float") == "float"
    assert ctype.arith("long", "unsigned int") == "long"  # long holds every unsigned int
    assert ctype.arith("long long", "unsigned long") == "unsigned long long"  # same width: the unsigned of the higher rank
    assert ctype.arith("unsigned long", "long") == "unsigned long"
    assert ctype.arith("T", "int") == "T"
    assert ctype.arith("T", "float") == ctype.UNKNOWN
    assert ctype.promote("bool") == "int" and ctype.promote("unsigned int") == "unsigned int"


def test_template_arguments_are_spelled_per_language():
    cuda = {"float16": "__half", "bfloat16": "__nv_bfloat16", "float32": "float", "float64": "double",
            "int8": "signed char", "int16": "short", "int32": "int", "int64": "long long", "uint8": "unsigned char",
            "uint16": "unsigned short", "uint32": "unsigned int", "uint64": "unsigned long long"}
    assert ctype.template_spellings("cuda") == cuda
    assert ctype.template_spellings("hip") == dict(cuda, bfloat16="__hip_bfloat16")


def test_spec_layer_and_emulator_read_the_same_table():
    sizes = ctype_sizes()
    assert set(sizes) == set(ctype.table())
    assert sizes["uint32_t"] == sizes["unsigned int"] == 4 and sizes["float4"] == 16
    assert (ctype_of("uint16_t"), ctype_of("const int64_t"), ctype_of("half"), ctype_of("bool")) == ("u16", "i64", "f16", "i32")
    assert ctype_of("__nv_bfloat16") is None  # bfloat16 rounding is not emulated
    assert ctype_of("TEventID") == "i32" and ctype_of("float4") is None


# -- literals and macros -----------------------------------------------------------------------------------------


def test_numbers_follow_c_rules():
    assert parse_number("256") == (256, "int")
    assert parse_number("2654435761u") == (2654435761, "unsigned int")
    assert parse_number("2654435761") == (2654435761, "long")
    assert parse_number("0xffffffff") == (0xFFFFFFFF, "unsigned int")
    assert parse_number("1.5f") == (1.5, "float")
    assert parse_number("1e-5f") == (1e-5, "float")
    assert parse_number("0.5") == (0.5, "double")
    assert parse_number("0x1p-2") == (0.25, "double")
    assert parse_number("-3.402823466e+38f")[1] == "float"


def test_macros_expand_without_moving_lines():
    macros = [Macro("CLAMP", ["v", "lo", "hi"], "((v) < (lo) ? (lo) : (v))", None),
              Macro("N", None, "(2 * M)", None), Macro("M", None, "128", None)]
    text = "int a = CLAMP(x,\n 0, N);\nint b = N;"
    out = cpre.expand(text, macros)
    assert out.text.count("\n") == text.count("\n")
    assert "(2*128)" in "".join(out.text.split())
    assert "x" in out.text and "CLAMP" not in out.text
    # every output character maps back to where it came from: the second line's N
    pos = out.text.index("int b")
    assert text[out.original(pos) : out.original(pos) + 5] == "int b"


def test_macro_arguments_are_substituted_as_c_does():
    macros = [Macro("TWICE", ["v"], "v + v", None), Macro("SELF", None, "SELF + 1", None)]
    assert "".join(cpre.expand("2 * TWICE(a)", macros).text.split()) == "2*a+a"  # no parentheses C does not add
    assert "".join(cpre.expand("SELF", macros).text.split()) == "SELF+1"  # a macro does not expand inside itself
    with pytest.raises(cpre.ExpansionError):
        cpre.expand("TWICE(a, b)", macros)


def test_expansions_read_as_written_and_never_join_tokens():
    macros = [Macro("NEXT", ["v"], "v[i + 1]", None), Macro("NEG", ["a"], "-a", None), Macro("U", None, "unsigned", None)]
    assert cpre.expand("y = NEXT(x);", macros).text == "y = x[i + 1] ;"  # quoted in diagnostics
    assert cpre.expand("z = NEG(-1);", macros).text == "z = - -1 ;"  # not a decrement
    assert cpre.expand("U int q;", macros).text == "unsigned  int q;"


def test_expansions_keep_operators_of_several_characters_and_drop_line_continuations():
    # a grid-stride loop macro: `index + = step` read as `index + step`, a loop that never advances
    macros = [Macro("LOOP", ["i", "n"], "for (int i = threadIdx.x; \\\n i < (n); i += blockDim.x * gridDim.x)", None),
              Macro("AT", ["p"], "p->v[k<<=1] && q != 0 || r::s", None), Macro("DEC", ["a"], "a--", None)]
    out = cpre.expand("LOOP(j, n) y[j] = 0;", macros).text
    assert "j += blockDim" in out and "j+=blockDim.x*gridDim.x)" in "".join(out.split()) and "\\" not in out
    assert "".join(cpre.expand("AT(w)", macros).text.split()) == "w->v[k<<=1]&&q!=0||r::s"
    assert cpre.expand("DEC(-x)", macros).text.strip() == "-x--"
    unit = parse_string("#define GS(i, n) for (int i = blockIdx.x * blockDim.x + threadIdx.x; \\\n"
                        "    i < (n); i += blockDim.x * gridDim.x)\n"
                        "__global__ void k(float* y, int n) { GS(t, n) { y[t] = 1.0f; } }\n", "k.cu", "cuda")
    loop = build_function(unit, unit.kernel("k")).body[0]
    assert isinstance(loop, ir.For) and isinstance(loop.step[0], ir.Assign)


# -- IR from the front end -----------------------------------------------------------------------------------------


def test_ir_is_built_from_the_front_ends_tree():
    # `__align__(16)` is outside tree-sitter-cuda's grammar; the front end blanks the attribute and the
    # declaration reads as what it is
    src = ("__global__ void k(float* y) {\n"
           "    __shared__ __align__(16) float s[64];\n"
           "    s[threadIdx.x] = 1.0f;\n"
           "    __syncthreads();\n"
           "    y[threadIdx.x] = s[threadIdx.x];\n"
           "}\n")
    unit = parse_string(src, "k.cu", "cuda")
    fir = build_function(unit, unit.kernel("k"))
    decl = fir.body[0]
    assert isinstance(decl, ir.Decl) and decl.shared and decl.name == "s" and decl.ctype == ir.CType("float")
    assert decl.loc == ir.Loc(2, 5)
    assert not [s for s in fir.body if isinstance(s, ir.Unsupported)]


def test_ir_locations_point_into_the_file_through_macros():
    src = ("#define IDX (blockIdx.x * blockDim.x + threadIdx.x)\n"
           "__global__ void k(unsigned n, float* y) {\n"
           "    unsigned i = IDX;\n"
           "    if (i < n) y[i] = 2.0f;\n"
           "}\n")
    unit = parse_string(src, "k.cu", "cuda")
    fir = build_function(unit, unit.kernel("k"))
    assert fir.params == [("n", ir.CType("unsigned int")), ("y", ir.CType("float", 1))]
    decl, branch = fir.body
    assert isinstance(decl.init, ir.Binary) and decl.init.loc == ir.Loc(3, 18)  # the macro's use, not its body
    assert isinstance(branch, ir.If) and branch.loc == ir.Loc(4, 5)


def test_bytes_that_are_not_utf8_pass_through():
    from xlate.parse.source import to_text

    text = to_text(b"// (c) \xa9 2024\n__global__ void k(float* y) {\n    y[threadIdx.x] = 1.0f;\n}\n")
    unit = parse_string(text, "k.cu", "cuda")
    fir = build_function(unit, unit.kernel("k"))
    assert isinstance(fir.body[0], ir.ExprStmt) and fir.body[0].loc == ir.Loc(3, 5)


def test_a_declarator_outside_the_subset_is_reported_where_it_is():
    from xlate.cir.build import BuildError

    src = "__device__ void acc(float (*s)(float), float v) { s(v); }\n__global__ void k(float* y) { y[0] = 1.0f; }\n"
    unit = parse_string(src, "k.cu", "cuda")
    with pytest.raises(BuildError) as err:
        build_function(unit, unit.function("acc"))
    assert err.value.what == "declarator '(*s)(float)'" and err.value.loc == ir.Loc(1, 27)
    # reference parameters are in the subset: the IR names them
    ref = "__device__ void acc(float& s, float v) { s += v; }\n__global__ void k(float* y) { acc(y[0], 1.0f); }\n"
    unit = parse_string(ref, "k.cu", "cuda")
    assert build_function(unit, unit.function("acc")).refs == frozenset({"s"})


def test_a_macro_defined_in_preprocessor_branches_takes_the_branch_the_file_selects():
    # `#define Real float` in the #else came last and won: a double program's port computed in float32
    src = ("#define DOUBLE\n#ifdef DOUBLE\n#define Real double\n#define EPS 1e-12\n#else\n#define Real float\n"
           "#define EPS 1e-6f\n#endif\n#if 0\n#define SCALE 3\n#else\n#define SCALE 2\n#endif\n"
           "__global__ void k(Real* y) { y[threadIdx.x] = (Real)SCALE + EPS; }\n")
    unit = parse_string(src, "k.cu", "cuda")
    from xlate.cir.build import active_macros, function_source

    assert {m.name: m.value for m in active_macros(unit)} == {"DOUBLE": "", "Real": "double", "EPS": "1e-12",
                                                               "SCALE": "2"}
    text = "".join(function_source(unit, unit.kernel("k")).text.split())
    assert "double*y" in text and "(double)2+1e-12" in text
