"""The CUDA<->HIP mapping tables (xlate/translate/maps/cuda_hip/*.yaml), loaded once per direction.

A table file is one family:
    family: runtime
    kind: identifier            # identifier | header | namespace
    entries:
      cudaMalloc: {hip: hipMalloc, rocm: "1.5"}
      cudaFoo: {hip: null, note: "..."}          # no HIP equivalent
      cudaBar: {hip: hipBaz, reverse: false}     # not used for HIP -> CUDA (another CUDA name owns hipBaz)
      cublasSgemm: {hip: hipblasSgemm, rocm: "1.8.2", roc: rocblas_sgemm, roc_rocm: "1.5.0"}
Version fields are HIP-side ROCm releases (HIPIFY's A/D/R columns): `rocm` added, `deprecated`, `removed`, and
`roc_rocm`, `roc_deprecated`, `roc_removed` for the roc* name. `version_status` judges an entry against the
user's ROCm (`--rocm`; default `newest_rocm()`, the newest release any entry names).
`roc` is the roc* library name HIPIFY's --roc emits (rocBLAS, rocSPARSE, rocRAND, rocSOLVER, MIOpen); with
`roc=True` an entry of a family listed in rules/tables.yaml `roc_families` that has no `roc` name has no target.
HIP -> CUDA uses the same entries inverted (hip* names only); where several CUDA names map to one HIP name,
rules/tables.yaml says which wins (the runtime spelling first) and the others are recorded in `collisions`.
"""

from __future__ import annotations

import functools
import re
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
    rocm: str | None = None  # ROCm release that added the target name
    note: str | None = None
    origin: str = "table"  # table file, or "user:<rules file>"
    priority: str = "builtin"
    deprecated: str | None = None  # ROCm release that deprecated it
    removed: str | None = None  # ROCm release that removed it

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
        if not isinstance(value, dict) or not ("hip" in value or "roc" in value):
            raise InputError(f"{path}: error: entry '{name}' needs a `hip` field (a name, or null)")
        out[str(name)] = value
    return family, kind, out


@functools.cache
def table_files() -> tuple[Path, ...]:
    return tuple(sorted(MAPS_DIR.glob("*.yaml"))) if MAPS_DIR.is_dir() else ()


def version(v: str) -> tuple[int, ...]:
    """"6.2.0" -> (6, 2, 0); "6.2" == "6.2.0"."""
    parts = [int(p) for p in re.findall(r"\d+", str(v))[:3]]
    return tuple(parts + [0] * (3 - len(parts)))


def version_status(m: Mapping, rocm: str | None) -> str:
    """ok | deprecated | newer (added after `rocm`) | removed (by `rocm`); None: no version check."""
    if rocm is None:
        return "ok"
    have = version(rocm)
    if m.rocm and version(m.rocm) > have:
        return "newer"
    if m.removed and version(m.removed) <= have:
        return "removed"
    if m.deprecated and version(m.deprecated) <= have:
        return "deprecated"
    return "ok"


@functools.cache
def policy() -> dict[str, Any]:
    return load_yaml(Path(__file__).parent / "rules" / "tables.yaml")


@functools.cache
def newest_rocm() -> str:
    """The newest ROCm release the tables name (the default --rocm); entries marked `preview: true` (names only a
    technology-preview ROCm has) do not count."""
    best = (0, 0, 0)
    for path in table_files():
        _, _, entries = _entries(path, load_yaml(path))
        for e in entries.values():
            if e.get("preview"):
                continue  # a technology-preview release is never the default target
            for key in ("rocm", "deprecated", "removed", "roc_rocm", "roc_deprecated", "roc_removed"):
                if e.get(key):
                    best = max(best, version(str(e[key])))
    major, minor, patch = best
    return f"{major}.{minor}" + (f".{patch}" if patch else "")


def _opt(e: dict[str, Any], key: str) -> str | None:
    return None if e.get(key) is None else str(e[key])


def _forward(cuda: str, e: dict[str, Any], family: str, kind: str, origin: str, roc: bool) -> Mapping:
    """The cuda->hip Mapping of one entry, hip* or (with roc) roc* target."""
    note = e.get("note")
    if roc and ("roc" in e or family in policy().get("roc_families", {})):
        lib = policy().get("roc_families", {}).get(family, "roc*")
        if "roc" not in e:
            hip = e.get("hip")
            why = f"no {lib} equivalent" + (f" (the hip* library has {hip}: drop --roc)" if hip else "")
            return Mapping(cuda, None, family, kind, None, why, origin)
        r = e["roc"]
        if isinstance(r, dict):
            return Mapping(cuda, _opt(r, "name"), family, kind, _opt(r, "rocm"), r.get("note"), origin,
                           deprecated=_opt(r, "deprecated"), removed=_opt(r, "removed"))
        return Mapping(cuda, None if r is None else str(r), family, kind, _opt(e, "roc_rocm"), e.get("roc_note"),
                       origin, deprecated=_opt(e, "roc_deprecated"), removed=_opt(e, "roc_removed"))
    return Mapping(cuda, _opt(e, "hip"), family, kind, _opt(e, "rocm"), note, origin,
                   deprecated=_opt(e, "deprecated"), removed=_opt(e, "removed"))


@functools.cache
def builtin_tables(direction: Direction, roc: bool = False) -> MappingTables:
    if direction not in ("cuda->hip", "hip->cuda"):
        raise ValueError(f"unknown direction {direction!r}")
    tables = MappingTables(direction)
    candidates: dict[tuple[str, str], list[tuple[tuple[int, int, int], Mapping]]] = {}  # hip->cuda: (kind, hip)
    prefixes = tuple(policy().get("prefer_prefix", []))
    fam_rank = {f: i for i, f in enumerate(policy().get("family_order", []))}
    order = 0
    for path in table_files():
        family, kind, entries = _entries(path, load_yaml(path))
        if family not in tables.families:
            tables.families.append(family)
        for cuda, e in entries.items():
            if direction == "cuda->hip":
                tables.add(_forward(cuda, e, family, kind, path.name, roc))
                continue
            if e.get("reverse", True) is False:
                continue  # not meant for the reverse direction
            roc_name = e.get("roc")
            roc_name = roc_name.get("name") if isinstance(roc_name, dict) else roc_name
            for hip in (e.get("hip"), roc_name):  # hip* names, and roc* ones (a --roc port comes back too)
                if not hip:
                    continue  # no name, or a dropped header ("")
                order += 1
                rank = (0 if cuda.startswith(prefixes) else 1, fam_rank.get(family, len(fam_rank)), order)
                candidates.setdefault((kind, str(hip)), []).append(
                    (rank, Mapping(str(hip), cuda, family, kind, _opt(e, "rocm"), e.get("note"), path.name)))
    for (_, hip), found in candidates.items():
        found.sort(key=lambda t: t[0])
        tables.add(found[0][1])
        tables.collisions.extend((hip, found[0][1].target or "", m.target or "") for _, m in found[1:])
    return tables
