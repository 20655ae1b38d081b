"""bench/results/README.md is the index of every committed number: each file its table names is there, and is
what its name says (JSON that parses, a PNG image, a non-empty log)."""

from __future__ import annotations

import json
import re

from tests.conftest import ROOT

RESULTS = ROOT / "bench" / "results"


def _listed() -> list[str]:
    names: list[str] = []
    for line in (RESULTS / "README.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("| `"):  # a row of the table: its first cell names one or more files
            names += re.findall(r"`([^`/]+\.(?:json|log|png|md))`", line.split(" | ", 1)[0])
    return names


def test_every_file_the_results_index_names_is_committed():
    names = _listed()
    assert len(names) >= 15 and "migrate_report.png" in names
    for name in names:
        path = RESULTS / name
        assert path.is_file() and path.stat().st_size > 0, f"{name} is listed in bench/results/README.md but missing"
        if name.endswith(".json"):
            json.loads(path.read_text(encoding="utf-8"))
        elif name.endswith(".png"):
            assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
