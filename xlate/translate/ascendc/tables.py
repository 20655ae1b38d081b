"""The data files of the AscendC translator (data/*.yaml), loaded once, and diagnostics built from the catalogue."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from xlate.resources import load_yaml
from xlate.translate.base import Diagnostic

DATA = Path(__file__).parent / "data"


@functools.cache
def table(name: str) -> dict[str, Any]:
    return load_yaml(DATA / f"{name}.yaml")


def ops() -> dict[str, Any]:
    return table("ops")


def tiling_policy() -> dict[str, Any]:
    return table("tiling")


def catalogue() -> dict[str, dict[str, Any]]:
    return table("checks")


def diag(code: str, path: str, line: int, col: int, *, kernel: str | None = None, severity: str | None = None,
         **fields: Any) -> Diagnostic:
    """A Diagnostic for catalogue entry `code`, its message filled from `fields`."""
    entry = catalogue()[code]
    return Diagnostic(
        code=code,
        severity=severity or entry["severity"],  # type: ignore[arg-type]
        message=entry["message"].format(kernel=kernel, **fields),
        path=path,
        line=line,
        col=col,
        kernel=kernel,
        rule=entry["name"],
        why=entry.get("why"),
        needs_llm=bool(entry.get("needs_llm", False)),
    )
