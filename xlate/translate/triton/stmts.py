"""Statements: declarations (locals, local and shared arrays, typedefs), if-conversion of branches, returns and
breaks as exit flags. Loops are loops.py's."""

from __future__ import annotations

from typing import Any

import numpy as np

from xlate.cir import ctype as ctyping
from xlate.cir import ir
from xlate.translate.triton import sym as S
from xlate.translate.triton.cub import CubTemp, is_cub_type
from xlate.translate.triton.state import LiftState
from xlate.translate.triton.structs import SELF
from xlate.translate.triton.sym import Sym
from xlate.translate.triton.values import (
    LaneTokens,
    LiftError,
    LocalArray,
    PtrVal,
    SharedArr,
    SharedRead,
    StructVal,
    TypeVal,
)

BYTE_TYPES = frozenset({"char", "signed char", "unsigned char", "int8_t", "uint8_t"})


class Statements:
    """Statements of the kernel and of inlined device functions (mixed into the Lifter)."""

    st: LiftState

    def typed_view(self, name: str, loc: ir.Loc | None) -> str | None:
        """The element type T where every use of the dynamic shared byte array `name` in the kernel is a cast of
        the whole array to one `T*` (the usual way to give dynamic shared memory a type): the array is then an
        array of T. None where the array is used any other way (indexed as bytes, offset, cast to two types)."""
        body = self.fir.body
        casts = [e for e in ir.walk(body) if isinstance(e, ir.Cast) and isinstance(e.arg, ir.Name) and e.arg.id == name]
        uses = sum(1 for e in ir.walk(body) if isinstance(e, ir.Name) and e.id == name)
        if not casts or uses != len(casts) or any(c.to.ptr != 1 for c in casts):
            return None
        types = {self.resolve_type(c.to.base, loc) for c in casts}
        if len(types) != 1:
            return None
        t = types.pop()
        if (ctyping.row(t) is None and not ctyping.is_symbolic(t)) or t in BYTE_TYPES:
            return None
        return t

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
            if s.what.endswith("(static_assert_declaration)"):
                # a compile-time check: the source compiled, so it holds, and it does nothing at run time
                self.idiom("static_assert dropped: a compile-time check with no run-time effect", s.loc)
                return
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
        refused = self.library_type_refusal(s.ctype.base, loc)
        if refused is not None:  # `glm::quat q;`: a library type kept neither as lanes nor as a matrix
            raise refused
        if s.ref:
            r = self.reference(s.init, loc) if s.init is not None and not s.dims else None
            if r is None:
                raise LiftError("XL2001", f"reference '{s.name}' to something other than an element of memory", loc)
            self.bind(s.name, s.ctype, r)
            return
        if s.shared and s.ctype.base.split()[-1].endswith("::TempStorage"):  # one, or one per warp (`temp[32]`)
            owner = self.resolve_type(s.ctype.base.split()[-1].removesuffix("::TempStorage"), loc)
            if is_cub_type(owner):  # CUB's scratch space for a block reduction, load or store (cub.py)
                self.bind(s.name, s.ctype, CubTemp(s.name))
                return
        if s.shared and s.extern and len(s.dims) == 1 and s.dims[0] is None and base in BYTE_TYPES:
            typed = self.typed_view(s.name, loc)
            if typed is not None:  # `extern __shared__ char raw[]; T* t = (T*)raw;`: the array holds T's
                base = typed
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
            if ctyping.row(base) is None and not ctyping.is_symbolic(base):
                raise LiftError("XL2012", f"shared {'array of ' if dims else 'variable of type '}{base}", loc)
            if s.ctype.ptr:
                raise LiftError("XL2004", f"shared pointer '{s.name}'", loc)
            arr = SharedArr(s.name, base, dims or [1], loc, scalar=not dims)  # a scalar: an array of one
            self.st.shared.append(arr)
            self.bind(s.name, s.ctype, arr)
            return
        if s.dims:
            if s.init_list is None and len(s.dims) == 1:
                size = self.data(self.ev(s.dims[0]), loc) if s.dims[0] is not None else None
                if size is None or not size.is_const:
                    raise LiftError("XL2001", f"local array '{s.name}' with a run-time size", loc)
                self.bind(s.name, s.ctype, LocalArray(base, int(size.value), loops=self.st.runtime_loops))
                return
            if s.init_list is not None and len(s.dims) == 1:
                # `float a[3] = {0.f};`: the declared size; the elements the list leaves out are zero (C's rule)
                size = len(s.init_list)
                if s.dims[0] is not None:
                    declared = self.data(self.ev(s.dims[0]), loc)
                    if not declared.is_const or int(declared.value) < size:
                        raise LiftError("XL2001", f"local array '{s.name}' with a run-time or too small size", loc)
                    size = int(declared.value)
                arr = LocalArray(base, size, loops=self.st.runtime_loops)
                for i in range(size):
                    e = s.init_list[i] if i < len(s.init_list) else ir.Num(loc, 0, "int")
                    arr.slots[i] = self.convert(self.ev(e), ir.CType(base), loc)
                self.bind(s.name, s.ctype, arr)
                return
            if s.init_list is None and all(d is not None for d in s.dims):
                sizes = [self.data(self.ev(d), loc) for d in s.dims]
                if not all(x.is_const and int(x.value) > 0 for x in sizes):
                    raise LiftError("XL2001", f"local array '{s.name}' with a run-time size", loc)
                dims = tuple(int(x.value) for x in sizes)
                self.bind(s.name, s.ctype, LocalArray(base, int(np.prod(dims)), loops=self.st.runtime_loops, dims=dims))
                return
            raise LiftError("XL2001", f"multi-dimensional local array '{s.name}' with an initialiser", loc)
        ct = ir.CType(base, s.ctype.ptr, s.ctype.const)
        if s.init_list is not None:  # `float3 v = {a, b, c};`, `Rec r = {1.f, 2};`, `int k = {5};`
            self.bind(s.name, ct, self.braced(base, ct, s.init_list, loc))
            return
        if s.init is None:
            if self.vec_info(base) and not ct.ptr:
                if self.vec_info(base).get("initialised") and s.name != SELF:  # not the constructor's own object
                    raise LiftError("XL2012", f"local '{s.name}' of {base}, whose constructor or default member "
                                              "initialisers give it its first value", loc)
                fields = {f: S.const(0, self.vec_info(base)["scalar"]) for f in self.vec_info(base)["fields"]}
                self.bind(s.name, ct, StructVal(base, fields))
            elif self.record_fields(base) is not None and not ct.ptr:  # a local struct of mixed fields: zero
                self.bind(s.name, ct, self.zero_value(base))
            else:
                self.bind(s.name, ct, None)
            return
        v = self.chained(s.init)
        if base == "auto":  # the initialiser's type: later assignments convert to it
            if isinstance(v, PtrVal):
                ct = ir.CType(v.elem.base, 1, v.elem.const)
            elif isinstance(v, Sym | SharedRead | LaneTokens | StructVal):
                ct = ir.CType(v.ctype, 0, s.ctype.const)
            self.bind(s.name, ct, v)
            return
        self.bind(s.name, ct, self.convert(v, ct, loc))

    def braced(self, base: str, ct: ir.CType, items: tuple[ir.Expr, ...], loc: ir.Loc) -> Any:
        """The value of a braced initialiser of a local that is no array: a vector, packed struct or record takes
        the values in field order (C's aggregate initialisation, the fields it leaves out zero); a number takes
        its one value."""
        if ct.ptr:
            raise LiftError("XL2001", "a pointer initialised with a braced list", loc)
        vinfo = self.vec_info(base)
        if vinfo is not None and vinfo.get("lanewise"):  # `vec3{s}`: a library vector's constructor, no aggregate
            return self.library_vector_call(base, ir.Call(loc, base, items))
        types = ({f: vinfo["scalar"] for f in vinfo["fields"]} if vinfo is not None else self.record_fields(base))
        if types is None:
            if ctyping.row(base) is None or len(items) > 1:
                raise LiftError("XL2001", f"a {base} initialised with a braced list", loc)
            return self.convert(self.ev(items[0]), ct, loc) if items else S.const(0, base)
        if len(items) > len(types):
            raise LiftError("XL2001", f"{len(items)} values initialise a {base} of {len(types)} fields", loc)
        out = {}
        for k, (f, t) in enumerate(types.items()):
            if k >= len(items):
                out[f] = self.zero_value(t)
            elif isinstance(items[k], ir.Call) and items[k].fn == ir.BRACED:  # a nested struct's own list
                out[f] = self.braced(t, ir.CType(t), items[k].args, loc)
            elif self.is_struct_type(t):
                out[f] = self.convert(self.ev(items[k]), ir.CType(t), loc)
            else:
                out[f] = S.cast(self.data(self.ev(items[k]), loc), t)
        return StructVal(base, out)

    def if_stmt(self, s: ir.If) -> None:
        c = self.cond(self.ev(s.test), s.loc)
        self.probe_branch(s, c)
        if self.assumed_true(c):  # a loop's version for programs whose threads all pass it (unswitch.py)
            c = S.const(1, "bool")
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
            if isinstance(s.value, ir.Call) and s.value.fn == ir.BRACED and not f.ret.ptr:
                # `return {a, b};`: the function's return type takes the list, as a declaration of it would
                base = self.resolve_type(f.ret.base, s.loc)
                v = self.convert(self.braced(base, f.ret, s.value.args, s.loc), f.ret, s.loc)
            else:
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
