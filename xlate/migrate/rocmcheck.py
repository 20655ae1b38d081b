"""The local ROCm and what it cannot check: a port for a newer ROCm (--rocm, default the newest the mapping tables
know) may use HIP names the local hipcc lacks (hip/hip_bf16.h before its release...). The compile check lists
them as "not checkable here", never as errors of the port."""

from __future__ import annotations

import functools
import re
from typing import Any

IDENT = re.compile(r"[A-Za-z_]\w*")
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]', re.M)
QUOTED = re.compile(r"'([^']+)'")


def _version(v: str) -> tuple[int, ...]:
    parts = [int(p) for p in re.findall(r"\d+", v)[:3]]
    return tuple(parts + [0] * (3 - len(parts)))


@functools.cache
def local_rocm() -> str | None:
    """The ROCm release of the local hipcc ("5.2" for HIP version 5.2.21153-0); None without hipcc."""
    from xlate.backends.hip import hipcc_path, hipcc_version

    if hipcc_path() is None:
        return None
    v = hipcc_version() or ""
    m = re.match(r"(\d+)\.(\d+)", v)
    return f"{m.group(1)}.{m.group(2)}" if m else None


@functools.cache
def hip_name_versions() -> dict[str, str]:
    """HIP-side name (identifier, header path, namespace) -> the ROCm release that added it, from the CUDA->HIP
    mapping tables (hip* and roc* targets)."""
    from xlate.translate.hip.tables import KINDS, builtin_tables

    out: dict[str, str] = {}
    for roc in (False, True):
        try:
            tables = builtin_tables("cuda->hip", roc)
        except TypeError:  # tables without the roc* targets
            tables = builtin_tables("cuda->hip")
        for kind in KINDS:
            for m in tables.layers["builtin"][kind].values():
                if m.target and m.rocm and (m.target not in out or _version(m.rocm) < _version(out[m.target])):
                    out[m.target] = m.rocm
    return out


def newer_constructs(text: str, rocm: str | None) -> list[dict[str, Any]]:
    """The HIP names in `text` that need a ROCm newer than `rocm`: [{name, rocm, line}], first use of each."""
    if not rocm:
        return []
    have = _version(rocm)
    versions = hip_name_versions()
    found: dict[str, dict[str, Any]] = {}

    def note(name: str, pos: int) -> None:
        v = versions.get(name)
        if v and name not in found and _version(v) > have:
            found[name] = {"name": name, "rocm": v, "line": text.count("\n", 0, pos) + 1}

    for m in INCLUDE.finditer(text):
        note(m.group(1), m.start(1))
    for m in IDENT.finditer(text):
        note(m.group(0), m.start())
    return sorted(found.values(), key=lambda d: d["line"])


def split_errors(log: str, text: str, newer: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """Compiler error lines: (errors of the port, errors that come from names newer than the local ROCm). An error
    is the local ROCm's when it names such a construct or sits on a line that uses one."""
    names = {d["name"] for d in newer}
    lines = text.splitlines()
    own, newer_errors = [], []
    for line in log.splitlines():
        if "error" not in line or re.search(r"\d+ errors? generated", line):
            continue
        where = re.match(r"[^:\s]+:(\d+):\d+:", line)
        on_line = lines[int(where.group(1)) - 1] if where and 0 < int(where.group(1)) <= len(lines) else ""
        quoted = set(QUOTED.findall(line))
        if quoted & names or any(n in line or re.search(rf"\b{re.escape(n)}\b", on_line) for n in names):
            newer_errors.append(line.strip())
        else:
            own.append(line.strip())
    return own, newer_errors
