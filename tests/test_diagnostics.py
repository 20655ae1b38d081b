"""The one diagnostics catalogue: every code the code base emits is catalogued with one schema, every
catalogued code is emitted somewhere, and docs/diagnostics.md is the catalogue's rendering."""

from __future__ import annotations

import ast
import re
import string
from pathlib import Path

import pytest

from xlate import diagnostics
from xlate.errors import Located
from xlate.parse.source import decode

ROOT = Path(__file__).resolve().parents[1]
CODE = re.compile(r"\bXL\d{4}\b")
CATALOGUES = {*(ROOT / "xlate" / "data" / "diagnostics").glob("*.yaml"),
              *(diagnostics.package_file(pkg, name) for pkg, name in diagnostics.OWNED_CATALOGUES)}


def _emitted() -> dict[str, set[str]]:
    """code -> files that name it: string constants of the Python sources, and the rule tables (YAML) that
    attach codes to their entries. The catalogues themselves are not emitters."""
    found: dict[str, set[str]] = {}
    for folder in ("xlate", "backends"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and CODE.fullmatch(node.value):
                    found.setdefault(node.value, set()).add(str(path.relative_to(ROOT)))
        for path in (ROOT / folder).rglob("*.yaml"):
            if path in CATALOGUES:
                continue
            for code in CODE.findall(path.read_text(encoding="utf-8")):
                found.setdefault(code, set()).add(str(path.relative_to(ROOT)))
    return found


def test_every_emitted_code_is_catalogued():
    emitted = _emitted()
    assert len(emitted) > 100  # the scan sees the code base (a broken scan would pass trivially)
    missing = {code: sorted(files) for code, files in emitted.items() if code not in diagnostics.catalogue()}
    assert not missing, f"codes emitted but not in the catalogue: {missing}"


def test_every_catalogued_code_is_emitted():
    never = sorted(set(diagnostics.catalogue()) - set(_emitted()))
    assert not never, f"catalogued codes nothing emits (remove them, or emit them): {never}"


def test_docs_are_the_catalogue():
    text = (ROOT / "docs" / "diagnostics.md").read_text(encoding="utf-8")
    assert text == diagnostics.render_markdown(), "regenerate: python -m xlate.diagnostics > docs/diagnostics.md"
    for code in diagnostics.catalogue():
        assert f"| {code} |" in text


def test_templates_use_only_declared_fields():
    for code, entry in diagnostics.catalogue().items():
        names = {f for t in (entry["message"], entry.get("why") or "")
                 for _, f, _, _ in string.Formatter().parse(t) if f}
        if "fields" in entry:
            assert names <= set(entry["fields"]) | {"kernel"}, code
        filled = diagnostics.make(code, "k.cu", 3, 4, kernel="k", **{n: 1 for n in names - {"kernel"}})
        assert filled.severity == entry["severity"] and filled.code == code


def test_factory_fills_message_why_and_defaults():
    d = diagnostics.make("XL4003", "k.cu", 7, 2, kernel="saxpy", rule="llm", attempt=2, stop="token budget exhausted")
    assert d.format() == ("k.cu:7:2: error: saxpy: LLM translation stopped before attempt 2: token budget exhausted "
                          "(raise budget_tokens/budget_usd in [tool.xlate.llm]) [XL4003]")
    assert diagnostics.make("XL2003", "k.cu", what="x").needs_llm is True
    assert diagnostics.make("XL3004", "k.cpp").rule == "missing-include"  # the entry's name is the default rule
    with pytest.raises(KeyError):
        diagnostics.make("XL9999", "k.cu")


def test_front_end_findings_come_from_the_catalogue():
    _, warnings = decode("w.cu", "// caf\xe9\n__global__ void k() {}\n".encode("latin-1"))
    assert warnings == [Located("w.cu", 1, 7, "not UTF-8 text (byte 0xe9 at offset 6); 1 byte(s) not UTF-8, kept "
                                "unchanged in the port", "warning", "XL0001")]


@pytest.mark.parametrize(("files", "error"), [
    ({"x.yaml": "XL9001: {severity: fatal, message: m}"}, "XL9001 needs a severity"),
    ({"x.yaml": "XL9001: {severity: note, message: m, blocking: true}"}, "outside the schema"),
    ({"x.yaml": "XL9001: {severity: note, message: m}", "y.yaml": "XL9001: {severity: note, message: m}"},
     "defined twice"),
])
def test_schema_is_enforced(tmp_path, monkeypatch, files, error):
    (tmp_path / "diagnostics").mkdir()
    for name, text in files.items():
        (tmp_path / "diagnostics" / name).write_text(text + "\n")
    monkeypatch.setattr(diagnostics, "data_dir", lambda: tmp_path)
    monkeypatch.setattr(diagnostics, "OWNED_CATALOGUES", ())
    diagnostics.catalogue.cache_clear()
    try:
        with pytest.raises(ValueError, match=error):
            diagnostics.catalogue()
    finally:
        diagnostics.catalogue.cache_clear()
