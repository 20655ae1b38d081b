"""The `xlate.toml` sidecar: spec items and reference oracles per kernel, beside the sources.

    [kernels.saxpy]
    spec = "x: in[n], y: inout[n], n: size(1..4096), a: scalar, grid: cdiv(n, 256), block: 256"
    reference = "refs.py:saxpy"
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path
from typing import Any

from xlate.errors import SpecError


def sidecar_path(source_path: str) -> Path | None:
    """The `xlate.toml` that governs `source_path`: beside it or in a parent folder."""
    folder = Path(os.path.abspath(source_path)).parent
    for d in (folder, *folder.parents):
        f = d / "xlate.toml"
        if f.exists():
            return f
    return None


def sidecar(source_path: str) -> dict[str, Any]:
    """The `xlate.toml` beside a source (or in a parent folder up to the filesystem root), parsed; {} if none."""
    f = sidecar_path(source_path)
    if f is None:
        return {}
    try:
        doc = tomllib.loads(f.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SpecError(f"{f}: error: {exc}") from None
    doc["__dir__"] = str(f.parent)
    return doc


def sidecar_overrides(source_path: str, kernel: str) -> str | None:
    doc = sidecar(source_path)
    entry = doc.get("kernels", {}).get(kernel, {})
    spec = entry.get("spec") if isinstance(entry, dict) else None
    return spec if isinstance(spec, str) else None


def sidecar_reference(source_path: str, kernel: str) -> str | None:
    """A reference oracle for `kernel`: `[kernels.K] reference = "mod.py:fn"`, or `[references] dir = ".."`
    meaning `<dir>/<source stem>.py:<kernel>` when that file defines it."""
    doc = sidecar(source_path)
    if not doc:
        return None
    base = Path(doc["__dir__"])
    entry = doc.get("kernels", {}).get(kernel, {})
    if isinstance(entry, dict) and entry.get("reference"):
        ref = entry["reference"]
        mod, _, fn = ref.partition(":")
        return f"{(base / mod).resolve()}:{fn or kernel}"
    ref_dir = doc.get("references", {}).get("dir")
    if ref_dir:
        candidate = (base / ref_dir / (Path(source_path).stem + ".py")).resolve()
        if candidate.exists() and re.search(rf"^def {re.escape(kernel)}\b", candidate.read_text(), re.M):
            return f"{candidate}:{kernel}"
    return None


def write_sidecar_specs(folder: str | Path, specs: dict[str, str]) -> Path:
    """Set `[kernels.NAME] spec = "..."` in `folder/xlate.toml` for each kernel, keeping everything else in the
    file (comments, references, other kernels) as it was."""
    path = Path(folder) / "xlate.toml"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    for kernel, spec in specs.items():
        line = f"spec = {json.dumps(spec)}"
        header = re.compile(rf"^\[kernels\.{re.escape(kernel)}\]\s*$", re.M)
        m = header.search(text)
        if m is None:
            text = text.rstrip("\n") + ("\n\n" if text.strip() else "") + f"[kernels.{kernel}]\n{line}\n"
            continue
        nxt = re.compile(r"^\[", re.M).search(text, m.end())
        end = nxt.start() if nxt else len(text)
        body = text[m.end():end]
        if re.search(r"^spec\s*=.*$", body, re.M):
            body = re.sub(r"^spec\s*=.*$", lambda _m, new=line: new, body, count=1, flags=re.M)
        else:
            body = "\n" + line + body
        text = text[:m.end()] + body + text[end:]
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:  # never leave the user a file that no longer parses
        raise SpecError(f"{path}: error: cannot update it safely ({exc}); add the specs by hand") from None
    from xlate.fsutil import atomic_write_text

    atomic_write_text(str(path), text)
    return path
