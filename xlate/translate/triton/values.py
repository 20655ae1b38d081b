"""Abstract values of the lifter beside plain syms: pointers, CUDA vector structs, cooperative groups, constant
and per-thread arrays, and the error every lifting failure raises."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from xlate.cir import ir
from xlate.translate.triton.sym import Sym


class LiftError(Exception):
    """A construct the lifter cannot port faithfully: becomes a blocking XL2xxx diagnostic."""

    def __init__(self, code: str, what: str, loc: ir.Loc | None = None):
        super().__init__(what)
        self.code = code
        self.what = what
        self.loc = loc


@dataclass
class PtrVal:
    """A pointer: `base` (a pointer parameter, or a shared array) plus an element offset."""

    base: Any  # Sym (global pointer parameter) or SharedArr
    offset: Sym
    elem: ir.CType  # the pointee type
    root: str  # the parameter (or array) it derives from

    @property
    def shared(self) -> bool:
        from xlate.translate.triton.comm import SharedArr

        return isinstance(self.base, SharedArr)


@dataclass
class StructVal:
    ctype: str
    fields: dict[str, Any]


@dataclass
class CGroup:
    kind: str  # block | tile
    size: int = 0


@dataclass
class ConstArray:
    """A `__constant__` array with an initialiser: indexed by compile-time constants only."""

    name: str
    ctype: str
    values: list[float | int]


@dataclass
class LocalArray:
    """A per-thread array with compile-time-constant indexing (scalarised)."""

    ctype: str
    size: int
    slots: dict[int, Any] = field(default_factory=dict)


@dataclass
class TypeVal:
    """A typedef or template type parameter in scope: its (possibly symbolic) C spelling."""

    ctype: str


Val = Any  # Sym | PtrVal | StructVal | CGroup | ConstArray | LocalArray | SharedArr | LaneTokens | SharedRead


def is_sym(v: Any) -> bool:
    return isinstance(v, Sym)
