"""Output names for `xlate migrate` (rules in naming.yaml): translation units as `xlate port` names them,
headers with the target's header suffix."""

from __future__ import annotations

import functools
from pathlib import Path, PurePosixPath
from typing import Any

from xlate.port import TARGET_SUFFIX, default_output
from xlate.resources import load_yaml


@functools.cache
def rules() -> dict[str, Any]:
    return load_yaml(Path(__file__).with_name("naming.yaml"))


def suffixes() -> tuple[set[str], set[str]]:
    r = rules()
    return set(r["sources"]), set(r["header_suffixes"])


def is_header(rel: str) -> bool:
    return PurePosixPath(rel).suffix.lower() in suffixes()[1]


def header_suffix(target: str, suffix: str) -> str | None:
    """The output suffix of a header for `target`, or None when the target has no headers."""
    table = rules()["headers"].get(target)
    if table is None:
        return None
    return table.get(suffix.lower(), suffix)


def ports_headers(target: str) -> bool:
    return target in rules()["headers"]


def output_name(rel: str, target: str, *, copy: bool = False) -> str | None:
    """The output path (relative, POSIX) of input `rel`; None when nothing is written for it.

    A file already in the target language (`copy`) keeps its name."""
    p = PurePosixPath(rel)
    if copy:
        return rel
    if is_header(rel):
        new = header_suffix(target, p.suffix)
        if new is None:
            return None
        return str(p.with_name(p.name[: -len(p.suffix)] + new))
    if target not in TARGET_SUFFIX:
        return None
    return default_output(rel, target)
