"""Template value parameters the host chooses at run time: `BOOL_SWITCH(n % 4 == 0, kEven, [&] { k<kEven><<<...>>>(...);
})` expands to two launches of one statement, `k<true>` where `n % 4 == 0` and `k<false>` where not. Such launches,
alike in everything but that argument, make the parameter a fuzzing axis (`kEven: choice(1|0)`): the gate compiles
one instantiation per value drawn. The branch conditions that pick a value stay with it as a `where` (`kEven != 1 ||
n % 4 == 0`), so a value is never fuzzed with sizes the program never launches it with; a value whose condition the
spec cannot write is left out."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import sympy as sp

from xlate.model import Function
from xlate.specs.infer.host import Launch

RELATIONS = {sp.Eq: "==", sp.Ne: "!=", sp.Lt: "<", sp.Le: "<=", sp.Gt: ">", sp.Ge: ">="}
MAX_VALUES = 32  # instantiations one axis may list (each is a compile of its own at the gate)


@dataclass
class ValueAxis:
    """A template value parameter the launches give several values: value -> the conditions (one conjunction per
    launch) under which the program launches it."""

    name: str
    index: int
    when: dict[int, list[list[sp.Basic]]] = field(default_factory=dict)


def _int_arg(arg: str) -> int | None:
    a = arg.strip()
    if a in ("true", "false"):
        return int(a == "true")
    try:
        return int(a.rstrip("uUlL"), 0)
    except ValueError:
        return None


def _key(launch: Launch, skip: set[int]) -> tuple[Any, ...]:
    """What must be equal for two launches to be one launch statement differing only in the `skip` arguments."""
    others = tuple(a for i, a in enumerate(launch.template_args) if i not in skip)
    return (launch.where, others, repr(launch.args), repr(launch.grid), repr(launch.block), repr(launch.shmem),
            tuple(launch.chain))


def value_axes(fn: Function, launch: Launch | None, mine: list[Launch]) -> list[ValueAxis]:
    """The template value parameters of `fn` that the launches of its best `launch`'s statement give several
    values, each with the conditions of each value. Axes are kept only while every combination of their values is
    launched (independent switches), so the gate never builds an instantiation the program does not."""
    if launch is None:
        return []
    axes: list[ValueAxis] = []
    for i, t in enumerate(fn.template_params):
        if t.kind != "value" or i >= len(launch.template_args):
            continue
        group = [x for x in mine if len(x.template_args) == len(launch.template_args) and _key(x, {i}) == _key(launch, {i})]
        values = [_int_arg(x.template_args[i]) for x in group]
        if None in values or len(set(values)) < 2 or len(set(values)) > MAX_VALUES:
            continue
        axes.append(ValueAxis(t.name, i))
    kept: list[ValueAxis] = []
    for ax in axes:  # each combination of the kept axes' values must be a launch of its own
        trial = [*kept, ax]
        skip = {a.index for a in trial}
        group = [x for x in mine if len(x.template_args) == len(launch.template_args) and _key(x, skip) == _key(launch, skip)]
        seen = {tuple(_int_arg(x.template_args[a.index]) for a in trial) for x in group}
        per_axis = [sorted({c[k] for c in seen}, key=lambda v: -v) for k in range(len(trial))]  # type: ignore[arg-type, return-value]
        if all(combo in seen for combo in itertools.product(*per_axis)):
            kept.append(ax)
    if not kept:
        return []
    skip = {a.index for a in kept}
    group = [x for x in mine if len(x.template_args) == len(launch.template_args) and _key(x, skip) == _key(launch, skip)]
    common = set.intersection(*(set(x.conds) for x in group)) if group else set()
    for ax in kept:
        for x in group:
            v = _int_arg(x.template_args[ax.index])
            ax.when.setdefault(v, []).append([c for c in x.conds if c not in common])  # type: ignore[arg-type]
    return kept


def condition_text(c: sp.Basic, rewrite: Any) -> str | None:
    """A branch condition as a spec expression, its values rewritten by `rewrite` (an expression of the program
    -> spec text, or None where the spec cannot name it); None where the condition cannot be written."""
    if c is sp.true:
        return "1"
    if isinstance(c, sp.Not):
        inner = condition_text(c.args[0], rewrite)
        return f"!({inner})" if inner is not None else None
    if isinstance(c, (sp.And, sp.Or)):
        parts = [condition_text(a, rewrite) for a in c.args]
        if any(p is None for p in parts):
            return None
        return f" {'&&' if isinstance(c, sp.And) else '||'} ".join(f"({p})" for p in parts)
    op = next((o for cls, o in RELATIONS.items() if isinstance(c, cls)), None)
    if op is None:
        return None
    lhs, rhs = rewrite(c.lhs), rewrite(c.rhs)
    return f"{lhs} {op} {rhs}" if lhs is not None and rhs is not None else None


def axis_items(ax: ValueAxis, rewrite: Any) -> tuple[list[int], list[str]]:
    """The axis's values and its `where` clauses: `NAME != V || (COND)` for each value launched only under a
    condition (parenthesised: the clauses are joined with `and`). A value under a condition the spec cannot write
    is dropped."""
    values: list[int] = []
    clauses: list[str] = []
    for v in sorted(ax.when, key=lambda x: -x):
        conj = []
        for conds in ax.when[v]:
            parts = [condition_text(c, rewrite) for c in conds]
            conj.append(None if any(p is None for p in parts) else parts[0] if len(parts) == 1 else " && ".join(
                f"({p})" for p in parts))
        if any(c is None for c in conj):
            continue
        values.append(v)
        if all(conj):  # every launch of v is conditional: v only where one of them holds
            either = " || ".join(f"({c})" if len(conj) > 1 else c for c in conj)
            clauses.append(f"({ax.name} != {v} || {either})")
    return values, clauses
