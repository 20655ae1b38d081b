"""What the CUDA -> HIP translator does with one CUDA name, for coverage measurements (bench/hip_table_coverage.py).

Statuses: `mapped` (renamed, or kept on purpose, for the chosen ROCm), `newer` (the HIP name exists only in a
later ROCm), `removed` (gone by the chosen ROCm), `no_equivalent` (the tables say HIP has none), `unknown`
(nothing knows the name).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xlate.translate.hip import intrinsics
from xlate.translate.hip.tables import builtin_tables, newest_rocm, version_status


@dataclass
class Classifier:
    rocm: str
    roc: bool
    structural: frozenset[str]

    def __call__(self, name: str) -> str:
        if name in self.structural:
            return "mapped"
        tables = builtin_tables("cuda->hip", self.roc)
        m = tables.lookup("identifier", name) or tables.lookup("namespace", name)
        if m is None:
            return "unknown"
        if m.target is None:
            return "no_equivalent"
        status = version_status(m, self.rocm)
        return "mapped" if status in ("ok", "deprecated") else status


def structural_names() -> frozenset[str]:
    """Names the structural rules (rules/intrinsics.yaml) rewrite whatever the tables say."""
    r = intrinsics.load_rules()
    names = set(r["shuffles"]) | set(r["legacy_shuffles"]) | set(r["compat_calls"]) | set(r["compat_identifiers"])
    return frozenset(names)


def classifier(rocm: str | None = None, roc: bool = False) -> Callable[[str], str] | Classifier:
    return Classifier(rocm or newest_rocm(), roc, structural_names())
