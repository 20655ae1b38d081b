"""Structural idioms the lifter turns into Triton's block primitives beyond what comm.py proves.

Tiled matmul: an unrollable loop `for (k = 0; k < K; ++k) acc += X * Y;` whose X depends on the thread's row
(threadIdx.y) and k only and Y on k and the thread's column (threadIdx.x) only -- typically shared-memory tile
reads, which forwarding resolves to global loads -- is the inner product of a [BY, K] tile with a [K, BX] tile:
`acc = tl.dot(X_tile, Y_tile, acc)`. The check is on the values' dependences, not on names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xlate.cir import ir
from xlate.translate.triton import sym as S
from xlate.translate.triton.emit import Ctx
from xlate.translate.triton.sym import Sym
from xlate.translate.triton.values import LiftError

if TYPE_CHECKING:
    from xlate.translate.triton.host import LoopHost

MIN_DOT = 16  # tl.dot needs every dimension >= 16


def _accumulation(body: tuple[ir.Stmt, ...]) -> tuple[str, ir.Expr, ir.Expr] | None:
    """(acc, X, Y) of a body that is exactly `acc += X * Y` (or `acc = acc + X * Y`)."""
    if len(body) != 1 or not isinstance(body[0], ir.ExprStmt) or not isinstance(body[0].expr, ir.Assign):
        return None
    a = body[0].expr
    if not isinstance(a.target, ir.Name):
        return None
    prod: ir.Expr | None = None
    if a.op == "+=":
        prod = a.value
    elif a.op == "=" and isinstance(a.value, ir.Binary) and a.value.op == "+":
        if isinstance(a.value.left, ir.Name) and a.value.left.id == a.target.id:
            prod = a.value.right
        elif isinstance(a.value.right, ir.Name) and a.value.right.id == a.target.id:
            prod = a.value.left
    if not (isinstance(prod, ir.Binary) and prod.op == "*"):
        return None
    return a.target.id, prod.left, prod.right


def try_dot(L: LoopHost, s: ir.For) -> bool:
    acc_pattern = _accumulation(s.body)
    if acc_pattern is None or L.by < MIN_DOT or L.bx < MIN_DOT:
        return False
    v = L.loop_var(s)
    can = _const_range(L, s, v)
    if can is None:
        return False
    K = can
    acc_name, xe, ye = acc_pattern
    b = L.lookup(acc_name)
    if b is None or b.ctype.ptr or L.resolve_type(b.ctype.base, s.loc) != "float" or K < MIN_DOT or K & (K - 1):
        return False
    if any(c.lanes or c.opaque for c in L.full_pred()):
        return False  # per-thread conditions would not fit the tile shapes
    fork = L.st.fork()
    enabled = L.em.enabled
    L.em.enabled = False
    L.st.defer += 1
    axis = f"k{L.next_id()}"
    try:
        L.st.red_axes[axis] = K
        L.push_scope()
        L.bind(v, ir.CType("int"), S.red(axis, K))
        x = L.data(L.ev(xe), s.loc)
        y = L.data(L.ev(ye), s.loc)
        L.pop_scope()
    except LiftError:
        fork.undo()
        return False
    L.st.defer -= 1
    ok = x.ctype == "float" and y.ctype == "float" and not x.opaque and not y.opaque
    if ok and x.lanes <= {"y", axis} and y.lanes <= {"x", axis} and axis in x.lanes and axis in y.lanes:
        rows, cols = x, y
    elif ok and x.lanes <= {"x", axis} and y.lanes <= {"y", axis} and axis in x.lanes and axis in y.lanes:
        rows, cols = y, x
    else:
        fork.undo()
        return False
    # Keep the forwarding's bookkeeping (records, epochs) but drop nothing else: re-enable emission.
    L.em.enabled = enabled
    del L.st.red_axes[axis]
    em = L.em
    n = L.next_id()
    ctx_a = Ctx(f"dotA{n}", {"y": "tl.arange(0, BY)[:, None]", axis: f"tl.arange(0, {K})[None, :]"}, f"[BY, {K}]")
    ctx_b = Ctx(f"dotB{n}", {axis: f"tl.arange(0, {K})[:, None]", "x": "tl.arange(0, BX)[None, :]"}, f"[{K}, BX]")
    em.push()
    a_code = em.code(rows, ctx_a, "float")
    b_code = em.code(cols, ctx_b, "float")
    acc = L.data(b.val, s.loc) if b.val is not None else S.const(0.0, "float")
    acc_code = em.full(S.cast(acc, "float"), L.ctx)
    out = em.assign(acc_name, f"tl.dot({a_code}, {b_code}, {acc_code}, input_precision=\"ieee\")")
    em.pop()
    L.rebind(acc_name, S.var(out, "float", True))
    L.idiom(f"tiled matmul: {K}-step inner product -> tl.dot([BY, {K}] x [{K}, BX])", s.loc)
    return True


def _const_range(L: LoopHost, s: ir.For, v: str | None) -> int | None:
    """K for `for (v = 0; v < K; ++v)` (v fresh, K a constant)."""
    if v is None or len(s.init) != 1 or s.test is None or len(s.step) != 1:
        return None
    b = L.lookup(v)
    if b is None or not isinstance(b.val, Sym) or not (b.val.is_const and b.val.value == 0):
        return None
    t = s.test
    if not (isinstance(t, ir.Binary) and t.op == "<" and isinstance(t.left, ir.Name) and t.left.id == v):
        return None
    bound = L.data(L.ev(t.right), s.loc)
    if not bound.is_const:
        return None
    st = s.step[0]
    unit = (isinstance(st, ir.IncDec) and st.op == "++") or (
        isinstance(st, ir.Assign) and st.op == "+=" and isinstance(st.value, ir.Num) and st.value.value == 1)
    if not unit:
        return None
    return int(bound.value)
