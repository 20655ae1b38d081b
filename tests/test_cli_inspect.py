"""`xlate inspect`: output forms and one clear message plus exit 2 for every kind of bad input."""

from __future__ import annotations

import json
import os

import pytest

GOOD = "__global__ void k(const float* x, float* y, int n) { int i = threadIdx.x; if (i < n) y[i] = x[i]; }\n"


def test_json_is_one_document_on_stdout(cli, tmp_path):
    f = tmp_path / "k.cu"
    f.write_text(GOOD)
    r = cli("inspect", str(f), "--json")
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    assert doc["schema"] == "xlate.inspect/1" and doc["language"] == "cuda"
    assert [k["name"] for k in doc["kernels"]] == ["k"]
    params = {p["name"]: (p["reads"], p["writes"]) for p in doc["kernels"][0]["params"]}
    assert params == {"x": (True, False), "y": (False, True), "n": (False, False)}


def test_human_output_names_kernel_and_roles(cli, tmp_path):
    f = tmp_path / "k.cu"
    f.write_text(GOOD)
    r = cli("inspect", str(f))
    assert r.exit_code == 0
    assert "kernel k" in r.stdout and "read" in r.stdout and "write" in r.stdout


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda p: None, "no such file"),
        (lambda p: p.mkdir(), "is a directory"),
        (lambda p: p.write_bytes(b""), "empty file"),
        (lambda p: p.write_bytes(b"  \n\n"), "empty file"),
        (lambda p: p.write_bytes(b"\x7fELF\x02\x01\x00\x00binary"), "binary file"),
        (lambda p: p.write_bytes(bytes(range(0x80, 0x100)) * 4), "not source text"),
    ],
    ids=["missing", "directory", "empty", "blank", "binary", "undecodable"],
)
def test_bad_inputs_exit_2_with_message(cli, tmp_path, make, message):
    p = tmp_path / "k.cu"
    make(p)
    r = cli("inspect", str(p))
    assert r.exit_code == 2
    assert message in r.stderr
    assert str(p) in r.stderr
    assert r.stdout == ""


def test_non_utf8_bytes_are_a_located_warning(cli, tmp_path):
    p = tmp_path / "k.cu"
    p.write_bytes(b"__global__ void k() {}\n// caf\xe9\n")
    r = cli("inspect", str(p))
    assert r.exit_code == 0
    assert f"{p}:2:7: warning: not UTF-8 text (byte 0xe9" in r.stderr and "[XL0001]" in r.stderr


def test_grammar_gaps_each_reported_with_location(cli, tmp_path):
    p = tmp_path / "bad.cu"
    p.write_text("__global__ void k(float* y) {\n  y[0] = ;\n}\n__global__ void j(float* y {\n}\n")
    r = cli("inspect", str(p), "--json")
    assert r.exit_code == 0 and r.stdout.startswith("{")
    lines = [line for line in r.stderr.splitlines() if ": warning: grammar gap" in line]
    assert len(lines) >= 2
    assert lines[0].startswith(f"{p}:2:")
    assert any(line.startswith(f"{p}:4:") for line in lines)


def test_unknown_extension(cli, tmp_path):
    p = tmp_path / "k.txt"
    p.write_text(GOOD)
    r = cli("inspect", str(p))
    assert r.exit_code == 2 and "unknown source type" in r.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_unreadable(cli, tmp_path):
    p = tmp_path / "k.cu"
    p.write_text(GOOD)
    p.chmod(0)
    r = cli("inspect", str(p))
    assert r.exit_code == 2 and "permission denied" in r.stderr
