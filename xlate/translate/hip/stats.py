"""What a CUDA<->HIP translation converted, per family, in the spirit of `hipify-perl --print-stats`."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from xlate.parse.source import to_bytes
from xlate.translate.base import Edit

COLUMNS = ("converted", "unsupported", "unknown")


@dataclass
class Stats:
    families: dict[str, Counter[str]] = field(default_factory=dict)  # family -> column -> count
    names: dict[str, Counter[str]] = field(default_factory=lambda: {c: Counter() for c in COLUMNS})

    def count(self, column: str, family: str, name: str) -> None:
        self.families.setdefault(family, Counter())[column] += 1
        self.names[column][name] += 1

    def as_dict(self) -> dict[str, dict[str, int]]:
        return {fam: {c: int(cnt.get(c, 0)) for c in COLUMNS} for fam, cnt in sorted(self.families.items())}

    def meta(self, source: str, edits: list[Edit]) -> dict[str, Any]:
        touched: set[int] = set()
        for e in edits:  # the source lines each edit spans
            touched.update(range(e.line, e.line + e.old.count("\n") + 1))
        return {
            "names": {c: dict(sorted(self.names[c].items())) for c in COLUMNS},
            "total_lines": source.count("\n") + (0 if source.endswith("\n") else 1),
            "changed_lines": len(touched), "total_bytes": len(to_bytes(source)), "edits": len(edits),
        }


def format_stats_table(path: str, direction: str, stats: dict[str, dict[str, int]], meta: dict[str, Any]) -> str:
    """The --stats text: totals, one row per family, then the names that were not converted."""
    total = {c: sum(row.get(c, 0) for row in stats.values()) for c in COLUMNS}
    refs = total["converted"] + total["unsupported"] + total["unknown"]
    pct = 100.0 * total["converted"] / refs if refs else 100.0
    lines_total = meta.get("total_lines", 0)
    lines_changed = meta.get("changed_lines", 0)
    out = [
        f"[xlate] {direction} statistics for '{path}':",
        f"  CONVERTED refs count: {total['converted']}",
        f"  UNSUPPORTED refs count: {total['unsupported']}",
        f"  UNKNOWN refs count: {total['unknown']}",
        f"  CONVERSION %: {pct:.1f}",
        f"  CHANGED lines of code: {lines_changed} of {lines_total}"
        + (f" ({100.0 * lines_changed / lines_total:.1f}%)" if lines_total else ""),
        f"  EDITS: {meta.get('edits', 0)}",
    ]
    if stats:
        width = max(len("family"), *(len(f) for f in stats))
        out.append(f"[xlate] refs by family:\n  {'family'.ljust(width)}  converted  unsupported  unknown")
        for fam, row in sorted(stats.items()):
            out.append(f"  {fam.ljust(width)}  {row.get('converted', 0):>9}  {row.get('unsupported', 0):>11}"
                       f"  {row.get('unknown', 0):>7}")
    names = meta.get("names", {})
    for column in ("unsupported", "unknown"):
        if names.get(column):
            out.append(f"[xlate] {column.upper()} refs by name:")
            out.extend(f"  {n}: {c}" for n, c in names[column].items())
    if names.get("converted"):
        out.append("[xlate] CONVERTED refs by name:")
        out.extend(f"  {n}: {c}" for n, c in names["converted"].items())
    return "\n".join(out)
