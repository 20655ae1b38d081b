"""Loops: classification and lowering. A loop whose condition is constant at entry and whose variable the body
leaves alone is unrolled; a canonical loop with uniform bounds becomes `for v in range(...)` (a thread-dependent
but lane-affine start makes it a strided lane loop: block- and grid-stride loops); anything else is a masked
`while` over the threads still active. Loop-carried variables are found by dry runs (the state is forked and
undone) until their kinds (uniform or per-thread) are stable, then given Python names."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from xlate.cir import ctype as ctyping
from xlate.cir import ir
from xlate.cir.effects import root_name
from xlate.translate.triton import carry, comm, idioms, returns
from xlate.translate.triton import sym as S
from xlate.translate.triton.batchast import SKIP_GUARD
from xlate.translate.triton.emit import Ctx, TooLarge, const_full, edtype, literal, tl_of
from xlate.translate.triton.exprs import has_effects
from xlate.translate.triton.state import Binding, LiftState, LoopCtx
from xlate.translate.triton.sym import NotConcrete, Sym
from xlate.translate.triton.tables import math_entry
from xlate.translate.triton.values import (
    LaneTokens,
    LiftError,
    LocalArray,
    PtrVal,
    RefVal,
    SharedArr,
    SharedRead,
    StructVal,
)

UNROLL_LIMIT = 64
UNROLL_LINES = 512  # a constant-trip loop whose unrolled body is longer stays a loop (too_large_to_unroll)
MAX_CARRIED_ELEMENTS = 64  # elements of a local array a run-time loop may carry (one variable each)


class Loops:
    """Loop lowering (mixed into the Lifter)."""

    st: LiftState
    ctx: Ctx
    bx: int
    by: int

    def for_stmt(self, s: ir.For) -> None:
        self.push_scope()
        for st in s.init:
            self.stmt(st)
        if idioms.try_dot(self, s):
            self.pop_scope()
            return
        test = self.cond(self.ev(s.test), s.loc) if s.test is not None else S.const(1, "bool")
        if test.is_const and self.trip_count(s) is not None:
            if not self.too_large_to_unroll(s) or not self.kept_as_loop(s, test):
                self.unroll(s)
        elif test.concrete and test.lanes and self.writes_shared(s.body) and self.trip_count(s, lanes=True) is not None:
            # `for (j = threadIdx.y; j < TILE; j += BY) tile[j][...] = ...`: each thread's trip count is known, and
            # unrolled the shared writes stay visible to the reads after the barrier (forwarding)
            self.unroll(s)
        elif not test.is_const or test.value:
            self.runtime_for(s, test)
        self.pop_scope()

    def too_large_to_unroll(self, s: ir.For) -> bool:
        """Whether unrolling `s` would emit more than UNROLL_LINES lines (measured by a dry unroll that stops at
        the limit). Triton's compile time grows with the unrolled body: a DIM^3 loop nest of loads fully
        unrolled is thousands of lines and minutes of JIT. Loops touching shared memory stay unrolled (the
        shared-memory analyses need their writes at known places); inside a measurement nothing is measured."""
        if self.em.budget is not None or self.touches_shared(s.body):
            return False
        with self.st.dry_run():
            self.em.budget = UNROLL_LINES
            try:
                self.unroll(s)
                return False
            except TooLarge:
                return True
            except (LiftError, NotConcrete, ZeroDivisionError):
                return False  # the real unroll reports it

    def kept_as_loop(self, s: ir.For, test: Sym) -> bool:
        """Lift a constant-trip loop as a run-time `for` (one copy of the body); False, the state untouched,
        where it cannot be (then it is unrolled)."""
        can = self.canonical(s)
        if can is None or not (can[3].is_const and can[3].value > 0) or returns.has_return(s.body):
            return False  # a return in it: unrolled, where the function's exit mask handles it
        fork = self.st.fork()
        try:
            self.runtime_for(s, test)
            return True
        except (LiftError, NotConcrete):
            fork.undo()
            return False

    def touches_shared(self, body: tuple[ir.Stmt, ...]) -> bool:
        """Whether `body` names a shared array (or a pointer into one)."""
        for node in _nodes(body):
            if isinstance(node, ir.Name):
                b = self.lookup(node.id)
                if b is not None and (isinstance(b.val, SharedArr) or (isinstance(b.val, PtrVal) and b.val.shared)):
                    return True
        return False

    def loop_var(self, s: ir.For) -> str | None:
        names = []
        for st in s.init:
            if isinstance(st, ir.Decl):
                names.append(st.name)
            elif isinstance(st, ir.ExprStmt) and isinstance(st.expr, ir.Assign) and isinstance(st.expr.target, ir.Name):
                names.append(st.expr.target.id)
        return names[0] if len(names) == 1 else None

    def writes_shared(self, body: tuple[ir.Stmt, ...]) -> bool:
        """Whether `body` assigns an element of a shared array (syntactically, by the name it indexes)."""
        for node in _nodes(body):
            if isinstance(node, ir.Assign | ir.IncDec):
                root = node.target
                while isinstance(root, ir.Index | ir.Member):
                    root = root.base
                b = self.lookup(root.id) if isinstance(root, ir.Name) else None
                if b is not None and (isinstance(b.val, SharedArr) or (isinstance(b.val, PtrVal) and b.val.shared)):
                    return True
        return False

    def trip_count(self, s: ir.For, lanes: bool = False) -> int | None:
        """Iterations of a loop whose condition is constant now, if the body leaves its variable alone; with
        `lanes`, of a condition on thread indices only: the most any thread makes."""
        v = self.loop_var(s)
        assigned, _ = ir.assigned_names(s.body)
        if v is None or v in assigned or s.test is None:
            return None
        if lanes and not (len(s.init) == 1 and isinstance(s.init[0], ir.Decl)):
            return None  # a variable that outlives the loop keeps each thread's exit value: not unrolled so
        with self.st.dry_run():
            try:
                n = 0
                alive = np.ones(self.nlanes, dtype=bool)
                while n <= UNROLL_LIMIT:
                    c = self.cond(self.ev(s.test), s.loc)
                    if not c.is_const:
                        if not (lanes and c.concrete):
                            return None
                        alive &= comm.concrete(self, c).astype(bool)
                        if not alive.any():
                            return n
                    elif not c.value:
                        return n
                    n += 1
                    for e in s.step:
                        self.effect(e)
                return None
            except (NotConcrete, ZeroDivisionError, LiftError):
                return None

    def unroll(self, s: ir.For) -> None:
        lc = LoopCtx(pred_base=len(self.st.pred))
        self.st.lstack.append(lc)
        alive: Sym | None = None  # a condition on thread indices: the threads still in the loop
        alive_at = np.ones(self.nlanes, dtype=bool)
        try:
            while True:
                c = self.cond(self.ev(s.test), s.loc) if s.test is not None else S.const(1, "bool")
                if not c.is_const:
                    if not c.concrete:
                        raise LiftError("XL2007", "loop condition becomes data-dependent during unrolling", s.loc)
                    if has_effects(s.test):  # the threads that left would go on assigning in the test
                        raise LiftError("XL2007", "a loop test that assigns, varying across threads", s.loc)
                    now = comm.concrete(self, c).astype(bool)
                    monotone = not np.any(now & ~alive_at)  # no thread comes back: `c` alone says who is in
                    alive_at &= now
                    if not alive_at.any():
                        break
                    alive = c if alive is None or monotone else S.op("land", "bool", alive, c)
                elif not c.value or (lc.brk.is_const and lc.brk.value):
                    break
                if alive is not None:
                    self.st.pred.append(alive)
                self.push_scope()
                self.stmts(s.body)
                self.pop_scope()
                lc.cont = S.const(0, "bool")
                if alive is not None:  # the step for every thread: the variable is the loop's own (trip_count)
                    self.st.pred.pop()
                for e in s.step:
                    self.effect(e)
        finally:
            self.st.lstack.pop()
        if not (lc.brk.is_const and not lc.brk.value):
            raise LiftError("XL2007", "break with a data-dependent condition", s.loc)

    def canonical(self, s: ir.For) -> tuple[str, str, Sym, Sym] | None:
        """(variable, comparison, bound, step) of `for (v = a; v < b; v += c)` with an untouched v."""
        v = self.loop_var(s)
        if v is None or s.test is None or len(s.step) != 1 or not (isinstance(s.init[0], ir.Decl) or _plain_assign(s.init[0], v)):
            return None
        assigned, _ = ir.assigned_names(s.body)
        if v in assigned or ir.contains(s.body, (ir.Break, ir.Continue, ir.Return)) is not None:
            return None
        t = s.test
        if not (isinstance(t, ir.Binary) and t.op in ("<", "<=") and isinstance(t.left, ir.Name) and t.left.id == v):
            return None
        if _mentions(t.right, v):
            return None
        inc = _increment(s.step[0], v)
        if inc is None or _mentions(inc, v):
            return None
        bound = self.data(self.ev(t.right), s.loc)
        stepv = self.data(self.ev(inc), s.loc)
        if not bound.uniform or not stepv.uniform:
            return None
        if t.op == "<=":
            bound = S.op("add", bound.ctype, bound, S.const(1, "int"))
        return v, t.op, bound, stepv

    def runtime_for(self, s: ir.For, test: Sym) -> None:
        if returns.has_return(s.body):  # a masked loop, whose breaks carry the returns (returns.py)
            self.while_loop(s.body, s.step, s.test, test, s.loc, do=False)
            return
        can = self.canonical(s)
        if self.staged_copy(s, can):
            return
        if can is not None:
            v, _, bound, step = can
            b = self.lookup(v)
            start = self.data(b.val, s.loc)
            declared = isinstance(s.init[0], ir.Decl)
            if not declared and not start.uniform:
                start = self.assigned_start(s, v) or start
            if start.uniform and step.is_const and step.value > 0:
                self.range_loop(s, v, start, bound, step, None)
                if not declared:  # `int i; for (i = 0; i < n; i++)`: i outlives the loop
                    self.set_var(v, _exit_value(start, bound, step.value), s.loc)
                return
            if not declared and start.uniform and _uniform_int(step) and _uniform_int(bound):
                # `for (p = 0; p < n * m; p += m)`, p declared before: a step of run-time value. A step <= 0 with
                # start < bound never ends in CUDA (or overflows); the range then runs no iteration
                positive = S.op("gt", "bool", step, S.const(0, step.ctype))
                stop = S.where(positive, S.cast(bound, "int"), S.cast(start, "int"), "int")
                stride = S.op("max", "int", S.cast(step, "int"), S.const(1, "int"))
                self.range_loop(s, v, start, stop, stride, None)
                self.set_var(v, _exit_value(start, stop, stride), s.loc)
                return
            if not isinstance(s.init[0], ir.Decl):
                if not self.counted_loop(s):  # a per-thread exit value of a variable that outlives the loop
                    self.while_loop(s.body, s.step, s.test, test, s.loc, do=False)
                return
            aff = S.affine(start) if ctyping.is_int(start.ctype) else None
            if aff is None and ctyping.is_int(start.ctype) and start.lanes and start.concrete:
                # a start the thread index gives but no affine map of it (`lane % 32`, a warp's thread rank): all of
                # it is the lanes' part, from 0 (checked not negative below, as any lane part)
                aff = ({}, S.const(0, "int"))
            if aff is not None and step.nonneg and not (step.is_const and step.value <= 0):
                coefs, rest = aff
                if coefs and not coefs.keys() & self.st.red_axes.keys():  # thread lanes only, no tl.dot axis
                    lane_part = _lane_sum(coefs)
                else:
                    lane_part = S.op("sub", "int", S.cast(start, "int"), S.cast(rest, "int"))
                if lane_part.concrete:
                    try:
                        mn = int(np.min(comm.concrete(self, lane_part)))
                    except NotConcrete:  # a block sized at launch: thread indices are >= 0, so are their sums
                        mn = 0 if coefs and all(k > 0 for k in coefs.values()) else -1
                    if mn >= 0 and rest.uniform:
                        self.range_loop(s, v, rest, bound, step, lane_part)
                        return
        if not self.counted_loop(s):
            self.while_loop(s.body, s.step, s.test, test, s.loc, do=False)

    def counted_loop(self, s: ir.For) -> bool:
        """`for (...; v < b; v += c)` (or `v + d < b`, `<=`) with a start, bound or step that differs by thread
        (`for (i = rowptr[r] + lane; i < rowptr[r + 1]; i += 32)`, `for (; col < D; col += blockDim.x)` after
        another loop), none of them changed by the body: each thread's trip count is computed at entry, in 64
        bits, and the block runs `range(max trips)` with v = start + k * c on the threads whose count k has not
        reached (a masked `while` tests the whole block every iteration, a reduction per trip). False, nothing
        emitted, where the loop is not of that form. A step that is not positive runs no iteration (CUDA's loop
        would not end), and an unsigned counter is taken not to wrap past its type's maximum."""
        parts = self.counted_parts(s)
        if parts is None:
            return False
        v, lhs_e, bound_e, inc_e, inclusive = parts
        b = self.lookup(v)
        vt = b.ctype.base if b is not None and not b.ctype.ptr else ""
        if not vt or not ctyping.is_int(vt) or vt == "bool" or ctyping.bits(vt) < 32 or \
                (ctyping.is_unsigned(vt) and ctyping.bits(vt) > 32):
            return False  # a short or char counter wraps where the test's int does not: the masked loop follows it
        try:
            start, lhs, bound, inc = (self.data(x, s.loc) for x in (b.val, self.ev(lhs_e), self.ev(bound_e), self.ev(inc_e)))
        except (LiftError, NotConcrete):
            return False
        vals = (start, lhs, bound, inc)
        if not all(isinstance(x, Sym) and ctyping.is_int(x.ctype) and x.ctype != "bool" and not x.opaque for x in vals):
            return False
        if any(ctyping.bits(x.ctype) > 64 or (ctyping.is_unsigned(x.ctype) and ctyping.bits(x.ctype) > 32)
               for x in vals):
            return False  # 64-bit unsigned values do not fit the signed 64-bit count
        if any(self.reads_memory(e) for e in (lhs_e, bound_e, inc_e)) and _may_write_memory(s.body):
            return False  # a test that reads memory the body may change (a local's value is fixed)
        wide = "long long"
        cmp_t = ctyping.arith(lhs.ctype, bound.ctype)
        first = S.cast(S.cast(lhs, cmp_t), wide)  # the test's left side at entry, as C compares it
        last = S.cast(S.cast(bound, cmp_t), wide)
        if inclusive:
            last = S.op("add", wide, last, S.const(1, wide))
        step = S.cast(S.cast(inc, vt), wide)
        span = S.op("sub", wide, last, first)
        runs = S.land(S.op("gt", "bool", step, S.const(0, wide)), S.op("gt", "bool", span, S.const(0, wide)))
        trips = S.op("div", wide, S.op("add", wide, span, S.op("sub", wide, step, S.const(1, wide))),
                     S.op("max", wide, step, S.const(1, wide)))
        trips = S.where(S.land(runs, self.pred_sym()), trips, S.const(0, wide), wide)
        if not trips.lanes and not trips.opaque:
            return False  # the same count on every thread: canonical loops of run-time values (runtime_for)
        # a count past 2**31 - 1 (a loop that would run for hours) is cut there: range() takes 32 bits
        trips = S.cast(S.op("min", wide, trips, S.const(2**31 - 1, wide)), "int")
        most = comm.reduce_sym("max", comm.guarded(self, trips, "max"), "int")
        # v = start + k * c in v's own type: its wrapping arithmetic keeps the low bits of the exact sum
        begin, stride = S.cast(start, vt), S.cast(inc, vt)

        def per_thread(k: Sym) -> tuple[Sym, Sym]:
            val = S.op("add", vt, begin, S.op("mul", vt, S.cast(k, vt), stride))
            return val, S.op("lt", "bool", S.cast(k, "int"), trips)

        self.range_loop(s, v, S.const(0, "int"), most, S.const(1, "int"), None, per_thread)
        # v after the loop: start + trips * c on the threads that ran it (set_var keeps the others' value)
        self.set_var(v, S.op("add", vt, begin, S.op("mul", vt, S.cast(trips, vt), stride)), s.loc)
        return True

    def reads_memory(self, e: ir.Expr) -> bool:
        """Whether evaluating `e` reads memory: an element, a dereference, a member (`p->n`), a call that is no
        math function, or a name that stands for memory (a reference, a shared scalar, a module variable)."""
        for n in ir.walk(e):
            if isinstance(n, ir.Index | ir.Member) or (isinstance(n, ir.Unary) and n.op == "*") or _opaque_call(n):
                return True
            if isinstance(n, ir.Name):
                b = self.lookup(n.id)
                if b is None or isinstance(b.val, RefVal | SharedArr | PtrVal) or n.id in self.module_vars:
                    return True
        return False

    def counted_parts(self, s: ir.For) -> tuple[str, ir.Expr, ir.Expr, ir.Expr, bool] | None:
        """(v, the test's left side, its bound, v's increment, whether the test is `<=`) of a for loop whose test
        is `v < b` or `v + d < b` and whose step adds a value to v, where the body assigns neither v nor a name
        of b, d or the increment, has no break, continue or return, and the test calls nothing but math."""
        t = s.test
        if len(s.step) != 1 or not (isinstance(t, ir.Binary) and t.op in ("<", "<=")):
            return None
        lhs = t.left
        if isinstance(lhs, ir.Binary) and lhs.op == "+" and isinstance(lhs.left, ir.Name):
            v, extra = lhs.left.id, [lhs.right]
        elif isinstance(lhs, ir.Name):
            v, extra = lhs.id, []
        else:
            return None
        inc = _increment(s.step[0], v)
        if inc is None or any(_mentions(e, v) for e in (t.right, inc, *extra)):
            return None
        changed = _target_roots(s.body)
        if v in changed or ir.contains(s.body, (ir.Break, ir.Continue, ir.Return)) is not None:
            return None
        if (ir.names_in(t) | ir.names_in(inc)) & (changed - {v}):
            return None
        if any(has_effects(e) or any(_opaque_call(n) for n in ir.walk(e)) for e in (t, inc)):
            return None
        return v, lhs, t.right, inc, t.op == "<="

    def assigned_start(self, s: ir.For, v: str) -> Sym | None:
        """The value `for (v = a; ...)` assigns where a is the same on every thread, v declared before the loop
        (v's value is then per-thread only where the loop sits under a thread-dependent condition, outside which
        no thread runs it: the loop's effects are masked by that condition and v is merged after it)."""
        init = s.init[0]
        if not (isinstance(init, ir.ExprStmt) and isinstance(init.expr, ir.Assign)):
            return None
        rhs = init.expr.value
        if has_effects(rhs) or _mentions(rhs, v):
            return None
        val = self.data(self.ev(rhs), s.loc)
        if not (isinstance(val, Sym) and val.uniform and not val.opaque):
            return None
        return self.convert(val, self.lookup(v).ctype, s.loc)

    def range_loop(self, s: ir.For, v: str, start: Sym, bound: Sym, step: Sym, lane_part: Sym | None,
                   per_thread: Callable[[Sym], tuple[Sym, Sym]] | None = None) -> None:
        """`for base in range(start, bound, step)`; with `lane_part`, thread t runs v = base + lane_part(t); with
        `per_thread`, (v, the threads that run this iteration) of the iteration `base` (counted_loop)."""
        b = self.lookup(v)
        vct = b.ctype
        body = list(s.body)
        if lane_part is not None:
            def per_thread(base: Sym) -> tuple[Sym, Sym]:
                val = S.op("add", "int", S.cast(base, "int"), lane_part)
                return val, S.op("lt", "bool", self.data(self.convert(val, vct, s.loc), s.loc), bound)

        def bind_iter(py_or_sym: Sym) -> None:
            val, runs = (py_or_sym, None) if per_thread is None else per_thread(py_or_sym)
            self.st.scopes[-1][v] = Binding(vct, self.convert(val, vct, s.loc), len(self.st.pred), ())
            if runs is not None:
                self.st.pred.append(runs)

        def run(py_sym: Sym) -> None:
            # the interpreter's range() yields Python ints, which have no .to(): the body sees a tensor
            self.em.line(f"{it_name} = {raw} + tl.zeros([], tl.int32)")
            self.push_scope()
            bind_iter(py_sym)
            self.push_scope()
            self.stmts(body)
            self.pop_scope()
            if per_thread is not None:
                self.st.pred.pop()
            self.pop_scope()

        carried = self.carried(body, [], exclude={v})
        it_name = self.em.fresh((v + "_base") if lane_part is not None else (v + "_trip") if per_thread else v)
        raw = self.em.fresh(it_name + "_it")
        it_sym = S.var(it_name, "int", False, nonneg=start.nonneg)
        if step.is_const and ctyping.is_int(step.ctype) and int(step.value) > 0:
            it_sym.below = S.cast(bound, "int")  # the counter is less than the bound in the body (sym.py folds it)
        written = self.shared_written(body)
        if per_thread is None and all(x.is_const and ctyping.is_int(x.ctype) for x in (start, bound, step)) \
                and int(step.value) != 0:  # the values it takes, for carry.py's race checks
            self.st.loop_ranges[it_name] = range(int(start.value), int(bound.value), int(step.value))
        self.plan_carry(written)
        kinds = self.dry_kinds(carried, lambda: run(it_sym), written)
        self.prune_carry(written)
        slots = self.materialize(carried, kinds, s.loc)
        self.carry_init(written)
        if s.loc.line in self.kc.rolled_lines:  # `#pragma unroll 1`: nvcc keeps it rolled, so does unroll.py
            self.st.rolled.add(raw)
        header = (f"for {raw} in range({self.em.code(start, self.ctx, 'int')}, {self.em.code(bound, self.ctx, 'int')}, "
                  f"{self.em.code(step, self.ctx, 'int')}):")
        # a run-time count the same on every thread, under a thread-dependent condition (`if (j > i) for (p = 0; p <
        # n; ...)`): a program none of whose threads is under it skips the loop, as its CUDA block does
        guard = per_thread is None and not all(x.is_const for x in (start, bound, step))

        def emit_loop() -> None:
            self.loop_body(header, slots, lambda: run(it_sym), s.loc, written=written, iter_names={it_name},
                           guard=guard)

        # a per-thread test no iteration changes: the loop in two versions (unswitch.py)
        test = None
        if (per_thread is None and not written and self.em.enabled and not self.st.runtime_loops
                and not self.st.defer and not self.dead()):
            test = self.invariant_branch(body, it_sym, start, lambda: run(it_sym),
                                         lambda: self.changed_slots(slots, s.loc))
        if test is not None:
            self.unswitched(test, emit_loop)
        else:
            emit_loop()
        self.st.loop_ranges.pop(it_name, None)

    def while_loop(self, body: tuple[ir.Stmt, ...], step: tuple[ir.Expr, ...], test_expr: ir.Expr | None,
                   test0: Sym | None, loc: ir.Loc, do: bool) -> None:
        """A masked loop: threads leave it when their condition fails; it ends when none is left."""
        if returns.has_return(body):  # an exit flag and breaks, the return after the loop (returns.py)
            pre, body, post = returns.rewrite(tuple(body), self.st.fstack[-1].ret if self.st.fstack else None, loc)
            for d in pre:
                self.stmt(d)
            self.while_loop(body, step, test_expr, test0, loc, do)
            self.stmts(post)
            return
        effects = test_expr is not None and has_effects(test_expr)
        tested = [test_expr] if effects else []  # what the test assigns is carried too
        carried = self.carried(list(body), list(step) + tested, exclude=set())
        written = self.shared_written(list(body) + [ir.ExprStmt(e.loc, e) for e in [*step, *tested]])
        self.plan_carry(written)
        active_name = self.em.fresh("active")

        def run(active: Sym) -> Sym:
            # break and continue are masks of this iteration (LoopCtx): what follows them in the body is
            # predicated off for the threads that took them; a thread that broke leaves `active` (not the step,
            # nor the test), one that continued runs the step and the test like the others
            self.st.pred.append(active)
            lc = LoopCtx(pred_base=len(self.st.pred))
            self.st.lstack.append(lc)
            try:
                self.push_scope()
                self.stmts(body)
                self.pop_scope()
            finally:
                self.st.lstack.pop()
            stay = S.lnot(lc.brk)
            if not stay.is_const:
                self.st.pred.append(stay)
            for e in step:
                self.effect(e)
            if effects:  # `while ((v = next[v]) != 0)`: only the threads still in the loop assign
                c = self.cond(self.ev(test_expr), loc)
            if not stay.is_const:
                self.st.pred.pop()
            self.st.pred.pop()
            if not effects:
                c = self.cond(self.ev(test_expr), loc) if test_expr is not None else S.const(1, "bool")
            return S.land(active, stay, c) if not stay.is_const else S.op("land", "bool", active, c)

        first = test0 if test0 is not None and not do else S.const(1, "bool")
        varying = bool(first.lanes)
        for _ in range(3):
            act = S.var(active_name, "bool", varying)
            out: list[Sym] = []
            kinds = self.dry_kinds(carried, lambda act=act, out=out: out.append(run(act)), written)
            now = varying or bool(out and (out[0].lanes or out[0].opaque))
            if now == varying:
                break
            varying = now
        self.prune_carry(written)
        slots = self.materialize(carried, kinds, loc)
        self.carry_init(written)
        act = S.var(active_name, "bool", varying)
        outer = self.pred_sym()
        if varying and not outer.is_const:
            # threads that returned or sit in a false branch never enter: their masked loads read filler, on
            # which a data-dependent condition may never fail (the loop would spin for them alone)
            first = S.land(first, outer)
        init = self.em.code(first, self.ctx, "bool")
        if varying and first.is_const:  # a Python bool has no shape to broadcast (do-while loops)
            init = f"tl.full({self.ctx.shape}, {init}, tl.int1)"
        elif varying and not (first.lanes or first.opaque):
            # a uniform condition made a block: `|` keeps it boolean (the interpreter's broadcast_to of a scalar
            # comparison holds int32 data, which tl.load then refuses as a mask)
            init = f"tl.full({self.ctx.shape}, 0, tl.int1) | ({init})"
        elif varying:
            init = self.em.broadcast(init, first, self.ctx)
        self.em.line(f"{active_name} = {init}")
        flat = f"{active_name}.to(tl.int32)"
        if self.by > 1:
            flat = f"tl.reshape({flat}, (BY * BX,))"
        header = f"while tl.max({flat}, axis=0) > 0:" if varying else f"while {active_name}:"
        result: list[Sym] = []
        self.loop_body(header, slots, lambda: result.append(run(act)), loc, written=written,
                       extra=lambda: [(active_name, result[0], "bool", varying)], iter_names={active_name})

    def while_stmt(self, s: ir.While) -> None:
        test0 = None if s.do else self.cond(self.ev(s.test), s.loc)
        if test0 is not None and test0.is_const and not test0.value:
            return
        if (test0 is None or test0.is_const) and self.while_trips(s) is not None:
            self.unroll_while(s)  # `int i = 128; while (i != 0) { ...; i >>= 1; }`: a count known now
            return
        self.while_loop(s.body, (), s.test, test0, s.loc, do=s.do)

    def while_trips(self, s: ir.While) -> int | None:
        """Iterations of a while loop whose condition stays a constant through its body; None otherwise."""
        with self.st.dry_run():
            try:
                return self.unroll_while(s, dry=True)
            except (LiftError, NotConcrete, ZeroDivisionError):
                return None

    def unroll_while(self, s: ir.While, dry: bool = False) -> int | None:
        lc = LoopCtx(pred_base=len(self.st.pred))
        self.st.lstack.append(lc)
        n = 0
        try:
            while True:
                if n or not s.do:
                    c = self.cond(self.ev(s.test), s.loc)
                    if not c.is_const:
                        if dry:
                            return None
                        raise LiftError("XL2007", "loop condition becomes data-dependent during unrolling", s.loc)
                    if not c.value:
                        break
                if lc.brk.is_const and lc.brk.value:
                    break
                n += 1
                if n > UNROLL_LIMIT:
                    return None
                self.push_scope()
                self.stmts(s.body)
                self.pop_scope()
                lc.cont = S.const(0, "bool")
        finally:
            self.st.lstack.pop()
        if not (lc.brk.is_const and not lc.brk.value):
            if dry:
                return None
            raise LiftError("XL2007", "break with a data-dependent condition", s.loc)
        return n

    def carried(self, body: list[ir.Stmt], step: list[ir.Expr], exclude: set[str]) -> list[str]:
        stmts = list(body) + [ir.ExprStmt(e.loc, e) for e in step]
        assigned, declared = ir.assigned_names(tuple(stmts))
        assigned |= self.ref_call_roots(stmts)
        for node in _nodes(stmts):  # elements of local arrays written: the array is carried
            if isinstance(node, ir.Assign | ir.IncDec) and isinstance(node.target, ir.Index):
                root = node.target
                while isinstance(root, ir.Index):
                    root = root.base
                if isinstance(root, ir.Name) and not self.shared_pointer_kept(root.id):
                    assigned.add(root.id)
        out = []
        for name in sorted(assigned - exclude):
            b = self.lookup(name)
            if b is None or isinstance(b.val, RefVal | SharedArr):  # references, shared variables: writes go to memory
                continue
            if name in declared and not any(name in sc for sc in self.st.scopes):
                continue
            out.append(name)
        return out

    def shared_pointer_kept(self, name: str) -> bool:
        """A pointer into a shared array that the loop stores through (`px[i] = ...` for `px = &s[256]`) stays the
        pointer it was, where arrays are carried (carry.py): its offset then stays known, and the thread-index
        analyses of the accesses through it stay exact."""
        b = self.lookup(name)
        return self.carry_shared and b is not None and isinstance(b.val, PtrVal) and b.val.shared

    def ref_call_roots(self, stmts: list[ir.Stmt]) -> set[str]:
        """Locals that calls of device functions in `stmts` may change through reference parameters, or through
        pointer parameters given a local array; local arrays a CUB block load fills."""
        out: set[str] = set()
        for c in _calls(stmts):
            f = self.callee(c)
            if f is None:
                continue
            for (name, ct), a in zip(f.params, c.args):
                if name in f.refs and not ct.const:
                    while isinstance(a, ir.Member | ir.Index):
                        a = a.base
                    if isinstance(a, ir.Name):
                        out.add(a.id)
                elif ct.ptr == 1 and not ct.const and isinstance(a, ir.Name):
                    b = self.lookup(a.id)
                    if b is not None and isinstance(b.val, LocalArray):
                        out.add(a.id)
        for m in _nodes(stmts):
            if isinstance(m, ir.MethodCall) and m.method == "Load" and len(m.args) >= 2 and isinstance(m.args[1], ir.Name):
                b = self.lookup(m.args[1].id)
                if b is not None and isinstance(b.val, LocalArray):  # `L(temp).Load(p, items, ...)` (cub.py)
                    out.add(m.args[1].id)
        return out

    def kind(self, v: Any) -> Any:
        if isinstance(v, Sym):
            return bool(v.lanes or v.opaque)
        if isinstance(v, SharedRead | LaneTokens):
            return True
        if isinstance(v, PtrVal):
            return ("ptr", bool(v.offset.lanes or v.offset.opaque))
        if isinstance(v, StructVal):
            return {k: self.kind(x) for k, x in v.fields.items()}
        if isinstance(v, LocalArray):
            return {f"[{i}]": self.kind(v.slots.get(i)) for i in range(v.size)}
        if v is None:
            return False
        return ("static", id(v))

    def dry_kinds(self, carried: list[str], run, written: set[int] | None = None) -> dict[str, Any]:
        """Run the body without emitting, with placeholders for the carried variables, until their kinds
        (uniform or per-thread) are stable. `written` gains (in place) the arrays passed to calls that the dry run
        saw written (SharedWritten.passed)."""
        kinds = {n: self.kind(self.lookup(n).val) for n in carried}
        for _ in range(4):
            after = self.dry_pass(carried, kinds, run, written)
            merged = {n: _join(kinds[n], after[n]) for n in carried}
            if merged == kinds:
                return kinds
            kinds = merged
        return kinds

    def dry_pass(self, carried: list[str], kinds: dict[str, Any], run, written: set[int] | None) -> dict[str, Any]:
        """One dry run of the body; the carried variables' kinds after it. An array only passed to a call (`f(s)`,
        `expf(v - s)`) counts as written where the run writes it: a call that only reads it (a lookup table given
        to a device function) leaves its earlier writes visible inside the loop. Where that run fails, or writes
        an array it did not count, it is run again counting every array passed to a call."""
        passed = written.passed - written if isinstance(written, SharedWritten) else set()
        while True:
            with self.st.dry_run():
                for n in carried:
                    b = self.lookup(n)
                    self.rebind(n, self.placeholder(n, b, kinds[n]))
                self.st.runtime_loops += 1
                self.st.region = self.next_id()
                self.enter_loop_shared(written)
                before = {id(a): len(a.records) for a in self.st.shared}
                try:
                    run()
                    self.check_written(written, before, None)
                    for p in written.carry if isinstance(written, SharedWritten) else []:
                        p.seen = p.seen or len(p.arr.records) > p.arr.carry.base + p.chunks
                except (LiftError, NotConcrete):
                    if not passed:
                        raise
                    written |= passed  # in place: the loop's real run counts them too
                    passed = set()
                    continue
                return {n: self.kind(self.lookup(n).val) for n in carried}

    def placeholder(self, name: str, b: Binding, kind: Any) -> Any:
        v = b.val
        if isinstance(v, PtrVal):
            return PtrVal(v.base, S.var(f"__dry_{name}", "int", kind[1]), v.elem, v.root)
        if isinstance(v, StructVal):
            return StructVal(v.ctype, {k: S.var(f"__dry_{name}_{k}", x.ctype if isinstance(x, Sym) else "float", kind[k])
                                       for k, x in v.fields.items()})
        if isinstance(v, LocalArray):
            ct = self.resolve_type(v.ctype, None)
            return replace(v, slots={i: S.var(f"__dry_{name}_{i}", ct, kind[f"[{i}]"]) for i in range(v.size)},
                           loops=self.st.runtime_loops + 1)
        if isinstance(kind, tuple) and kind[0] == "static":
            return v
        return S.var(f"__dry_{name}", self.resolve_type(b.ctype.base, None), bool(kind))

    def materialize(self, carried: list[str], kinds: dict[str, Any], loc: ir.Loc) -> list[tuple[str, str, str, bool, str | None]]:
        """Give each carried variable a Python name holding its value at loop entry; returns the slots
        (variable, python name, C type, per-thread, struct field)."""
        slots: list[tuple[str, str, str, bool, str | None]] = []
        self.settle()
        for n in carried:
            b = self.lookup(n)
            k = kinds[n]
            v = b.val
            if isinstance(k, tuple) and k[0] == "static":
                raise LiftError("XL2001", f"'{n}' ({type(v).__name__}) changes inside a run-time loop", loc)
            if isinstance(v, PtrVal):
                py = self.em.fresh(n + "_off")
                self.em.line(f"{py} = {self.init_code(v.offset, 'int', k[1])}")
                self.rebind(n, PtrVal(v.base, S.var(py, "int", k[1]), v.elem, v.root))
                slots.append((n, py, "int", k[1], "*ptr"))
            elif isinstance(v, StructVal):
                fields = {}
                for f, x in v.fields.items():
                    py = self.em.fresh(f"{n}_{f}")
                    ct = x.ctype if isinstance(x, Sym) else "float"
                    self.em.line(f"{py} = {self.init_code(self.data(x, loc), ct, k[f])}")
                    fields[f] = S.var(py, ct, k[f])
                    slots.append((n, py, ct, k[f], f))
                self.rebind(n, StructVal(v.ctype, fields))
            elif isinstance(v, LocalArray):  # each element a carried value
                if v.size > MAX_CARRIED_ELEMENTS:
                    raise LiftError("XL2001", f"local array '{n}' of {v.size} elements written inside a run-time loop", loc)
                ct = self.resolve_type(v.ctype, loc)
                elems = {}
                for i in range(v.size):
                    x = v.slots.get(i)
                    init = self.data(x, loc) if x is not None else S.const(0, ct if not ctyping.is_symbolic(ct) else "int")
                    py = self.em.fresh(f"{n}_{i}")
                    self.em.line(f"{py} = {self.init_code(init, ct, k[f'[{i}]'])}")
                    elems[i] = S.var(py, ct, k[f"[{i}]"])
                    slots.append((n, py, ct, k[f"[{i}]"], f"[{i}]"))
                self.rebind(n, replace(v, slots=elems, loops=self.st.runtime_loops + 1))
            else:
                ct = self.resolve_type(b.ctype.base, loc)
                py = self.em.fresh(n)
                init = self.data(v, loc) if v is not None else S.const(0, ct if not ctyping.is_symbolic(ct) else "int")
                self.em.line(f"{py} = {self.init_code(init, ct, bool(k))}")
                self.rebind(n, S.var(py, ct, bool(k)))
                slots.append((n, py, ct, bool(k), None))
        return slots

    def init_code(self, v: Sym, ct: str, varying: bool) -> str:
        shape = self.ctx.shape if varying else "[]"
        if v.is_const and not ctyping.is_symbolic(ct):
            return f"tl.full({shape}, {literal(v.value, ct)}, {tl_of(edtype(S.const(v.value, ct)) if ct != 'unsigned int' else ct)})"
        code = self.em.code(v, self.ctx, ct)
        if varying:
            return self.em.broadcast(code, v, self.ctx)
        return code if v.op != "const" else f"tl.full([], {code}, {tl_of(ct)})"

    def slot_value(self, slot: tuple, loc: ir.Loc) -> Any:
        """What a carried slot (name, Python variable, type, varying, field) holds at this point of the body."""
        n, _py, ct, _varying, fld = slot
        v = self.lookup(n).val
        if fld == "*ptr":
            return v.offset
        if isinstance(v, LocalArray):
            return self.data(v.slots.get(int(fld[1:-1]), S.const(0, ct if not ctyping.is_symbolic(ct) else "int")), loc)
        if fld is not None:
            return self.data(v.fields[fld], loc)
        return self.data(v, loc)

    def changed_slots(self, slots: list, loc: ir.Loc) -> set[str]:
        """The Python variables of the carried `slots` the iteration just lifted leaves with another value."""
        out = set()
        for slot in slots:
            new = self.slot_value(slot, loc)
            if not (isinstance(new, Sym) and new.op == "var" and new.name == slot[1]):
                out.add(slot[1])
        return out

    def loop_body(self, header: str, slots, run, loc: ir.Loc, extra=None, written: set[int] | None = None,
                  iter_names: set[str] = frozenset(), guard: bool = False) -> None:
        """`iter_names`: the loop's own variables besides the carried `slots` (a for loop's counter), which carry.py's
        race checks take as different in two iterations. `guard`: the loop is skipped where none of the program's
        threads runs it (skip_unless_some_thread_runs)."""
        em = self.em
        self.exit_if_all_returned()
        guarded = guard and self.skip_unless_some_thread_runs()
        em.line(header)
        header_at = len(em.lines)
        em.level += 1
        em.push()
        self.st.runtime_loops += 1
        saved = self.enter_loop_shared(written)
        outer_region, self.st.region = self.st.region, self.next_id()
        run()
        updates: list[tuple[str, str]] = []
        plans = written.carry if isinstance(written, SharedWritten) else []
        pending: dict[int, list] = {}
        for p in plans:  # the carried arrays' content as this iteration leaves it (carry.py)
            pending[id(p.arr)] = carry.check(self, p.arr, loc, {py for _, py, _, _, _ in slots} | iter_names)
            recs = p.arr.records[p.arr.boundary:]
            for j in range(p.chunks):
                new = carry.content(self, p.arr, recs, j, carry.CONTENT_EPOCH)
                updates.append((p.names[j], self.update_code(new, p.arr.ctype, True)))
        for slot in slots:
            _n, py, ct, varying, _fld = slot
            updates.append((py, self.update_code(self.slot_value(slot, loc), ct, varying)))
        for py, new, ct, varying in (extra() if extra else []):
            updates.append((py, self.update_code(new, ct, varying)))
        temps = []
        names = [p for p, _ in updates]
        for py, code in updates:
            if code != py:
                if any(p != py and re.search(rf"\b{re.escape(p)}\b", code) for p in names):
                    t = em.fresh(py + "_next")
                    em.line(f"{t} = {code}")
                    temps.append((py, t))
                else:
                    temps.append((py, code))
        for py, code in temps:
            if code != py:
                em.line(f"{py} = {code}")
        if em.enabled and len(em.lines) == header_at:
            em.line("pass")
        self.leave_loop_shared(saved, {id(p.arr) for p in plans})
        if plans:
            carry.leave(self, plans, written.saved_carry, {id(a): n for a, _, n in saved}, pending)
        self.st.region = outer_region
        self.st.runtime_loops -= 1
        em.pop()
        em.level -= 1
        if guarded:
            em.level -= 1
        # after the loop, the carried variables are their Python names
        for n, py, ct, varying, fld in slots:
            b = self.lookup(n)
            if fld == "*ptr":
                self.rebind(n, PtrVal(b.val.base, S.var(py, "int", varying), b.val.elem, b.val.root))
            elif isinstance(b.val, LocalArray):
                elems = dict(b.val.slots)
                elems[int(fld[1:-1])] = S.var(py, ct, varying)
                self.rebind(n, replace(b.val, slots=elems, loops=self.st.runtime_loops))
            elif fld is not None:
                fields = dict(b.val.fields)
                fields[fld] = S.var(py, ct, varying)
                self.rebind(n, StructVal(b.val.ctype, fields))
            else:
                self.rebind(n, S.var(py, ct, varying))

    def exit_if_all_returned(self) -> None:
        """Before a loop at the kernel's top level: a program none of whose threads is left (all returned, or
        padding lanes) ends there, as its CUDA block does. Without it the program runs every iteration with its
        effects masked off: a grid far larger than the work it guards (crs's dotprod: 60 working blocks of
        15,360) ran 30x slower than CUDA. batching.py keeps this test over all the blocks of a program."""
        if not self.em.enabled or self.st.runtime_loops or self.em.level != 1 or not self.st.fstack:
            return
        done = self.st.fstack[0].done
        if done.is_const:
            return
        if done.key() == self.st.exit_tested:
            return
        self.st.exit_tested = done.key()
        _, some_alive = self.some_thread(S.lnot(done))
        self.em.line(f"if {some_alive} == 0:")
        self.em.line("    return")

    def some_thread(self, cond: Sym) -> tuple[Sym, str]:
        """(`cond` on the program's threads, padding lanes excluded; the code of its `tl.max` over the program):
        nonzero where some thread has it. A uniform condition (`blockIdx.x >= n`) is made a block first."""
        if self.lane_guard is not None:
            cond = S.land(self.lane_guard, cond)
        code = self.em.code(cond, self.ctx, "bool")
        if not (cond.lanes or cond.opaque):
            code = f"tl.full({self.ctx.shape}, 0, tl.int1) | ({code})"
        return cond, f"tl.max(({code}).to(tl.int32))"

    def skip_unless_some_thread_runs(self) -> bool:
        """Before a top-level loop of a run-time count under a condition some threads may fail: `if` some thread of
        the program is under it, the loop runs (True: the caller indents the loop and ends the `if` after it).
        Where no thread is, CUDA's block skips the loop and the lifted one would run every iteration with its
        effects masked off: epistasis's pairs j > i left three quarters of its programs idle, 7.1x slower than
        CUDA. Skipping is exact: whatever the loop assigns is merged under the condition after it, and its loads
        and stores are masked by it. The test is a reduction over the block, once per program; block batching
        (launch_configs.py) drops it, running the loop masked as before."""
        if not self.em.enabled or self.st.runtime_loops or self.dead():
            return False
        conds = self.full_pred()
        if self.st.fstack and self.st.exit_tested == self.st.fstack[0].done.key():
            # the threads that returned: the program exit test before the loop has ended a program of none left
            tested = S.lnot(self.st.fstack[0].done).key()
            if all(c.key() == tested for c in conds):
                return False
        runs, some_runs = self.some_thread(S.land(*conds))
        if runs.is_const:
            return False
        name = self.em.fresh(SKIP_GUARD)
        self.em.line(f"{name} = {some_runs} != 0")
        self.em.line(f"if {name}:")
        self.em.level += 1
        return True

    def update_code(self, v: Sym, ct: str, varying: bool) -> str:
        if varying and v.is_const and not ctyping.is_symbolic(ct):
            return const_full(v.value, ct, self.ctx.shape)
        code = self.em.code(v, self.ctx, ct if not ctyping.is_symbolic(ct) else None)
        if ctyping.is_symbolic(ct):
            code = f"{code}.to({tl_of(ct)})" if v.ctype != ct else code
        if (varying and not (v.lanes or v.opaque)) or (varying and v.lanes and "," in self.ctx.shape and v.lanes != {"x", "y"}):
            code = self.em.broadcast(code, v, self.ctx)
        elif not varying and v.op == "const":
            code = f"tl.full([], {code}, {tl_of(ct)})"
        return code

    def enter_loop_shared(self, written: set[int] | None = None) -> list[tuple[SharedArr, int, int]]:
        """A run-time loop starts: what was written to a shared array it writes (`written`: ids of arrays, None:
        any) may be overwritten by an earlier iteration, so reads inside see only the loop's own writes. An
        array the loop does not write keeps every write before it."""
        saved = [(a, a.boundary, len(a.records)) for a in self.st.shared]
        plans = written.carry if isinstance(written, SharedWritten) else []
        if plans:
            written.saved_carry = carry.enter(self, plans, dry=not self.em.enabled)
        carried = {id(p.arr) for p in plans}
        for a in self.st.shared:
            if (written is None or id(a) in written) and id(a) not in carried:
                a.boundary = len(a.records)
        return saved

    carry_shared: bool = False  # carry the shared arrays run-time loops write as block tensors (carry.py)

    def plan_carry(self, written: SharedWritten | None) -> None:
        """Which arrays the loop carries (carry.plan): none unless the lifter carries shared arrays."""
        if not self.carry_shared or written is None:
            return
        certain = set(written)
        written.carry = carry.plan(self, certain | written.passed)
        for p in written.carry:
            p.tentative = id(p.arr) not in certain
        written |= {id(p.arr) for p in written.carry}

    def prune_carry(self, written: SharedWritten | None) -> None:
        """Stop carrying the arrays the loop may write but its dry runs did not (a table only read in it)."""
        if not isinstance(written, SharedWritten):
            return
        for p in written.carry:
            if p.tentative and not p.seen:
                written.discard(id(p.arr))
        written.carry = [p for p in written.carry if p.seen or not p.tentative]

    def carry_init(self, written: SharedWritten | None) -> None:
        """Emit the carried arrays' tensors as the code before the loop leaves them."""
        for p in written.carry if isinstance(written, SharedWritten) else []:
            arr = p.arr
            visible = arr.records[arr.boundary:] if self.st.runtime_loops else list(arr.records)
            p.names = []
            for j in range(p.chunks):
                v = carry.content(self, arr, visible, j, self.st.epoch)
                py = self.em.fresh(f"{arr.name}_c{j}")
                self.em.line(f"{py} = {self.init_code(v, arr.ctype, True)}")
                p.names.append(py)

    def shared_written(self, stmts: list[ir.Stmt] | tuple[ir.Stmt, ...]) -> SharedWritten | None:
        """Ids of the shared arrays `stmts` may write: assignment targets, and (as `passed`, which the dry run
        settles: dry_pass) arguments of calls rooted at a shared array (a device function reaches a block's shared
        memory only through its parameters) and, for a store through a pointer the loop declares, every array;
        None where that cannot be told (a shared array declared inside the loop)."""
        out = SharedWritten()

        def root_arr(e: ir.Expr) -> SharedArr | bool | None:
            while isinstance(e, ir.Index | ir.Member | ir.Unary | ir.Cast):
                e = e.base if isinstance(e, ir.Index | ir.Member) else e.arg
            if isinstance(e, ir.Binary):  # pointer arithmetic: s + k
                return root_arr(e.left) or root_arr(e.right)
            if not isinstance(e, ir.Name):
                return None
            b = self.lookup(e.id)
            if b is None:
                return True  # declared inside the loop: it may point anywhere
            v = b.val
            if isinstance(v, SharedArr):
                return v
            if isinstance(v, PtrVal) and v.shared:
                return v.base
            if isinstance(v, RefVal) and v.arr is not None:
                return v.arr
            return None

        for node in _nodes(list(stmts)):
            targets: list[ir.Expr] = []
            if isinstance(node, ir.Assign | ir.IncDec):
                targets.append(node.target)
            elif isinstance(node, ir.Call):
                targets.extend(node.args)
            for tgt in targets:
                a = root_arr(tgt)
                if isinstance(a, SharedArr):
                    (out.passed if isinstance(node, ir.Call) else out).add(id(a))
                elif a is True and not (isinstance(tgt, ir.Name) or isinstance(node, ir.Call)):
                    # a store through a name declared in the loop: any array, as far as the dry run writes it
                    out.passed |= {id(x) for x in self.st.shared}
            if isinstance(node, ir.Decl) and node.shared:
                return None  # a shared array declared inside the loop
        return out

    def leave_loop_shared(self, saved: list[tuple[SharedArr, int, int]], carried: set[int] | None = None) -> None:
        for a, boundary, before in saved:
            if len(a.records) > before and id(a) not in (carried or ()):
                # written inside: what it holds now depends on the iterations
                a.clobbered = True
            a.boundary = boundary

    def check_written(self, written: set[int] | None, before: dict[int, int], loc: ir.Loc | None) -> None:
        """A loop wrote a shared array that `shared_written` did not see: its reads were not safe."""
        if written is None:
            return
        for a in self.st.shared:
            if id(a) not in written and len(a.records) > before.get(id(a), 0):
                raise LiftError("XL2004", f"shared array '{a.name}' is written inside a run-time loop through a name "
                                          "the loop does not show", loc)

    def settle(self) -> None:
        """Resolve pending shared reads and tokens before a loop (their arrays may change inside it)."""
        for scope in self.st.scopes:
            for name, b in list(scope.items()):
                if isinstance(b.val, SharedRead | LaneTokens):
                    try:
                        v = self.data(b.val, None)
                    except LiftError:
                        continue
                    scope[name] = replace(b, val=v)
                    if not v.is_const:
                        self.em.code(v, self.ctx)  # computed once, before the loop


class SharedWritten(set):
    """Ids of the shared arrays a loop writes, and in `passed` those it only passes to calls (maybe written)."""

    def __init__(self) -> None:
        super().__init__()
        self.passed: set[int] = set()
        self.carry: list[carry.Plan] = []  # the arrays the loop carries as block tensors (carry.py)
        self.saved_carry: list = []  # what carry.enter replaced, for carry.leave


def _plain_assign(st: ir.Stmt, v: str) -> bool:
    """`v = a` as a for-init: the loop's variable is declared before the loop (and outlives it)."""
    return (isinstance(st, ir.ExprStmt) and isinstance(st.expr, ir.Assign) and st.expr.op == "="
            and isinstance(st.expr.target, ir.Name) and st.expr.target.id == v)


def _exit_value(start: Sym, bound: Sym, step: int | Sym) -> Sym:
    """The value `for (v = start; v < bound; v += step)` leaves in v: start + max(0, ceil((bound - start) / step)) * step
    (start itself when the loop runs no iteration); a Sym step is a positive run-time value."""
    span = S.op("sub", "int", S.cast(bound, "int"), S.cast(start, "int"))
    if isinstance(step, int) and step == 1:
        return S.op("add", "int", S.cast(start, "int"), S.op("max", "int", span, S.const(0, "int")))
    st = S.const(step, "int") if isinstance(step, int) else step
    less = S.const(step - 1, "int") if isinstance(step, int) else S.op("sub", "int", st, S.const(1, "int"))
    trips = S.op("div", "int", S.op("add", "int", span, less), st)
    trips = S.op("max", "int", trips, S.const(0, "int"))
    return S.op("add", "int", S.cast(start, "int"), S.op("mul", "int", trips, st))


def _increment(step: ir.Expr, v: str) -> ir.Expr | None:
    """What `v++`, `v += c` or `v = v + c` adds to v; None for any other step."""
    if isinstance(step, ir.IncDec) and isinstance(step.target, ir.Name) and step.target.id == v and step.op == "++":
        return ir.Num(step.loc, 1, "int")
    if isinstance(step, ir.Assign) and isinstance(step.target, ir.Name) and step.target.id == v:
        if step.op == "+=":
            return step.value
        if step.op == "=" and isinstance(step.value, ir.Binary) and step.value.op == "+" and \
                isinstance(step.value.left, ir.Name) and step.value.left.id == v:
            return step.value.right
    return None


def _target_roots(body: Any) -> set[str]:
    """The names whose value or elements `body` assigns (`x = ...`, `a[i] += ...`, `s.f = ...`, `*p = ...`, `x++`)."""
    roots = (root_name(n.target) for n in _nodes(body) if isinstance(n, ir.Assign | ir.IncDec))
    return {r for r in roots if r is not None}


def _opaque_call(n: Any) -> bool:
    """A call that is no math function (a device function, an atomic, a method): it may read or write memory."""
    return isinstance(n, ir.MethodCall) or (isinstance(n, ir.Call) and math_entry(n.fn) is None)


def _may_write_memory(body: Any) -> bool:
    """Whether `body` may store to memory: an assignment to anything but a local name, or a call that is no
    math function (an atomic, a device function given a pointer)."""
    for n in _nodes(body):
        if isinstance(n, ir.Assign | ir.IncDec) and not isinstance(n.target, ir.Name):
            return True
        if _opaque_call(n):
            return True
    return False


def _uniform_int(s: Sym) -> bool:
    """A signed integer the same on every thread (a loop bound or step of run-time value)."""
    return (s.uniform and not s.opaque and ctyping.is_int(s.ctype) and not ctyping.is_unsigned(s.ctype)
            and s.ctype != "bool")


def _mentions(e: ir.Expr, name: str) -> bool:
    if isinstance(e, ir.Name):
        return e.id == name
    for v in vars(e).values():
        if isinstance(v, ir.Expr) and _mentions(v, name):
            return True
        if isinstance(v, tuple) and any(isinstance(x, ir.Expr) and _mentions(x, name) for x in v):
            return True
    return False


def _join(a: Any, b: Any) -> Any:
    if isinstance(a, dict) and isinstance(b, dict):
        return {k: _join(a[k], b.get(k, a[k])) for k in a}
    if isinstance(a, tuple) and isinstance(b, tuple) and a[0] == b[0] == "ptr":
        return ("ptr", a[1] or b[1])
    if isinstance(a, bool) and isinstance(b, bool):
        return a or b
    return b if a is False else a


def _lane_sum(coefs: dict[str, int]) -> Sym:
    """sum(coef * lane(axis)): the per-thread part of an affine index, built from lanes (not `start - rest`,
    which the simplifier cannot cancel through casts)."""
    terms = [S.lane(a) if k == 1 else S.op("mul", "int", S.lane(a), S.const(k, "int")) for a, k in sorted(coefs.items())]
    out = terms[0]
    for t in terms[1:]:
        out = S.op("add", "int", out, t)
    return out


def _nodes(node: Any):
    """Every statement and expression in `node` (nested bodies included)."""
    if isinstance(node, list | tuple):
        for x in node:
            yield from _nodes(x)
        return
    if not isinstance(node, ir.Stmt | ir.Expr):
        return
    yield node
    for v in vars(node).values():
        if isinstance(v, ir.Stmt | ir.Expr | list | tuple):
            yield from _nodes(v)


def _calls(node: Any):
    """Every call in statements or expressions (nested bodies included)."""
    return (n for n in _nodes(node) if isinstance(n, ir.Call))
