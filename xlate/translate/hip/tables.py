"""The CUDA<->HIP mapping tables (xlate/translate/maps/cuda_hip/*.yaml), loaded once per direction.

A table file is one family:
    family: runtime
    kind: identifier            # identifier | header | namespace
    entries:
      cudaMalloc: {hip: hipMalloc, rocm: "1.5"}
      cudaFoo: {hip: null, note: "..."}          # no HIP equivalent
      cudaBar: {hip: hipBaz, reverse: false}     # not used for HIP -> CUDA (another CUDA name owns hipBaz)
HIP -> CUDA uses the same entries inverted; where several CUDA names map to one HIP name, rules/tables.yaml
says which wins (the runtime spelling first) and the others are recorded in `collisions`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xlate.errors import InputError
from xlate.resources import load_yaml

MAPS_DIR = Path(__file__).resolve().parents[1] / "maps" / "cuda_hip"
KINDS = ("identifier", "header", "namespace")
# Highest first. `builtin` is a table entry. The structural warp-intrinsic rules (intrinsics.py) yield only to
# `takeover`: a user `default` rule replaces table entries but cannot bypass their safety checks.
PRIORITIES = ("takeover", "default", "builtin", "fallback")
Direction = str  # "cuda->hip" | "hip->cuda"


@dataclass(frozen=True)
class Mapping:
    name: str  # the source-side name
    target: str | None  # None: no equivalent on the other side
    family: str
    kind: str
    rocm: str | None = None
    note: str | None = None
    origin: str = "table"  # table file, or "user:<rules file>"
    priority: str = "builtin"

    @property
    def rule(self) -> str:
        return f"{self.family}:{self.name}"


@dataclass
class MappingTables:
    """Lookups for one direction: priority -> kind -> name -> Mapping."""

    direction: Direction
    layers: dict[str, dict[str, dict[str, Mapping]]] = field(
        default_factory=lambda: {p: {k: {} for k in KINDS} for p in PRIORITIES})
    families: list[str] = field(default_factory=list)
    collisions: list[tuple[str, str, str]] = field(default_factory=list)  # (target-side name, kept, dropped)
    cache: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)  # derived data of the passes

    def lookup(self, kind: str, name: str) -> Mapping | None:
        """The winning mapping for `name`: takeover, user default, table, fallback."""
        for prio in PRIORITIES:
            m = self.layers[prio][kind].get(name)
            if m is not None:
                return m
        return None

    def override(self, kind: str, name: str) -> Mapping | None:
        """A takeover user rule for `name`: it replaces even the structural warp-intrinsic rewrites."""
        return self.layers["takeover"][kind].get(name)

    def knows(self, kind: str, name: str) -> bool:
        return any(name in self.layers[p][kind] for p in PRIORITIES)

    def names(self, kind: str) -> set[str]:
        out: set[str] = set()
        for p in PRIORITIES:
            out |= self.layers[p][kind].keys()
        return out

    def add(self, m: Mapping) -> None:
        self.layers[m.priority][m.kind][m.name] = m
        if m.family not in self.families:
            self.families.append(m.family)

    def copy(self) -> MappingTables:
        out = MappingTables(self.direction, families=list(self.families), collisions=list(self.collisions))
        for p in PRIORITIES:
            for k in KINDS:
                out.layers[p][k] = dict(self.layers[p][k])
        return out


def _entries(path: Path, doc: Any) -> tuple[str, str, dict[str, dict[str, Any]]]:
    if not isinstance(doc, dict) or "entries" not in doc:
        raise InputError(f"{path}: error: a mapping table needs `family`, `kind` and `entries`")
    family = str(doc.get("family") or path.stem)
    kind = str(doc.get("kind", "identifier"))
    if kind not in KINDS:
        raise InputError(f"{path}: error: kind '{kind}' is not one of {', '.join(KINDS)}")
    entries = doc.get("entries") or {}
    if not isinstance(entries, dict):
        raise InputError(f"{path}: error: `entries` must map CUDA names to {{hip: ...}}")
    out: dict[str, dict[str, Any]] = {}
    for name, value in entries.items():
        if isinstance(value, str) or value is None:
            value = {"hip": value}
        if not isinstance(value, dict) or "hip" not in value:
            raise InputError(f"{path}: error: entry '{name}' needs a `hip` field (a name, or null)")
        out[str(name)] = value
    return family, kind, out


@functools.cache
def table_files() -> tuple[Path, ...]:
    return tuple(sorted(MAPS_DIR.glob("*.yaml"))) if MAPS_DIR.is_dir() else ()


@functools.cache
def builtin_tables(direction: Direction) -> MappingTables:
    if direction not in ("cuda->hip", "hip->cuda"):
        raise ValueError(f"unknown direction {direction!r}")
    tables = MappingTables(direction)
    candidates: dict[tuple[str, str], list[tuple[tuple[int, int, int], Mapping]]] = {}  # hip->cuda: (kind, hip)
    policy = load_yaml(Path(__file__).parent / "rules" / "tables.yaml")
    prefixes = tuple(policy.get("prefer_prefix", []))
    fam_rank = {f: i for i, f in enumerate(policy.get("family_order", []))}
    order = 0
    for path in table_files():
        family, kind, entries = _entries(path, load_yaml(path))
        if family not in tables.families:
            tables.families.append(family)
        for cuda, e in entries.items():
            hip = e.get("hip")
            hip = None if hip is None else str(hip)
            rocm = None if e.get("rocm") is None else str(e.get("rocm"))
            note = e.get("note")
            if direction == "cuda->hip":
                tables.add(Mapping(cuda, hip, family, kind, rocm, note, path.name))
                continue
            if not hip or e.get("reverse", True) is False:
                continue  # no HIP name, a dropped header (""), or not meant for the reverse direction
            order += 1
            rank = (0 if cuda.startswith(prefixes) else 1, fam_rank.get(family, len(fam_rank)), order)
            candidates.setdefault((kind, hip), []).append((rank, Mapping(hip, cuda, family, kind, rocm, note, path.name)))
    for (_, hip), found in candidates.items():
        found.sort(key=lambda t: t[0])
        tables.add(found[0][1])
        tables.collisions.extend((hip, found[0][1].target or "", m.target or "") for _, m in found[1:])
    return tables
