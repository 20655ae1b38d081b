"""CUB's block reductions, a library idiom of real kernels:

    typedef cub::BlockReduce<float, 256> BlockReduce;     // or `using BlockReduce = ...;`
    __shared__ typename BlockReduce::TempStorage temp;
    float total = BlockReduce(temp).Sum(v);              // .Sum(v, valid), .Reduce(v, cub::Max()), ...

The result is defined in thread 0 (CUB's contract); the port gives every thread the block's reduction, which
agrees with it there. Every thread of the block must call it (it holds barriers): under a thread-dependent
condition it is refused, as a barrier is. The temporary storage is CUB's business: nothing to port.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from xlate.cir import ctype as ctyping
from xlate.cir import ir
from xlate.translate.triton import comm
from xlate.translate.triton import sym as S
from xlate.translate.triton.sym import Sym
from xlate.translate.triton.values import LiftError

REDUCER = re.compile(r"(?:::)?cub::BlockReduce\s*<\s*([^,>]+?)\s*,\s*([^,>]+?)\s*(?:,.*)?>")
OPS = {"cub::Sum": "sum", "cub::Max": "max", "cub::Min": "min", "Sum": "sum", "Max": "max", "Min": "min"}


@dataclass
class CubTemp:
    """`__shared__ typename R::TempStorage t;`: CUB's scratch space (the port needs none)."""

    name: str


@dataclass
class CubBlockReduce:
    """`R(temp)`: a block reduction object of element type `ctype` for `threads` threads (None: not known)."""

    ctype: str
    threads: int | None


def reducer_type(spelled: str) -> tuple[str, str] | None:
    """(element type, threads along x) of a `cub::BlockReduce<T, N, ...>` spelling; None for any other type."""
    m = REDUCER.fullmatch(" ".join(spelled.split()))
    return (m.group(1).strip(), m.group(2).strip()) if m else None


def reducer_dims(spelled: str) -> list[str]:
    """The block extents a `cub::BlockReduce<T, BLOCK_DIM_X, ALGORITHM, BLOCK_DIM_Y, BLOCK_DIM_Z>` spelling
    names, x first (CUB's defaults for y and z are 1): the reduction covers their product of threads."""
    text = " ".join(spelled.split())
    inner = text[text.index("<") + 1 : text.rindex(">")]
    args, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "," and depth == 0:
            args.append(cur.strip())
            cur = ""
            continue
        depth += (ch in "<(") - (ch in ">)")
        cur += ch
    args.append(cur.strip())
    return [args[1], *args[3:5]]


class Cub:
    """CUB block reductions (mixed into the Lifter)."""

    def cub_reducer(self, spelled: str, loc: ir.Loc) -> CubBlockReduce:
        elem, _ = reducer_type(spelled)  # type: ignore[misc]
        ct = self.resolve_type(ctyping.canonical(elem), loc)
        count: int | None = 1
        for extent in reducer_dims(spelled):
            n = self.data(self.ev_text_int(extent, loc), loc)
            count = count * int(n.value) if n.is_const and count is not None else None
        block = self.real_bx * self.real_by if self.real_bx is not None else None
        if count is not None and block is not None and count != block:
            raise LiftError("XL2003", f"cub::BlockReduce for {count} threads in a block of {block}", loc)
        return CubBlockReduce(ct, count)

    def ev_text_int(self, text: str, loc: ir.Loc) -> Any:
        """A template argument written as a number or a name (a macro, a template value parameter)."""
        if re.fullmatch(r"\d+", text):
            return S.const(int(text), "int")
        if re.fullmatch(r"[A-Za-z_]\w*", text):
            return self.ev(ir.Name(loc, text))
        raise LiftError("XL2003", f"cub::BlockReduce for '{text}' threads", loc)

    def cub_method(self, red: CubBlockReduce, e: ir.MethodCall) -> Sym:
        m = e.method
        if m == "Sum":
            op, rest = "sum", list(e.args[1:])
        elif m == "Reduce" and len(e.args) >= 2:
            fn = e.args[1].fn if isinstance(e.args[1], ir.Call) else getattr(e.args[1], "id", "")
            op = OPS.get(fn.removeprefix("::")) if isinstance(fn, str) else None
            if op is None:
                raise LiftError("XL2003", "cub::BlockReduce::Reduce with an operator other than Sum/Max/Min", e.loc)
            rest = list(e.args[2:])
        else:
            raise LiftError("XL2003", f"cub::BlockReduce::{m}", e.loc)
        guard = self.lane_guard.key() if self.lane_guard is not None else None
        for c in self.full_pred():
            if (c.lanes or c.opaque) and c.key() != guard:
                raise LiftError("XL2015", f"cub::BlockReduce::{m} under a thread-dependent condition", e.loc)
        if not self.nlanes:
            raise LiftError("XL2003", "cub::BlockReduce in a block sized at launch", e.loc)
        v = S.cast(self.data(self.ev(e.args[0]), e.loc), red.ctype)
        if rest:  # only the first `valid` threads contribute
            valid = S.cast(self.data(self.ev(rest[0]), e.loc), "int")
            inside = S.op("lt", "bool", S.cast(self.linear_tid(), "int"), valid)
            v = S.where(inside, v, _identity(op, red.ctype), red.ctype)
        self.idiom(f"cub::BlockReduce::{m} -> block {op}", e.loc)
        return comm.reduce_sym(op, comm.guarded(self, v, op), red.ctype)


def _identity(op: str, ctype: str) -> Sym:
    return S.const(comm.identity(op, ctype), ctype)
