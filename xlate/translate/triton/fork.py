"""Undoable state: every field of a stateful dataclass of the lifter declares how a fork saves and restores it.

The lifter runs parts of a kernel ahead of time (dry runs that find loop-carried kinds, trip counts, trials of
an idiom) and then goes back. `save(obj)` records what `restore(obj, saved)` needs to put `obj` back exactly;
a field without a policy makes `save` fail, so a new field cannot silently survive a dry run.

Policies (a field's metadata: `field(default=0, metadata=VALUE)`):
  value     an immutable value (int, bool, tuple, a Sym): kept as it was
  copy      a list, dict or set: a shallow copy
  scopes    a list of dicts: each dict copied
  truncate  an append-only list: its length (what a dry run appended is dropped)
  in place  a list of stateful objects that values and Python frames hold: the list, and each object restored
            in place by its own policies (identity is kept)
  nested    one stateful object held here: restored in place by its own policies
  shared    deliberately not undone: the field says why
"""

from __future__ import annotations

from dataclasses import Field, fields
from types import MappingProxyType
from typing import Any

POLICY = "fork"
VALUE = MappingProxyType({POLICY: "value"})
COPY = MappingProxyType({POLICY: "copy"})
SCOPES = MappingProxyType({POLICY: "scopes"})
TRUNCATE = MappingProxyType({POLICY: "truncate"})
IN_PLACE = MappingProxyType({POLICY: "in place"})
NESTED = MappingProxyType({POLICY: "nested"})
SHARED = MappingProxyType({POLICY: "shared"})


def _policy(obj: Any, f: Field) -> str:
    kind = f.metadata.get(POLICY)
    if kind is None:
        raise TypeError(f"{type(obj).__name__}.{f.name} declares no fork policy (xlate/translate/triton/fork.py)")
    return kind


def save(obj: Any) -> dict[str, Any]:
    """What `restore` needs to put `obj` back as it is now."""
    out: dict[str, Any] = {}
    for f in fields(obj):
        kind = _policy(obj, f)
        v = getattr(obj, f.name)
        if kind == "copy":
            out[f.name] = type(v)(v)
        elif kind == "scopes":
            out[f.name] = [dict(s) for s in v]
        elif kind == "truncate":
            out[f.name] = len(v)
        elif kind == "in place":
            out[f.name] = (list(v), [save(o) for o in v])
        elif kind == "nested":
            out[f.name] = save(v)
        elif kind == "value":
            out[f.name] = v
    return out


def restore(obj: Any, saved: dict[str, Any]) -> None:
    """Put `obj` back as it was when `saved` was taken."""
    for f in fields(obj):
        kind = _policy(obj, f)
        if kind == "shared":
            continue
        v = saved[f.name]
        if kind == "truncate":
            del getattr(obj, f.name)[v:]
        elif kind == "in place":
            objs, states = v
            for o, s in zip(objs, states):
                restore(o, s)
            setattr(obj, f.name, list(objs))
        elif kind == "nested":
            restore(getattr(obj, f.name), v)
        elif kind == "copy":
            setattr(obj, f.name, type(v)(v))  # `saved` stays valid for another restore
        elif kind == "scopes":
            setattr(obj, f.name, [dict(s) for s in v])
        else:
            setattr(obj, f.name, v)
