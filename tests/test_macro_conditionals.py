"""Macros are collected as the preprocessor defines them: a `#define` in a `#if`/`#elif`/`#ifdef` branch counts
only where that branch is the one taken, decided against the macros defined before it (headers where they are
included, the build's `-D` flags); an undecidable condition keeps the old rule (the first definition wins).
xlate.parse.ppscan, used by the per-file list (xlate.parse.cfamily) and the program's table (Program.macros)."""

from __future__ import annotations

import textwrap

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, rng, run
from xlate.parse import parse_file, parse_string, ppscan
from xlate.specs.infer.program import program_for
from xlate.translate.base import TranslateOptions
from xlate.translate.triton.translator import CudaToTriton

WIDTH_SWITCH = """
#define WIDTH_DEFAULT 4
#ifndef WIDTH
#define WIDTH WIDTH_DEFAULT
#endif
#if WIDTH == 2
  #define vec_t float2
  #define LANE_SUM(a) ((a).x + (a).y)
#elif WIDTH == 4
  #define vec_t float4
  #define LANE_SUM(a) ((a).x + (a).y + (a).z + (a).w)
#else
  #define vec_t float
  #define LANE_SUM(a) (a)
#endif
"""

KERNEL = """
// xlate: x: in[n], y: out[n], n: size(1..2048), grid: cdiv(n, 64), block: 64
__global__ void lane_sums(const vec_t* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    vec_t a = x[i];
    y[i] = LANE_SUM(a) * 0.5f;
}
"""


def values(macros, name: str) -> list[str]:
    return [m.value for m in macros if m.name == name]


def write(tmp_path, files: dict[str, str]):
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text).lstrip())


# -- (1) #if W == 2 / #elif W == 4 --------------------------------------------------------------------------------


def test_elif_branch_is_the_one_taken_in_the_file_list():
    unit = parse_string(WIDTH_SWITCH + KERNEL, "<mem>.cu", "cuda")
    assert values(unit.macros, "vec_t") == ["float4"]
    assert values(unit.macros, "LANE_SUM") == ["((a).x + (a).y + (a).z + (a).w)"]
    assert values(unit.macros, "WIDTH") == ["WIDTH_DEFAULT"]


def test_elif_branch_is_the_one_taken_in_the_program_table(tmp_path):
    write(tmp_path, {"config.h": WIDTH_SWITCH, "k.cu": '#include "config.h"\n' + KERNEL})
    program = program_for(parse_file(str(tmp_path / "k.cu")))
    assert program.macros["vec_t"].body == "float4"
    assert program.macros["LANE_SUM"].body.count("+") == 3
    assert program.resolve_type("vec_t") == "float4"


def test_a_header_sets_the_switch_a_file_tests(tmp_path):
    # the file's #if reads a macro of the header it includes: read where it is included
    write(tmp_path, {"width.h": "#define WIDTH 2\n", "k.cu": '#include "width.h"\n' + WIDTH_SWITCH + KERNEL})
    unit = parse_file(str(tmp_path / "k.cu"))
    assert values(unit.macros, "vec_t") == ["float2"]
    assert values(unit.macros, "WIDTH") == []  # the header defines it; the file's #ifndef is not taken
    assert program_for(unit).macros["vec_t"].body == "float2"
    assert program_for(unit).macros["WIDTH"].body == "2"


# -- (2) #ifndef X / #define X ------------------------------------------------------------------------------------


def test_ifndef_default_gives_way_to_an_earlier_definition(tmp_path):
    src = """
    #define BLOCK 128
    #ifndef BLOCK
    #define BLOCK 64
    #endif
    #ifndef TILE
    #define TILE 16
    #endif
    __global__ void k(float* x) { __shared__ float s[BLOCK]; s[threadIdx.x] = 0.f; x[0] = s[0] * TILE; }
    """
    unit = parse_string(textwrap.dedent(src), "<mem>.cu", "cuda")
    assert values(unit.macros, "BLOCK") == ["128"]
    assert values(unit.macros, "TILE") == ["16"]
    write(tmp_path, {"k.cu": src})
    program = program_for(parse_file(str(tmp_path / "k.cu")))
    assert program.macros["BLOCK"].body == "128" and program.macros["TILE"].body == "16"


def test_ifndef_default_gives_way_to_a_build_flag(tmp_path):
    write(tmp_path, {
        "Makefile": "CFLAGS = -O3 -DBLOCK=256 -DUSE_DOUBLE\nall:\n\tnvcc $(CFLAGS) k.cu\n",
        "k.cu": """
        #ifndef BLOCK
        #define BLOCK 64
        #endif
        #ifdef USE_DOUBLE
        #define real double
        #else
        #define real float
        #endif
        __global__ void k(real* x) { __shared__ float s[BLOCK]; s[threadIdx.x] = x[0]; x[1] = s[0]; }
        """,
    })
    unit = parse_file(str(tmp_path / "k.cu"))
    assert values(unit.macros, "real") == ["double"]
    assert values(unit.macros, "BLOCK") == []  # the flag defines it
    assert [s.size_bytes for s in unit.kernels[0].shared] == [256 * 4]  # sized by the flag's value
    program = program_for(unit)
    assert program.macros["BLOCK"].body == "256"
    assert program.macros["real"].body == "double"


def test_includer_defines_before_the_kernel_file_it_includes(tmp_path):
    # main.cu sets the size and includes the kernel's file: the kernel file's #ifndef default is not taken
    write(tmp_path, {
        "main.cu": '#define ROWS 32\n#include "kern.cu"\nint main() { return 0; }\n',
        "kern.cu": "#ifndef ROWS\n#define ROWS 8\n#endif\n__global__ void k(float* x) { x[ROWS] = 1.f; }\n",
    })
    program = program_for(parse_file(str(tmp_path / "kern.cu")))
    assert program.macros["ROWS"].body == "32"


# -- (3) undecidable conditions ---------------------------------------------------------------------------------


def test_undecidable_condition_keeps_the_first_definition(tmp_path):
    src = """
    #define PICK(a) (a)
    #if PICK(1) > 0
    #define STEP 3
    #else
    #define STEP 5
    #endif
    #if STEP == 3
    #define AFTER 1
    #else
    #define AFTER 2
    #endif
    __global__ void k(float* x) { x[0] = STEP + AFTER; }
    """
    unit = parse_string(textwrap.dedent(src), "<mem>.cu", "cuda")
    assert values(unit.macros, "STEP") == ["3", "5"]  # as before: every definition, the first one first
    assert values(unit.macros, "AFTER") == ["1", "2"]  # a condition on an undecided name is undecided too
    write(tmp_path, {"k.cu": src})
    program = program_for(parse_file(str(tmp_path / "k.cu")))
    assert program.macros["STEP"].body == "3" and program.macros["AFTER"].body == "1"


def test_a_header_that_cannot_be_read_leaves_its_names_undecided():
    src = '#include "missing_settings.h"\n#ifdef FAST\n#define MODE 1\n#else\n#define MODE 2\n#endif\n'
    unit = parse_string(src, "<mem>.cu", "cuda")
    assert values(unit.macros, "MODE") == ["1", "2"]
    # the toolkit's headers define no project macro: a quoted cuda_runtime.h leaves the condition decidable
    unit = parse_string(src.replace("missing_settings.h", "cuda_runtime.h"), "<mem>.cu", "cuda")
    assert values(unit.macros, "MODE") == ["2"]


def test_a_name_defined_only_in_branches_not_taken_is_kept():
    src = "#ifdef NEVER_SET\n#define ONLY_HERE 7\n#endif\n#if 0\n#define OLD 1\n#else\n#define OLD 2\n#endif\n"
    unit = parse_string(src, "<mem>.cu", "cuda")
    assert values(unit.macros, "ONLY_HERE") == ["7"]  # never lost
    assert values(unit.macros, "OLD") == ["2"]


def test_undef_is_honoured_in_later_conditions():
    src = "#define DEBUG_LEVEL 2\n#undef DEBUG_LEVEL\n#ifdef DEBUG_LEVEL\n#define LOG 1\n#else\n#define LOG 0\n#endif\n"
    assert values(parse_string(src, "<mem>.cu", "cuda").macros, "LOG") == ["0"]


# -- (4) #ifdef DOUBLE precision switch ---------------------------------------------------------------------------


PRECISION = """
#ifdef DOUBLE
#define FP double
#define FP_ONE 1.0
#else
#define FP float
#define FP_ONE 1.0f
#endif
"""


def test_precision_switch(tmp_path):
    unit = parse_string(PRECISION, "<mem>.cu", "cuda")
    assert values(unit.macros, "FP") == ["float"] and values(unit.macros, "FP_ONE") == ["1.0f"]
    unit = parse_string("#define DOUBLE\n" + PRECISION, "<mem>.cu", "cuda")
    assert values(unit.macros, "FP") == ["double"] and values(unit.macros, "FP_ONE") == ["1.0"]
    write(tmp_path, {"prec.h": "#define DOUBLE\n" + PRECISION,
                     "k.cu": '#include "prec.h"\n__global__ void k(FP* x) { x[0] = FP_ONE; }\n'})
    program = program_for(parse_file(str(tmp_path / "k.cu")))
    assert program.macros["FP"].body == "double"
    assert program.resolve_type("FP") == "double"


def test_scan_statuses():
    text = "#if 1\n#define A 1\n#elif X\n#define A 2\n#else\n#define A 3\n#endif\n#if F(2)\n#define B 1\n#endif\n"
    status, table = ppscan.file_status("<mem>", text + "#define F(x) x\n")
    assert status == {2: ppscan.ON, 4: ppscan.OFF, 6: ppscan.OFF, 9: ppscan.UNSURE, 11: ppscan.ON}
    assert table["A"] == "1" and table["B"] == ppscan.UNREADABLE and table["F"] is None
    status, _ = ppscan.file_status("<mem>", "#define F(x) x\n" + text)
    assert status[10] == ppscan.UNSURE  # a function-like macro read as a value: undecidable


# -- (5) a Triton lift of a kernel using the #if-selected vector type --------------------------------------------


def lift(path: str):
    unit = parse_file(path)
    return CudaToTriton().translate(unit, unit.text, TranslateOptions())


def check_lane_sums(t, tmp_path) -> None:
    assert t.kernels == ["lane_sums"], [d.format() for d in t.diagnostics]
    n = 300
    x = rng(3).standard_normal(4 * n).astype(np.float32)
    out = run(t.text, "lane_sums", [buf("x", x), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32")],
              tmp_path)
    want = x.reshape(n, 4).astype(np.float64).sum(axis=1) * 0.5
    np.testing.assert_allclose(out["y"], want, rtol=1e-5, atol=1e-5)
    guards_intact(out, "y")


def test_triton_lift_uses_the_vector_type_of_the_branch_taken_in_a_header(tmp_path):
    write(tmp_path, {"vec.h": WIDTH_SWITCH, "lanes.cu": '#include "vec.h"\n' + KERNEL})
    check_lane_sums(lift(str(tmp_path / "lanes.cu")), tmp_path)


def test_triton_lift_uses_the_vector_type_of_the_branch_taken_in_its_file(tmp_path):
    write(tmp_path, {"lanes.cu": WIDTH_SWITCH + KERNEL})
    check_lane_sums(lift(str(tmp_path / "lanes.cu")), tmp_path)


def test_build_flag_values_through_make_variables(tmp_path):
    write(tmp_path, {
        "Makefile": "SIZE = 512\nCFLAGS = -DEDGE=$(SIZE) -DOTHER=$(NOT_SET) -DPLAIN=3\n",
        "k.cu": """
        #ifndef EDGE
        #define EDGE 64
        #endif
        #ifndef OTHER
        #define OTHER 8
        #endif
        __global__ void k(float* x) { x[EDGE] = OTHER; }
        """,
    })
    flags = ppscan.build_flags(tmp_path)
    assert flags["EDGE"][0] == "512" and flags["PLAIN"][0] == "3" and flags["OTHER"][0] == "$(NOT_SET)"
    unit = parse_file(str(tmp_path / "k.cu"))
    assert values(unit.macros, "EDGE") == []
    assert values(unit.macros, "OTHER") == ["8"]  # the flag's value is unknown: the file's default stays
    program = program_for(unit)
    assert program.macros["EDGE"].body == "512" and program.macros["OTHER"].body == "8"


def test_build_flags_follow_the_makefiles_conditionals(tmp_path):
    write(tmp_path, {"Makefile": """
        DEBUG = no
        FP64 ?= yes
        MODE = fast
        CFLAGS = -O3
        ifeq ($(DEBUG),yes)
          CFLAGS += -g -DDEBUG
        endif
        ifeq ($(FP64),yes)
          CFLAGS += -DUSE_FP64
        else
          CFLAGS += -DUSE_FP32
        endif
        ifeq ($(MODE),slow)
          CFLAGS += -DSLOW
        else ifeq ($(MODE),fast)
          CFLAGS += -DFAST=2
        else
          CFLAGS += -DMEDIUM
        endif
        ifneq ($(shell uname),Darwin)
          CFLAGS += -DMAYBE
        endif
        ifdef UNSET_VARIABLE
          CFLAGS += -DNEVER
        endif
        """})
    flags = {n: v for n, (v, _, _) in ppscan.build_flags(tmp_path).items()}
    assert flags == {"USE_FP64": "1", "FAST": "2", "MAYBE": "1"}  # a condition we cannot read keeps its flags


# -- file-scope declarations in #if branches ---------------------------------------------------------------------


def test_a_file_scope_constant_takes_the_branch_the_program_builds(tmp_path):
    # `const int n` is declared in both branches of `#ifndef SMALL`: the host analysis ran both declarations and
    # the last (n = 4) won, so a 1024 x 1024 program got 4-element globals and a 2-thread launch.
    from xlate.specs.infer import infer_specs

    write(tmp_path, {"m.cu": """
        #ifndef SMALL
        const int n = 1024;
        const int threads = 256;
        #else
        const int n = 4;
        const int threads = 2;
        #endif
        __global__ void scale(float* x, float a) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) x[i] *= a;
        }
        int main() {
          float* d; cudaMalloc(&d, n * sizeof(float));
          scale<<<n / threads, threads>>>(d, 2.0f);
          return 0;
        }
        """})
    unit = parse_file(str(tmp_path / "m.cu"))
    program = program_for(unit)
    assert [d.text.decode().strip() for _, d in program.globals] == ["const int n = 1024;", "const int threads = 256;"]
    items = {k: v for k, (v, _) in infer_specs(unit)["scale"].items.items()}
    assert (items["x"], items["grid"], items["block"]) == ("x: inout[1024]", "grid: 4", "block: 256"), items
    # with -DSMALL from the build, the other branch
    small = tmp_path / "small"
    small.mkdir()
    (small / "m.cu").write_text((tmp_path / "m.cu").read_text())
    (small / "Makefile").write_text("CFLAGS = -DSMALL\nall:\n\tnvcc $(CFLAGS) m.cu\n")
    unit = parse_file(str(small / "m.cu"))
    items = {k: v for k, (v, _) in infer_specs(unit)["scale"].items.items()}
    assert (items["x"], items["grid"], items["block"]) == ("x: inout[4]", "grid: 2", "block: 2"), items
