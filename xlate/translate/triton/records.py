"""Buffers of records: structs whose fields have different number types (`opts: in[n] as {S: float32, T: int32}`,
docs/spec.md "Records"). The gate hands such a buffer to a Triton launcher as its bytes (a uint8 tensor in C's
layout), so the kernel reads and writes fields through pointers of each field's type made once from the byte
pointer (`opts_float32 = opts.to(tl.pointer_type(tl.float32))`). C's alignment puts every field at a multiple of
its size and makes the record's size (and a nested record's, and an array element's) a multiple of it too, so
number field f of record i is element `i * (size // fsize) + offset // fsize` of that pointer; a layout where
that does not hold (an `align` that breaks it cannot, but a spec may say anything) is refused.

Fields are reached through member chains on an element of the buffer (`p[i].f`, `p->f`, `p[i].inner.m[k][j]`,
a reference bound to an element); a fixed array of numbers decays to a pointer into the record (`p->s0[t]`,
`&p[i].count` for an atomic). A record read or written whole (`Opt o = p[i]`, `p[i] = o`) is a StructVal of its
number fields, an array's as `name[k]` lanes; locals of the record type are the same. Records holding nested
records or arrays of several dimensions are read and written field by field only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from xlate.cir import ctype as ctyping
from xlate.cir import ir
from xlate.translate.triton import sym as S
from xlate.translate.triton.sym import Sym
from xlate.translate.triton.values import LiftError, PtrVal, RefVal, StructVal

C_TYPES = {name: ctyping.canonical(c) for name, c in ctyping.template_spellings("cuda").items()}


@dataclass(frozen=True)
class RecordAddr:
    """An object inside a buffer of records: which record of the buffer's pointer, the object's dtype (a
    record, a fixed array or a number), its byte offset in the record, and run-time array indices with their
    byte strides."""

    ptr: PtrVal
    index: Sym
    dtype: np.dtype
    const: int = 0
    terms: tuple[tuple[Sym, int], ...] = ()


def leaf_ctype(dt: np.dtype) -> str | None:
    """The C type a number field is read as (a bool through its byte)."""
    return "unsigned char" if dt.kind == "b" else C_TYPES.get(dt.name)


def value_ctype(dt: np.dtype) -> str | None:
    """The C type of a number field's value."""
    return "bool" if dt.kind == "b" else C_TYPES.get(dt.name)


def leaf_dtypes(dt: np.dtype) -> list[np.dtype]:
    """The number dtypes a record holds, nested records and arrays included, each once."""
    if dt.fields is not None:
        out: list[np.dtype] = []
        for name in dt.names or ():
            out += [d for d in leaf_dtypes(dt.fields[name][0]) if d not in out]
        return out
    return leaf_dtypes(dt.subdtype[0]) if dt.subdtype is not None else [dt]


def flat_fields(dt: np.dtype) -> dict[str, tuple[str, int]] | None:
    """A record as the lanes of a value: field -> (C type, byte offset); an array's elements `name[k]`. None
    where it holds a nested record or an array of several dimensions (accessed field by field only)."""
    out: dict[str, tuple[str, int]] = {}
    for name in dt.names or ():
        fdt, off = dt.fields[name][:2]
        if fdt.fields is not None:
            return None
        if fdt.subdtype is not None:
            base, shape = fdt.subdtype
            if len(shape) != 1 or base.fields is not None:
                return None
            out.update({f"{name}[{k}]": (value_ctype(base), off + k * base.itemsize) for k in range(shape[0])})
        else:
            out[name] = (value_ctype(fdt), off)
    return out


class Records:
    """Record buffers (mixed into the Lifter)."""

    records: dict[str, np.dtype]  # the C name of each record type the kernel's parameters hold -> its layout
    record_ptrs: dict[tuple[str, str], str]  # (parameter, dtype name) -> the kernel's pointer of that type

    def record_dtype(self, ctype: str) -> np.dtype | None:
        return self.records.get(ctype) if self.records else None

    def record_param(self, py: str, base: str, ct: ir.CType, dt: np.dtype) -> PtrVal:
        """The pointer of a record buffer `py` (its offset counts records), with a pointer of each of its number
        types made from its bytes at the start of the kernel."""
        if ct.ptr != 1:
            raise LiftError("XL2013", f"parameter '{py}' is a pointer to a pointer to records", None)
        known = self.records.setdefault(base, dt)
        if known != dt:
            raise LiftError("XL2012", f"struct {base} has two record layouts in the spec", None)
        for leaf in leaf_dtypes(dt):
            name = "uint8" if leaf.kind == "b" else leaf.name
            var = self.em.fresh(f"{py}_{name}")
            self.record_ptrs[(py, name)] = var
            self.em.line(f"{var} = {py}.to(tl.pointer_type({ctyping.tl(leaf_ctype(leaf))}))")
        return PtrVal(S.uni(py, base + "*"), S.const(0, "int"), ir.CType(base, 0, ct.const), py)

    def _record_pointer(self, v: Any) -> PtrVal | None:
        if isinstance(v, PtrVal) and not v.shared and self.record_dtype(self.resolve_type(v.elem.base, None)) is not None:
            return v
        return None

    def record_addr(self, e: ir.Expr) -> RecordAddr | None:
        """The object an lvalue names inside a buffer of records; None where `e` is no such lvalue. Only names
        are looked up to decide: nothing is evaluated for an expression that is not one."""
        if isinstance(e, ir.Name):
            b = self.lookup(e.id)
            if b is not None and isinstance(b.val, RefVal) and b.val.ptr is not None:
                p = self._record_pointer(b.val.ptr)
                if p is not None:
                    return RecordAddr(p, p.offset, self.record_dtype(self.resolve_type(p.elem.base, None)))
            return None
        if isinstance(e, ir.Unary) and e.op == "*" and isinstance(e.arg, ir.Name):
            p = self._named_record_pointer(e.arg)
            return RecordAddr(p, p.offset, self._dtype_of(p)) if p is not None else None
        if isinstance(e, ir.Index) and isinstance(e.base, ir.Name):
            p = self._named_record_pointer(e.base)
            if p is None:
                return None
            i = self.data(self.ev(e.index), e.loc)
            return RecordAddr(p, S.op("add", "int", p.offset, S.cast(i, "int")), self._dtype_of(p))
        if isinstance(e, ir.Member):
            a = self.record_addr(e.base)
            if a is None:
                return None
            if a.dtype.fields is None or e.field not in a.dtype.fields:
                raise LiftError("XL2012", f"a record has no member {e.field}", e.loc)
            fdt, off = a.dtype.fields[e.field][:2]
            return RecordAddr(a.ptr, a.index, fdt, a.const + off, a.terms)
        if isinstance(e, ir.Index) and isinstance(e.base, ir.Member | ir.Index):
            a = self.record_addr(e.base)
            if a is None:
                return None
            if a.dtype.subdtype is None:
                raise LiftError("XL2012", "a record member indexed that is no array", e.loc)
            base, shape = a.dtype.subdtype
            sub = np.dtype((base, shape[1:])) if len(shape) > 1 else base
            k = self.data(self.ev(e.index), e.loc)
            if k.is_const:
                return RecordAddr(a.ptr, a.index, sub, a.const + int(k.value) * sub.itemsize, a.terms)
            return RecordAddr(a.ptr, a.index, sub, a.const, (*a.terms, (S.cast(k, "int"), sub.itemsize)))
        return None

    def _named_record_pointer(self, e: ir.Name) -> PtrVal | None:
        b = self.lookup(e.id)
        return self._record_pointer(b.val) if b is not None else None

    def _dtype_of(self, p: PtrVal) -> np.dtype:
        return self.record_dtype(self.resolve_type(p.elem.base, None))

    def leaf_pointer(self, a: RecordAddr, loc: ir.Loc | None) -> PtrVal:
        """A pointer of the number's type to the number `a` names (its element offset in that type)."""
        dt = a.dtype if a.dtype.subdtype is None else a.dtype.subdtype[0]
        if dt.fields is not None:
            raise LiftError("XL2012", "the address of a nested record inside a record", loc)
        name = "uint8" if dt.kind == "b" else dt.name
        root = a.ptr.root
        var = self.record_ptrs.get((root, name))
        if var is None or not (isinstance(a.ptr.base, Sym) and a.ptr.base.op == "uni" and a.ptr.base.name == root):
            raise LiftError("XL2013", f"a record pointer that is not parameter '{root}' itself", loc)
        sz = dt.itemsize
        size = self._dtype_of(a.ptr).itemsize
        if size % sz or a.const % sz or any(stride % sz for _, stride in a.terms):
            raise LiftError("XL2012", f"a {dt.name} field of a record at an offset that is no multiple of its size "
                                      "(a packed layout)", loc)
        off = S.op("add", "int", S.op("mul", "int", a.index, S.const(size // sz, "int")), S.const(a.const // sz, "int"))
        for k, stride in a.terms:
            off = S.op("add", "int", off, S.op("mul", "int", k, S.const(stride // sz, "int")))
        ct = leaf_ctype(dt)
        return PtrVal(S.uni(var, ct + "*"), off, ir.CType(ct, 0, a.ptr.elem.const), root)

    def record_read(self, a: RecordAddr, loc: ir.Loc | None) -> Any:
        """The value of the object `a` names: a number, a pointer to an array's first element, a whole record."""
        if a.dtype.fields is not None:
            return self.whole_record_load(a, loc)
        p = self.leaf_pointer(a, loc)
        if a.dtype.subdtype is not None:  # an array decays to a pointer to its first element
            if len(a.dtype.subdtype[1]) != 1 or a.dtype.subdtype[0].kind == "b":
                raise LiftError("XL2013", "a pointer to a record's array of arrays or of bools", loc)
            return p
        v = self.load_scalar(p, p.offset, p.elem.base, loc)
        return S.op("ne", "bool", v, S.const(0, p.elem.base)) if a.dtype.kind == "b" else v

    def record_write(self, a: RecordAddr, val: Any, loc: ir.Loc | None) -> None:
        if a.ptr.elem.const:
            raise LiftError("XL2013", f"store through const pointer '{a.ptr.root}'", loc)
        if a.dtype.fields is not None:
            self.whole_record_store(a, val, loc)
            return
        if a.dtype.subdtype is not None:
            raise LiftError("XL2001", "assignment to an array member of a record", loc)
        p = self.leaf_pointer(a, loc)
        v = self.data(val, loc)
        if a.dtype.kind == "b":
            v = S.cast(S.cast(v, "bool"), "unsigned char")
        self.store_scalar(p, p.offset, S.cast(v, p.elem.base), loc)

    def _flat(self, a: RecordAddr, loc: ir.Loc | None) -> dict[str, tuple[str, int]]:
        fields = flat_fields(a.dtype)
        if fields is None:
            raise LiftError("XL2012", "a record holding nested records or arrays of arrays read or written whole "
                                      "(only field by field)", loc)
        return fields

    def whole_record_load(self, a: RecordAddr, loc: ir.Loc | None) -> StructVal:
        out = {}
        for f, (_, off) in self._flat(a, loc).items():
            leaf = a.dtype.fields[f.split("[")[0]][0]
            leaf = leaf.subdtype[0] if leaf.subdtype is not None else leaf
            out[f] = self.record_read(RecordAddr(a.ptr, a.index, leaf, a.const + off, a.terms), loc)
        return StructVal(self.record_name(a.dtype, a.ptr), out)

    def whole_record_store(self, a: RecordAddr, val: Any, loc: ir.Loc | None) -> None:
        fields = self._flat(a, loc)
        if not isinstance(val, StructVal) or set(val.fields) != set(fields):
            raise LiftError("XL2012", "store of a value that is not the record into a buffer of records", loc)
        for f, (_, off) in fields.items():
            leaf = a.dtype.fields[f.split("[")[0]][0]
            leaf = leaf.subdtype[0] if leaf.subdtype is not None else leaf
            self.record_write(RecordAddr(a.ptr, a.index, leaf, a.const + off, a.terms), val.fields[f], loc)

    def record_name(self, dt: np.dtype, p: PtrVal) -> str:
        """The C type of a record value read whole: the buffer's struct, or a parameter's of that layout."""
        name = self.resolve_type(p.elem.base, None)
        if self.record_dtype(name) == dt:
            return name
        return next((n for n, d in self.records.items() if d == dt), "record nested in " + name)

    def record_fields(self, ctype: str) -> dict[str, str] | None:
        """field -> C type of a value of struct type `ctype`: a record of the spec (its numbers, an array's as
        `name[k]`), else a struct of the program (structs.py members: a nested struct's field has its type).
        None: no such struct."""
        dt = self.record_dtype(ctype)
        flat = flat_fields(dt) if dt is not None else None
        if flat is not None:
            return {f: t for f, (t, _) in flat.items()}
        if self.kc.members is None or ctyping.row(ctype) is not None or ctyping.vector(ctype) is not None:
            return None
        return self.kc.members(ctype)

    def zero_value(self, ctype: str) -> Any:
        """A local of a number, vector or struct type declared without a value: zero, field by field."""
        vinfo = self.vec_info(ctype)
        if vinfo is not None:
            return StructVal(ctype, {f: S.const(0, vinfo["scalar"]) for f in vinfo["fields"]})
        fields = self.record_fields(ctype)
        if fields is not None:
            return StructVal(ctype, {f: self.zero_value(t) for f, t in fields.items()})
        return S.const(0, ctype)

    def is_struct_type(self, ctype: str) -> bool:
        return ctyping.row(ctype) is None and (self.vec_info(ctype) is not None or self.record_fields(ctype) is not None)

    def struct_field_type(self, ctype: str, field: str) -> str:
        """The C type of member `field` of a local value of a vector, packed struct or record type."""
        vinfo = self.vec_info(ctype)
        if vinfo is not None:
            return vinfo["scalar"]
        fields = self.record_fields(ctype) or {}
        if field not in fields:
            raise LiftError("XL2012", f"{ctype} has no member {field}", None)
        return fields[field]
