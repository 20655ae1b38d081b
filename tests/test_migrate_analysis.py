"""`xlate migrate --analysis-only`: per file and kernel, what the rules translate, what needs the LLM, what is
unsupported, the wavefront hazards and an effort estimate; no port is written."""

from __future__ import annotations

import json

import pytest

from tests.test_migrate_support import by_path, make_lib, run_cli, tree_digest
from xlate.migrate.analysis import library_effort
from xlate.migrate.report import SCHEMA_FILE
from xlate.parse import parse_string
from xlate.translate.base import Diagnostic, Translation


def test_analysis_only_writes_no_port(tmp_path):
    root = tmp_path / "lib"
    lib = make_lib(root, 8)
    before = tree_digest(root)
    report_dir = tmp_path / "analysis"
    res = run_cli(str(root), "--to", "hip", "--analysis-only", "--report", str(report_dir), "--executor", "serial",
                  "--json")
    assert tree_digest(root) == before
    # The report folder, the cache under it, and no port anywhere.
    assert not [p for p in tmp_path.rglob("*") if p.suffix in (".hip", ".h") and "lib" not in p.parts]
    report = json.loads((report_dir / "report.json").read_text())
    pytest.importorskip("jsonschema").validate(report, json.loads(SCHEMA_FILE.read_text()))
    assert report["mode"] == "analysis" and json.loads(res.stdout)["summary"] == report["summary"]
    files = by_path(report)
    cats = {(rel, k["name"]): k["category"] for rel, f in files.items() for k in f["kernels"]}
    ptx = {key for key in cats if "inline_ptx" in key[0] and "ptx_add" in key[1]}  # %laneid reads are ported
    assert ptx and all(cats[key] == "llm" for key in ptx)
    assert all(c == "rules" for key, c in cats.items() if key not in ptx)
    # Warp-level kernels carry their wavefront findings (XL11xx), each with a line.
    warp = [k for rel, f in files.items() if "warp_reduce" in rel or "ballot" in rel for k in f["kernels"]]
    assert warp and all(k["hazards"] and all(h["code"].startswith("XL11") and h["line"] > 0 for h in k["hazards"]) for k in warp)
    for rel, f in files.items():
        for k in f["kernels"]:
            assert k["effort"] == ("high" if (rel, k["name"]) in ptx else "low" if not any(
                d["severity"] == "warning" for d in k["diagnostics"]) else "medium")
    assert {(m["file"], m["kernel"]) for m in report["not_migrated"]} == ptx
    assert report["summary"]["exit_code"] == res.exit_code == 1
    assert report["summary"]["hazards"] == sum(len(k["hazards"]) for f in files.values() for k in f["kernels"])
    assert lib.kernels == report["summary"]["kernels"]


def test_effort_rules():
    assert library_effort([], 0) == "low"
    assert library_effort(["low"] * 10, 0) == "low"
    assert library_effort(["low"] * 9 + ["medium"], 0) == "medium"
    assert library_effort(["low"] * 9 + ["high"], 0) == "medium"  # 10% high: below the 20% threshold
    assert library_effort(["low"] * 4 + ["high"], 0) == "high"
    assert library_effort(["low"] * 10, 1) == "high"  # a file that cannot be read or parsed


def test_findings_in_device_functions_count_for_the_kernels_that_reach_them():
    from xlate.migrate.analysis import analyse

    text = """
__device__ float helper(float v) { return v; }
__global__ void a(float* y) { y[0] = helper(1.0f); }
__global__ void b(float* y) { y[0] = 2.0f; }
"""
    unit = parse_string(text, "k.cu")
    diag = Diagnostic("XL1102", "error", "masked shuffle", "k.cu", 2, 36, needs_llm=True)  # inside helper, kernel unset
    host = Diagnostic("XL1007", "note", "added include", "k.cu", 1, 1)
    tr = Translation("k.cu", "cuda", "hip", "rules", text, ["a", "b"], [diag, host], needs_llm=["a"])
    a = analyse(unit, tr)
    ks = {k["name"]: k for k in a["kernels"]}
    assert ks["a"]["category"] == "llm" and ks["a"]["effort"] == "high" and ks["a"]["hazards"][0]["code"] == "XL1102"
    assert ks["b"]["category"] == "rules" and ks["b"]["diagnostics"] == []
    assert [d["code"] for d in a["file_diagnostics"]] == ["XL1007"]
