"""Coded diagnostics: the one record every stage reports findings with, the one catalogue of codes, and the one
factory that builds a finding from its code.

Catalogue entries (xlate/data/diagnostics/*.yaml, and the HIP translator's rules/diagnostics.yaml) share one
schema:

    XL2003:
      severity: error            # error | warning | note (an error blocks the rule port of the kernel)
      message: "...{field}..."   # str.format template over the fields the emitting code passes
      why: "..."                 # optional: one line on the consequence (may use the fields too)
      needs_llm: true            # optional: the rules cannot port this construct (`--engine auto` asks the LLM)
      name: rule-name            # optional: the rule that emits it (the diagnostic's `rule` by default)
      fields: [field, ...]       # optional: the fields, for the documentation

Codes by range: XL0xxx front end, XL1xxx CUDA<->HIP, XL2xxx Triton lifting, XL3xxx AscendC, XL4xxx the LLM
translator, XL6xxx migration. docs/diagnostics.md is generated from the catalogue (`python -m xlate.diagnostics`).
"""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass
from typing import Any, Literal

from xlate.errors import Located
from xlate.resources import data_dir, load_yaml, package_file

Severity = Literal["error", "warning", "note"]
SEVERITIES = ("error", "warning", "note")
# Catalogue files outside xlate/data/diagnostics/: (package, file) kept beside the translator that owns them.
OWNED_CATALOGUES = (("xlate.translate.hip", "rules/diagnostics.yaml"),)
RANGES = {"XL0": "front end (reading sources)", "XL1": "CUDA <-> HIP translator", "XL2": "CUDA -> Triton lifter",
          "XL3": "AscendC translator and static checker", "XL4": "LLM translator", "XL6": "xlate migrate"}


@dataclass
class Diagnostic:
    """A coded finding about the source or the port, located in the source file (codes: see the module doc)."""

    code: str
    severity: Severity
    message: str
    path: str
    line: int
    col: int
    kernel: str | None = None
    rule: str | None = None  # the rule or table entry that produced it
    why: str | None = None  # one line on the consequence
    needs_llm: bool = False  # the rules cannot produce a correct port for this construct

    def format(self) -> str:
        why = f" ({self.why})" if self.why else ""
        return f"{self.path}:{self.line}:{self.col}: {self.severity}: {self.message}{why} [{self.code}]"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _check(origin: str, table: dict[str, dict[str, Any]]) -> None:
    allowed = {"severity", "message", "why", "needs_llm", "name", "fields"}
    for code, entry in table.items():
        if entry.get("severity") not in SEVERITIES or not isinstance(entry.get("message"), str):
            raise ValueError(f"{origin}: {code} needs a severity ({' | '.join(SEVERITIES)}) and a message")
        if set(entry) - allowed:
            raise ValueError(f"{origin}: {code} has fields outside the schema: {sorted(set(entry) - allowed)}")


@functools.cache
def catalogue() -> dict[str, dict[str, Any]]:
    """Every code xlate can emit -> its entry (one schema; a code defined twice is an error)."""
    files = [(str(p.relative_to(data_dir())), p) for p in sorted((data_dir() / "diagnostics").glob("*.yaml"))]
    files += [(f"{pkg}/{name}", package_file(pkg, name)) for pkg, name in OWNED_CATALOGUES]
    table: dict[str, dict[str, Any]] = {}
    for origin, path in files:
        part: dict[str, dict[str, Any]] = load_yaml(path)
        _check(origin, part)
        twice = set(part) & set(table)
        if twice:
            raise ValueError(f"{origin}: codes defined twice: {sorted(twice)}")
        table.update(part)
    return table


def entry(code: str) -> dict[str, Any]:
    found = catalogue().get(code)
    if found is None:
        raise KeyError(f"diagnostic code {code} is not catalogued (xlate/data/diagnostics/)")
    return found


def make(code: str, path: str, line: int = 1, col: int = 1, *, kernel: str | None = None, rule: str | None = None,
         severity: Severity | None = None, **fields: Any) -> Diagnostic:
    """The Diagnostic for `code`, its message (and why) filled from `fields`."""
    e = entry(code)
    why = e.get("why")
    fill = {"kernel": kernel, **fields}  # every template may name the kernel
    return Diagnostic(code=code, severity=severity or e["severity"], message=e["message"].format(**fill), path=path,
                      line=line, col=col, kernel=kernel, rule=rule if rule is not None else e.get("name"),
                      why=why.format(**fill) if why else None, needs_llm=bool(e.get("needs_llm", False)))


def located(code: str, path: str, line: int, col: int, **fields: Any) -> Located:
    """A front-end finding (a `file:line:col` line on the unit, not tied to a port) for `code`."""
    e = entry(code)
    why = f" ({e['why'].format(**fields)})" if e.get("why") else ""
    return Located(path, line, col, e["message"].format(**fields) + why, severity=e["severity"], code=code)


def render_markdown() -> str:
    """docs/diagnostics.md: every code with its severity, message template and consequence."""
    out = ["# Diagnostics", "",
           "Every code xlate emits, generated from the catalogue (`python -m xlate.diagnostics > docs/diagnostics.md`;",
           "a test checks that this file, the catalogue and the codes in the source agree). `{name}` marks a field",
           "filled in where the code is emitted. *needs LLM*: the rule translators cannot port the construct;",
           "`--engine auto` hands the kernel to the LLM translator when a model is configured.", ""]
    table = catalogue()
    for prefix, title in RANGES.items():
        codes = sorted(c for c in table if c.startswith(prefix))
        if not codes:
            continue
        out += [f"## {prefix}xxx: {title}", "", "| code | severity | message | consequence |", "| --- | --- | --- | --- |"]
        for code in codes:
            e = table[code]
            sev = e["severity"] + (", needs LLM" if e.get("needs_llm") else "")
            cells = [code, sev, e["message"], e.get("why") or ""]
            out.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    print(render_markdown(), end="")
