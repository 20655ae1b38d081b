"""The targets xlate reads, writes and runs, each described once: xlate/data/targets.yaml, plus entries other
packages add through the `xlate.targets` entry-point group (each names a mapping of the same fields)."""

from __future__ import annotations

import functools
from dataclasses import dataclass, fields
from importlib.metadata import entry_points
from typing import Any

from xlate.errors import InputError
from xlate.resources import data


@dataclass(frozen=True)
class Target:
    """One language as a port target and as a source (see data/targets.yaml for each field)."""

    name: str
    title: str
    language: str
    port_suffix: str
    file_suffix: str
    source_suffixes: tuple[str, ...]
    comment: str
    fence: str
    grammar: str
    default_arch: str | None
    c_spelling: str | None
    backend: str
    missing_kernel: str

    @classmethod
    def from_dict(cls, name: str, entry: dict[str, Any]) -> Target:
        known = {f.name for f in fields(cls)} - {"name"}
        unknown, missing = set(entry) - known, known - set(entry)
        if unknown or missing:
            raise ValueError(f"target {name!r}: unknown fields {sorted(unknown)}, missing fields {sorted(missing)}")
        return cls(name=name, **{**entry, "source_suffixes": tuple(entry["source_suffixes"])})


@functools.cache
def all_targets() -> dict[str, Target]:
    table = {name: Target.from_dict(name, entry) for name, entry in data("targets.yaml").items()}
    for ep in entry_points(group="xlate.targets"):
        if ep.name not in table:  # a package cannot redefine a shipped target
            table[ep.name] = Target.from_dict(ep.name, dict(ep.load()))
    return table


def target_names() -> list[str]:
    return list(all_targets())


def target(name: str) -> Target:
    t = all_targets().get(name)
    if t is None:
        raise InputError(f"xlate: error: unknown target '{name}' ({', '.join(target_names())})")
    return t


def candidate_file(name: str) -> str:
    """What a candidate port for target `name` is called while it is judged (compilers name it in messages)."""
    return "<candidate>" + target(name).file_suffix


def of_language(language: str) -> Target:
    """The target whose files are in `language`."""
    t = next((t for t in all_targets().values() if t.language == language), None)
    if t is None:
        raise InputError(f"xlate: error: unknown language '{language}' ({', '.join(target_names())})")
    return t
