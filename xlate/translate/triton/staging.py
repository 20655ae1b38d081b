"""Staging loops: a block copies a range of global memory (or any per-element value) into shared memory with a
lane-strided loop, then reads it back after a barrier.

    for (int k = threadIdx.x + c; k < bound; k += blockDim.x)
        if (cond(k)) s[k + d] = value(k);
    __syncthreads();
    ... s[j] ...

The threads of the block start at every residue of the stride, so together they run every k in [c, bound): after
the loop, s[e] holds value(e - d) where c <= e - d < bound and cond(e - d) held. The loop is not lifted as a loop;
each later read s[j] becomes value(j - d) (under that validity), the expressions evaluated again for the element
read, in the scopes the loop saw. That is exact when value and cond read only k and values the same for every
thread (never threadIdx, nor another shared array), when the memory they load is not stored to between the loop
and the read, and when every thread of the block runs the loop (no per-thread condition around it, no enclosing
run-time loop). An element the loop does not write is undefined in CUDA (the port reads 0). Anything else is left
to the ordinary lowering.
"""

from __future__ import annotations

from typing import Any

from xlate.cir import ctype as ctyping
from xlate.cir import ir
from xlate.translate.triton import sym as S
from xlate.translate.triton.state import Binding, LiftState
from xlate.translate.triton.sym import Sym
from xlate.translate.triton.values import LiftError, PtrVal, SharedArr, StagedCopy


class Staging:
    """Staging loops into shared memory (mixed into the Lifter)."""

    st: LiftState

    def staged_copy(self, s: ir.For, can: tuple[str, str, Sym, Sym] | None) -> bool:
        """Record `s` as a staging loop (nothing emitted) if it is one; False, the state untouched, otherwise."""
        if can is None or self.st.runtime_loops or not (len(s.init) == 1 and isinstance(s.init[0], ir.Decl)):
            return False
        var, _, bound, step = can
        body = _single(s.body)
        cond: ir.Expr | None = None
        if isinstance(body, ir.If) and not body.other:
            cond, body = body.test, _single(body.then)
        if not (isinstance(body, ir.ExprStmt) and isinstance(body.expr, ir.Assign) and body.expr.op == "="):
            return False
        target = body.expr.target
        if not (isinstance(target, ir.Index) and isinstance(target.base, ir.Name)):
            return False
        b = self.lookup(target.base.id)
        arr, base_off = (b.val, S.const(0, "int")) if b is not None else (None, None)
        if isinstance(arr, PtrVal) and arr.shared and arr.offset.uniform:
            arr, base_off = arr.base, arr.offset
        if not isinstance(arr, SharedArr) or len(arr.dims) != 1 or arr.scalar or arr.records or arr.staged:
            return False
        shift_e = _shift(target.index, var)
        if shift_e is None:
            return False
        exprs = [body.expr.value, shift_e] + ([cond] if cond is not None else [])
        if not self.uniform_except(exprs, var):
            return False
        start = self.data(self.lookup(var).val, s.loc)
        threads = self.staging_threads(start, step)
        if threads is None:
            return False
        pred = [c for c in self.full_pred() if c is not self.lane_guard]
        if any(not c.uniform or c.opaque for c in pred):
            return False  # threads that skip the loop leave their iterations unwritten
        shift = S.op("add", "int", S.cast(self.data(self.ev(shift_e), s.loc), "int"), S.cast(base_off, "int"))
        if not shift.uniform:
            return False
        var_type = self.resolve_type(s.init[0].ctype.base, s.loc)
        if s.init[0].ctype.ptr or not ctyping.is_int(var_type):
            return False
        arr.staged = StagedCopy(
            var,
            var_type,
            body.expr.value,
            cond,
            S.cast(threads, "int"),
            S.cast(bound, "int"),
            shift,
            tuple(dict(sc) for sc in self.st.scopes),
            S.land(*pred),
            self.st.epoch,
            tuple(sorted(self.st.store_epoch.items())),
        )
        self.idiom(f"staging loop into shared array '{arr.name}' read back element by element", s.loc)
        return True

    def staging_threads(self, start: Sym, step: Sym) -> Sym | None:
        """c where `start` is threadIdx (linear over the block) + c and `step` the block's thread count."""
        aff = S.affine(start) if ctyping.is_int(start.ctype) else None
        if aff is None or not step.is_const or self.real_bx is None:
            return None
        coefs, rest = aff
        if not rest.uniform:
            return None
        if self.real_by == 1 and coefs == {"x": 1} and step.value == self.real_bx:
            return rest
        if coefs == {"x": 1, "y": self.real_bx} and step.value == self.real_bx * self.real_by:
            return rest
        return None

    def uniform_except(self, exprs: list[ir.Expr], var: str) -> bool:
        """Whether `exprs` read nothing but `var`, names whose values are the same on every thread (no shared
        memory), and no thread index; and assign nothing."""
        for e in exprs:
            if ir.has_effects(e):
                return False
            for n in ir.walk(e):
                if isinstance(n, ir.Builtin) and n.var == "threadIdx":
                    return False
                if isinstance(n, ir.Name) and n.id != var:
                    b = self.lookup(n.id)
                    if b is None:
                        continue  # a macro, constant or function of the program: the same everywhere
                    v = b.val
                    if isinstance(v, SharedArr) or (
                        isinstance(v, PtrVal) and (v.shared or not v.offset.uniform)
                    ):
                        return False
                    if isinstance(v, Sym) and (not v.uniform or v.opaque):
                        return False
                    if not isinstance(v, Sym | PtrVal):
                        return False
        return True

    def staged_read(self, arr: SharedArr, idx: tuple[Sym, ...], loc: ir.Loc) -> Sym:
        """s[j] of a staged array: the staging loop's value for iteration j - d (0 where it wrote nothing)."""
        sc = arr.staged
        assert sc is not None
        if arr.records:
            raise LiftError(
                "XL2004", f"shared array '{arr.name}' is written after the loop that staged it", loc
            )
        if self.st.epoch == sc.epoch:
            raise LiftError(
                "XL2009",
                f"'{arr.name}' is read from another thread without a __syncthreads after its write",
                loc,
            )
        k = S.op("sub", "int", S.cast(idx[0], "int"), sc.shift)
        valid = S.land(sc.pred, S.op("ge", "bool", k, sc.start), S.op("lt", "bool", k, sc.bound))
        saved_scopes, saved_pred = self.st.scopes, len(self.st.pred)
        self.st.scopes = [dict(x) for x in sc.scopes] + [
            {sc.var: Binding(ir.CType(sc.var_type), S.cast(k, sc.var_type))}
        ]
        try:
            self.st.pred.append(valid)
            if sc.cond is not None:
                valid = S.land(valid, self.cond(self.ev(sc.cond), loc))
                self.st.pred.append(valid)
            value: Any = S.cast(self.data(self.ev(sc.value), loc), arr.ctype)
        finally:
            self.st.scopes = saved_scopes
            del self.st.pred[saved_pred:]
        stores = dict(sc.stores)
        for ld in S.loads_in(value):
            if ld.root and self.st.store_epoch.get(ld.root, 0) != stores.get(ld.root, 0):
                raise LiftError(
                    "XL2004",
                    f"'{ld.root}' is written between the loop that staged '{arr.name}' and a read of it",
                    loc,
                )
        return S.where(valid, value, S.const(0, arr.ctype), arr.ctype)


def _single(body: tuple[ir.Stmt, ...]) -> ir.Stmt | None:
    while len(body) == 1 and isinstance(body[0], ir.BlockStmt):
        body = body[0].body
    return body[0] if len(body) == 1 else None


def _shift(index: ir.Expr, var: str) -> ir.Expr | None:
    """d where `index` is `var + d`, `d + var` or `var - d` (d not reading var); None otherwise."""
    if isinstance(index, ir.Name) and index.id == var:
        return ir.Num(index.loc, 0, "int")
    if isinstance(index, ir.Binary) and index.op in ("+", "-"):
        left, right = index.left, index.right
        if isinstance(left, ir.Name) and left.id == var and var not in ir.names_in(right):
            return right if index.op == "+" else ir.Unary(index.loc, "-", right)
        if (
            index.op == "+"
            and isinstance(right, ir.Name)
            and right.id == var
            and var not in ir.names_in(left)
        ):
            return left
    return None
