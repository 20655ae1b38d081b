"""Output names and file classes for `xlate migrate` (rules in xlate/data/migrate/naming.yaml): whole-tree targets rename only the
CUDA-specific suffixes (x.cu -> x.hip, x.cuh -> x.hip.h) or nothing (--keep-names); single-file targets name
translation units as `xlate port` does."""

from __future__ import annotations

import functools
from pathlib import PurePosixPath
from typing import Any

from xlate.port import default_output
from xlate.resources import data
from xlate.targets import target_names


@functools.cache
def rules() -> dict[str, Any]:
    return data("migrate/naming.yaml")


def _suffix(rel: str) -> str:
    return PurePosixPath(rel).suffix.lower()


def suffixes() -> tuple[set[str], set[str]]:
    """(translation-unit suffixes of the single-file targets, header suffixes)."""
    r = rules()
    return set(r["sources"]), set(r["header_suffixes"])


def is_header(rel: str) -> bool:
    return _suffix(rel) in suffixes()[1]


def is_c_family(rel: str) -> bool:
    return _suffix(rel) in set(rules()["c_family"])


def is_build_file(rel: str) -> bool:
    p = PurePosixPath(rel)
    return p.name in set(rules()["build_names"]) or p.suffix.lower() in set(rules()["build_suffixes"])


def ports_headers(target: str) -> bool:
    """Whole-tree targets (hip, cuda) translate every file of the library; the others port single files."""
    return target in rules()["tree"]


def wanted(rel: str, target: str) -> bool:
    """Files discovery reads as code for `target` (whole-tree targets also copy or translate every other file)."""
    if ports_headers(target):
        return is_c_family(rel)
    return _suffix(rel) in suffixes()[0] or is_header(rel)


def output_name(rel: str, target: str, *, copy: bool = False, keep_names: bool = False) -> str | None:
    """The output path (relative, POSIX) of input `rel`; None when nothing is written for it.

    A file already in the target language (`copy`) keeps its name, and so does every file with --keep-names."""
    if copy or (keep_names and ports_headers(target)):
        return rel
    p = PurePosixPath(rel)
    table = rules()["tree"].get(target)
    if table is not None:
        new = table.get(p.suffix.lower())
        return rel if new is None else str(p.with_name(p.name[: -len(p.suffix)] + new))
    if is_header(rel) or target not in target_names():
        return None
    return default_output(rel, target)


def renamed_suffixes(target: str, keep_names: bool = False) -> dict[str, str]:
    """Suffix renames of a whole-tree target ({".cu": ".hip", ...}); build files rewrite their patterns with it."""
    if keep_names:
        return {}
    return dict(rules()["tree"].get(target) or {})
