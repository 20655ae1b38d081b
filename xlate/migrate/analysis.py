"""`--analysis-only`: what the rule translator would do with each kernel (ported by rules, needs the LLM,
unsupported), the wavefront hazards it found, and an effort estimate; nothing is written."""

from __future__ import annotations

import functools
from collections import Counter
from typing import Any

from xlate.model import KernelUnit
from xlate.resources import data
from xlate.translate.base import Diagnostic, Translation

CATEGORIES = ("rules", "llm", "unsupported")


@functools.cache
def effort_rules() -> dict[str, Any]:
    return data("migrate/effort.yaml")


def is_hazard(d: Diagnostic | dict[str, Any]) -> bool:
    code = d["code"] if isinstance(d, dict) else d.code
    return any(code.startswith(p) for p in effort_rules()["hazard_prefixes"])


def hazard(d: Diagnostic) -> dict[str, Any]:
    """The short form of a wavefront-hazard diagnostic (the full one is among the kernel's diagnostics)."""
    return {"code": d.code, "severity": d.severity, "line": d.line, "message": d.message}


def attribute(unit: KernelUnit, diagnostics: list[Diagnostic]) -> tuple[dict[str, list[Diagnostic]], list[Diagnostic]]:
    """Diagnostics per kernel (a finding inside a device function counts for every kernel that reaches it) and
    the file-level rest. Translators do not always fill `kernel`; the line decides then."""
    spans = {f.name: (f.span.line, f.span.end_line) for f in unit.functions if f.span is not None}
    reach = {k.name: {f.name for f in unit.reachable(k.name)} for k in unit.kernels}
    per: dict[str, list[Diagnostic]] = {k.name: [] for k in unit.kernels}
    rest: list[Diagnostic] = []
    for d in diagnostics:
        owners = [d.kernel] if d.kernel in per else []
        if not owners:
            inside = {name for name, (a, b) in spans.items() if a <= d.line <= b}
            owners = [k for k, fns in reach.items() if fns & inside]
        for k in owners:
            per[k].append(d)
        if not owners:
            rest.append(d)
    return per, rest


def kernel_category(name: str, diags: list[Diagnostic], file_errors: list[Diagnostic], translation: Translation) -> str:
    if name in translation.needs_llm:
        return "llm"
    if any(d.severity == "error" for d in diags) or file_errors:
        return "unsupported"
    return "rules"


def kernel_effort(category: str, diags: list[Diagnostic]) -> str:
    if category != "rules":
        return "high"
    medium = set(effort_rules()["kernel"]["medium_severities"])
    return "medium" if any(d.severity in medium for d in diags) else "low"


def analyse(unit: KernelUnit, translation: Translation) -> dict[str, Any]:
    per, rest = attribute(unit, translation.diagnostics)
    file_errors = [d for d in rest if d.severity == "error"]
    kernels = []
    for k in unit.kernels:
        diags = per[k.name]
        category = kernel_category(k.name, diags, file_errors, translation)
        blocking = [d for d in diags + file_errors if d.severity == "error" or d.needs_llm]
        kernels.append({
            "name": k.name, "category": category, "effort": kernel_effort(category, diags),
            "hazards": [hazard(d) for d in diags if is_hazard(d)],
            "blocking": [d.to_dict() for d in blocking],
            "diagnostics": [d.to_dict() for d in diags],
        })
    return {"kernels": kernels, "file_diagnostics": [d.to_dict() for d in rest],
            "counts": dict(Counter(k["category"] for k in kernels)), "stats": translation.stats}


def library_effort(kernel_efforts: list[str], unreadable_files: int) -> str:
    if not kernel_efforts:
        return "high" if unreadable_files else "low"
    high = sum(e == "high" for e in kernel_efforts) / len(kernel_efforts)
    if unreadable_files or high >= effort_rules()["library"]["high_share"]:
        return "high"
    return "medium" if any(e != "low" for e in kernel_efforts) else "low"
