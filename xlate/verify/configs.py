"""Launch configurations of a Triton port, each verified by the gate before a port may keep it.

A Triton module may declare, per launcher, the launch configurations its launcher chooses from: the module-level
literal `_XL_CONFIGS = {"launcher": [config, ...]}`, the first entry being the default (the rule lifter's ports
declare CUDA's launch first, then configurations running several CUDA blocks per program; see
xlate/translate/triton/launch_configs.py). The contract on the launcher: it launches only configurations of its
list, and with a one-entry list that entry.

So a configuration is verified by restricting the module's table to it alone and putting that module through
the gate like any candidate (the same oracle, fresh cases with poisoned outputs and guard bands, a shrunk
counterexample on failure). A port is written with its table restricted to the configurations that passed;
one that failed is named in the port's header with its counterexample.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from xlate.verdict import Verdict

TABLE = "_XL_CONFIGS"


def _assignment(tree: ast.Module) -> ast.Assign | None:
    found = [s for s in tree.body if isinstance(s, ast.Assign) and len(s.targets) == 1
             and isinstance(s.targets[0], ast.Name) and s.targets[0].id == TABLE]
    return found[-1] if found else None


def declared(text: str) -> dict[str, list[Any]] | None:
    """The module's table (launcher -> configurations), or None when it declares none it can be restricted by
    (no table, or one that is not a literal dict of lists)."""
    try:
        node = _assignment(ast.parse(text))
        table = ast.literal_eval(node.value) if node is not None else None
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # not Python, or not a literal
        return None
    if not isinstance(table, dict) or not all(isinstance(k, str) and isinstance(v, list) and v for k, v in table.items()):
        return None
    return table


def restrict(text: str, keep: dict[str, list[int]], notes: list[str] | None = None) -> str:
    """`text` with the table of each launcher in `keep` cut down to the configurations at those indices (in
    table order); the other launchers' entries are left as they are. `notes` become comment lines above it."""
    tree = ast.parse(text)
    node = _assignment(tree)
    table = declared(text)
    if node is None or table is None:
        return text
    new = {k: ([v[i] for i in sorted(set(keep[k])) if 0 <= i < len(v)] if k in keep else v) for k, v in table.items()}
    rows = "".join(f"    {json.dumps(k)}: [{', '.join(json.dumps(c) for c in v)}],\n" for k, v in new.items())
    lines = text.splitlines(keepends=True)
    end = node.end_lineno or node.lineno
    tail = lines[end - 1][node.end_col_offset or 0 :] if end <= len(lines) else "\n"
    comments = "".join(f"# {line}\n" for note in notes or [] for line in note.splitlines())
    return "".join(lines[: node.lineno - 1]) + comments + f"{TABLE} = {{\n{rows}}}" + (tail or "\n") + "".join(lines[end:])


def describe(config: Any) -> str:
    if isinstance(config, dict):
        return ", ".join(f"{k}={v}" for k, v in config.items())
    return repr(config)


@dataclass
class ConfigOutcome:
    config: Any
    index: int
    verdict: Verdict | None  # None: the default, judged by the kernel's own verdict

    @property
    def verified(self) -> bool:
        return self.verdict is None or self.verdict.status == "verified"

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"index": self.index, "config": self.config,
                             "status": "default (the kernel's verdict)" if self.verdict is None else self.verdict.status}
        if self.verdict is not None and self.verdict.status != "verified":
            d["reason"] = self.verdict.reason
            if self.verdict.counterexample is not None:
                d["counterexample"] = self.verdict.counterexample.to_dict()
        elif self.verdict is not None:
            d["examples"] = self.verdict.examples
        return d


@dataclass
class ConfigReport:
    """What the gate said about each configuration of one launcher."""

    launcher: str
    outcomes: list[ConfigOutcome] = field(default_factory=list)
    note: str = ""  # why configurations other than the default were not verified (the default failed, --no-verify)

    @property
    def kept(self) -> list[int]:
        return [o.index for o in self.outcomes if o.verified]

    @property
    def discarded(self) -> list[ConfigOutcome]:
        return [o for o in self.outcomes if not o.verified]

    def to_dict(self) -> dict[str, Any]:
        return {"launcher": self.launcher, "declared": len(self.outcomes), "kept": self.kept,
                "configs": [o.to_dict() for o in self.outcomes], "note": self.note}

    def header_lines(self) -> list[str]:
        """Lines for the port's header: what was kept, what was discarded and why."""
        kept = [o for o in self.outcomes if o.verified]
        out = [f"launch configurations of {self.launcher}: {len(kept)} of {len(self.outcomes)} kept"
               + (f" ({self.note})" if self.note else " (each verified by the gate)")]
        for o in self.discarded if not self.note else []:  # a note: none was judged, it says why
            assert o.verdict is not None
            why = o.verdict.reason or o.verdict.status
            cx = o.verdict.counterexample
            case = ""
            if cx is not None:
                case = "; case " + ", ".join(f"{k}={v}" for k, v in {**cx.sizes, **cx.scalars}.items())
                if cx.replay:
                    case += f"; replay: {cx.replay}"
            out.append(f"  discarded [{describe(o.config)}]: {o.verdict.status}: {why}{case}"[:400])
        return out


def verify_configs(text: str, launcher: str, judge: Callable[[str], Verdict]) -> ConfigReport | None:
    """Verify every configuration of `launcher` after the default: `judge` runs the gate on a module text (the
    caller's options: oracle, examples, seed, sandbox). The default (index 0) is the kernel's own verdict,
    which the caller obtains on `only(text, launcher, 0)`. None when the module declares no configurations for
    `launcher`."""
    table = declared(text)
    if table is None or launcher not in table:
        return None
    report = ConfigReport(launcher, [ConfigOutcome(table[launcher][0], 0, None)])
    for i, config in enumerate(table[launcher][1:], start=1):
        report.outcomes.append(ConfigOutcome(config, i, judge(only(text, launcher, i))))
    return report


def only(text: str, launcher: str, index: int) -> str:
    """The module with `launcher` restricted to its configuration `index` (what the gate runs to verify it)."""
    return restrict(text, {launcher: [index]})


def unverified(text: str, launcher: str, why: str) -> ConfigReport | None:
    """The report for a launcher whose configurations were not verified (only the default is kept)."""
    table = declared(text)
    if table is None or launcher not in table or len(table[launcher]) < 2:
        return None
    report = ConfigReport(launcher, [ConfigOutcome(table[launcher][0], 0, None)], note=why)
    for i, c in enumerate(table[launcher][1:], start=1):
        report.outcomes.append(ConfigOutcome(c, i, Verdict("unverified", launcher, reason=why)))
    return report


__all__ = ["TABLE", "ConfigOutcome", "ConfigReport", "declared", "describe", "only", "restrict", "unverified",
           "verify_configs"]
