"""xlate.parse.makefile: one reading of make's language behind both the compile route's flags
(xlate.parse.buildflags, undecided conditions dropped) and inference's macro table (xlate.parse.ppscan, kept)."""

from __future__ import annotations

from pathlib import Path

from xlate.parse import buildflags, ppscan
from xlate.parse.makefile import read_makefile

CHAIN = """\
MODE = fast
ifeq ($(MODE),debug)
  CFLAGS += -DLEVEL=0
else ifeq ($(MODE),fast)
  CFLAGS += -DLEVEL=3
else
  CFLAGS += -DLEVEL=1
endif
"""


def names(text: str, undecided: str = "drop") -> list[tuple[str, str | None]]:
    return [(f.name, f.value) for f in read_makefile(text, undecided).define_flags()]  # type: ignore[arg-type]


def test_else_if_chain_takes_the_first_true_branch_only() -> None:
    assert names(CHAIN) == [("LEVEL", "3")]
    assert names(CHAIN.replace("MODE = fast", "MODE = other")) == [("LEVEL", "1")]
    assert names(CHAIN.replace("MODE = fast", "MODE = debug")) == [("LEVEL", "0")]


def test_an_unset_variable_is_empty_in_a_condition_as_in_make() -> None:
    text = "ifeq ($(DEBUG),yes)\nCFLAGS += -DTRACE\nelse\nCFLAGS += -DQUIET\nendif\n"
    assert names(text) == [("QUIET", None)]
    assert names("ifndef VERBOSE\nCFLAGS += -DSILENT\nendif\n") == [("SILENT", None)]
    assert names("VERBOSE = 1\nifndef VERBOSE\nCFLAGS += -DSILENT\nendif\n") == []


def test_a_condition_on_a_make_function_follows_the_policy() -> None:
    text = "ifeq ($(shell uname),Linux)\nCFLAGS += -DON_LINUX\nelse\nCFLAGS += -DELSEWHERE\nendif\nCFLAGS += -DALWAYS\n"
    assert names(text, "drop") == [("ALWAYS", None)]
    assert names(text, "keep") == [("ON_LINUX", None), ("ELSEWHERE", None), ("ALWAYS", None)]


def test_nested_conditionals_inside_a_branch_not_taken_stay_out() -> None:
    text = "A = no\nifeq ($(A),yes)\nifeq ($(shell x),y)\nCFLAGS += -DINNER\nendif\nCFLAGS += -DOUTER\nendif\n"
    assert names(text, "keep") == []


def test_assignment_flavours() -> None:
    read = read_makefile("N = 8\nX := $(N)\nY = $(N)\nN = 16\nZ ?= 1\nZ ?= 2\nW = a\nW += b\n", "drop")
    assert read.expand(read.variables["X"]) == "8"  # immediate
    assert read.expand(read.variables["Y"]) == "16"  # deferred
    assert read.variables["Z"] == "1"
    assert read.variables["W"] == "a b"
    assert read.expand("$(UNSET)-$(N)") == "-16"
    assert read.expand("$(UNSET)-$(N)", keep_unset=True) == "$(UNSET)-16"


def test_recipe_lines_carry_flags_but_assign_nothing() -> None:
    text = "all: main\n\tnvcc -DFROM_RECIPE main.cu\n\tN = 3\nCFLAGS = -DLATER\n"
    read = read_makefile(text, "drop")
    assert [(f.name, f.line) for f in read.define_flags()] == [("FROM_RECIPE", 2), ("LATER", 4)]
    assert "N" not in read.variables


def test_continuation_lines_and_comments() -> None:
    text = "CFLAGS = -O3 \\\n  -DWIDTH=4 # -DCOMMENTED\n"
    assert names(text) == [("WIDTH", "4")]


def test_both_consumers_read_one_makefile_alike_where_everything_is_decided(tmp_path: Path) -> None:
    (tmp_path / "Makefile").write_text("BS = 128\n" + CHAIN + "CFLAGS += -DBLOCK=$(BS) -Iinc\n")
    (tmp_path / "inc").mkdir()
    (tmp_path / "main.cu").write_text("__global__ void k() {}\n")
    compile_route = buildflags.build_flags(str(tmp_path / "main.cu"))
    assert compile_route.defines == (("LEVEL", "3"), ("BLOCK", "128"))
    assert compile_route.include_dirs == (str(tmp_path / "inc"),)
    table = ppscan.build_flags(tmp_path)
    assert {n: v for n, (v, _, _) in table.items()} == {"LEVEL": "3", "BLOCK": "128"}
    assert table["LEVEL"][2] == 6  # the line the taken flag is written on
