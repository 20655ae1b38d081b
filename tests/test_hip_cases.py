"""The CUDA <-> HIP case corpus (tests/data/hip_cases/*.yaml, see its README): exact output, exact diagnostic
codes, the kernels handed to the LLM, and the round trip CUDA -> HIP -> CUDA for every forward case."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from xlate.parse import parse_string
from xlate.translate.base import TranslateOptions, Translation
from xlate.translate.hip import CudaToHip, HipToCuda, compat

CASES = Path(__file__).parent / "data" / "hip_cases"
RULE_FILES = {"user_rules.yaml", "user_rules_override.yaml"}


def load_cases() -> list[dict[str, Any]]:
    out = []
    for path in sorted(CASES.glob("*.yaml")):
        if path.name in RULE_FILES:
            continue
        for case in yaml.safe_load(path.read_text(encoding="utf-8"))["cases"]:
            out.append({**case, "_file": path.stem})
    return out


def expand(text: str) -> str:
    """The markers of expected HIP text: `@compat NAME...` and `@added-include` lines."""
    lines = []
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped.startswith("@compat"):
            lines.append(compat.block(set(stripped.split()[1:])))
        elif stripped == "@added-include":
            lines.append(compat.compat()["added_include"] + "\n")
        else:
            lines.append(line)
    return "".join(lines)


def options(case: dict[str, Any]) -> TranslateOptions:
    """A case's options: arch, rules, and HIPIFY's choices (rocm, roc, launch_syntax) and project_names."""
    return TranslateOptions(arch=case.get("arch"), rules_files=[str(CASES / r) for r in case.get("rules", [])],
                            rocm=case.get("rocm"), roc=bool(case.get("roc", False)),
                            launch_syntax=case.get("launch_syntax", "ggl"),
                            project_names=frozenset(case.get("project_names", [])))


def forward(case: dict[str, Any]) -> bool:
    return case.get("direction", "cuda->hip") == "cuda->hip"


def case_path(case: dict[str, Any], side: str) -> str:
    """The file name a case is translated as: `path:` (a header, say), else <name>.cu / <name>.hip."""
    if "path" in case:
        return case["path"]
    return f"{case['name']}.{'cu' if side == 'cuda' else 'hip'}"


def translate_case(case: dict[str, Any]) -> Translation:
    if forward(case):
        unit = parse_string(case["cuda"], case_path(case, "cuda"), "cuda", strict=False)
        return CudaToHip().translate(unit, case["cuda"], options(case))
    unit = parse_string(case["hip"], case_path(case, "hip"), "hip", strict=False)
    return HipToCuda().translate(unit, case["hip"], options(case))


def back_to_cuda(case: dict[str, Any], hip_text: str) -> str:
    unit = parse_string(hip_text, case_path(case, "hip"), "hip", strict=False)
    return HipToCuda().translate(unit, hip_text, options(case)).text


ALL = load_cases()
IDS = [f"{c['_file']}:{c['name']}" for c in ALL]


def test_corpus_size_and_names():
    assert len(ALL) >= 150
    assert len(set(IDS)) == len(IDS), "case names must be unique per file"
    for c in ALL:
        assert ("hip" in c and "cuda" in c), f"{c['_file']}:{c['name']} needs both cuda and hip"
        assert "diagnostics" in c, f"{c['_file']}:{c['name']} needs a diagnostics list"


@pytest.mark.parametrize("case", ALL, ids=IDS)
def test_case(case):
    tr = translate_case(case)
    expected = expand(case["hip"]) if forward(case) else case["cuda"]
    assert tr.text == expected
    assert sorted(d.code for d in tr.diagnostics) == sorted(case["diagnostics"])
    assert tr.needs_llm == case.get("needs_llm", [])
    for d in tr.diagnostics:  # every diagnostic is located inside the source
        assert 1 <= d.line <= tr.meta["stats"]["total_lines"] + 1 and d.col >= 1


@pytest.mark.parametrize("case", [c for c in ALL if forward(c)], ids=[i for i, c in zip(IDS, ALL) if forward(c)])
def test_round_trip(case):
    back = back_to_cuda(case, expand(case["hip"]))
    expected = case["roundtrip"]["cuda"] if "roundtrip" in case else case["cuda"]
    assert back == expected


def test_every_edit_names_its_rule_and_location():
    for case in ALL[:60]:
        tr = translate_case(case)
        source = case["cuda"] if forward(case) else case["hip"]
        data = source.encode()
        for e in tr.edits:
            assert e.rule and ":" in e.rule
            assert data[e.start : e.end].decode() == e.old
            assert e.line >= 1 and e.col >= 1


def test_translation_is_deterministic():
    for case in ALL[::7]:
        a, b = translate_case(case), translate_case(case)
        assert a.text == b.text
        assert [d.to_dict() for d in a.diagnostics] == [d.to_dict() for d in b.diagnostics]
