"""The XL1xxx catalogue (rules/diagnostics.yaml) and a factory that turns a code and its fields into a Diagnostic."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from xlate.resources import load_yaml
from xlate.translate.base import Diagnostic

RULES_DIR = Path(__file__).parent / "rules"


def rules_file(name: str) -> Any:
    return load_yaml(RULES_DIR / name)


@functools.cache
def catalogue() -> dict[str, dict[str, Any]]:
    table: dict[str, dict[str, Any]] = rules_file("diagnostics.yaml")
    for code, entry in table.items():
        if entry.get("severity") not in ("error", "warning", "note") or "message" not in entry:
            raise ValueError(f"rules/diagnostics.yaml: {code} needs a severity (error|warning|note) and a message")
    return table


def make(code: str, path: str, line: int, col: int, *, kernel: str | None = None, rule: str | None = None,
         severity: str | None = None, **fields: Any) -> Diagnostic:
    entry = catalogue().get(code)
    if entry is None:
        raise KeyError(f"diagnostic code {code} is not in rules/diagnostics.yaml")
    message = entry["message"].format(**fields)
    why = entry.get("why")
    if why:
        why = why.format(**fields)
    return Diagnostic(code=code, severity=severity or entry["severity"], message=message, path=path, line=line,
                      col=col, kernel=kernel, rule=rule, why=why, needs_llm=bool(entry.get("needs_llm", False)))
