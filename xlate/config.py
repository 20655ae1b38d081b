"""Project settings from `[tool.xlate]` in the nearest pyproject.toml (reading it is here; the LLM's settings are
read by xlate/translate/llm/config.py): HIPIFY's choices for CUDA -> HIP, overridden by the command line.

    [tool.xlate]
    rocm = "6.4"              # the ROCm the port targets (default: the newest the mapping tables know)
    roc = false               # true: rocBLAS/rocSPARSE/rocRAND/rocSOLVER instead of the hip* wrappers
    launch_syntax = "ggl"     # "ggl": hipLaunchKernelGGL (HIPIFY's default); "chevron": keep <<<>>>
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xlate.errors import InputError

LAUNCH_SYNTAXES = ("ggl", "chevron")


def find_pyproject(start: Path | None = None) -> Path | None:
    here = (start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        p = d / "pyproject.toml"
        if p.is_file():
            return p
    return None


def pyproject_table(path: Path | None) -> dict[str, Any]:
    """[tool.xlate] of a pyproject.toml ({} without one)."""
    if path is None:
        return {}
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"{path}: error: cannot read [tool.xlate]: {exc}") from None
    table = doc.get("tool", {}).get("xlate", {})
    return table if isinstance(table, dict) else {}


@dataclass(frozen=True)
class HipChoices:
    rocm: str | None = None
    roc: bool = False
    launch_syntax: str = "ggl"
    origin: str = "default"  # where the file settings came from (a pyproject path) or "default"


def _table(start: str | Path | None) -> tuple[dict[str, Any], Path | None]:
    """[tool.xlate] of the pyproject.toml nearest the source (a file or folder), else nearest the cwd."""
    here = Path(start) if start is not None else None
    if here is not None and here.is_file():
        here = here.parent
    path = find_pyproject(here) if here is not None and here.exists() else None
    if path is None:
        path = find_pyproject()
    return pyproject_table(path), path


def hip_choices(rocm: str | None = None, roc: bool | None = None, launch_syntax: str | None = None,
                start: str | Path | None = None) -> HipChoices:
    """The command line's values, else [tool.xlate]'s, else the defaults; bad values are input errors."""
    table, path = _table(start)
    where = f"{path}: [tool.xlate]" if path is not None else "[tool.xlate]"
    if rocm is None and table.get("rocm") is not None:
        rocm = str(table["rocm"])
    if roc is None:
        value = table.get("roc", False)
        if not isinstance(value, bool):
            raise InputError(f"{where}: error: roc must be true or false, not {value!r}")
        roc = value
    if launch_syntax is None:
        launch_syntax = str(table.get("launch_syntax", "ggl"))
    if launch_syntax not in LAUNCH_SYNTAXES:
        raise InputError(f"{where}: error: launch_syntax must be one of {', '.join(LAUNCH_SYNTAXES)}, "
                         f"not {launch_syntax!r}")
    used = any(k in table for k in ("rocm", "roc", "launch_syntax"))
    return HipChoices(rocm, roc, launch_syntax, str(path) if used and path is not None else "default")
