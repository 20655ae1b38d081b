"""The layering contract (.importlinter, checked by ci/lint_imports.py in ci/test.sh): the tree keeps it, and a
back edge breaks it."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "ci"))
import lint_imports  # noqa: E402

pytestmark = pytest.mark.skipif(importlib.util.find_spec("importlinter") is None, reason="import-linter not installed")


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(Path(sys.executable).parent / "lint-imports"), str(ROOT / ".importlinter")], cwd=tree,
                          env=dict(os.environ, PYTHONPATH=str(tree)), capture_output=True, text=True, timeout=300)


def test_the_tree_keeps_the_layers():
    r = subprocess.run([sys.executable, str(ROOT / "ci" / "lint_imports.py")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:]


@pytest.mark.parametrize(("module", "edge", "broken"), [
    ("verify/cases.py", "from xlate.port import PortRequest", "xlate.verify is not allowed to import xlate.port"),
    ("translate/llm/merge.py", "from xlate.verify.api import verify", "xlate.translate is not allowed to import xlate.verify"),
    ("backends/jitter.py", "from xlate.verify.api import verify", "xlate.backends is not allowed to import xlate.verify"),
])
def test_a_back_edge_breaks_the_contract(tmp_path, module, edge, broken):
    lint_imports.assemble(tmp_path)
    pkg, name = module.split("/", 1)
    link = tmp_path / "xlate" / pkg
    link.unlink()
    shutil.copytree(ROOT / ("backends" if pkg == "backends" else f"xlate/{pkg}"), link)
    target = link / name
    target.write_text(target.read_text() + f"\n\ndef _back_edge():\n    {edge}\n")
    r = _lint(tmp_path)
    assert r.returncode != 0 and broken in r.stdout, r.stdout[-3000:]
