"""Helpers of the spec-inference tests: a program written to a file and resolved as `xlate spec` resolves it."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

from xlate.parse import parse_string
from xlate.specs import resolve_spec

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from spec_coverage import gate_problem


def resolve(tmp_path: Path, text: str, kernel: str, name: str = "main.cu"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip())
    unit = parse_string(path.read_text(), str(path), "cuda")
    return resolve_spec(unit, kernel)


def usable(res) -> None:
    """A complete spec the gate can draw its cases from."""
    assert res.complete and res.spec is not None and res.error is None, (res.holes, res.error)
    assert gate_problem(res.spec) is None
