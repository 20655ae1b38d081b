"""Scopes and predication: names in scope, and the conditions (ifs, returns, breaks) under which the current
program point runs. Assignments under a condition become selects between the new and the old value."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from xlate.cir import ctype as ctyping
from xlate.cir import ir
from xlate.translate.triton import sym as S
from xlate.translate.triton.state import Binding, KernelContext, LiftState
from xlate.translate.triton.sym import Sym
from xlate.translate.triton.values import (
    LiftError,
    TypeVal,
)


class Scopes:
    """Names and predicates of the program point (mixed into the Lifter; state in `self.st`)."""

    st: LiftState
    kc: KernelContext
    module_vars: dict[str, Binding]  # the module variables the spec lists (lift.module_binding), by name

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

    def resolve_type(self, name: str, loc: ir.Loc | None) -> str:
        for scope in reversed(self.st.scopes):
            b = scope.get(name)
            if b is not None and isinstance(b.val, TypeVal):
                return b.val.ctype
        if name in self.kc.types:
            return self.kc.types[name]
        if self.kc.typedefs is not None and ctyping.row(name) is None and ctyping.vector(name) is None:
            real = ctyping.canonical(self.kc.typedefs(name))  # `typedef double real;`, `using Index_t = int;`
            if ctyping.row(real) is not None or ctyping.vector(real) is not None or (
                    real != name and self.kc.structs is not None and self.kc.structs(real) is not None):
                return real
        return name

    def vec_info(self, ctype: str) -> dict[str, Any] | None:
        """{"scalar", "fields"} of a CUDA vector type or a packed struct of the program; None otherwise."""
        v = ctyping.vector(ctype)
        if v is None and self.kc.structs is not None and ctyping.row(ctype) is None and not ctype.startswith("__xl_"):
            v = self.kc.structs(ctype)
        return v

    def bind(self, name: str, ct: ir.CType, val: Any) -> None:
        done = tuple(f.done.id for f in self.st.fstack) + tuple(x.id for lc in self.st.lstack for x in (lc.brk, lc.cont))
        self.st.scopes[-1][name] = Binding(ct, val, len(self.st.pred), done)
        if isinstance(val, Sym) and not val.is_const and val.op not in ("uni", "var") and val.id not in self.em.hints:
            self.em.hints[val.id] = name

    def lookup(self, name: str) -> Binding | None:
        for scope in reversed(self.st.scopes):
            if name in scope:
                return scope[name]
        # file scope, below every function's own names: an inlined device function sees them too
        return self.module_vars.get(name)

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

    def rebind(self, name: str, val: Any) -> None:
        for scope in reversed(self.st.scopes):
            if name in scope:
                scope[name] = replace(scope[name], val=val)
                return

    def rel_pred(self, b: Binding) -> Sym | None:
        conds = list(self.st.pred[b.decl_pred :])
        # A thread that returned from the kernel itself never reads a local again: its old value needs no keeping
        # (a uniform `i = 0` after `if (i >= n) return;` stays uniform). Returns from inlined device functions
        # still guard the caller's variables they can reach.
        for f in self.st.fstack[1:]:
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
