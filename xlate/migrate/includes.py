"""`#include` lines: finding the project headers a file includes, and rewriting them to the ported names.

A regex over the text, not the parser: it must work on files that do not parse, and it runs for every file of a
library in the main process (discovery), where a parse would cost more than the whole scan."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

INCLUDE = re.compile(r'^(?P<lead>[ \t]*#[ \t]*include[ \t]*)(?P<open>["<])(?P<name>[^">\n]+)(?P<close>[">])', re.M)


@dataclass(frozen=True)
class IncludeLine:
    name: str  # as written between the quotes or brackets
    system: bool  # <...>
    line: int
    col: int


def scan(text: str) -> list[IncludeLine]:
    out = []
    for m in INCLUDE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        out.append(IncludeLine(m["name"], m["open"] == "<", line, len(m["lead"]) + 1))
    return out


def resolve(inc: IncludeLine, including_dir: str, include_dirs: list[str]) -> str | None:
    """The file an include names, searched like a C preprocessor: the including file's folder first (quoted
    includes only), then the include folders. Absolute, normalised; None when no file matches."""
    dirs = ([including_dir] if not inc.system else []) + list(include_dirs)
    for d in dirs:
        candidate = os.path.normpath(os.path.join(d, inc.name))
        if os.path.isfile(candidate):
            return candidate
    return None


def renamed(include_name: str, new_basename: str) -> str:
    """`../common/x.cuh` with the ported header's name: the output tree mirrors the input, so only the last
    component changes."""
    head, _, _ = include_name.rpartition("/")
    return f"{head}/{new_basename}" if head else new_basename


def rewrite(text: str, mapping: dict[str, str]) -> tuple[str, list[dict[str, str | int]]]:
    """Replace include names by `mapping` (written name -> new name). Returns the text and what changed."""
    if not mapping:
        return text, []
    changed: list[dict[str, str | int]] = []

    def sub(m: re.Match[str]) -> str:
        new = mapping.get(m["name"])
        if new is None or new == m["name"]:
            return m.group(0)
        changed.append({"from": m["name"], "to": new, "line": text.count("\n", 0, m.start()) + 1})
        return f"{m['lead']}{m['open']}{new}{m['close']}"

    return INCLUDE.sub(sub, text), changed
