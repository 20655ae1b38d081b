"""Spec inference: each kernel's spec from the program it belongs to.

Host code first (launch sites followed through launchers, their callers and `main`; allocations behind every
pointer argument; the values the program sets), then the kernel's own code (guards, index expressions, loop
bounds) for what the host code does not say, then defaults. Each item carries its origin; what nothing could
fill is a hole with a hint.
"""

from __future__ import annotations

import hashlib
import os
import threading
from dataclasses import dataclass, field

from xlate.model import Function, KernelUnit
from xlate.specs.infer.program import Program, program_for
from xlate.specs.model import Origin


@dataclass
class Inference:
    items: dict[str, tuple[str, Origin]] = field(default_factory=dict)
    holes: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    floors: set[str] = field(default_factory=set)  # `where` clauses `n >= 3` that may start n's range instead

    def add_where(self, clauses: list[str], origin: Origin) -> None:
        """Join `clauses` to the spec's `where` item (each once, in order); `origin` names the item if it is new."""
        old = self.items.get("where")
        text = " and ".join(dict.fromkeys(([old[0].split(":", 1)[1].strip()] if old else []) + clauses))
        self.items["where"] = (f"where: {text}", old[1] if old else origin)


_PROGRAMS: dict[tuple[str, str, tuple[str, ...]], tuple[Program, object]] = {}
_LOCK = threading.Lock()


def _program(unit: KernelUnit, context: list[KernelUnit] | None) -> tuple[Program, object]:
    ctx = tuple(sorted(os.path.abspath(u.path) + hashlib.sha1(u.text.encode()).hexdigest() for u in context)) if context else (
        ("<dir>",) if os.path.isfile(unit.path) else ())
    key = (os.path.abspath(unit.path), hashlib.sha1(unit.text.encode("utf-8", "replace")).hexdigest(), ctx)
    if ctx == ("<dir>",):
        from xlate.specs.infer.program import context_paths

        stamps = []
        for p in context_paths(unit.path):
            try:
                st = os.stat(p)
                stamps.append(f"{p}:{st.st_mtime}:{st.st_size}")
            except OSError:
                continue
        key = (key[0], key[1], tuple(stamps))
    with _LOCK:
        hit = _PROGRAMS.get(key)
    if hit is not None:
        return hit
    from xlate.specs.infer.host import host_launches

    program = program_for(unit, context)
    facts = host_launches(program)
    with _LOCK:
        if len(_PROGRAMS) > 64:
            _PROGRAMS.clear()
        _PROGRAMS[key] = (program, facts)
    return program, facts


def infer_kernel(unit: KernelUnit, fn: Function, context: list[KernelUnit] | None = None) -> Inference:
    """Every item of `fn`'s spec that the program shows, with its origin; holes for the rest."""
    from xlate.specs.infer.fills import apply_fills
    from xlate.specs.infer.kernelspec import infer_from_program

    program, facts = _program(unit, context)
    inf = infer_from_program(unit, fn, program, facts)
    apply_fills(fn, program, facts[0], inf, facts[2].const_values)  # what the host writes before every launch
    return inf


def type_resolver(unit: KernelUnit, context: list[KernelUnit] | None = None):
    """A function from a C type to its definition through the program's typedefs and aliases; its `aggregate`
    gives (scalar type, count) for by-value types made of numbers of one type (float3, a struct of floats)."""
    from xlate.specs.infer.kernel import aggregate_of

    program, _ = _program(unit, context)

    def resolve(ctype: str) -> str:
        return program.resolve_type(ctype)

    resolve.aggregate = lambda ctype: aggregate_of(program, ctype)  # type: ignore[attr-defined]
    return resolve


def infer_specs(unit: KernelUnit, context_units: list[KernelUnit] | None = None) -> dict[str, Inference]:
    """Inference for every kernel of `unit`, reading `context_units` (or the files beside it) as the program."""
    return {k.name: infer_kernel(unit, k, context_units) for k in unit.kernels}


__all__ = ["Inference", "infer_kernel", "infer_specs"]
