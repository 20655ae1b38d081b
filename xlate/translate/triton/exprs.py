"""Expressions: C operators with C's conversions on symbolic values, names and builtins (threadIdx is a lane,
blockIdx a program id), casts, pointer arithmetic, and the conversions between the lifter's value kinds."""

from __future__ import annotations

import re
from typing import Any

from xlate.cir import ctype as ctyping
from xlate.cir import ir
from xlate.translate.triton import comm
from xlate.translate.triton import sym as S
from xlate.translate.triton.packed import packed_lanes, same_representation
from xlate.translate.triton.state import Binding, KernelContext, LiftState
from xlate.translate.triton.sym import NotConcrete, Sym
from xlate.translate.triton.tables import named_constant
from xlate.translate.triton.values import (
    AddrVal,
    CGroup,
    FieldArray,
    LaneTokens,
    LiftError,
    LocalArray,
    LocalPtr,
    NullPtr,
    PtrVal,
    RefVal,
    SharedArr,
    SharedRead,
    StructVal,
    TypeVal,
)

ARITH = {"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "mod", "<<": "shl", ">>": "shr", "&": "and", "|": "or",
         "^": "xor"}
CMPS = {"<": "lt", "<=": "le", ">": "gt", ">=": "ge", "==": "eq", "!=": "ne"}


class Expressions:
    """Expression evaluation (mixed into the Lifter)."""

    st: LiftState
    kc: KernelContext
    bx: int
    by: int
    discarding: ir.Expr | None

    def data(self, v: Any, loc: ir.Loc | None) -> Sym:
        """A plain per-thread value (shared reads forwarded, tokens materialised)."""
        if isinstance(v, Sym):
            return v
        if isinstance(v, SharedRead):
            return comm.data_view(self, v)
        if isinstance(v, LaneTokens):
            return comm.materialize(self, v, comm.needed_lanes(self), loc)
        if isinstance(v, NullPtr):
            raise v.refuse("uses a number made of", loc)
        if isinstance(v, PtrVal):
            raise LiftError("XL2013", "a pointer used as a number", loc)
        if isinstance(v, AddrVal):
            raise LiftError("XL2013", "a pointer's address used other than in an alignment test (`% m`, `& (m - 1)`, "
                                      f"m a power of two up to {v.align})", loc)
        if isinstance(v, StructVal):
            raise LiftError("XL2012", f"a {v.ctype} used as a number", loc)
        raise LiftError("XL2001", f"value of kind {type(v).__name__} used as a number", loc)

    def cond(self, v: Any, loc: ir.Loc | None) -> Sym:
        if isinstance(v, NullPtr):  # `if (bias)` of a pointer the spec says is null
            return S.const(0, "bool")
        if isinstance(v, PtrVal) and not v.shared:  # `if (x)` of a buffer: a buffer is never the null pointer
            return S.const(1, "bool")
        d = self.data(v, loc)
        if d.ctype == "bool":
            return d
        if ctyping.is_float(d.ctype):
            return S.op("ne", "bool", d, S.const(0.0, d.ctype))
        return S.op("ne", "bool", d, S.const(0, "int"))

    def convert(self, v: Any, ct: ir.CType, loc: ir.Loc | None) -> Any:
        base = self.resolve_type(ct.base, loc)
        if ct.ptr:
            if isinstance(v, PtrVal | SharedArr | LocalPtr | NullPtr):
                return v
            if isinstance(v, Sym) and v.is_const and v.value == 0:  # nullptr (the IR's 0) handed to a pointer
                return NullPtr(None)
            raise LiftError("XL2013", f"a non-pointer value assigned to a {base}*", loc)
        if self.vec_info(base) or self.record_fields(base) is not None:
            if isinstance(v, StructVal) and v.ctype == base:
                return v
            moved = self.vector_conversion(v, base, loc)
            if moved is not None:  # `vec3 a = glm::make_vec3(doubles)`: a library vector of another lane type
                return moved
            raise LiftError("XL2012", f"value assigned to a {base}", loc)
        if base.startswith("__xl_"):
            if isinstance(v, CGroup):
                return v
            raise LiftError("XL2001", "cooperative-groups handle of an unknown kind", loc)
        if isinstance(v, SharedRead | LaneTokens) and v.ctype == base:
            return v
        if isinstance(v, AddrVal) and ctyping.is_int(base) and ctyping.bits(base) >= 16:
            return AddrVal(v.ptr, base, v.align)  # `uintptr_t a = (uintptr_t)p;`: still only an address
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

    def effect(self, e: ir.Expr) -> None:
        """An expression statement: assignments, ++/--, calls."""
        if isinstance(e, ir.Assign):
            self.assign(e)
        elif isinstance(e, ir.IncDec):
            one = ir.Num(e.loc, 1, "int")
            self.assign(ir.Assign(e.loc, e.target, "+=" if e.op == "++" else "-=", one))
        else:
            before, self.discarding = self.discarding, e  # a call whose result nobody reads (shared atomics)
            try:
                self.ev(e)
            finally:
                self.discarding = before

    def chained(self, e: ir.Expr) -> Any:
        """The value of a statement's operand, where that operand may itself assign a variable (`a = b = 0;`,
        `float x = y += 1;`): that assignment is done first and its value is the variable after it (C's rule)."""
        if isinstance(e, ir.Assign) and isinstance(e.target, ir.Name):
            self.assign(e)
            return self.ev(e.target)
        return self.ev(e)

    def assign(self, e: ir.Assign) -> None:
        if e.op == "=" and isinstance(e.value, ir.Call) and e.value.fn == ir.BRACED:  # `d[i] = {x, y, z};`
            base = self.target_type(e.target)
            if base is None:
                raise LiftError("XL2001", "a braced list assigned to a target of unknown type", e.loc)
            val = self.braced(base, ir.CType(base), e.value.args, e.loc)
        elif e.op == "=":
            val = self.chained(e.value)
        else:
            if has_effects(e.target):  # `a[k++] += x` would evaluate the target, and so k++, twice
                raise LiftError("XL2001", "compound assignment to a target with side effects", e.loc)
            op = e.op[:-1]
            rhs = self.ev(e.value)  # C++17: the right operand first (`s += k++` reads s after nothing of it)
            val = self.binary(op, self.ev(e.target), rhs, e.loc)
        self.write(e.target, val, e.loc)

    def target_type(self, e: ir.Expr) -> str | None:
        """The C type of what an assignment target names, found without evaluating it (None: not known): a
        variable, an element of a pointer, local or shared array reached from a name, a record's member."""
        rec = self.record_addr(e) if isinstance(e, ir.Index | ir.Member | ir.Unary) else None
        if rec is not None:
            return self.record_name(rec.dtype, rec.ptr) if rec.dtype.fields is not None else None
        root, depth = e, 0
        while isinstance(root, ir.Index) or (isinstance(root, ir.Unary) and root.op == "*"):
            root, depth = (root.base if isinstance(root, ir.Index) else root.arg), depth + 1
        b = self.lookup(root.id) if isinstance(root, ir.Name) else None
        if b is None:
            return None
        v = b.val
        if depth == 0:
            return None if b.ctype.ptr else self.resolve_type(b.ctype.base, e.loc)
        if depth == 1 and isinstance(v, PtrVal):
            return self.resolve_type(v.elem.base, e.loc)
        if isinstance(v, LocalArray) and depth == len(v.dims or (v.size,)):
            return v.ctype
        return None

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
        if isinstance(e, ir.Call) and e.fn == ir.BRACED:
            raise LiftError("XL2001", "a braced list whose type is not known here (only a declaration's or an "
                                      "assignment's value)", e.loc)
        if isinstance(e, ir.Call):
            return self.call(e)
        if isinstance(e, ir.MethodCall):
            return self.method(e)
        if isinstance(e, ir.Str):
            raise LiftError("XL2001", "string literal", e.loc)
        if isinstance(e, ir.Sizeof):
            ctype = e.ctype
            bound = self.lookup(ctype.base) if e.of_name else None
            if bound is not None and not isinstance(bound.val, TypeVal):  # `sizeof(var)`: the variable's type
                if isinstance(bound.val, LocalArray | SharedArr | FieldArray):
                    raise LiftError("XL2012", f"sizeof of the array '{ctype.base}'", e.loc)
                ctype = bound.ctype
            base = self.resolve_type(ctype.base, e.loc)
            if not ctype.ptr and base in self.kc.types.values():  # a template type: its dtype is a constexpr
                return S.uni(f"({base}.primitive_bitwidth // 8)", "int", nonneg=True)
            if ctype.ptr:
                return S.const(8, "unsigned long")
            info = ctyping.row(base)
            vinfo = self.vec_info(base)
            if vinfo:
                return S.const(len(vinfo["fields"]) * ctyping.row(vinfo["scalar"])["bits"] // 8, "unsigned long")
            if info is None and self.record_dtype(base) is not None:  # a record: its C size, padding included
                return S.const(self.record_dtype(base).itemsize, "unsigned long")
            if info is None:
                raise LiftError("XL2012", f"sizeof({base})", e.loc)
            return S.const(max(1, info["bits"] // 8), "unsigned long")
        if isinstance(e, ir.Assign | ir.IncDec):
            return self.assign_value(e)
        raise LiftError("XL2001", f"expression {type(e).__name__}", e.loc)

    def assign_value(self, e: ir.Assign | ir.IncDec) -> Any:
        """An assignment or ++/-- used as a value (`while ((v = next[v]) != 0)`, `out[k++] = x`, `d[i] = c[i] =
        x`): done where it is met (under the predicates in force there), its value C's: the target after it, the
        target before it for x++/x--. A variable is read back; a memory target's value is the stored value
        converted to the element's type (not reloaded: a later load could see another thread's store)."""
        plain = isinstance(e.target, ir.Name) and self.plain_var(e.target.id)
        if isinstance(e, ir.IncDec):
            if not plain and not (isinstance(e.target, ir.Name) and self.pointer_var(e.target.id)):
                raise LiftError("XL2001", "++/-- of memory used as a value", e.loc)
            old = self.ev(e.target)
            self.effect(e)
            return self.ev(e.target) if e.prefix else old
        if plain:
            self.assign(e)
            return self.ev(e.target)
        if e.op != "=":
            raise LiftError("XL2001", "compound assignment to memory used as a value", e.loc)
        ct = self.element_type(e.target)
        if ct is None:
            raise LiftError("XL2001", "assignment used as a value", e.loc)
        val = self.chained(e.value)
        self.write(e.target, val, e.loc)
        return self.convert(val, ct, e.loc)

    def plain_var(self, name: str) -> bool:
        """A local variable holding a value (not a reference into memory, nor a shared scalar)."""
        b = self.lookup(name)
        return b is not None and not isinstance(b.val, RefVal | SharedArr) and not b.ctype.ptr

    def pointer_var(self, name: str) -> bool:
        """A local pointer variable (`*p++` steps it: its old value is a pointer, unchanged by the step)."""
        b = self.lookup(name)
        return b is not None and b.ctype.ptr > 0 and isinstance(b.val, PtrVal | LocalPtr)

    def element_type(self, target: ir.Expr) -> ir.CType | None:
        """The C type of `p[i]` where `p` is a plain name of a pointer or an array (None for anything else)."""
        if not isinstance(target, ir.Index) or not isinstance(target.base, ir.Name):
            return None
        b = self.lookup(target.base.id)
        base = b.val if b is not None else None
        if isinstance(base, PtrVal):
            return ir.CType(base.elem.base)
        if isinstance(base, SharedArr) and len(base.dims) == 1 and not base.scalar:
            return ir.CType(base.ctype)
        return None

    def name(self, e: ir.Name) -> Any:
        b = self.lookup(e.id)
        if b is not None:
            if isinstance(b.val, RefVal):
                return self.deref(b.val, e.loc)
            if isinstance(b.val, SharedArr) and b.val.scalar:
                return self.shared_read(b.val, (S.const(0, "int"),), e.loc)
            if b.val is None:
                ct = self.resolve_type(b.ctype.base, e.loc)
                return S.const(0, ct if not ctyping.is_symbolic(ct) else "int")  # uninitialised: any value
            return b.val
        if e.id in self.kc.const_arrays:
            return self.kc.const_arrays[e.id]
        if e.id in self.kc.values:  # a template parameter hides a file-scope name
            ct, v = self.kc.values[e.id]
            return S.const(v, ct)
        if e.id in self.kc.constants:
            ct, v = self.kc.constants[e.id]
            return S.const(v, ct)
        nc = named_constant(e.id)
        if nc is not None:
            return S.const(nc[1], nc[0])
        value = self.kc.program_value(e.id) if self.kc.program_value is not None else None
        resolving = self.__dict__.setdefault("_resolving", set())
        if value is not None and e.id not in resolving:  # a macro or constant of another file of the program
            resolving.add(e.id)
            try:
                return self.ev(value)
            finally:
                resolving.discard(e.id)
        if e.id in self.kc.file_shared and self.file_shared_array(e.id, e.loc):
            return self.name(e)
        same = IS_SAME.fullmatch(e.id)
        pair = _split_targs(same.group(1) or same.group(2)) if same is not None else []
        if len(pair) == 2:  # std::is_same<T, half>::value: the two types as this kernel resolves them
            a, b = (self.resolve_type(ctyping.canonical(x.strip()), e.loc) for x in pair)
            if not (ctyping.is_symbolic(a) or ctyping.is_symbolic(b)):
                return S.const(int(a == b), "bool")
            if a in self.kc.types.values() and ctyping.tl(b) is not None:
                # a template type against a known one: a constexpr the launcher computes from T's dtype
                name = f"{a}_is_{ctyping.tl(b).removeprefix('tl.')}_"
                self.st.limits[name] = (a, "is_same:" + ctyping.tl(b))
                return S.uni(name, "bool")
            if b in self.kc.types.values() and ctyping.tl(a) is not None:
                name = f"{b}_is_{ctyping.tl(a).removeprefix('tl.')}_"
                self.st.limits[name] = (b, "is_same:" + ctyping.tl(a))
                return S.uni(name, "bool")
        raise LiftError("XL2001", f"unknown identifier '{e.id}'", e.loc)

    def file_shared_array(self, name: str, loc: ir.Loc) -> bool:
        """Declare the file-scope dynamic shared array `name` (`extern __shared__ float s[];` outside any function)
        in the kernel's outermost scope, as if the kernel declared it first: False where its type is no scalar."""
        base = self.resolve_type(ctyping.canonical(self.kc.file_shared[name]), loc)
        if ctyping.row(base) is None and base not in self.kc.types.values():
            return False
        arr = SharedArr(name, base, [None], loc)
        self.st.shared.append(arr)
        self.st.scopes[0][name] = Binding(ir.CType(base), arr)
        return True

    def builtin(self, e: ir.Builtin) -> Sym:
        if e.axis not in ("x", "y", "z"):
            raise LiftError("XL2001", f"{e.var}.{e.axis}", e.loc)
        if e.var == "threadIdx":
            bz = self.kc.bz
            if bz > 1 and e.axis in ("y", "z"):  # a 3-D block: the y lanes hold y + Y * z (translator._block)
                ny = S.const(self.real_by // bz, "unsigned int")
                lane = S.cast(S.lane("y"), "unsigned int")
                return S.op("mod" if e.axis == "y" else "div", "unsigned int", lane, ny)
            lanes = {"x": self.bx if self.real_bx is not None else 2, "y": self.by, "z": 1}[e.axis]
            return S.lane(e.axis) if lanes > 1 else S.const(0, "unsigned int")
        if e.var == "blockDim":
            return self.block_dim(e.axis)
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
        a, b = self.decay(a), self.decay(b)
        if op in OVERLOADABLE and (isinstance(a, StructVal) or isinstance(b, StructVal)):
            f = self.operator_overload(op, a, b, loc)
            if f is not None:  # `u * v` of float2s: the program's operator* (helper_math.h's, say), inlined
                self.push_scope()
                try:
                    self.bind("lhs", ir.CType(a.ctype), a)
                    self.bind("rhs", ir.CType(b.ctype), b)
                    return self.inline(f, ir.Call(loc, f.name, (ir.Name(loc, "lhs"), ir.Name(loc, "rhs"))))
                finally:
                    self.pop_scope()
            lanes = self.lanewise(op, a, b, loc)
            if lanes is not None:  # `u - s * v` of glm vectors: lane by lane
                return lanes
        if isinstance(a, NullPtr) or isinstance(b, NullPtr):
            return self.null_test(op, a, b, loc)
        if isinstance(a, AddrVal) or isinstance(b, AddrVal):
            return self.alignment_test(op, a, b, loc)
        if isinstance(a, LocalPtr) or isinstance(b, LocalPtr):
            null = b if isinstance(a, LocalPtr) else a
            if op in ("==", "!=") and isinstance(null, Sym) and null.is_const and null.value == 0:
                return S.const(int(op == "!="), "bool")  # the address of a local is never the null pointer
            return self.ptr_arith(op, a, b, loc)
        if isinstance(a, PtrVal) or isinstance(b, PtrVal):
            null = b if isinstance(a, PtrVal) else a
            if op in ("==", "!=") and isinstance(null, Sym) and null.is_const and null.value == 0:
                # a buffer (or an element of one, or a shared array) is never the null pointer
                return S.const(int(op == "!="), "bool")
            return self.ptr_arith(op, a, b, loc)
        if op == "+" and (isinstance(a, SharedRead | LaneTokens) or isinstance(b, SharedRead | LaneTokens)):
            try:
                return comm.token_binary(self, "sum", a, b, lambda a=a, b=b: self.binary_data("+", a, b, loc))
            except comm.NotTokenizable:
                pass
        return self.binary_data(op, a, b, loc)

    def null_test(self, op: str, a: Any, b: Any, loc: ir.Loc) -> Sym:
        """`p == nullptr`, `p != 0`, `p != x` with `p` the spec's null pointer: a constant (a buffer is never null)."""
        null = a if isinstance(a, NullPtr) else b
        other = b if null is a else a
        is_zero = isinstance(other, Sym) and other.is_const and other.value == 0
        if op in ("==", "!=") and (is_zero or isinstance(other, NullPtr | PtrVal)):
            same = not isinstance(other, PtrVal)
            return S.const(int(same == (op == "==")), "bool")
        raise null.refuse(f"computes `{op}` with", loc)

    def address_of_pointer(self, v: PtrVal, ctype: str, loc: ir.Loc) -> AddrVal:
        """`(uintptr_t)p`: an address whose residue modulo its buffer's alignment is the byte offset's."""
        size = self.elem_bytes(self.resolve_type(v.elem.base, loc))
        if size is None:
            raise LiftError("XL2013", f"the address of a {v.elem.base}* (an element of unknown size) as a number", loc)
        return AddrVal(v, ctype, SHARED_ALIGN if v.shared else GLOBAL_ALIGN)

    def elem_bytes(self, ctype: str) -> int | None:
        """sizeof of a scalar or vector type; None where the lifter does not know it (template types)."""
        vinfo = self.vec_info(ctype)
        scalar = vinfo["scalar"] if vinfo else ctype
        if ctyping.is_symbolic(scalar) or ctyping.bits(scalar) % 8:
            return None
        return ctyping.bits(scalar) // 8 * (len(vinfo["fields"]) if vinfo else 1)

    def alignment_test(self, op: str, a: Any, b: Any, loc: ir.Loc) -> Sym:
        """`addr % m` or `addr & (m - 1)` of a pointer's address, m a power of two dividing the alignment of its
        buffer's start: the byte offset into the buffer modulo m, the same for every address the buffer may start
        at. Both paths of an alignment test compute the same values in a correct kernel; this one decides it as
        the buffer's own alignment does."""
        addr, other = (a, b) if isinstance(a, AddrVal) else (b, a)
        k = self.data(other, loc) if not isinstance(other, AddrVal) else None
        m = None
        if k is not None and k.is_const and isinstance(addr, AddrVal) and addr is a:
            m = int(k.value) if op == "%" else int(k.value) + 1 if op == "&" else None
        if m is None or m <= 0 or m & (m - 1) or addr.align % m:
            raise LiftError("XL2013", "a pointer's address used other than in an alignment test (`% m`, "
                                      f"`& (m - 1)`, m a power of two up to {addr.align})", loc)
        ct = addr.ctype
        size = self.elem_bytes(self.resolve_type(addr.ptr.elem.base, loc)) or 1
        byte_off = S.op("mul", ct, S.cast(addr.ptr.offset, ct), S.const(size, ct))
        return S.op("and", ct, byte_off, S.const(m - 1, ct))

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

    def reinterpret(self, v: PtrVal, base: str, const: bool, loc: ir.Loc) -> PtrVal | None:
        """A buffer of one scalar type read through a pointer to another (`(unsigned int*)bytes`, `(uchar*)floats`,
        `(float*)t` of a template type's buffer): the buffer's pointer bit-cast to the new element type, the offset
        rescaled from the old element size to the new. Going to a wider type the offset is a multiple of the ratio
        (CUDA faults on a misaligned access, so a dereferenced one is), and the quotient exact. A template type's
        size is its constexpr dtype's (the instantiation's), so the port stays generic in it. None where either
        type is no plain scalar or template type."""
        old = self.resolve_type(v.elem.base, loc)
        if v.shared or self.vec_info(old) or self.vec_info(base) or not isinstance(v.base, Sym) or v.base.op != "uni":
            return None
        tl_new = self.tl_scalar(base)
        if self.tl_scalar(old) is None or tl_new is None or "bool" in (old, base):
            return None
        so, sn = self.scalar_size(old), self.scalar_size(base)
        if so is None or sn is None:
            return None
        off = S.cast(v.offset, "int")
        if isinstance(so, int) and isinstance(sn, int):
            if sn > so:
                off = S.op("div", "int", off, S.const(sn // so, "int")) if sn % so == 0 else None
            elif so > sn:
                off = S.op("mul", "int", off, S.const(so // sn, "int")) if so % sn == 0 else None
        else:  # the byte offset over the new size: exact where the access is aligned, as CUDA requires
            size = [S.const(x, "int") if isinstance(x, int) else x for x in (so, sn)]
            off = S.op("div", "int", S.op("mul", "int", off, size[0]), size[1])
        if off is None:
            return None
        ptr = S.uni(f"{v.base.name}.to(tl.pointer_type({tl_new}))", base + "*")
        return PtrVal(ptr, off, ir.CType(base, 0, const), v.root)

    def tl_scalar(self, t: str) -> str | None:
        """The Triton dtype expression of a scalar or template type (a template type's is its constexpr)."""
        return t if t in self.kc.types.values() else ctyping.tl(t)

    def scalar_size(self, t: str) -> int | Sym | None:
        """sizeof a scalar type in bytes, or of a template type as its constexpr's (a Sym); None otherwise."""
        if t in self.kc.types.values():
            return S.uni(f"({t}.primitive_bitwidth // 8)", "int", nonneg=True)
        return ctyping.bits(t) // 8 if ctyping.tl(t) is not None and ctyping.bits(t) % 8 == 0 else None

    def vector_view(self, v: PtrVal, base: str, k: int | None, const: bool, loc: ir.Loc) -> PtrVal | None:
        """A pointer to vectors of `k` of `v`'s elements each (None where k is None): the offset a multiple of k
        (CUDA faults on a misaligned vector access), the quotient exact."""
        if k is None or (not v.shared and (self.buffer_elem(v) is None
                                           or self.resolve_type(v.elem.base, loc) != self.buffer_elem(v))):
            return None
        if v.offset.is_const and v.offset.value % k:
            raise LiftError("XL2013", f"reinterpretation as {base}* of a pointer {v.offset.value} elements past an "
                                      "aligned one", loc)
        return PtrVal(v.base, S.op("div", "int", S.cast(v.offset, "int"), S.const(k, "int")), ir.CType(base, 0, const),
                      v.root)

    def shared_vector_view(self, v: PtrVal, base: str, const: bool, loc: ir.Loc) -> PtrVal | None:
        """A shared array of scalars read or written through a pointer to a vector of them (`*(float4*)&s[4 * i]`,
        or packed: `*(uint4*)&halves[8 * i]`): the vector's lanes are consecutive elements of the array (each
        access becomes its lanes' accesses). None where `base` is no vector of the array's element type."""
        vinfo = self.vec_info(base)
        elem = self.resolve_type(v.base.ctype, loc)
        if vinfo is None or self.resolve_type(v.elem.base, loc) != elem:
            return None
        k = len(vinfo["fields"]) if same_representation(vinfo["scalar"], elem) else self.packing(base, elem)
        return self.vector_view(v, base, k, const, loc)

    def operator_overload(self, op: str, a: Any, b: Any, loc: ir.Loc) -> ir.FunctionIR | None:
        """The program's `operator<op>` for operands of these types: the overload whose parameters match them
        exactly, else the only one that matches the struct operands exactly and the scalar ones up to an
        arithmetic conversion (`v * 2` for `float2 operator*(float2, float)`); None where there is none or the
        choice is ambiguous."""
        if self.kc.program_overloads is None:
            return None
        have = [v.ctype if isinstance(v, StructVal | Sym | SharedRead | LaneTokens) else None for v in (a, b)]
        if None in have:
            return None
        scored: list[tuple[int, ir.FunctionIR]] = []
        for f in self.kc.program_overloads(f"operator{op}"):
            if len(f.params) != 2 or f.template_types:
                continue
            score: int | None = 0
            for (_, ct), t in zip(f.params, have):
                want = self.resolve_type(ct.base, loc)
                if ct.ptr or score is None:
                    score = None
                elif want == t:
                    score += 2
                elif self.is_scalar_type(want) and self.is_scalar_type(t):
                    score += 1
                else:
                    score = None
            if score is not None:
                scored.append((score, f))
        scored.sort(key=lambda p: -p[0])
        if not scored or (len(scored) > 1 and scored[0][0] == scored[1][0]):
            return None
        return scored[0][1]

    def is_scalar_type(self, t: str) -> bool:
        return ctyping.row(t) is not None and not self.vec_info(t)

    def decay(self, v: Any) -> Any:
        """A one-dimensional shared array used as a value is a pointer to its first element (C's decay), so
        `float* w = smem + 512;` carves a sub-array out of it."""
        if isinstance(v, SharedArr) and len(v.dims) == 1 and not v.scalar:
            return PtrVal(v, S.const(0, "int"), ir.CType(v.ctype), v.name)
        return v

    def ptr_arith(self, op: str, a: Any, b: Any, loc: ir.Loc) -> PtrVal | LocalPtr:
        if isinstance(a, LocalPtr) and op in ("+", "-") and not isinstance(b, PtrVal | LocalPtr):
            d = S.cast(self.data(b, loc), "int")
            return self.local_offset(a, d if op == "+" else S.op("neg", "int", d), loc)
        if isinstance(b, LocalPtr) and op == "+" and not isinstance(a, PtrVal | LocalPtr):
            return self.ptr_arith("+", b, a, loc)
        if isinstance(a, PtrVal) and op in ("+", "-") and not isinstance(b, PtrVal):
            d = S.cast(self.data(b, loc), "int")
            if op == "-":
                d = S.op("neg", "int", d)
            return PtrVal(a.base, S.op("add", "int", a.offset, d), a.elem, a.root)
        if isinstance(b, PtrVal) and op == "+" and not isinstance(a, PtrVal):
            return self.ptr_arith("+", b, a, loc)
        if isinstance(a, PtrVal) and isinstance(b, PtrVal) and (op == "-" or op in CMPS):
            return self.ptr_relation(op, a, b, loc)
        raise LiftError("XL2013", f"pointer arithmetic '{op}'", loc)

    def ptr_relation(self, op: str, a: PtrVal, b: PtrVal, loc: ir.Loc) -> Sym:
        """`end - start` (a ptrdiff_t) or `p < end` of two pointers into one buffer, as elements of one type: the
        difference or comparison of their offsets (C leaves pointers into different arrays undefined: refused)."""
        same_type = self.resolve_type(a.elem.base, loc) == self.resolve_type(b.elem.base, loc)
        if a.base is not b.base or not same_type:
            raise LiftError("XL2013", f"pointers into different buffers or of different types related by '{op}'", loc)
        if op in CMPS:
            return S.op(CMPS[op], "bool", S.cast(a.offset, "long"), S.cast(b.offset, "long"))
        return S.op("sub", "long", S.cast(a.offset, "long"), S.cast(b.offset, "long"))

    def unary(self, e: ir.Unary) -> Any:
        if e.op == "&":
            return self.address_of(e.arg, e.loc)
        v = self.ev(e.arg)
        if e.op == "*":
            return self.read_at(v, [S.const(0, "int")], e.loc)
        if e.op == "!":
            return S.lnot(self.cond(v, e.loc))
        if e.op == "-" and self.lanewise_info(v) is not None:
            return self.lanewise_neg(v, e.loc)
        d = self.data(v, e.loc)
        if e.op == "-":
            return S.op("neg", ctyping.promote(d.ctype), d)
        if e.op == "+":
            return S.cast(d, ctyping.promote(d.ctype))
        if e.op == "~":
            return S.op("bnot", ctyping.promote(d.ctype), d)
        raise LiftError("XL2001", f"unary operator '{e.op}'", e.loc)

    def address_of(self, e: ir.Expr, loc: ir.Loc) -> PtrVal | LocalPtr:
        if isinstance(e, ir.Name):  # &r of a reference to a global element: that element's address
            b = self.lookup(e.id)
            if b is not None and isinstance(b.val, RefVal) and b.val.ptr is not None:
                return b.val.ptr
        local = self.local_address(e, loc)
        if local is not None:  # `(__half*)&v`: the bits of a local vector, read as lanes
            return local
        rec = self.record_addr(e) if isinstance(e, ir.Member) or (isinstance(e, ir.Index) and isinstance(
            e.base, ir.Member | ir.Index)) else None
        if rec is not None:  # `&p[i].count`: a pointer of the field's type into the records' bytes
            return self.leaf_pointer(rec, loc)
        if isinstance(e, ir.Index):
            base_e, idx_e = self.index_chain(e)
            base = self.ev(base_e)
            idx = [self.data(self.ev(x), loc) for x in idx_e]
            if isinstance(base, PtrVal) and len(idx) == 1:
                return PtrVal(base.base, S.op("add", "int", base.offset, S.cast(idx[0], "int")), base.elem, base.root)
            if isinstance(base, SharedArr) and len(base.dims) == 1 and not base.scalar and len(idx) == 1:
                return self.ptr_arith("+", self.decay(base), idx[0], loc)  # `&s[i]` is `s + i`
            if isinstance(base, SharedArr):
                raise LiftError("XL2005", f"address of shared array element '{base.name}[...]' (shared atomics)", loc)
        raise LiftError("XL2013", "address-of expression", loc)

    def member(self, e: ir.Member) -> Any:
        rec = self.record_addr(e)
        if rec is not None:  # a field of a record in global memory: only that field is loaded
            return self.record_read(rec, e.loc)
        if isinstance(e.base, ir.Index) and not isinstance(e.base.base, ir.Index):
            one = self.member_of_element(e)
            if one is not None:
                return one
        v = self.ev(e.base)
        if isinstance(v, StructVal) and packed_lanes(v) is not None:
            raise LiftError("XL2012", f"member .{e.field} of a {v.ctype} holding {len(v.fields)} packed "
                                      f"{packed_lanes(v)[0].ctype}s used as a number (its bits)", e.loc)
        if isinstance(v, StructVal):
            if e.field in v.fields:
                return v.fields[e.field]
            count = sum(1 for f in v.fields if f.startswith(e.field + "["))
            if count:  # an array member of a packed struct: its lanes `field[k]`
                return FieldArray(v, e.field, count)
            raise LiftError("XL2012", f"{v.ctype} has no member {e.field}", e.loc)
        raise LiftError("XL2001", f"member access .{e.field}", e.loc)

    def member_of_element(self, e: ir.Member) -> Any:
        """`p[i].f` of a vector or packed struct in global memory: only lane f is loaded (not the whole element,
        once per member read); None where `e` is not that."""
        p = self.ev(e.base.base)
        if not isinstance(p, PtrVal) or p.shared or self.packed_pointer(p):
            return None
        vinfo = self.vec_info(p.elem.base)
        if vinfo is None or e.field not in vinfo["fields"]:
            return None
        i = self.data(self.ev(e.base.index), e.loc)
        n = len(vinfo["fields"])
        if n * ctyping.bits(vinfo["scalar"]) <= 256:  # up to 32 bytes: the element as vector accesses, read once
            return self.global_load(p, i, e.loc).fields[e.field]
        off = S.op("add", "int", S.op("mul", "int", S.op("add", "int", p.offset, S.cast(i, "int")), S.const(n, "int")),
                   S.const(vinfo["fields"].index(e.field), "int"))
        return self.load_scalar(p, off, vinfo["scalar"], e.loc)

    def cast(self, e: ir.Cast) -> Any:
        if isinstance(e.arg, ir.Call) and e.arg.fn == ir.BRACED and not e.to.ptr:
            # `vec2({x, y})`, `T{...}` read as a conversion: the type takes the list, as a declaration would
            base = self.resolve_type(e.to.base, e.loc)
            return self.braced(base, e.to, e.arg.args, e.loc)
        v = self.ev(e.arg)
        base = self.resolve_type(e.to.base, e.loc)
        if e.to.ptr:
            v = self.decay(v)
            if isinstance(v, LocalArray) and isinstance(e.arg, ir.Name):  # `(int4*)vals` of `int vals[4]`
                v = self.local_array_address(e.arg.id, [], e.loc) or v
            if isinstance(v, LocalPtr):
                return self.local_cast(v, base, e.to.const)
            if isinstance(v, PtrVal) and v.shared and self.resolve_type(v.elem.base, e.loc) == base:
                return PtrVal(v.base, v.offset, ir.CType(base, 0, e.to.const), v.root)  # a typed shared array's own type
            if isinstance(v, PtrVal) and v.shared:
                view = self.shared_vector_view(v, base, e.to.const, e.loc)
                if view is not None:
                    return view
            if not isinstance(v, PtrVal) or v.shared:
                raise LiftError("XL2013", f"cast to {base}*", e.loc)
            if self.resolve_type(v.elem.base, e.loc) == base:
                return PtrVal(v.base, v.offset, ir.CType(base, 0, e.to.const), v.root)
            if self.record_dtype(self.resolve_type(v.elem.base, e.loc)) is not None:
                raise LiftError("XL2013", f"cast of a pointer to records ({v.elem.base}*) to {base}* (its bytes as "
                                          "another type)", e.loc)
            src = self.vec_info(self.resolve_type(v.elem.base, e.loc))
            if src is not None:  # float2* seen as its components (float*, or float4* when aligned)
                v = PtrVal(v.base, S.op("mul", "int", v.offset, S.const(len(src["fields"]), "int")),
                           ir.CType(src["scalar"], 0, v.elem.const), v.root)
            vinfo = self.vec_info(base)
            if vinfo and same_representation(vinfo["scalar"], v.elem.base):
                n = len(vinfo["fields"])
                if v.offset.is_const and v.offset.value % n:
                    raise LiftError("XL2013", f"reinterpretation as {base}* of a pointer {v.offset.value} elements past "
                                              f"an aligned one", e.loc)
                # CUDA faults on a misaligned vector access, so a run-time offset the source dereferences is a
                # multiple of the lanes: the vector index is the exact quotient
                off = S.op("div", "int", S.cast(v.offset, "int"), S.const(n, "int"))
                return PtrVal(v.base, off, ir.CType(base, 0, e.to.const), v.root)
            if same_representation(base, v.elem.base):  # unsigned long* of an unsigned long long buffer
                return PtrVal(v.base, v.offset, ir.CType(base, 0, e.to.const), v.root)
            packed = self.vector_view(v, base, self.packing(base, self.resolve_type(v.elem.base, e.loc)), e.to.const,
                                      e.loc)
            if packed is not None:  # uint4* of a __half buffer: eight halves a vector, packed
                return packed
            other = self.reinterpret(v, base, e.to.const, e.loc)
            if other is not None:
                return other
            generic = [t for t in (self.resolve_type(v.elem.base, e.loc), base) if ctyping.row(t) is None
                       and not self.vec_info(t)]
            if generic:  # T* as float*, data_t<T, N>*: the sizes are the instantiation's, the port is generic in T
                t = generic[0]
                why = ("a template type: its size is the instantiation's, the port is generic in it"
                       if t in self.kc.types or t in self.kc.types.values() or "<" in t else
                       "a struct with no lane layout (bit-fields, mixed members)")
                raise LiftError("XL2013", f"cast of a {v.elem.base}* to {base}* ({t} is {why})", e.loc)
            raise LiftError("XL2013", f"cast of a {v.elem.base}* to {base}*", e.loc)
        if self.vec_info(base):
            raise LiftError("XL2012", f"cast to {base}", e.loc)
        if isinstance(v, SharedRead | LaneTokens) and v.ctype == base:
            return v
        if isinstance(self.decay(v), PtrVal) and ctyping.is_int(base) and ctyping.bits(base) >= 16:
            return self.address_of_pointer(self.decay(v), base, e.loc)
        if isinstance(v, AddrVal) and ctyping.is_int(base) and ctyping.bits(base) >= 16:
            return AddrVal(v.ptr, base, v.align)
        return S.cast(self.data(v, e.loc), base)


IS_SAME = re.compile(r"(?:std::)?is_same<(.+)>::value|(?:std::)?is_same_v<(.+)>")


def _split_targs(text: str) -> list[str]:
    """Template arguments split at the top-level commas (`pair<int, int>, float`: two)."""
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += ch == "<"
        depth -= ch == ">"
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return [*out, cur]


GLOBAL_ALIGN = 256  # bytes: cudaMalloc's (and hipMalloc's) alignment of a buffer's start
SHARED_ALIGN = 16  # bytes: the least alignment of shared memory a vector access assumes (an int4 of it)
OVERLOADABLE = ("+", "-", "*", "/")  # arithmetic a program may define for its vector types


def has_effects(e: ir.Expr) -> bool:
    """Whether evaluating `e` assigns something (an assignment or ++/-- inside it)."""
    return ir.has_effects(e)
