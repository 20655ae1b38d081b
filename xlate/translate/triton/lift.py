"""SIMT lifting: one CUDA kernel (one thread's program) -> the body of one Triton program (one block).

The lifter interprets the kernel's IR abstractly. Every per-thread value becomes a sym over the block's lanes
(`threadIdx` is `tl.arange`, `blockIdx` is `tl.program_id`); control flow is if-converted into predicates that
mask loads, stores and assignments; loops become unrolled code (constant trip counts), `range` loops (uniform
bounds), strided lane loops (thread-dependent start, uniform bound and step: block- and grid-stride loops) or
masked `while` loops (anything else); device functions are inlined; shared memory and shuffles go through
comm.py. Loads and stores are emitted at their program point; arithmetic is emitted lazily where used.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import numpy as np

from xlate.cir import ctype as ctyping
from xlate.cir import ir
from xlate.translate.triton import comm, idioms
from xlate.translate.triton import sym as S
from xlate.translate.triton.emit import Ctx, Emitter, edtype, sanitize, tl_of
from xlate.translate.triton.state import Binding, FnCtx, KernelContext, LiftState, LoopCtx
from xlate.translate.triton.sym import NotConcrete, Sym
from xlate.translate.triton.tables import atomic_entry, math_entry, named_constant
from xlate.translate.triton.values import (
    CGroup,
    ConstArray,
    LaneTokens,
    LiftError,
    LocalArray,
    PtrVal,
    SharedArr,
    SharedRead,
    StructVal,
    TypeVal,
    WriteRec,
)

UNROLL_LIMIT = 64
MAX_INLINE_DEPTH = 16
SHUFFLES = {"__shfl_down_sync": ("down", 1), "__shfl_up_sync": ("up", 1), "__shfl_xor_sync": ("xor", 1),
            "__shfl_sync": ("idx", 1), "__shfl_down": ("down", 0), "__shfl_up": ("up", 0), "__shfl_xor": ("xor", 0),
            "__shfl": ("idx", 0)}
WARP_OTHER = {"__ballot_sync", "__ballot", "__any_sync", "__all_sync", "__any", "__all", "__activemask", "__uni_sync",
              "__match_any_sync", "__match_all_sync", "__reduce_add_sync", "__reduce_min_sync", "__reduce_max_sync",
              "__lanemask_lt", "__lane_id", "__syncthreads_count", "__syncthreads_and", "__syncthreads_or"}
BARRIERS = {"__syncthreads", "__syncwarp", "cg::sync", "__barrier_sync"}
FENCES = {"__threadfence", "__threadfence_block", "__threadfence_system"}
ARITH = {"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "mod", "<<": "shl", ">>": "shr", "&": "and", "|": "or",
         "^": "xor"}
CMPS = {"<": "lt", "<=": "le", ">": "gt", ">=": "ge", "==": "eq", "!=": "ne"}
MAKE_VECTOR = {"make_float2": "float2", "make_float3": "float3", "make_float4": "float4", "make_int2": "int2",
               "make_int4": "int4", "make_uint2": "uint2", "make_uint4": "uint4", "make_double2": "double2"}


class Lifter:
    def __init__(self, fir: ir.FunctionIR, kc: KernelContext, path: str):
        self.fir = fir
        self.kc = kc
        self.path = path
        self.bx, self.by = kc.bx, kc.by
        self.nlanes = kc.bx * kc.by
        self.st = LiftState()
        self.ctx = Ctx("default", {"x": "lane_x", "y": "lane_y"}, "[BY, BX]" if kc.by > 1 else "[BX]")

    @property
    def em(self) -> Emitter:
        return self.st.em

    # -- small services ------------------------------------------------------------------------------------

    def next_id(self) -> int:
        self.st.ids += 1
        return self.st.ids

    def idiom(self, text: str, loc: ir.Loc | None) -> None:
        if self.em.enabled and (text, loc) not in self.st.notes:
            self.st.notes.append((text, loc))

    def concrete_env(self) -> dict[str, np.ndarray]:
        env = comm.lane_env(self)
        out: dict[str, np.ndarray] = {k: v[None, :] for k, v in env.items()}
        for axis, size in self.st.red_axes.items():
            out[axis] = np.arange(size, dtype=np.int32)[:, None]
        return out

    def full_pred(self) -> list[Sym]:
        out = [p for p in self.st.pred]
        for f in self.st.fstack:
            if not f.done.is_const or f.done.value:
                out.append(S.lnot(f.done))
        for lc in self.st.lstack:
            for flag in (lc.brk, lc.cont):
                if not flag.is_const or flag.value:
                    out.append(S.lnot(flag))
        return [c for c in out if not (c.is_const and c.value)]

    def pred_sym(self) -> Sym:
        return S.land(*self.full_pred())

    def dead(self) -> bool:
        return any(c.is_const and not c.value for c in self.full_pred())

    # -- entry ---------------------------------------------------------------------------------------------

    def lift(self) -> None:
        fir = self.fir
        em = self.em
        for name, ct in fir.params:
            py = sanitize(name)
            self.st.params.append(py)
            em.used.add(py)
            self.bind(name, ct, self.param_value(py, ct, fir.loc))
        for a, axis in (("x", 0), ("y", 1), ("z", 2))[: max(1, self.kc.grid_dims)]:
            em.used.add(f"pid_{a}")
            em.line(f"pid_{a} = tl.program_id({axis})")
        if self.by > 1:
            em.line("lane_x = tl.arange(0, BX)[None, :]")
            em.line("lane_y = tl.arange(0, BY)[:, None]")
        else:
            em.line("lane_x = tl.arange(0, BX)")
        em.used.update({"lane_x", "lane_y"})
        self.st.fstack.append(FnCtx(fir.name, fir.ret, 0))
        self.stmts(fir.body)
        self.st.fstack.pop()

    def param_value(self, py: str, ct: ir.CType, loc: ir.Loc) -> Any:
        base = self.resolve_type(ct.base, loc)
        if ct.ptr:
            if ct.ptr > 1:
                raise LiftError("XL2013", f"parameter '{py}' is a pointer to a pointer", loc)
            if ctyping.vector(base):
                raise LiftError("XL2012", f"pointer parameter '{py}' to {base}: pass a scalar pointer", loc)
            return PtrVal(S.uni(py, base + "*"), S.const(0, "int"), ir.CType(base, 0, ct.const), py)
        info = ctyping.row(base)
        if info is None:
            raise LiftError("XL2012", f"parameter '{py}' of type {base}", loc)
        if base in ("int", "float", "bool"):
            return S.uni(py, base)
        if base in ("double", "__half", "__nv_bfloat16"):
            raise LiftError("XL2012", f"scalar parameter '{py}' of type {base}: Triton passes Python floats as float32", loc)
        conv = self.em.fresh(py + "_c")
        self.em.line(f"{conv} = {py} + tl.zeros([], {tl_of(base)})")
        return S.uni(conv, base)

    def resolve_type(self, name: str, loc: ir.Loc | None) -> str:
        for scope in reversed(self.st.scopes):
            b = scope.get(name)
            if b is not None and isinstance(b.val, TypeVal):
                return b.val.ctype
        if name in self.kc.types:
            return self.kc.types[name]
        return name

    # -- scopes --------------------------------------------------------------------------------------------

    def bind(self, name: str, ct: ir.CType, val: Any) -> None:
        done = tuple(f.done.id for f in self.st.fstack) + tuple(x.id for lc in self.st.lstack for x in (lc.brk, lc.cont))
        self.st.scopes[-1][name] = Binding(ct, val, len(self.st.pred), done)
        if isinstance(val, Sym) and not val.is_const and val.op not in ("uni", "var") and val.id not in self.em.hints:
            self.em.hints[val.id] = name

    def lookup(self, name: str) -> Binding | None:
        for scope in reversed(self.st.scopes):
            if name in scope:
                return scope[name]
        return None

    def set_var(self, name: str, val: Any, loc: ir.Loc) -> None:
        for scope in reversed(self.st.scopes):
            if name in scope:
                b = scope[name]
                new = self.convert(val, b.ctype, loc)
                rel = self.rel_pred(b)
                if rel is not None:
                    new = self.select(rel, new, b.val, loc)
                scope[name] = replace(b, val=new)
                if isinstance(new, Sym) and not new.is_const and new.op not in ("uni", "var") and new.id not in self.em.hints:
                    self.em.hints[new.id] = name
                return
        raise LiftError("XL2001", f"assignment to unknown variable '{name}'", loc)

    def rel_pred(self, b: Binding) -> Sym | None:
        conds = list(self.st.pred[b.decl_pred :])
        for f in self.st.fstack:
            if f.done.id not in b.decl_done and not (f.done.is_const and not f.done.value):
                conds.append(S.lnot(f.done))
        for lc in self.st.lstack:
            for flag in (lc.brk, lc.cont):
                if flag.id not in b.decl_done and not (flag.is_const and not flag.value):
                    conds.append(S.lnot(flag))
        p = S.land(*conds)
        if p.is_const and p.value:
            return None
        return p

    def push_scope(self) -> None:
        self.st.scopes.append({})

    def pop_scope(self) -> None:
        self.st.scopes.pop()

    # -- values ----------------------------------------------------------------------------------------------

    def data(self, v: Any, loc: ir.Loc | None) -> Sym:
        """A plain per-thread value (shared reads forwarded, tokens materialised)."""
        if isinstance(v, Sym):
            return v
        if isinstance(v, SharedRead):
            return comm.data_view(self, v)
        if isinstance(v, LaneTokens):
            try:
                act = comm.active_lanes(self, [c for c in self.full_pred() if c.concrete])
            except comm.NotTokenizable:
                act = np.ones(self.nlanes, dtype=bool)
            return comm.materialize(self, v, act, loc)
        if isinstance(v, PtrVal):
            raise LiftError("XL2013", "a pointer used as a number", loc)
        if isinstance(v, StructVal):
            raise LiftError("XL2012", f"a {v.ctype} used as a number", loc)
        raise LiftError("XL2001", f"value of kind {type(v).__name__} used as a number", loc)

    def cond(self, v: Any, loc: ir.Loc | None) -> Sym:
        d = self.data(v, loc)
        if d.ctype == "bool":
            return d
        if ctyping.is_float(d.ctype):
            return S.op("ne", "bool", d, S.const(0.0, d.ctype))
        return S.op("ne", "bool", d, S.const(0, "int"))

    def convert(self, v: Any, ct: ir.CType, loc: ir.Loc | None) -> Any:
        base = self.resolve_type(ct.base, loc)
        if ct.ptr:
            if isinstance(v, PtrVal | SharedArr):
                return v
            raise LiftError("XL2013", f"a non-pointer value assigned to a {base}*", loc)
        if ctyping.vector(base):
            if isinstance(v, StructVal) and v.ctype == base:
                return v
            raise LiftError("XL2012", f"value assigned to a {base}", loc)
        if base.startswith("__xl_"):
            if isinstance(v, CGroup):
                return v
            raise LiftError("XL2001", "cooperative-groups handle of an unknown kind", loc)
        if isinstance(v, SharedRead | LaneTokens) and v.ctype == base:
            return v
        d = self.data(v, loc)
        return S.cast(d, base)

    def select(self, c: Sym, a: Any, b: Any, loc: ir.Loc | None) -> Any:
        """c ? a : b for any value kind (b may be None: uninitialised)."""
        if b is None:
            return a
        if c.is_const:
            return a if c.value else b
        if isinstance(a, StructVal) and isinstance(b, StructVal):
            return StructVal(a.ctype, {k: self.select(c, a.fields[k], b.fields.get(k), loc) for k in a.fields})
        if isinstance(a, PtrVal) and isinstance(b, PtrVal):
            if a.base is not b.base:
                raise LiftError("XL2013", "a pointer that points into different buffers on different threads", loc)
            return PtrVal(a.base, S.where(c, a.offset, b.offset, "int"), a.elem, a.root)
        if a is b:
            return a
        tokenish = isinstance(a, SharedRead | LaneTokens) or isinstance(b, SharedRead | LaneTokens)
        if tokenish and c.concrete:
            try:
                mask = comm.concrete(self, c).astype(bool)

                def alt(c=c, a=a, b=b) -> Sym:
                    return S.where(c, self.data(a, loc), self.data(b, loc))

                return comm.token_select(self, mask, a, b, alt)
            except (comm.NotTokenizable, NotConcrete):
                pass
        da, db = self.data(a, loc), self.data(b, loc)
        return S.where(c, da, db, da.ctype if da.ctype == db.ctype else ctyping.arith(da.ctype, db.ctype))

    # -- statements ------------------------------------------------------------------------------------------

    def stmts(self, ss: tuple[ir.Stmt, ...] | list[ir.Stmt]) -> None:
        for s in ss:
            if self.dead():
                return
            self.stmt(s)

    def stmt(self, s: ir.Stmt) -> None:
        if isinstance(s, ir.Decl):
            self.decl(s)
        elif isinstance(s, ir.ExprStmt):
            self.effect(s.expr)
        elif isinstance(s, ir.If):
            self.if_stmt(s)
        elif isinstance(s, ir.For):
            self.for_stmt(s)
        elif isinstance(s, ir.While):
            self.while_stmt(s)
        elif isinstance(s, ir.Return):
            self.return_stmt(s)
        elif isinstance(s, ir.Break | ir.Continue):
            self.break_stmt(s)
        elif isinstance(s, ir.BlockStmt):
            self.push_scope()
            self.stmts(s.body)
            self.pop_scope()
        elif isinstance(s, ir.Typedef):
            self.typedef(s)
        elif isinstance(s, ir.Unsupported):
            raise LiftError(s.code, s.what, s.loc)
        else:
            raise LiftError("XL2001", f"statement {type(s).__name__}", s.loc)

    def typedef(self, s: ir.Typedef) -> None:
        if s.trait is not None:
            struct, arg, member = s.trait
            arg = self.resolve_type(arg, s.loc)
            name = self.kc.traits.get((struct, arg, member)) or self.kc.traits.get((struct, s.trait[1], member))
            if name is None:
                raise LiftError("XL2012", f"type trait {struct}<{arg}>::{member}", s.loc)
            self.bind(s.name, ir.CType(name), TypeVal(name))
        else:
            self.bind(s.name, s.ctype, TypeVal(self.resolve_type(s.ctype.base, s.loc)))

    def decl(self, s: ir.Decl) -> None:
        loc = s.loc
        base = self.resolve_type(s.ctype.base, loc)
        if s.shared:
            dims: list[int | None] = []
            for d in s.dims:
                if d is None:
                    if not s.extern:
                        raise LiftError("XL2004", f"shared array '{s.name}' without a size", loc)
                    dims.append(None)
                    continue
                v = self.data(self.ev(d), loc)
                if not v.is_const:
                    raise LiftError("XL2004", f"shared array '{s.name}' with a run-time size", loc)
                dims.append(int(v.value))
            if not dims:
                raise LiftError("XL2004", f"shared scalar '{s.name}'", loc)
            if ctyping.row(base) is None and not ctyping.is_symbolic(base):
                raise LiftError("XL2012", f"shared array of {base}", loc)
            arr = SharedArr(s.name, base, dims, loc)
            self.st.shared.append(arr)
            self.bind(s.name, s.ctype, arr)
            return
        if s.dims:
            if s.init_list is None and len(s.dims) == 1:
                size = self.data(self.ev(s.dims[0]), loc) if s.dims[0] is not None else None
                if size is None or not size.is_const:
                    raise LiftError("XL2001", f"local array '{s.name}' with a run-time size", loc)
                self.bind(s.name, s.ctype, LocalArray(base, int(size.value)))
                return
            if s.init_list is not None and len(s.dims) == 1:
                arr = LocalArray(base, len(s.init_list))
                for i, e in enumerate(s.init_list):
                    arr.slots[i] = self.convert(self.ev(e), ir.CType(base), loc)
                self.bind(s.name, s.ctype, arr)
                return
            raise LiftError("XL2001", f"multi-dimensional local array '{s.name}'", loc)
        ct = ir.CType(base, s.ctype.ptr, s.ctype.const)
        if s.init is None:
            if ctyping.vector(base) and not ct.ptr:
                fields = {f: S.const(0, ctyping.vector(base)["scalar"]) for f in ctyping.vector(base)["fields"]}
                self.bind(s.name, ct, StructVal(base, fields))
            else:
                self.bind(s.name, ct, None)
            return
        v = self.ev(s.init)
        if base == "auto":
            self.bind(s.name, ct, v)
            return
        self.bind(s.name, ct, self.convert(v, ct, loc))

    def if_stmt(self, s: ir.If) -> None:
        c = self.cond(self.ev(s.test), s.loc)
        if c.is_const:
            self.push_scope()
            self.stmts(s.then if c.value else s.other)
            self.pop_scope()
            return
        self.st.pred.append(c)
        self.push_scope()
        self.stmts(s.then)
        self.pop_scope()
        self.st.pred.pop()
        if s.other:
            self.st.pred.append(S.lnot(c))
            self.push_scope()
            self.stmts(s.other)
            self.pop_scope()
            self.st.pred.pop()

    def return_stmt(self, s: ir.Return) -> None:
        f = self.st.fstack[-1]
        if self.st.runtime_loops > f.loops:
            raise LiftError("XL2007", "return inside a loop", s.loc)
        conds = list(self.st.pred[f.pred_base :])
        for lc in self.st.lstack:
            if lc.pred_base >= f.pred_base:
                conds.extend(S.lnot(x) for x in (lc.brk, lc.cont) if not x.is_const or x.value)
        if not (f.done.is_const and not f.done.value):
            conds.append(S.lnot(f.done))
        rel = S.land(*conds)
        if s.value is not None:
            v = self.convert(self.ev(s.value), f.ret, s.loc)
            f.value = self.select(rel, v, f.value, s.loc) if f.value is not None else v
        f.done = S.op("lor", "bool", f.done, rel)

    def break_stmt(self, s: ir.Stmt) -> None:
        if not self.st.lstack or self.st.lstack[-1].pred_base < 0:
            raise LiftError("XL2007", f"{'break' if isinstance(s, ir.Break) else 'continue'} in a loop that is not unrolled", s.loc)
        lc = self.st.lstack[-1]
        rel = S.land(*self.st.pred[lc.pred_base :], *(S.lnot(x) for x in (lc.brk, lc.cont) if not x.is_const))
        if isinstance(s, ir.Break):
            lc.brk = S.op("lor", "bool", lc.brk, rel)
        else:
            lc.cont = S.op("lor", "bool", lc.cont, rel)

    # -- loops -----------------------------------------------------------------------------------------------

    def for_stmt(self, s: ir.For) -> None:
        self.push_scope()
        for st in s.init:
            self.stmt(st)
        if idioms.try_dot(self, s):
            self.pop_scope()
            return
        test = self.cond(self.ev(s.test), s.loc) if s.test is not None else S.const(1, "bool")
        if test.is_const and self.trip_count(s) is not None:
            self.unroll(s)
        elif not test.is_const or test.value:
            self.runtime_for(s, test)
        self.pop_scope()

    def loop_var(self, s: ir.For) -> str | None:
        names = []
        for st in s.init:
            if isinstance(st, ir.Decl):
                names.append(st.name)
            elif isinstance(st, ir.ExprStmt) and isinstance(st.expr, ir.Assign) and isinstance(st.expr.target, ir.Name):
                names.append(st.expr.target.id)
        return names[0] if len(names) == 1 else None

    def trip_count(self, s: ir.For) -> int | None:
        """Iterations of a loop whose condition is constant now, if the body leaves its variable alone."""
        v = self.loop_var(s)
        assigned, _ = ir.assigned_names(s.body)
        if v is None or v in assigned or s.test is None:
            return None
        fork = self.st.fork()
        self.em.enabled = False
        try:
            n = 0
            while n <= UNROLL_LIMIT:
                c = self.cond(self.ev(s.test), s.loc)
                if not c.is_const:
                    return None
                if not c.value:
                    return n
                n += 1
                for e in s.step:
                    self.effect(e)
            return None
        except LiftError:
            return None
        finally:
            fork.undo()

    def unroll(self, s: ir.For) -> None:
        lc = LoopCtx(pred_base=len(self.st.pred))
        self.st.lstack.append(lc)
        try:
            while True:
                c = self.cond(self.ev(s.test), s.loc) if s.test is not None else S.const(1, "bool")
                if not c.is_const:
                    raise LiftError("XL2007", "loop condition becomes data-dependent during unrolling", s.loc)
                if not c.value or (lc.brk.is_const and lc.brk.value):
                    break
                self.push_scope()
                self.stmts(s.body)
                self.pop_scope()
                lc.cont = S.const(0, "bool")
                for e in s.step:
                    self.effect(e)
        finally:
            self.st.lstack.pop()
        if not (lc.brk.is_const and not lc.brk.value):
            raise LiftError("XL2007", "break with a data-dependent condition", s.loc)

    def canonical(self, s: ir.For) -> tuple[str, str, Sym, Sym] | None:
        """(variable, comparison, bound, step) of `for (v = a; v < b; v += c)` with an untouched v."""
        v = self.loop_var(s)
        if v is None or s.test is None or len(s.step) != 1 or not isinstance(s.init[0], ir.Decl):
            return None
        assigned, _ = ir.assigned_names(s.body)
        if v in assigned or ir.contains(s.body, (ir.Break, ir.Continue, ir.Return)) is not None:
            return None
        t = s.test
        if not (isinstance(t, ir.Binary) and t.op in ("<", "<=") and isinstance(t.left, ir.Name) and t.left.id == v):
            return None
        if _mentions(t.right, v):
            return None
        step = s.step[0]
        inc: ir.Expr | None = None
        if isinstance(step, ir.IncDec) and isinstance(step.target, ir.Name) and step.target.id == v and step.op == "++":
            inc = ir.Num(step.loc, 1, "int")
        elif isinstance(step, ir.Assign) and isinstance(step.target, ir.Name) and step.target.id == v:
            if step.op == "+=":
                inc = step.value
            elif step.op == "=" and isinstance(step.value, ir.Binary) and step.value.op == "+" and \
                    isinstance(step.value.left, ir.Name) and step.value.left.id == v:
                inc = step.value.right
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
        can = self.canonical(s)
        if can is not None:
            v, _, bound, step = can
            b = self.lookup(v)
            start = self.data(b.val, s.loc)
            if start.uniform and step.is_const and step.value > 0:
                self.range_loop(s, v, start, bound, step, None)
                return
            aff = S.affine(start) if ctyping.is_int(start.ctype) else None
            if aff is not None and step.nonneg and not (step.is_const and step.value <= 0):
                coefs, rest = aff
                if coefs and not coefs.keys() & self.st.red_axes.keys():  # thread lanes only, no tl.dot axis
                    lane_part = _lane_sum(coefs)
                else:
                    lane_part = S.op("sub", "int", S.cast(start, "int"), S.cast(rest, "int"))
                if lane_part.concrete:
                    try:
                        mn = int(np.min(comm.concrete(self, lane_part)))
                    except NotConcrete:
                        mn = -1
                    if mn >= 0 and rest.uniform:
                        self.range_loop(s, v, rest, bound, step, lane_part)
                        return
        self.while_loop(s.body, s.step, s.test, test, s.loc, do=False)

    def range_loop(self, s: ir.For, v: str, start: Sym, bound: Sym, step: Sym, lane_part: Sym | None) -> None:
        """`for base in range(start, bound, step)`; with `lane_part`, thread t runs v = base + lane_part(t)."""
        b = self.lookup(v)
        vct = b.ctype
        body = list(s.body)

        def bind_iter(py_or_sym: Sym) -> None:
            val = py_or_sym if lane_part is None else S.op("add", "int", S.cast(py_or_sym, "int"), lane_part)
            self.st.scopes[-1][v] = Binding(vct, self.convert(val, vct, s.loc), len(self.st.pred), ())
            if lane_part is not None:
                self.st.pred.append(S.op("lt", "bool", self.data(self.lookup(v).val, s.loc), bound))

        def run(py_sym: Sym) -> None:
            self.push_scope()
            bind_iter(py_sym)
            self.push_scope()
            self.stmts(body)
            self.pop_scope()
            if lane_part is not None:
                self.st.pred.pop()
            self.pop_scope()

        carried = self.carried(body, [], exclude={v})
        it_name = self.em.fresh((v + "_base") if lane_part is not None else v)
        it_sym = S.var(it_name, "int", False, nonneg=start.nonneg)
        kinds = self.dry_kinds(carried, lambda: run(it_sym))
        slots = self.materialize(carried, kinds, s.loc)
        header = (f"for {it_name} in range({self.em.code(start, self.ctx, 'int')}, {self.em.code(bound, self.ctx, 'int')}, "
                  f"{self.em.code(step, self.ctx, 'int')}):")
        self.loop_body(header, slots, lambda: run(it_sym), s.loc)

    def while_loop(self, body: tuple[ir.Stmt, ...], step: tuple[ir.Expr, ...], test_expr: ir.Expr | None,
                   test0: Sym | None, loc: ir.Loc, do: bool) -> None:
        """A masked loop: threads leave it when their condition fails; it ends when none is left."""
        if ir.contains(body, (ir.Break, ir.Continue, ir.Return)) is not None:
            raise LiftError("XL2007", "break, continue or return in a data-dependent loop", loc)
        carried = self.carried(list(body), list(step), exclude=set())
        active_name = self.em.fresh("active")

        def run(active: Sym) -> Sym:
            self.st.pred.append(active)
            self.push_scope()
            self.stmts(body)
            self.pop_scope()
            for e in step:
                self.effect(e)
            self.st.pred.pop()
            c = self.cond(self.ev(test_expr), loc) if test_expr is not None else S.const(1, "bool")
            return S.op("land", "bool", active, c)

        first = test0 if test0 is not None and not do else S.const(1, "bool")
        varying = bool(first.lanes)
        for _ in range(3):
            act = S.var(active_name, "bool", varying)
            out: list[Sym] = []
            kinds = self.dry_kinds(carried, lambda act=act, out=out: out.append(run(act)))
            now = varying or bool(out and (out[0].lanes or out[0].opaque))
            if now == varying:
                break
            varying = now
        slots = self.materialize(carried, kinds, loc)
        act = S.var(active_name, "bool", varying)
        init = self.em.code(first, self.ctx, "bool")
        if varying:
            init = self.em.broadcast(init, first, self.ctx)
        self.em.line(f"{active_name} = {init}")
        flat = f"{active_name}.to(tl.int32)"
        if self.by > 1:
            flat = f"tl.reshape({flat}, (BY * BX,))"
        header = f"while tl.max({flat}, axis=0) > 0:" if varying else f"while {active_name}:"
        result: list[Sym] = []
        self.loop_body(header, slots, lambda: result.append(run(act)), loc,
                       extra=lambda: [(active_name, result[0], "bool", varying)])

    def while_stmt(self, s: ir.While) -> None:
        test0 = None if s.do else self.cond(self.ev(s.test), s.loc)
        if test0 is not None and test0.is_const and not test0.value:
            return
        self.while_loop(s.body, (), s.test, test0, s.loc, do=s.do)

    # -- loop plumbing ---------------------------------------------------------------------------------------

    def carried(self, body: list[ir.Stmt], step: list[ir.Expr], exclude: set[str]) -> list[str]:
        stmts = list(body) + [ir.ExprStmt(e.loc, e) for e in step]
        assigned, declared = ir.assigned_names(tuple(stmts))
        out = []
        for name in sorted(assigned - exclude):
            b = self.lookup(name)
            if b is None:
                continue
            if name in declared and not any(name in sc for sc in self.st.scopes):
                continue
            out.append(name)
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
        if v is None:
            return False
        return ("static", id(v))

    def dry_kinds(self, carried: list[str], run) -> dict[str, Any]:
        """Run the body without emitting, with placeholders for the carried variables, until their kinds
        (uniform or per-thread) are stable."""
        kinds = {n: self.kind(self.lookup(n).val) for n in carried}
        for _ in range(4):
            fork = self.st.fork()
            self.em.enabled = False
            try:
                for n in carried:
                    b = self.lookup(n)
                    self._rebind(n, self.placeholder(n, b, kinds[n]))
                self.st.runtime_loops += 1
                self.enter_loop_shared()
                run()
                after = {n: self.kind(self.lookup(n).val) for n in carried}
            finally:
                fork.undo()
            merged = {n: _join(kinds[n], after[n]) for n in carried}
            if merged == kinds:
                return kinds
            kinds = merged
        return kinds

    def placeholder(self, name: str, b: Binding, kind: Any) -> Any:
        v = b.val
        if isinstance(v, PtrVal):
            return PtrVal(v.base, S.var(f"__dry_{name}", "int", kind[1]), v.elem, v.root)
        if isinstance(v, StructVal):
            return StructVal(v.ctype, {k: S.var(f"__dry_{name}_{k}", x.ctype if isinstance(x, Sym) else "float", kind[k])
                                       for k, x in v.fields.items()})
        if isinstance(kind, tuple) and kind[0] == "static":
            return v
        return S.var(f"__dry_{name}", self.resolve_type(b.ctype.base, None), bool(kind))

    def _rebind(self, name: str, val: Any) -> None:
        for scope in reversed(self.st.scopes):
            if name in scope:
                scope[name] = replace(scope[name], val=val)
                return

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
                self._rebind(n, PtrVal(v.base, S.var(py, "int", k[1]), v.elem, v.root))
                slots.append((n, py, "int", k[1], "*ptr"))
            elif isinstance(v, StructVal):
                fields = {}
                for f, x in v.fields.items():
                    py = self.em.fresh(f"{n}_{f}")
                    ct = x.ctype if isinstance(x, Sym) else "float"
                    self.em.line(f"{py} = {self.init_code(self.data(x, loc), ct, k[f])}")
                    fields[f] = S.var(py, ct, k[f])
                    slots.append((n, py, ct, k[f], f))
                self._rebind(n, StructVal(v.ctype, fields))
            else:
                ct = self.resolve_type(b.ctype.base, loc)
                py = self.em.fresh(n)
                init = self.data(v, loc) if v is not None else S.const(0, ct if not ctyping.is_symbolic(ct) else "int")
                self.em.line(f"{py} = {self.init_code(init, ct, bool(k))}")
                self._rebind(n, S.var(py, ct, bool(k)))
                slots.append((n, py, ct, bool(k), None))
        return slots

    def init_code(self, v: Sym, ct: str, varying: bool) -> str:
        shape = self.ctx.shape if varying else "[]"
        if v.is_const and not ctyping.is_symbolic(ct):
            from xlate.translate.triton.emit import literal

            return f"tl.full({shape}, {literal(v.value, ct)}, {tl_of(edtype(S.const(v.value, ct)) if ct != 'unsigned int' else ct)})"
        code = self.em.code(v, self.ctx, ct)
        if varying:
            return self.em.broadcast(code, v, self.ctx)
        return code if v.op != "const" else f"tl.full([], {code}, {tl_of(ct)})"

    def loop_body(self, header: str, slots, run, loc: ir.Loc, extra=None) -> None:
        em = self.em
        em.line(header)
        header_at = len(em.lines)
        em.level += 1
        em.push()
        self.st.runtime_loops += 1
        saved = self.enter_loop_shared()
        run()
        updates: list[tuple[str, str]] = []
        for n, py, ct, varying, fld in slots:
            b = self.lookup(n)
            v = b.val
            if fld == "*ptr":
                new = v.offset
            elif fld is not None:
                new = self.data(v.fields[fld], loc)
            else:
                new = self.data(v, loc)
            updates.append((py, self.update_code(new, ct, varying)))
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
        self.leave_loop_shared(saved)
        self.st.runtime_loops -= 1
        em.pop()
        em.level -= 1
        # after the loop, the carried variables are their Python names
        for n, py, ct, varying, fld in slots:
            b = self.lookup(n)
            if fld == "*ptr":
                self._rebind(n, PtrVal(b.val.base, S.var(py, "int", varying), b.val.elem, b.val.root))
            elif fld is not None:
                fields = dict(b.val.fields)
                fields[fld] = S.var(py, ct, varying)
                self._rebind(n, StructVal(b.val.ctype, fields))
            else:
                self._rebind(n, S.var(py, ct, varying))

    def update_code(self, v: Sym, ct: str, varying: bool) -> str:
        code = self.em.code(v, self.ctx, ct if not ctyping.is_symbolic(ct) else None)
        if ctyping.is_symbolic(ct):
            code = f"{code}.to({tl_of(ct)})" if v.ctype != ct else code
        if (varying and not (v.lanes or v.opaque)) or (varying and v.lanes and "," in self.ctx.shape and v.lanes != {"x", "y"}):
            code = self.em.broadcast(code, v, self.ctx)
        elif not varying and v.op == "const":
            code = f"tl.full([], {code}, {tl_of(ct)})"
        return code

    def enter_loop_shared(self) -> list[tuple[SharedArr, int]]:
        saved = [(a, a.boundary) for a in self.st.shared]
        for a in self.st.shared:
            a.boundary = len(a.records)
        return saved

    def leave_loop_shared(self, saved: list[tuple[SharedArr, int]]) -> None:
        for a, boundary in saved:
            if len(a.records) > a.boundary:
                a.clobbered = True
            a.boundary = boundary

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

    # -- memory ----------------------------------------------------------------------------------------------

    def issue(self, value: Sym, mask: Sym, loc: ir.Loc | None) -> Sym:
        """Issue the not-yet-issued loads of a recomputed value (forwarding) under `mask`, in program order."""
        for ld in reversed(S.loads_in(value)):
            if ld.temp is not None:
                continue
            if ld.root and self.st.store_epoch.get(ld.root, 0) != ld.epoch:
                raise LiftError("XL2004", f"'{ld.root}' is written between a shared-memory staging store and its use", loc)
            ld.mask = S.land(ld.mask, mask) if ld.mask is not None else mask
            if not self.st.defer:
                self.em.emit_load(ld, self.ctx)
        return value

    def index_chain(self, e: ir.Expr) -> tuple[ir.Expr, list[ir.Expr]]:
        idx: list[ir.Expr] = []
        while isinstance(e, ir.Index):
            idx.insert(0, e.index)
            e = e.base
        return e, idx

    def read(self, e: ir.Index) -> Any:
        base_e, idx_e = self.index_chain(e)
        base = self.ev(base_e)
        idx = [self.data(self.ev(x), e.loc) for x in idx_e]
        return self.read_at(base, idx, e.loc)

    def read_at(self, base: Any, idx: list[Sym], loc: ir.Loc) -> Any:
        if isinstance(base, SharedArr):
            return self.shared_read(base, tuple(S.cast(i, "int") for i in idx), loc)
        if isinstance(base, ConstArray):
            if len(idx) != 1 or not idx[0].is_const:
                raise LiftError("XL2001", f"__constant__ array '{base.name}' indexed with a run-time index", loc)
            i = int(idx[0].value)
            if not 0 <= i < len(base.values):
                raise LiftError("XL2001", f"index {i} outside __constant__ array '{base.name}'", loc)
            self.st.uses_const.add(base.name)
            return S.const(base.values[i], base.ctype)
        if isinstance(base, LocalArray):
            if len(idx) != 1 or not idx[0].is_const:
                raise LiftError("XL2001", "local array indexed with a run-time index", loc)
            return base.slots.get(int(idx[0].value), S.const(0, base.ctype))
        if isinstance(base, PtrVal):
            if len(idx) != 1:
                raise LiftError("XL2013", "multi-dimensional indexing of a pointer", loc)
            if base.shared:
                return self.shared_read(base.base, (S.op("add", "int", base.offset, S.cast(idx[0], "int")),), loc)
            return self.global_load(base, idx[0], loc)
        raise LiftError("XL2001", f"indexing a {type(base).__name__}", loc)

    def shared_read(self, arr: SharedArr, idx: tuple[Sym, ...], loc: ir.Loc) -> SharedRead:
        if arr.clobbered:
            raise LiftError("XL2004", f"shared array '{arr.name}' is read after the run-time loop that wrote it", loc)
        in_loop = self.st.runtime_loops > 0
        recs = arr.records[arr.boundary :] if in_loop else list(arr.records)
        return SharedRead(arr, idx, tuple(self.full_pred()), self.st.epoch, loc, in_loop, recs,
                          before_loop=in_loop and arr.boundary > 0)

    def global_load(self, p: PtrVal, i: Sym, loc: ir.Loc) -> Any:
        vinfo = ctyping.vector(p.elem.base)
        if vinfo:
            fields = {}
            n = len(vinfo["fields"])
            base_off = S.op("mul", "int", S.op("add", "int", p.offset, S.cast(i, "int")), S.const(n, "int"))
            for k, f in enumerate(vinfo["fields"]):
                fields[f] = self.load_scalar(p, S.op("add", "int", base_off, S.const(k, "int")), vinfo["scalar"], loc)
            return StructVal(p.elem.base, fields)
        return self.load_scalar(p, S.op("add", "int", p.offset, S.cast(i, "int") if not ctyping.is_symbolic(i.ctype) else i),
                                p.elem.base, loc)

    def load_scalar(self, p: PtrVal, off: Sym, ctype: str, loc: ir.Loc) -> Sym:
        mask = self.pred_sym()
        ld = S.load(p.base, off, mask if not (mask.is_const and mask.value) else None, ctype, p.root,
                    self.st.store_epoch.get(p.root, 0))
        if not self.st.defer:
            self.em.emit_load(ld, self.ctx, hint=p.root)
        return ld

    def write(self, target: ir.Expr, val: Any, loc: ir.Loc) -> None:
        if isinstance(target, ir.Name):
            self.set_var(target.id, val, loc)
            return
        if isinstance(target, ir.Member):
            self.write_member(target, val, loc)
            return
        if isinstance(target, ir.Unary) and target.op == "*":
            p = self.ev(target.arg)
            self.write_at(p, [S.const(0, "int")], val, loc)
            return
        if isinstance(target, ir.Index):
            base_e, idx_e = self.index_chain(target)
            base = self.ev(base_e)
            idx = [self.data(self.ev(x), loc) for x in idx_e]
            if isinstance(base, LocalArray):
                if len(idx) != 1 or not idx[0].is_const:
                    raise LiftError("XL2001", "local array written at a run-time index", loc)
                k = int(idx[0].value)
                old = base.slots.get(k)
                new = self.convert(val, ir.CType(base.ctype), loc)
                b = self.lookup(base_e.id) if isinstance(base_e, ir.Name) else None
                rel = self.rel_pred(b) if b is not None else self.pred_sym()
                base.slots[k] = self.select(rel, new, old, loc) if rel is not None else new
                return
            self.write_at(base, idx, val, loc)
            return
        raise LiftError("XL2001", "assignment target", loc)

    def write_member(self, target: ir.Member, val: Any, loc: ir.Loc) -> None:
        if isinstance(target.base, ir.Name):
            b = self.lookup(target.base.id)
            if b is None or not isinstance(b.val, StructVal):
                raise LiftError("XL2012", f"member assignment to '{target.base.id}'", loc)
            sv = b.val
            if target.field not in sv.fields:
                raise LiftError("XL2012", f"{sv.ctype} has no member {target.field}", loc)
            scalar = ctyping.vector(sv.ctype)["scalar"]
            new = S.cast(self.data(val, loc), scalar)
            rel = self.rel_pred(b)
            fields = dict(sv.fields)
            fields[target.field] = self.select(rel, new, sv.fields[target.field], loc) if rel is not None else new
            self._rebind(target.base.id, StructVal(sv.ctype, fields))
            return
        if isinstance(target.base, ir.Index):
            base_e, idx_e = self.index_chain(target.base)
            p = self.ev(base_e)
            if not isinstance(p, PtrVal) or p.shared or not ctyping.vector(p.elem.base):
                raise LiftError("XL2013", "member store through a pointer", loc)
            vinfo = ctyping.vector(p.elem.base)
            k = vinfo["fields"].index(target.field)
            i = self.data(self.ev(idx_e[0]), loc)
            off = S.op("add", "int", S.op("mul", "int", S.op("add", "int", p.offset, S.cast(i, "int")),
                                          S.const(len(vinfo["fields"]), "int")), S.const(k, "int"))
            self.store_scalar(p, off, S.cast(self.data(val, loc), vinfo["scalar"]), loc)
            return
        raise LiftError("XL2001", "member assignment target", loc)

    def write_at(self, base: Any, idx: list[Sym], val: Any, loc: ir.Loc) -> None:
        if isinstance(base, SharedArr):
            self.shared_write(base, tuple(S.cast(i, "int") for i in idx), val, loc)
            return
        if isinstance(base, PtrVal):
            if len(idx) != 1:
                raise LiftError("XL2013", "multi-dimensional indexing of a pointer", loc)
            if base.shared:
                self.shared_write(base.base, (S.op("add", "int", base.offset, S.cast(idx[0], "int")),), val, loc)
                return
            if base.elem.const:
                raise LiftError("XL2013", f"store through const pointer '{base.root}'", loc)
            vinfo = ctyping.vector(base.elem.base)
            if vinfo:
                if not isinstance(val, StructVal):
                    raise LiftError("XL2012", f"store of a non-{base.elem.base} through a {base.elem.base} pointer", loc)
                n = len(vinfo["fields"])
                base_off = S.op("mul", "int", S.op("add", "int", base.offset, S.cast(idx[0], "int")), S.const(n, "int"))
                for k, f in enumerate(vinfo["fields"]):
                    self.store_scalar(base, S.op("add", "int", base_off, S.const(k, "int")),
                                      S.cast(self.data(val.fields[f], loc), vinfo["scalar"]), loc)
                return
            off = S.op("add", "int", base.offset, S.cast(idx[0], "int"))
            self.store_scalar(base, off, S.cast(self.data(val, loc), base.elem.base), loc)
            return
        if isinstance(base, ConstArray):
            raise LiftError("XL2001", f"store to __constant__ array '{base.name}'", loc)
        raise LiftError("XL2001", f"store into a {type(base).__name__}", loc)

    def shared_write(self, arr: SharedArr, idx: tuple[Sym, ...], val: Any, loc: ir.Loc) -> None:
        pred = tuple(self.full_pred())
        if isinstance(val, SharedRead):
            try:
                val = comm.token_view(self, val)
            except comm.NotTokenizable:
                val = self.data(val, loc)
        if isinstance(val, LaneTokens):
            ok = all(s.concrete for s in idx)
            if ok:
                try:
                    comm.active_lanes(self, pred)
                except comm.NotTokenizable:
                    ok = False
            if not ok:
                val = self.data(val, loc)
        elif isinstance(val, StructVal | PtrVal):
            raise LiftError("XL2004", f"shared array '{arr.name}' of structs or pointers", loc)
        if isinstance(val, Sym):
            val = S.cast(val, arr.ctype)
        rec = WriteRec(self.next_id(), arr, idx, pred, val, self.st.epoch, loc)
        self.st.records[rec.id] = rec
        arr.records.append(rec)

    def store_scalar(self, p: PtrVal, off: Sym, v: Sym, loc: ir.Loc) -> None:
        elem = v.ctype if ctyping.vector(p.elem.base) else p.elem.base  # components of vector stores: their scalar
        mask = self.uniform_effect_mask(off, v, plain=True)
        if mask is None:
            return
        em = self.em
        addr = em._address(p.base, off, mask, self.ctx)
        code = em.code(v, self.ctx, elem if not ctyping.is_symbolic(elem) else None)
        if ctyping.is_symbolic(elem) and v.ctype != elem:
            code = f"{code}.to({tl_of(elem)})"
        if mask.is_const:
            em.line(f"tl.store({addr}, {code})")
        else:
            em.line(f"tl.store({addr}, {code}, mask={em.code(mask, self.ctx, 'bool')})")
        self.st.store_epoch[p.root] = self.st.store_epoch.get(p.root, 0) + 1

    def uniform_effect_mask(self, off: Sym, v: Sym | None, plain: bool) -> Sym | None:
        """The mask of a store or atomic. A uniform effect under a thread-index condition that selects one
        thread (or any threads, for plain stores) is done once, unmasked by that condition. None: no thread."""
        conds = self.full_pred()
        if any(c.is_const and not c.value for c in conds):
            return None
        uniform = off.uniform and not off.opaque and (v is None or (v.uniform and not v.opaque))
        if not uniform:
            return S.land(*conds)
        lane_conds = [c for c in conds if c.concrete and c.lanes]
        if not lane_conds:
            return S.land(*conds)
        try:
            act = comm.concrete(self, S.land(*lane_conds)).astype(bool)
        except NotConcrete:
            return S.land(*conds)
        k = int(act.sum())
        if k == 0:
            return None
        if plain or k == 1:
            return S.land(*(c for c in conds if c not in lane_conds))
        return S.land(*conds)

    # -- expressions -----------------------------------------------------------------------------------------

    def effect(self, e: ir.Expr) -> None:
        """An expression statement: assignments, ++/--, calls."""
        if isinstance(e, ir.Assign):
            self.assign(e)
        elif isinstance(e, ir.IncDec):
            one = ir.Num(e.loc, 1, "int")
            self.assign(ir.Assign(e.loc, e.target, "+=" if e.op == "++" else "-=", one))
        else:
            self.ev(e)

    def assign(self, e: ir.Assign) -> None:
        if e.op == "=":
            val = self.ev(e.value)
        else:
            op = e.op[:-1]
            val = self.binary(op, self.ev(e.target), self.ev(e.value), e.loc)
        self.write(e.target, val, e.loc)

    def ev(self, e: ir.Expr) -> Any:
        if isinstance(e, ir.Num):
            return S.const(e.value, e.ctype)
        if isinstance(e, ir.Name):
            return self.name(e)
        if isinstance(e, ir.Builtin):
            return self.builtin(e)
        if isinstance(e, ir.Binary):
            if e.op in ("&&", "||"):
                return self.logical(e)
            return self.binary(e.op, self.ev(e.left), self.ev(e.right), e.loc)
        if isinstance(e, ir.Unary):
            return self.unary(e)
        if isinstance(e, ir.Cond):
            return self.ternary(e)
        if isinstance(e, ir.Index):
            return self.read(e)
        if isinstance(e, ir.Member):
            return self.member(e)
        if isinstance(e, ir.Cast):
            return self.cast(e)
        if isinstance(e, ir.Call):
            return self.call(e)
        if isinstance(e, ir.MethodCall):
            return self.method(e)
        if isinstance(e, ir.Sizeof):
            base = self.resolve_type(e.ctype.base, e.loc)
            if e.ctype.ptr:
                return S.const(8, "unsigned long")
            info = ctyping.row(base)
            vinfo = ctyping.vector(base)
            if vinfo:
                return S.const(len(vinfo["fields"]) * ctyping.row(vinfo["scalar"])["bits"] // 8, "unsigned long")
            if info is None:
                raise LiftError("XL2012", f"sizeof({base})", e.loc)
            return S.const(max(1, info["bits"] // 8), "unsigned long")
        if isinstance(e, ir.Assign | ir.IncDec):
            raise LiftError("XL2001", "assignment used as a value", e.loc)
        raise LiftError("XL2001", f"expression {type(e).__name__}", e.loc)

    def name(self, e: ir.Name) -> Any:
        b = self.lookup(e.id)
        if b is not None:
            if b.val is None:
                ct = self.resolve_type(b.ctype.base, e.loc)
                return S.const(0, ct if not ctyping.is_symbolic(ct) else "int")  # uninitialised: any value
            return b.val
        if e.id in self.kc.const_arrays:
            return self.kc.const_arrays[e.id]
        if e.id in self.kc.constants:
            ct, v = self.kc.constants[e.id]
            return S.const(v, ct)
        nc = named_constant(e.id)
        if nc is not None:
            return S.const(nc[1], nc[0])
        raise LiftError("XL2001", f"unknown identifier '{e.id}'", e.loc)

    def builtin(self, e: ir.Builtin) -> Sym:
        if e.axis not in ("x", "y", "z"):
            raise LiftError("XL2001", f"{e.var}.{e.axis}", e.loc)
        size = {"x": self.bx, "y": self.by, "z": 1}[e.axis]
        if e.var == "threadIdx":
            return S.lane(e.axis) if size > 1 else S.const(0, "unsigned int")
        if e.var == "blockDim":
            return S.const(size, "unsigned int")
        axis = "xyz".index(e.axis)
        if axis >= max(1, self.kc.grid_dims):
            return S.const(0, "unsigned int") if e.var == "blockIdx" else S.const(1, "unsigned int")
        if e.var == "blockIdx":
            return S.uni(f"pid_{e.axis}", "unsigned int", nonneg=True)
        return S.uni(f"tl.num_programs({axis})", "unsigned int", nonneg=True)

    def logical(self, e: ir.Binary) -> Sym:
        a = self.cond(self.ev(e.left), e.loc)
        if a.is_const:
            if e.op == "&&" and not a.value:
                return S.const(0, "bool")
            if e.op == "||" and a.value:
                return S.const(1, "bool")
            return self.cond(self.ev(e.right), e.loc)
        self.st.pred.append(a if e.op == "&&" else S.lnot(a))
        try:
            b = self.cond(self.ev(e.right), e.loc)
        finally:
            self.st.pred.pop()
        return S.op("land" if e.op == "&&" else "lor", "bool", a, b)

    def ternary(self, e: ir.Cond) -> Any:
        c = self.cond(self.ev(e.test), e.loc)
        if c.is_const:
            return self.ev(e.then if c.value else e.other)
        self.st.pred.append(c)
        try:
            a = self.ev(e.then)
        finally:
            self.st.pred.pop()
        self.st.pred.append(S.lnot(c))
        try:
            b = self.ev(e.other)
        finally:
            self.st.pred.pop()
        if isinstance(a, SharedRead | LaneTokens) or isinstance(b, SharedRead | LaneTokens):
            return self.select(c, a, b, e.loc)
        if isinstance(a, PtrVal | StructVal) or isinstance(b, PtrVal | StructVal):
            return self.select(c, a, b, e.loc)
        da, db = self.data(a, e.loc), self.data(b, e.loc)
        return S.where(c, da, db, ctyping.arith(da.ctype, db.ctype))

    def binary(self, op: str, a: Any, b: Any, loc: ir.Loc) -> Any:
        if isinstance(a, PtrVal) or isinstance(b, PtrVal):
            return self.ptr_arith(op, a, b, loc)
        if op == "+" and (isinstance(a, SharedRead | LaneTokens) or isinstance(b, SharedRead | LaneTokens)):
            try:
                return comm.token_binary(self, "sum", a, b, lambda a=a, b=b: self.binary_data("+", a, b, loc))
            except comm.NotTokenizable:
                pass
        return self.binary_data(op, a, b, loc)

    def binary_data(self, op: str, a: Any, b: Any, loc: ir.Loc) -> Sym:
        x, y = self.data(a, loc), self.data(b, loc)
        if op in CMPS:
            return S.op(CMPS[op], "bool", x, y)
        if op in ("<<", ">>"):
            return S.op(ARITH[op], ctyping.promote(x.ctype), x, y)
        if op not in ARITH:
            raise LiftError("XL2001", f"operator '{op}'", loc)
        t = ctyping.arith(x.ctype, y.ctype)
        if op in ("&", "|", "^", "%", "<<", ">>") and not ctyping.is_symbolic(t) and ctyping.is_float(t):
            raise LiftError("XL2001", f"operator '{op}' on floating-point values", loc)
        return S.op(ARITH[op], t, x, y)

    def ptr_arith(self, op: str, a: Any, b: Any, loc: ir.Loc) -> PtrVal:
        if isinstance(a, PtrVal) and op in ("+", "-") and not isinstance(b, PtrVal):
            d = S.cast(self.data(b, loc), "int")
            if op == "-":
                d = S.op("neg", "int", d)
            return PtrVal(a.base, S.op("add", "int", a.offset, d), a.elem, a.root)
        if isinstance(b, PtrVal) and op == "+" and not isinstance(a, PtrVal):
            return self.ptr_arith("+", b, a, loc)
        raise LiftError("XL2013", f"pointer arithmetic '{op}'", loc)

    def unary(self, e: ir.Unary) -> Any:
        if e.op == "&":
            return self.address_of(e.arg, e.loc)
        v = self.ev(e.arg)
        if e.op == "*":
            return self.read_at(v, [S.const(0, "int")], e.loc)
        if e.op == "!":
            return S.lnot(self.cond(v, e.loc))
        d = self.data(v, e.loc)
        if e.op == "-":
            return S.op("neg", ctyping.promote(d.ctype), d)
        if e.op == "+":
            return S.cast(d, ctyping.promote(d.ctype))
        if e.op == "~":
            return S.op("bnot", ctyping.promote(d.ctype), d)
        raise LiftError("XL2001", f"unary operator '{e.op}'", e.loc)

    def address_of(self, e: ir.Expr, loc: ir.Loc) -> PtrVal:
        if isinstance(e, ir.Index):
            base_e, idx_e = self.index_chain(e)
            base = self.ev(base_e)
            idx = [self.data(self.ev(x), loc) for x in idx_e]
            if isinstance(base, PtrVal) and len(idx) == 1:
                return PtrVal(base.base, S.op("add", "int", base.offset, S.cast(idx[0], "int")), base.elem, base.root)
            if isinstance(base, SharedArr):
                raise LiftError("XL2005", f"address of shared array element '{base.name}[...]' (shared atomics)", loc)
        raise LiftError("XL2013", "address-of expression", loc)

    def member(self, e: ir.Member) -> Any:
        v = self.ev(e.base)
        if isinstance(v, StructVal):
            if e.field not in v.fields:
                raise LiftError("XL2012", f"{v.ctype} has no member {e.field}", e.loc)
            return v.fields[e.field]
        raise LiftError("XL2001", f"member access .{e.field}", e.loc)

    def cast(self, e: ir.Cast) -> Any:
        v = self.ev(e.arg)
        base = self.resolve_type(e.to.base, e.loc)
        if e.to.ptr:
            if not isinstance(v, PtrVal) or v.shared:
                raise LiftError("XL2013", f"cast to {base}*", e.loc)
            vinfo = ctyping.vector(base)
            if vinfo and vinfo["scalar"] == v.elem.base:
                n = len(vinfo["fields"])
                if not (v.offset.is_const and v.offset.value % n == 0):
                    raise LiftError("XL2013", f"reinterpretation as {base}* of a pointer not known to be aligned", e.loc)
                return PtrVal(v.base, S.const(v.offset.value // n, "int"), ir.CType(base, 0, e.to.const), v.root)
            if base == v.elem.base:
                return PtrVal(v.base, v.offset, ir.CType(base, 0, e.to.const), v.root)
            raise LiftError("XL2013", f"cast of a {v.elem.base}* to {base}*", e.loc)
        if ctyping.vector(base):
            raise LiftError("XL2012", f"cast to {base}", e.loc)
        if isinstance(v, SharedRead | LaneTokens) and v.ctype == base:
            return v
        return S.cast(self.data(v, e.loc), base)

    # -- calls -------------------------------------------------------------------------------------------------

    def call(self, e: ir.Call) -> Any:
        fn = e.fn
        if fn in BARRIERS:
            self.barrier(e.loc)
            return S.const(0, "int")
        if fn in FENCES:
            return S.const(0, "int")
        if fn in SHUFFLES:
            kind, has_mask = SHUFFLES[fn]
            args = list(e.args[1:] if has_mask else e.args)
            if len(args) < 2:
                raise LiftError("XL2003", f"{fn} with {len(e.args)} arguments", e.loc)
            v = self.ev(args[0])
            arg = self.data(self.ev(args[1]), e.loc)
            width = 32
            if len(args) > 2:
                w = self.data(self.ev(args[2]), e.loc)
                if not w.is_const:
                    raise LiftError("XL2003", f"{fn} with a run-time width", e.loc)
                width = int(w.value)
            return comm.shuffle(self, v, kind, arg, width, e.loc)
        if fn in WARP_OTHER:
            raise LiftError("XL2003", f"warp intrinsic {fn}", e.loc)
        if fn in ("cg::this_thread_block",):
            return CGroup("block", self.nlanes)
        if fn == "cg::tiled_partition":
            if not e.targs or not e.targs[0].isdigit():
                raise LiftError("XL2003", "tiled_partition with a run-time size", e.loc)
            size = int(e.targs[0])
            if size > 32 or size & (size - 1) or self.nlanes % size:
                raise LiftError("XL2003", f"tiled_partition<{size}>", e.loc)
            return CGroup("tile", size)
        if fn in MAKE_VECTOR:
            ct = MAKE_VECTOR[fn]
            vinfo = ctyping.vector(ct)
            if len(e.args) != len(vinfo["fields"]):
                raise LiftError("XL2012", f"{fn} with {len(e.args)} arguments", e.loc)
            return StructVal(ct, {f: S.cast(self.data(self.ev(a), e.loc), vinfo["scalar"]) for f, a in zip(vinfo["fields"], e.args)})
        at = atomic_entry(fn)
        if at is not None:
            return self.atomic(e, at)
        if fn in self.kc.devices:
            return self.inline(self.kc.devices[fn], e)
        entry = math_entry(fn)
        if entry is not None:
            return self.math(fn.removeprefix("cuda::").removeprefix("std::").removeprefix("::"), entry, e)
        if fn.startswith("printf"):
            raise LiftError("XL2001", "printf", e.loc)
        raise LiftError("XL2008", f"call of '{fn}'", e.loc)

    def barrier(self, loc: ir.Loc) -> None:
        for c in self.full_pred():
            if c.lanes or c.opaque:
                raise LiftError("XL2015", "__syncthreads under a thread-dependent condition", loc)
        self.st.epoch += 1

    def math(self, fn: str, entry: dict[str, Any], e: ir.Call) -> Any:
        if entry.get("load"):
            p = self.ev(e.args[0]) if not isinstance(e.args[0], ir.Unary) else self.address_of(e.args[0].arg, e.loc)
            if not isinstance(p, PtrVal):
                raise LiftError("XL2013", f"{fn} of a non-pointer", e.loc)
            return self.read_at(p, [S.const(0, "int")], e.loc)
        vals = [self.ev(a) for a in e.args]
        if len(vals) != len(entry.get("args", vals)):
            raise LiftError("XL2008", f"{fn} with {len(vals)} arguments", e.loc)
        red_op = entry.get("reduce")
        if red_op and len(vals) == 2 and any(isinstance(v, SharedRead | LaneTokens) for v in vals):
            try:
                return comm.token_binary(self, red_op, vals[0], vals[1],
                                         lambda vals=vals: self.math_data(fn, entry, vals, e.loc))
            except comm.NotTokenizable:
                pass
        return self.math_data(fn, entry, vals, e.loc)

    def math_data(self, fn: str, entry: dict[str, Any], vals: list[Any], loc: ir.Loc) -> Sym:
        args = [self.data(v, loc) for v in vals]
        res = entry.get("result", "float")
        if res == "arg":
            res = args[0].ctype
            for a in args[1:]:
                res = ctyping.arith(res, a.ctype)
            args = [S.cast(a, res) for a in args]
        else:
            want = entry.get("args", [])
            args = [S.cast(a, w) if w != "arg" else a for a, w in zip(args, want)]
        return S.op("call", res, *args, fn=fn)

    def atomic(self, e: ir.Call, at: dict[str, Any]) -> Sym:
        if len(e.args) != 2:
            raise LiftError("XL2001", f"{e.fn} with {len(e.args)} arguments", e.loc)
        target = e.args[0]
        if isinstance(target, ir.Unary) and target.op == "&":
            p = self.address_of(target.arg, e.loc)
        else:
            p = self.ev(target)
        if isinstance(p, SharedArr) or (isinstance(p, PtrVal) and p.shared):
            raise LiftError("XL2005", f"{e.fn} on shared memory", e.loc)
        if not isinstance(p, PtrVal):
            raise LiftError("XL2013", f"{e.fn} target", e.loc)
        v = S.cast(self.data(self.ev(e.args[1]), e.loc), p.elem.base)
        if at.get("negate"):
            v = S.op("neg", v.ctype, v)
        mask = self.uniform_effect_mask(p.offset, v, plain=False)
        if mask is None:
            return S.const(0, p.elem.base)
        em = self.em
        addr = em._address(p.base, p.offset, mask, self.ctx)
        code = em.code(v, self.ctx, p.elem.base)
        if not (v.lanes or p.offset.lanes) and mask.lanes:
            code = em.broadcast(code, v, self.ctx)
        m = "" if mask.is_const else f", mask={em.code(mask, self.ctx, 'bool')}"
        old = em.assign("old", f"{at['tl']}({addr}, {code}{m})")
        self.st.store_epoch[p.root] = self.st.store_epoch.get(p.root, 0) + 1
        return S.var(old, p.elem.base, bool(v.lanes or p.offset.lanes or mask.lanes))

    def method(self, e: ir.MethodCall) -> Any:
        obj = self.ev(e.obj)
        if isinstance(obj, CGroup):
            linear = self.linear_tid()
            m = e.method
            if m in ("sync", "barrier_wait"):
                if obj.kind == "block":
                    self.barrier(e.loc)
                else:
                    self.st.epoch += 1
                return S.const(0, "int")
            if m in ("size", "num_threads"):
                return S.const(obj.size, "unsigned int")
            if m == "thread_rank":
                return linear if obj.kind == "block" else S.op("mod", "unsigned int", linear, S.const(obj.size, "unsigned int"))
            if obj.kind == "tile" and m == "meta_group_rank":
                return S.op("div", "unsigned int", linear, S.const(obj.size, "unsigned int"))
            if obj.kind == "tile" and m == "meta_group_size":
                return S.const(self.nlanes // obj.size, "unsigned int")
            if obj.kind == "tile" and m in ("shfl_down", "shfl_up", "shfl_xor", "shfl"):
                v = self.ev(e.args[0])
                arg = self.data(self.ev(e.args[1]), e.loc)
                kind = {"shfl_down": "down", "shfl_up": "up", "shfl_xor": "xor", "shfl": "idx"}[m]
                return comm.shuffle(self, v, kind, arg, obj.size, e.loc)
            raise LiftError("XL2003", f"cooperative-groups member {m}()", e.loc)
        raise LiftError("XL2001", f"method call .{e.method}()", e.loc)

    def linear_tid(self) -> Sym:
        x = S.lane("x") if self.bx > 1 else S.const(0, "unsigned int")
        if self.by > 1:
            return S.op("add", "unsigned int", x, S.op("mul", "unsigned int", S.lane("y"), S.const(self.bx, "unsigned int")))
        return x

    def inline(self, f: ir.FunctionIR, e: ir.Call) -> Any:
        if len(self.st.fstack) > MAX_INLINE_DEPTH or any(fc.name == f.name for fc in self.st.fstack):
            raise LiftError("XL2014", f"recursive call of '{f.name}'", e.loc)
        if len(e.args) != len(f.params):
            raise LiftError("XL2008", f"'{f.name}' called with {len(e.args)} arguments, takes {len(f.params)}", e.loc)
        vals = [self.ev(a) for a in e.args]
        saved = self.st.scopes
        self.st.scopes = [{}]
        try:
            for (name, ct), v in zip(f.params, vals):
                if ct.base.startswith("__xl_") or (ct.ptr and isinstance(v, SharedArr)):
                    self.bind(name, ct, v)
                else:
                    self.bind(name, ct, self.convert(v, ct, e.loc))
            fc = FnCtx(f.name, f.ret, len(self.st.pred), loops=self.st.runtime_loops)
            self.st.fstack.append(fc)
            self.stmts(f.body)
            self.st.fstack.pop()
        finally:
            self.st.scopes = saved
        if fc.value is None:
            return S.const(0, "int")
        return fc.value


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
