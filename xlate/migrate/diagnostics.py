"""XL6xxx diagnostics of `xlate migrate` (xlate/data/diagnostics/migrate.yaml), as the report's plain dicts."""

from __future__ import annotations

from typing import Any

from xlate.diagnostics import make


def diag_dict(code: str, path: str, line: int = 1, col: int = 1, **fields: Any) -> dict[str, Any]:
    return make(code, path, line, col, **fields).to_dict()
