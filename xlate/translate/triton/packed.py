"""Packed vectors: a buffer of one element type read or written through a pointer to a wider vector of another
(`*(const uint4*)halves`, `(float4*)bf16s`: 128 bits, eight 16-bit elements), and the value's bits read back as
the buffer's elements through a pointer to the local (`((__half*)&v)[i]`, `*(__half2*)&v.y`).

The value is a StructVal of the vector type whose fields are the buffer's elements, `LANE0`, `LANE1`, ...
(`packed_lanes`): the access is a contiguous block of those elements per thread (layout.py's vector load or
store), nothing is bit-cast, and a lane is read or written as the element it is. Its vector members (`v.x` as
a number) are the bits of several elements: not lifted. A pointer into a local (`LocalPtr`) names the
variable and a bit offset; each access reads or rebinds the variable's lanes where the pointee's lanes line up
with them (the same representation, or a vector of it).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from xlate.cir import ctype as ctyping
from xlate.cir import ir
from xlate.translate.triton import sym as S
from xlate.translate.triton.sym import Sym
from xlate.translate.triton.values import LiftError, LocalArray, LocalPtr, PtrVal, StructVal

LANE = "__lane"


def lane_names(k: int) -> list[str]:
    return [f"{LANE}{j}" for j in range(k)]


def same_representation(a: str, b: str) -> bool:
    """Whether two scalar C types are the same bits read the same way (`unsigned long` and `unsigned long long`
    on LP64, `int` and `int32_t`): a pointer of one may read a buffer of the other."""
    if a == b:
        return True
    da, db = ctyping.np_dtype(a), ctyping.np_dtype(b)
    return da is not None and db is not None and np.dtype(da) == np.dtype(db)


def packed_lanes(v: Any) -> list[Any] | None:
    """The lanes of a packed value (None for any other value)."""
    if isinstance(v, StructVal) and v.fields and next(iter(v.fields)).startswith(LANE):
        return [v.fields[f] for f in lane_names(len(v.fields))]
    return None


class Packed:
    """Packed vectors and pointers into locals (mixed into the Lifter)."""

    def packing(self, vtype: str, elem: str) -> int | None:
        """How many `elem`s one `vtype` vector holds, where it holds them packed: a vector type whose component
        is not the element's representation, its bits a multiple (2 or more) of the element's."""
        vinfo = self.vec_info(vtype)
        if vinfo is None or ctyping.row(elem) is None or elem == "bool":
            return None
        scalar = vinfo["scalar"]
        if ctyping.row(scalar) is None or same_representation(scalar, elem):
            return None
        total = ctyping.bits(scalar) * len(vinfo["fields"])
        k, rest = divmod(total, ctyping.bits(elem))
        return k if k >= 2 and not rest else None

    def buffer_elem(self, p: PtrVal) -> str | None:
        """The element type of the global buffer a pointer reads (its base's type)."""
        t = getattr(p.base, "ctype", "")
        return t[:-1] if isinstance(t, str) and t.endswith("*") else None

    def packed_pointer(self, p: PtrVal) -> tuple[str, int] | None:
        """(element, lanes) where `p` is a vector pointer reading a buffer of another element type packed."""
        if p.shared:
            elem = self.resolve_type(p.base.ctype, None)
        else:
            elem = self.buffer_elem(p)
        vt = self.resolve_type(p.elem.base, None)
        k = self.packing(vt, elem) if elem else None
        return (elem, k) if k else None

    # -- pointers into locals ------------------------------------------------------------------------------------

    def local_address(self, e: ir.Expr, loc: ir.Loc) -> LocalPtr | None:
        """`&v` or `&v.f` of a local vector (plain or packed): None where `e` is not one."""
        name, bit = e, 0
        if isinstance(e, ir.Member) and isinstance(e.base, ir.Name):
            name = e.base
        if not isinstance(name, ir.Name):
            return None
        b = self.lookup(name.id)
        if b is None or not isinstance(b.val, StructVal) or b.ctype.ptr:
            return None
        vinfo = self.vec_info(b.val.ctype)
        if vinfo is None:
            return None
        if isinstance(e, ir.Member):
            if e.field not in vinfo["fields"]:
                return None
            bit = vinfo["fields"].index(e.field) * ctyping.bits(vinfo["scalar"])
            return LocalPtr(name.id, bit, vinfo["scalar"], False)
        return LocalPtr(name.id, 0, b.val.ctype, False)

    def local_array_address(self, name: str, idx: list[Sym], loc: ir.Loc) -> LocalPtr | None:
        """`arr` or `arr[i]` (fewer subscripts than dimensions, constants) of a local array, as a pointer: the
        array decays to its first element (of the row named)."""
        b = self.lookup(name)
        if b is None or not isinstance(b.val, LocalArray):
            return None
        arr = b.val
        dims = arr.dims or (arr.size,)
        if len(idx) >= len(dims) or not all(i.is_const for i in idx) or ctyping.row(arr.ctype) is None:
            return None
        first, stride = 0, arr.size
        for i, d in zip(idx, dims):
            stride //= d
            first += int(i.value) * stride
        return LocalPtr(name, first * ctyping.bits(arr.ctype), arr.ctype, False)

    def _view(self, p: LocalPtr, loc: ir.Loc) -> tuple[Any, list[Any], str]:
        """(the local's value, the keys of its lanes in order, their type)."""
        b = self.lookup(p.var)
        v = b.val if b is not None else None
        if isinstance(v, LocalArray):
            return v, list(range(v.size)), v.ctype
        if isinstance(v, StructVal):
            lanes = packed_lanes(v)
            if lanes is not None:
                return v, lane_names(len(lanes)), lanes[0].ctype
            vinfo = self.vec_info(v.ctype)
            return v, list(vinfo["fields"]), vinfo["scalar"]
        raise LiftError("XL2013", f"a pointer to local '{p.var}' used after it went out of scope", loc)

    @staticmethod
    def _lane(v: Any, key: Any) -> Any:
        if isinstance(v, LocalArray):
            return v.slots.get(key, S.const(0, v.ctype))
        return v.fields[key]

    def _pointee(self, t: str, lane: str) -> list[str] | None:
        """The fields of a `t` read from lanes of type `lane`, one lane each; None where they do not line up."""
        vinfo = self.vec_info(t)
        if vinfo is None:
            return [""] if ctyping.row(t) is not None and same_representation(t, lane) else None
        if same_representation(vinfo["scalar"], lane):
            return list(vinfo["fields"])
        k = self.packing(t, lane)
        return lane_names(k) if k else None

    def _span(self, p: LocalPtr, i: Sym, keys: list[Any], lane: str, loc: ir.Loc) -> tuple[list[str], list[Any]]:
        """(pointee fields, the local's lanes they are) of element `i` of `p`."""
        t = self.resolve_type(p.elem, loc)
        fields = self._pointee(t, lane)
        if fields is None or not i.is_const or p.bit % ctyping.bits(lane):
            what = "a run-time element" if fields is not None and not i.is_const else f"a {t}"
            raise LiftError("XL2013", f"{what} of local '{p.var}' read through a pointer to its bits (lanes of "
                                      f"{lane})", loc)
        first = p.bit // ctyping.bits(lane) + int(i.value) * len(fields)
        if first < 0 or first + len(fields) > len(keys):
            raise LiftError("XL2013", f"an access past the end of local '{p.var}'", loc)
        return fields, keys[first : first + len(fields)]

    def local_read(self, p: LocalPtr, i: Sym, loc: ir.Loc) -> Any:
        v, keys, lane = self._view(p, loc)
        fields, mine = self._span(p, i, keys, lane, loc)
        if fields == [""]:
            return self._lane(v, mine[0])
        return StructVal(self.resolve_type(p.elem, loc), {f: self._lane(v, m) for f, m in zip(fields, mine)})

    def local_write(self, p: LocalPtr, i: Sym, val: Any, loc: ir.Loc) -> None:
        if p.const:
            raise LiftError("XL2013", f"store through a const pointer to local '{p.var}'", loc)
        v, keys, lane = self._view(p, loc)
        if isinstance(v, StructVal):
            v = self._repacked(v, p, loc)
            v, keys, lane = v, self._view_keys(v), self._view_lane(v)
        fields, mine = self._span(p, i, keys, lane, loc)
        if fields == [""]:
            parts = {mine[0]: S.cast(self.data(val, loc), lane)}
        elif isinstance(val, StructVal) and set(val.fields) == set(fields):
            parts = {m: S.cast(self.data(val.fields[f], loc), lane) for f, m in zip(fields, mine)}
        else:
            raise LiftError("XL2012", f"store of a non-{p.elem} through a {p.elem} pointer", loc)
        if isinstance(v, StructVal):
            self.set_var(p.var, StructVal(v.ctype, {**v.fields, **parts}), loc)
            return
        if self.st.runtime_loops > v.loops:  # its elements would have to be carried by the loop
            raise LiftError("XL2001", "local array declared outside a run-time loop and written inside it", loc)
        rel = self.rel_pred(self.lookup(p.var))
        slots = dict(v.slots)
        for k, new in parts.items():
            slots[k] = self.select(rel, new, slots.get(k), loc) if rel is not None else new
        self.rebind(p.var, replace(v, slots=slots))

    def _view_keys(self, v: StructVal) -> list[str]:
        lanes = packed_lanes(v)
        return lane_names(len(lanes)) if lanes is not None else list(self.vec_info(v.ctype)["fields"])

    def _view_lane(self, v: StructVal) -> str:
        lanes = packed_lanes(v)
        return lanes[0].ctype if lanes is not None else self.vec_info(v.ctype)["scalar"]

    def _repacked(self, sv: StructVal, p: LocalPtr, loc: ir.Loc) -> StructVal:
        """A vector not yet written (`float4 c;`) first written through a pointer to lanes of another type
        (`*(__half2*)&c.x = h`): its lanes become that type's (zero: it held no value)."""
        t = self.resolve_type(p.elem, loc)
        vinfo = self.vec_info(t)
        lane = vinfo["scalar"] if vinfo else t
        if packed_lanes(sv) is not None or self._pointee(t, self._view_lane(sv)) is not None:
            return sv
        k = self.packing(sv.ctype, lane)
        if k is None or not all(isinstance(v, Sym) and v.is_const and v.value == 0 for v in sv.fields.values()):
            raise LiftError("XL2013", f"the bits of local '{p.var}' ({sv.ctype}) written as {t}", loc)
        return StructVal(sv.ctype, {f: S.const(0, lane) for f in lane_names(k)})

    def local_cast(self, p: LocalPtr, base: str, const: bool) -> LocalPtr:
        return LocalPtr(p.var, p.bit, base, const or p.const)

    def local_offset(self, p: LocalPtr, d: Sym, loc: ir.Loc) -> LocalPtr:
        """`p + d` of a pointer into a local: d a compile-time constant."""
        t = self.resolve_type(p.elem, loc)
        if not d.is_const or (ctyping.row(t) is None and not self.vec_info(t)):
            raise LiftError("XL2013", f"a pointer into local '{p.var}' offset at run time", loc)
        vinfo = self.vec_info(t)
        size = ctyping.bits(vinfo["scalar"]) * len(vinfo["fields"]) if vinfo else ctyping.bits(t)
        return LocalPtr(p.var, p.bit + int(d.value) * size, p.elem, p.const)
