"""XL6xxx diagnostics of `xlate migrate`, from diagnostics.yaml beside this module."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from xlate.resources import load_yaml
from xlate.translate.base import Diagnostic


@functools.cache
def table() -> dict[str, dict[str, Any]]:
    return load_yaml(Path(__file__).with_name("diagnostics.yaml"))


def diag(code: str, path: str, line: int = 1, col: int = 1, kernel: str | None = None, **fields: Any) -> Diagnostic:
    entry = table()[code]
    return Diagnostic(code, entry["severity"], entry["message"].format(**fields), path, line, col, kernel=kernel)


def diag_dict(code: str, path: str, line: int = 1, col: int = 1, **fields: Any) -> dict[str, Any]:
    return diag(code, path, line, col, **fields).to_dict()
