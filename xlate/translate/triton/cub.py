"""CUB's block and warp reductions, loads and stores, library idioms of real kernels:

    typedef cub::BlockReduce<float, 256> BlockReduce;     // or `using BlockReduce = ...;`
    __shared__ typename BlockReduce::TempStorage temp;
    float total = BlockReduce(temp).Sum(v);              // .Sum(v, valid), .Reduce(v, cub::Max()), ...

The result is defined in thread 0 (CUB's contract); the port gives every thread the block's reduction, which
agrees with it there. Every thread of the block must call it (it holds barriers): under a thread-dependent
condition it is refused, as a barrier is. The temporary storage is CUB's business: nothing to port.
`cub::WarpReduce<T[, N]>(temp[w]).Sum(v)` alike reduces each aligned group of N threads (32 by default), defined
in the group's first thread; a condition around it must be the same on all threads of a group.

    typedef cub::BlockLoad<float, 128, 4> Load;           // BlockStore alike; `using namespace cub;` spellings too
    Load(temp).Load(p, items, valid, oob);               // Store(temp).Store(p, items, valid)

Every algorithm but the striped one leaves item j of thread t at element t * ITEMS + j of the block's segment
(the blocked arrangement; the striped one at j * THREADS + t): the port reads or writes those elements of the
thread's local array, the ones at or past `valid` skipped (a load sets them to `oob` first where it is given).
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
from xlate.translate.triton.values import LiftError, LocalArray, PtrVal

REDUCER = re.compile(r"(?:::)?cub::BlockReduce\s*<\s*([^,>]+?)\s*,\s*([^,>]+?)\s*(?:,.*)?>")
WARP_REDUCER = re.compile(r"(?:::)?cub::WarpReduce\s*<\s*([^,>]+?)\s*(?:,\s*([^,>]+?)\s*)?(?:,.*)?>")
BLOCK_IO = re.compile(r"(?:::)?(?:cub::)?Block(Load|Store)\s*<(.+)>")
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


@dataclass
class CubWarpReduce:
    """`R(temp[w])` of a `cub::WarpReduce<T, LOGICAL_WARP_THREADS>`: a reduction over each aligned group of
    `width` threads (32 by default), defined in the group's first thread (the port gives it to every one)."""

    ctype: str
    width: int


def warp_reducer_type(spelled: str) -> tuple[str, str] | None:
    """(element type, logical warp threads) of a `cub::WarpReduce<T[, N]>` spelling; None for any other type."""
    m = WARP_REDUCER.fullmatch(" ".join(spelled.split()))
    return (m.group(1).strip(), (m.group(2) or "32").strip()) if m else None


def reducer_type(spelled: str) -> tuple[str, str] | None:
    """(element type, threads along x) of a `cub::BlockReduce<T, N, ...>` spelling; None for any other type."""
    m = REDUCER.fullmatch(" ".join(spelled.split()))
    return (m.group(1).strip(), m.group(2).strip()) if m else None


@dataclass
class CubBlockIO:
    """`L(temp)` of a `cub::BlockLoad<T, THREADS, ITEMS, ALGORITHM, ...>` (or BlockStore): `items` per thread,
    element j of thread t at t * items + j of the block's segment, or j * threads + t where `striped`."""

    kind: str  # Load | Store
    ctype: str
    threads: int
    items: int
    striped: bool


def is_cub_type(spelled: str) -> bool:
    """Whether a type spelling is one of the CUB block collectives this module ports."""
    return reducer_type(spelled) is not None or io_args(spelled) is not None or warp_reducer_type(spelled) is not None


def io_args(spelled: str) -> tuple[str, list[str]] | None:
    """(Load | Store, template arguments) of a `cub::BlockLoad<...>` / `BlockStore<...>` spelling; None."""
    m = BLOCK_IO.fullmatch(" ".join(spelled.split()))
    if m is None:
        return None
    args = _template_args(spelled)
    return (m.group(1), args) if len(args) >= 3 else None


def reducer_dims(spelled: str) -> list[str]:
    """The block extents a `cub::BlockReduce<T, BLOCK_DIM_X, ALGORITHM, BLOCK_DIM_Y, BLOCK_DIM_Z>` spelling
    names, x first (CUB's defaults for y and z are 1): the reduction covers their product of threads."""
    args = _template_args(spelled)
    return [args[1], *args[3:5]]


def _template_args(spelled: str) -> list[str]:
    """The top-level template arguments of a spelling `N<a, b<c, d>, e>`."""
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
    return args


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

    def cub_io(self, spelled: str, loc: ir.Loc) -> CubBlockIO:
        kind, args = io_args(spelled)  # type: ignore[misc]
        ct = self.resolve_type(ctyping.canonical(args[0]), loc)
        algorithm = args[3].rsplit("::", 1)[-1] if len(args) > 3 else ""
        dims = [args[1], *args[4:6]]
        counts = []
        for text in [*dims, args[2]]:
            n = self.data(self.ev_text_int(text, loc), loc)
            if not n.is_const:
                raise LiftError("XL2003", f"cub::Block{kind} with a run-time extent '{text}'", loc)
            counts.append(int(n.value))
        threads = 1
        for c in counts[:-1]:
            threads *= c
        block = self.real_bx * self.real_by if self.real_bx is not None else None
        if block is None or threads != block:
            raise LiftError("XL2003", f"cub::Block{kind} for {threads} threads in a block of {block}", loc)
        return CubBlockIO(kind, ct, threads, counts[-1], algorithm.endswith("_STRIPED"))

    def cub_io_method(self, io: CubBlockIO, e: ir.MethodCall) -> Sym:
        """`.Load(p, items[, valid[, oob]])` / `.Store(p, items[, valid])`: each of the thread's items read
        from or written to its element of the segment at `p`, as assignments of the kernel would be."""
        if e.method != io.kind or not 2 <= len(e.args) <= (4 if io.kind == "Load" else 3):
            raise LiftError("XL2003", f"cub::Block{io.kind}::{e.method} with {len(e.args)} arguments", e.loc)
        guard = self.lane_guard.key() if self.lane_guard is not None else None
        for c in self.full_pred():
            if (c.lanes or c.opaque) and c.key() != guard:
                raise LiftError("XL2015", f"cub::Block{io.kind} under a thread-dependent condition", e.loc)
        items = e.args[1]
        arr = self.lookup(items.id) if isinstance(items, ir.Name) else None
        if arr is None or not isinstance(arr.val, LocalArray) or arr.val.dims or arr.val.size < io.items:
            raise LiftError("XL2003", f"cub::Block{io.kind} of items other than a local array of {io.items}", e.loc)
        loc = e.loc
        self.push_scope()
        try:
            tid = ir.Name(loc, "__xl_cub_tid")
            self.bind(tid.id, ir.CType("int"), S.cast(self.linear_tid(), "int"))
            ptr = ir.Name(loc, "__xl_cub_ptr")
            p = self.ev(e.args[0])
            if not isinstance(p, PtrVal):
                raise LiftError("XL2013", f"cub::Block{io.kind} of a pointer the lifter cannot follow", loc)
            self.bind(ptr.id, ir.CType(p.elem.base, 1), p)
            valid = None
            if len(e.args) > 2:
                valid = ir.Name(loc, "__xl_cub_valid")
                self.bind(valid.id, ir.CType("int"), S.cast(self.data(self.ev(e.args[2]), loc), "int"))
            oob = None
            if len(e.args) > 3:
                oob = ir.Name(loc, "__xl_cub_oob")
                self.bind(oob.id, ir.CType(arr.val.ctype), self.data(self.ev(e.args[3]), loc))
            stmts: list[ir.Stmt] = []
            for j in range(io.items):
                at = _io_index(loc, tid, j, io)
                mine = ir.Index(loc, items, ir.Num(loc, j, "int"))
                there = ir.Index(loc, ptr, at)
                move = ir.Assign(loc, mine, "=", there) if io.kind == "Load" else ir.Assign(loc, there, "=", mine)
                if oob is not None:
                    stmts.append(ir.ExprStmt(loc, ir.Assign(loc, mine, "=", oob)))
                step: ir.Stmt = ir.ExprStmt(loc, move)
                if valid is not None:
                    step = ir.If(loc, ir.Binary(loc, "<", at, valid), (step,))
                stmts.append(step)
            self.stmts(tuple(stmts))
        finally:
            self.pop_scope()
        self.idiom(f"cub::Block{io.kind} -> {'striped' if io.striped else 'blocked'} per-thread "
                   f"{'loads' if io.kind == 'Load' else 'stores'}", e.loc)
        return S.const(0, "int")

    def ev_text_int(self, text: str, loc: ir.Loc) -> Any:
        """A template argument written as a number or a name (a macro, a template value parameter)."""
        if re.fullmatch(r"\d+", text):
            return S.const(int(text), "int")
        if re.fullmatch(r"[A-Za-z_]\w*", text):
            return self.ev(ir.Name(loc, text))
        raise LiftError("XL2003", f"cub::BlockReduce for '{text}' threads", loc)

    def cub_warp_reducer(self, spelled: str, loc: ir.Loc) -> CubWarpReduce:
        elem, width = warp_reducer_type(spelled)  # type: ignore[misc]
        n = self.data(self.ev_text_int(width, loc), loc)
        w = int(n.value) if n.is_const else 0
        if w <= 0 or w > 32 or w & (w - 1):
            raise LiftError("XL2003", f"cub::WarpReduce of {width} threads (not a power of two up to 32)", loc)
        return CubWarpReduce(self.resolve_type(ctyping.canonical(elem), loc), w)

    def cub_warp_method(self, red: CubWarpReduce, e: ir.MethodCall) -> Sym:
        """`.Sum(v[, valid])` / `.Reduce(v, op[, valid])`: the reduction over each group of `width` threads (only
        its first `valid` threads contributing). Every thread of a group must call it: a condition around it must
        be the same on all of a group's threads (`if (row >= n) return;` with row a warp's)."""
        m = e.method
        op, rest = self._reduce_op(e, "cub::WarpReduce")
        w = red.width
        if not self.nlanes or self.nlanes % w or (self.by > 1 and self.bx % w):
            raise LiftError("XL2003", f"cub::WarpReduce of {w} threads in a block of {self.nlanes or 'launch-time'} "
                                      "lanes whose rows hold no whole groups", e.loc)
        guard = self.lane_guard.key() if self.lane_guard is not None else None
        for c in self.full_pred():
            if (c.lanes or c.opaque) and c.key() != guard and (c.opaque or not comm.segment_uniform(self, c, w)):
                raise LiftError("XL2015", f"cub::WarpReduce::{m} under a condition the threads of a warp may not "
                                          "share", e.loc)
        v = S.cast(self.data(self.ev(e.args[0]), e.loc), red.ctype)
        if rest:  # only the group's first `valid` threads contribute
            valid = S.cast(self.data(self.ev(rest[0]), e.loc), "int")
            rank = S.op("mod", "int", S.cast(self.linear_tid(), "int"), S.const(w, "int"))
            v = S.where(S.op("lt", "bool", rank, valid), v, _identity(op, red.ctype), red.ctype)
        self.idiom(f"cub::WarpReduce::{m} -> {op} over each {w} threads", e.loc)
        return comm.segreduce_sym(op, w, comm.guarded(self, v, op), red.ctype)

    def _reduce_op(self, e: ir.MethodCall, what: str) -> tuple[str, list[ir.Expr]]:
        """(sum | max | min, the arguments after the value and operator) of `.Sum(v, ...)` / `.Reduce(v, op, ...)`."""
        if e.method == "Sum" and e.args:
            return "sum", list(e.args[1:])
        if e.method == "Reduce" and len(e.args) >= 2:
            fn = e.args[1].fn if isinstance(e.args[1], ir.Call) else getattr(e.args[1], "id", "")
            op = OPS.get(fn.removeprefix("::")) if isinstance(fn, str) else None
            if op is None:
                raise LiftError("XL2003", f"{what}::Reduce with an operator other than Sum/Max/Min", e.loc)
            return op, list(e.args[2:])
        raise LiftError("XL2003", f"{what}::{e.method}", e.loc)

    def cub_method(self, red: CubBlockReduce, e: ir.MethodCall) -> Sym:
        m = e.method
        op, rest = self._reduce_op(e, "cub::BlockReduce")
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


def _io_index(loc: ir.Loc, tid: ir.Expr, j: int, io: CubBlockIO) -> ir.Expr:
    """The segment element of item j of thread `tid`: tid * items + j (blocked) or j * threads + tid (striped)."""
    if io.striped:
        return ir.Binary(loc, "+", ir.Num(loc, j * io.threads, "int"), tid)
    return ir.Binary(loc, "+", ir.Binary(loc, "*", tid, ir.Num(loc, io.items, "int")), ir.Num(loc, j, "int"))


def _identity(op: str, ctype: str) -> Sym:
    return S.const(comm.identity(op, ctype), ctype)
