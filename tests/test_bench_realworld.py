"""bench/realworld_hip.py on a tiny HeCBench-layout corpus written here: the recipe extraction, the failure
grouping, and one end-to-end run (human ports built, both tools' trees built the same way, JSON and table)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import hecbench_build as hb  # noqa: E402
import realworld_hip as rw  # noqa: E402

HIPIFY = ROOT.parent / "shared" / "tools" / "hipify-perl"

MAKE_OUTPUT = """\
nvcc  -std=c++17 -Xcompiler -Wall,-fopenmp -arch=sm_80 -O3 -I ../common -DUSE_X=1 -o solver.o -c solver.cu
nvcc  -std=c++17 -Xcompiler -Wall -arch=sm_80 -O3 -DGPU -o solver-gpu.o -c solver.cu
g++ -O2 -c host/io.cpp
nvcc  -std=c++17 -arch=sm_80 -O3 -o app solver.o io.o -lcublas -lcudart -lm
nvcc  -std=c++17 -arch=sm_80 -O3 -o app-gpu solver-gpu.o io.o -lcurand
echo done
"""


def test_recipe_from_make_output():
    r = hb.parse_recipe(MAKE_OUTPUT, cuda_libs=True)
    assert [(u.source, u.obj) for u in r.units] == [("solver.cu", "solver.o"), ("solver.cu", "solver-gpu.o"),
                                                   ("host/io.cpp", "io.o")]
    assert r.units[0].flags == ["-std=c++17", "-fopenmp", "-O3", "-I../common", "-DUSE_X=1"]
    assert r.units[1].flags == ["-std=c++17", "-O3", "-DGPU"]  # -arch and -Xcompiler -Wall dropped
    assert r.units[2].flags == ["-O2"]
    assert [(ln.inputs, ln.output, ln.flags) for ln in r.links] == [
        (["solver.o", "io.o"], "app", ["-lhipblas", "-lm"]),  # cudart needs no library with hipcc
        (["solver-gpu.o", "io.o"], "app-gpu", ["-lhiprand"])]
    assert not r.rdc and r.error is None


def test_recipe_one_step_build_and_rdc():
    r = hb.parse_recipe("hipcc -fgpu-rdc -std=c++14 a.cu b.cpp -o prog -lhipblas\n", cuda_libs=False)
    assert [u.source for u in r.units] == ["a.cu", "b.cpp"]
    assert r.rdc and len(r.links) == 1 and r.links[0].output == "prog" and r.links[0].flags == ["-lhipblas"]
    assert hb.parse_recipe("echo nothing\n").error


def test_c_units_follow_their_compiler():
    r = hb.parse_recipe("nvcc -std=c++17 -O3 -c main.c -o main.o\ngcc -std=c++17 -c util.c\n"
                        "hipcc -std=c++17 -x hip -c f.c\n")
    # nvcc built main.c as C++ (as the human HIP ports do with -x hip); gcc built util.c as C
    assert [u.flags for u in r.units] == [["-x", "hip", "-std=c++17", "-O3"], [], ["-std=c++17", "-x", "hip"]]


def test_sub_make_folders():
    text = ("make -C src\nmake[1]: Entering directory '/p/src'\nhipcc -I../inc -c k.cu -o k.o\n"
            "hipcc k.o -o app\nmake[1]: Leaving directory '/p/src'\n")
    r = hb.parse_recipe(text, root="/p")
    assert [(u.cwd, u.rel(u.source), u.rel(u.obj)) for u in r.units] == [("src", "src/k.cu", "src/k.o")]
    assert r.links[0].cwd == "src" and r.links[0].inputs == ["k.o"]


def test_failure_causes_group_by_message_not_names():
    rows = [{"program": "p1", "xlate": {"built": False, "first_error": "a.cu:3:1: error: use of undeclared identifier 'foo'"}},
            {"program": "p2", "xlate": {"built": False, "first_error": "b.hip:9:2: error: use of undeclared identifier 'bar'"}},
            {"program": "p3", "xlate": {"built": False, "root_cause": "not written (error): k.cu:5:7: error: syntax error: missing ';'"}},
            {"program": "p4", "xlate": {"built": True}}]
    groups = rw.group_failures(rows, "xlate")
    assert [(g["cause"], g["count"]) for g in groups] == [("use of undeclared identifier '…'", 2),
                                                          ("not written: syntax error: missing ';'", 1)]
    assert rw.cause("m.cu:1:10: fatal error: 'hipcub/hipcub.hpp' file not found") == "'hipcub/hipcub.hpp' file not found"


# --- end to end on a corpus of two programs ---------------------------------------------------------------------

MAKEFILE = """\
CC = {cc}
CFLAGS := -std=c++17 -O2 {extra}
program = main
source = main.cu
obj = $(source:.cu=.o)
$(program): $(obj)
\t$(CC) $(CFLAGS) $(obj) -o $@
%.o: %.cu
\t$(CC) $(CFLAGS) -c $< -o $@
"""

CUDA_HEADER = """\
#pragma once
__global__ void add_one(float* v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] += 1.0f;
}
"""

CUDA_MAIN = """\
#include <cstdio>
#include <cuda_runtime.h>
#include "ops.cuh"
int main() {
  float* d = nullptr;
  cudaMalloc((void**)&d, 64 * sizeof(float));
  cudaMemset(d, 0, 64 * sizeof(float));
  add_one<<<1, 64>>>(d, 64);
  cudaDeviceSynchronize();
  cudaFree(d);
  std::printf("ok\\n");
  return 0;
}
"""

HIP_MAIN = """\
#include <cstdio>
#include <hip/hip_runtime.h>
#include "ops.cuh"
int main() {
  float* d = nullptr;
  (void)hipMalloc((void**)&d, 64 * sizeof(float));
  add_one<<<1, 64>>>(d, 64);
  (void)hipFree(d);
  return 0;
}
"""


def fake_corpus(root: Path) -> Path:
    src = root / "src"
    for name, hip_extra, hip_main in (("bump", "-I../bump-cuda", HIP_MAIN),
                                      ("needslib", "", "#include <hipcub/not_here.hpp>\nint main() { return 0; }\n")):
        (src / f"{name}-cuda").mkdir(parents=True)
        (src / f"{name}-hip").mkdir(parents=True)
        (src / f"{name}-cuda" / "Makefile").write_text(MAKEFILE.format(cc="nvcc", extra="-arch=sm_70 -Xcompiler -Wall"))
        (src / f"{name}-cuda" / "main.cu").write_text(CUDA_MAIN)
        (src / f"{name}-cuda" / "ops.cuh").write_text(CUDA_HEADER)
        (src / f"{name}-cuda" / "notes.txt").write_text("not a source\n")
        (src / f"{name}-hip" / "Makefile").write_text(MAKEFILE.format(cc="hipcc", extra=hip_extra))
        (src / f"{name}-hip" / "main.cu").write_text(hip_main)
    return root


@pytest.mark.skipif(shutil.which("hipcc") is None or shutil.which("perl") is None or shutil.which("make") is None
                    or not HIPIFY.exists(), reason="needs hipcc, make, perl and ../shared/tools/hipify-perl")
def test_end_to_end_on_a_tiny_corpus(tmp_path):
    corpus = fake_corpus(tmp_path / "corpus")
    before = {p: p.read_bytes() for p in corpus.rglob("*") if p.is_file()}
    out = tmp_path / "res" / "rw.json"
    cache = tmp_path / "res" / "human.json"
    args = ["--corpus", str(corpus), "--out", str(out), "--human-cache", str(cache), "-j", "1", "--hipify", str(HIPIFY)]
    assert rw.main(args) == 0
    doc = json.loads(out.read_text())
    assert doc["totals"]["programs"] == 2 and doc["totals"]["human_port_builds"] == 1
    assert [h["program"] for h in doc["human"] if h["human"]["built"]] == ["bump"]
    broken = next(h for h in doc["human"] if h["program"] == "needslib")["human"]
    assert "hipcub/not_here.hpp" in broken["first_error"]
    assert [g["cause"] for g in doc["failure_groups"]["human"]] == ["'hipcub/not_here.hpp' file not found"]
    (row,) = doc["programs"]
    assert row["program"] == "bump"
    hip = row["hipify"]
    # hipify-perl ran on the two C-family files (not notes.txt), and its tree builds for gfx90a
    assert (hip["files"], hip["translated"], hip["built"], hip["first_error"]) == (2, 2, True, None)
    assert hip["cuda_names_left"] == 0 and hip["seconds"] > 0
    xl = row["xlate"]
    assert xl["files"] == 2 and xl["built"] in (True, False) and set(xl) >= {"translated", "diagnostics", "seconds"}
    assert xl["built"] == (xl["first_error"] is None)
    for tool in ("xlate", "hipify"):
        t = doc["totals"][tool]
        assert t["built"] == int(row[tool]["built"]) and t["files"] == 2
    md = out.with_suffix(".md").read_text()
    assert "| program | xlate built | hipify built |" in md and "| bump | " in md
    # the corpus is only read; a second run takes the human port from the cache
    assert {p: p.read_bytes() for p in corpus.rglob("*") if p.is_file()} == before
    human = rw.HumanCache(cache, hb.hipcc_version())
    key = human.data["programs"]["bump"]["key"]
    assert rw.human_build(corpus, "bump", tmp_path / "w", human, 60)["cached"] is True
    (corpus / "src" / "bump-hip" / "main.cu").write_text(HIP_MAIN + "\n")
    assert hb.tree_hash([corpus / "src" / "bump-hip", corpus / "src" / "bump-cuda"]) != key


def test_human_build_fails_on_missing_source(tmp_path):
    if shutil.which("make") is None:
        pytest.skip("needs make")
    prog = tmp_path / "p"
    prog.mkdir()
    (prog / "Makefile").write_text(MAKEFILE.format(cc="hipcc", extra=""))
    (prog / "main.cu").write_text("int main() { return 0; }\n")
    recipe = hb.recipe_for(prog, cuda_libs=False)
    os.remove(prog / "main.cu")
    res = hb.build(prog, recipe, tmp_path / "b")
    assert not res.built and res.first_error == "main.cu: not in the translated tree"


def test_update_keeps_other_programs_and_refuses_another_revision():
    meta = {"xlate_commit": "abc", "tools": ["xlate"], "hipcc": "5.2", "command": "first"}
    old = {"meta": dict(meta), "programs": [{"program": "a", "v": 1}, {"program": "b", "v": 1}],
           "human": [{"program": "a"}, {"program": "b"}]}
    new = {"meta": {**meta, "command": "second"}, "programs": [{"program": "b", "v": 2}], "human": [{"program": "b"}]}
    doc = rw.merged(old, new)
    assert doc["programs"] == [{"program": "a", "v": 1}, {"program": "b", "v": 2}]
    assert doc["meta"]["command"] == "first" and doc["meta"]["updates"] == ["second"]
    with pytest.raises(SystemExit):
        rw.merged(old, {**new, "meta": {**meta, "xlate_commit": "def"}})
