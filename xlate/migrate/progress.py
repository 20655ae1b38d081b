"""The live progress display of `xlate migrate` (rich, on stderr): a bar and counts per status."""

from __future__ import annotations

from collections import Counter
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

STYLE = {"verified": "green", "rejected": "red", "unverified": "yellow", "skipped": "yellow", "not translated": "magenta",
         "error": "bold red", "rules": "green", "llm": "magenta", "unsupported": "red", "cached": "cyan"}


class MigrateProgress:
    def __init__(self, total: int, enabled: bool = True, label: str = "porting"):
        self.counts: Counter[str] = Counter()
        self.enabled = enabled
        self.progress = Progress(TextColumn(f"[bold]{label}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                 TextColumn("{task.fields[counts]}"), console=Console(stderr=True), transient=False,
                                 disable=not enabled)
        self.task_id = self.progress.add_task(label, total=total, counts="")

    def __enter__(self) -> MigrateProgress:
        self.progress.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.progress.stop()

    def advance(self, result: dict[str, Any], cached: bool = False) -> None:
        for k in result.get("kernels", []):
            self.counts[k["status"]] += 1
        if not result.get("kernels") and result.get("status") == "error":
            self.counts["error"] += 1
        if cached:
            self.counts["cached"] += 1
        text = "  ".join(f"[{STYLE.get(s, 'white')}]{s} {n}[/]" for s, n in sorted(self.counts.items()))
        self.progress.update(self.task_id, advance=1, counts=text)
