"""Memory: global loads and stores (masked by the program point's predicate, vector types by component),
shared-memory writes and reads (recorded for comm.py to forward or reduce), local and constant arrays, and
atomics."""

from __future__ import annotations

import contextlib
from dataclasses import replace
from typing import Any

from xlate.cir import ctype as ctyping
from xlate.cir import ir
from xlate.translate.triton import carry, comm
from xlate.translate.triton import sym as S
from xlate.translate.triton.emit import Ctx, tl_of
from xlate.translate.triton.packed import lane_names, packed_lanes
from xlate.translate.triton.records import RecordAddr
from xlate.translate.triton.state import LiftState
from xlate.translate.triton.sym import NotConcrete, Sym
from xlate.translate.triton.values import (
    ConstArray,
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
    WriteRec,
)

MAX_SELECT = 64  # elements of a local array a run-time index may select among
MAX_SLOTS = 64  # shared elements a thread-computed atomic may name (each is one block reduction)
SHARED_ATOMIC_OPS = {"tl.atomic_add": "sum", "tl.atomic_max": "max", "tl.atomic_min": "min"}  # block reductions


class Memory:
    """Loads, stores and atomics (mixed into the Lifter)."""

    st: LiftState
    ctx: Ctx
    shared_globals: set[str]
    atomic_order: str

    def issue(self, value: Sym, mask: Sym, loc: ir.Loc | None) -> Sym:
        """Issue the not-yet-issued loads of a recomputed value (forwarding) under `mask`, in program order."""
        for ld in reversed(S.loads_in(value)):
            if ld.temp is not None or not self.em.enabled:
                continue  # a dry run leaves the sym alone: it is issued (and its mask fixed) by the real run
            if ld.root and self.st.store_epoch.get(ld.root, 0) != ld.epoch:
                raise LiftError("XL2004", f"'{ld.root}' is written between a shared-memory staging store and its use", loc)
            ld.mask = S.conj(ld.mask, mask) if ld.mask is not None else mask
            if not self.st.defer:
                self.emit_global(ld)
        return value

    def index_chain(self, e: ir.Expr) -> tuple[ir.Expr, list[ir.Expr]]:
        idx: list[ir.Expr] = []
        while isinstance(e, ir.Index):
            idx.insert(0, e.index)
            e = e.base
        return e, idx

    def read(self, e: ir.Index) -> Any:
        rec = self.record_addr(e)
        if rec is not None:  # an element of a buffer of records, or inside one
            return self.record_read(rec, e.loc)
        base_e, idx_e = self.index_chain(e)
        base = self.ev(base_e)
        idx = [self.data(self.ev(x), e.loc) for x in idx_e]
        if isinstance(base, LocalArray) and isinstance(base_e, ir.Name) and len(idx) < len(base.dims or (base.size,)):
            row = self.local_array_address(base_e.id, idx, e.loc)  # `frag[i]` of `T frag[M][N]`: a row's pointer
            if row is not None:
                return row
        return self.read_at(base, idx, e.loc)

    def read_at(self, base: Any, idx: list[Sym], loc: ir.Loc) -> Any:
        if isinstance(base, NullPtr):
            raise base.refuse("reads through", loc)
        if isinstance(base, FieldArray):
            if len(idx) != 1:
                raise LiftError("XL2001", f"member array '{base.name}' indexed with {len(idx)} subscripts", loc)
            lanes = [base.struct.fields[f"{base.name}[{k}]"] for k in range(base.count)]
            return self.pick_lane(lanes, idx[0], f"member array '{base.name}'", loc)
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
            k = base.slot(idx)
            if k is not None:
                return base.slots.get(k, S.const(0, base.ctype))
            flat = self.flat_index(base, idx, loc)  # a run-time index: a select over the elements
            out: Any = base.slots.get(base.size - 1, S.const(0, base.ctype))
            for j in range(base.size - 2, -1, -1):
                out = self.select(S.op("eq", "bool", flat, S.const(j, "int")), base.slots.get(j, S.const(0, base.ctype)),
                                  out, loc)
            return out
        if isinstance(base, LocalPtr) and len(idx) == 1:
            return self.local_read(base, idx[0], loc)
        if isinstance(base, PtrVal):
            if len(idx) != 1:
                raise LiftError("XL2013", "multi-dimensional indexing of a pointer", loc)
            if base.shared:
                lanes = self.shared_lanes(base, idx[0], loc)
                if lanes is not None:  # a vector view of a shared array of its scalars: one read per lane
                    # of a staged array: every lane's loads built first, then issued as one vector load if they can
                    staged = int(base.base.staged is not None and not self.st.defer)
                    self.st.defer += staged
                    try:
                        values = {f: self.shared_read(base.base, (o,), loc) for f, o in lanes}
                    finally:
                        self.st.defer -= staged
                    if staged and not self.emit_staged_vector(list(values.values())):
                        self.issue_deferred(list(values.values()))
                    return StructVal(base.elem.base, values)
                return self.shared_read(base.base, (S.op("add", "int", base.offset, S.cast(idx[0], "int")),), loc)
            return self.global_load(base, idx[0], loc)
        if isinstance(base, StructVal):  # `v[i]` of a glm vector, `m[c][r]` of a glm matrix
            lane = self.lane_read(base, idx, loc)
            if lane is not None:
                return lane
        raise LiftError("XL2001", f"indexing a {type(base).__name__}", loc)

    def pick_lane(self, lanes: list[Any], i: Sym, what: str, loc: ir.Loc) -> Any:
        """lanes[i] of a value kept as lanes (a member array, a glm vector's lanes or a matrix's columns): a
        constant index picks one (outside them, a refusal naming `what`), a run-time one selects over them."""
        if i.is_const:
            if not 0 <= int(i.value) < len(lanes):
                raise LiftError("XL2001", f"index {i.value} outside {what}", loc)
            return lanes[int(i.value)]
        out = lanes[-1] if isinstance(lanes[-1], StructVal) else self.data(lanes[-1], loc)
        for k in range(len(lanes) - 2, -1, -1):
            out = self.select(S.op("eq", "bool", S.cast(i, "int"), S.const(k, "int")), lanes[k], out, loc)
        return out

    def shared_lanes(self, p: PtrVal, i: Sym, loc: ir.Loc) -> list[tuple[str, Sym]] | None:
        """(field, element) of each lane of element `i` of a vector view of a shared array; None where `p` points
        to the array's own element type."""
        vinfo = self.vec_info(self.resolve_type(p.elem.base, loc))
        if vinfo is None or self.vec_info(self.resolve_type(p.base.ctype, loc)) is not None:
            return None
        packed = self.packed_pointer(p)
        fields = lane_names(packed[1]) if packed else vinfo["fields"]
        first = S.op("mul", "int", S.op("add", "int", p.offset, S.cast(i, "int")), S.const(len(fields), "int"))
        return [(f, S.op("add", "int", first, S.const(k, "int"))) for k, f in enumerate(fields)]

    def flat_index(self, arr: LocalArray, idx: list[Sym], loc: ir.Loc) -> Sym:
        """The row-major element number of a local array's index list (one index per dimension)."""
        dims = arr.dims or (arr.size,)
        if len(idx) != len(dims):
            raise LiftError("XL2001", f"local array indexed with {len(idx)} subscripts, declared with {len(dims)}", loc)
        if arr.size > MAX_SELECT:
            raise LiftError("XL2001", f"local array of {arr.size} elements indexed at run time", loc)
        flat = S.const(0, "int")
        for i, d in zip(idx, dims):
            flat = S.op("add", "int", S.op("mul", "int", flat, S.const(d, "int")), S.cast(i, "int"))
        return flat

    shared_reads: int = 0  # shared-memory reads lifted so far (a staging loop's body may make none: staging.py)

    def shared_read(self, arr: SharedArr, idx: tuple[Sym, ...], loc: ir.Loc) -> SharedRead | Sym:
        self.shared_reads += 1
        if arr.staged is not None:
            return self.staged_read(arr, idx, loc)
        if arr.clobbered:
            raise LiftError("XL2004", f"shared array '{arr.name}' is read after the run-time loop that wrote it", loc)
        in_loop = self.st.runtime_loops > 0
        recs = arr.records[arr.boundary :] if in_loop else list(arr.records)
        recs, carried = comm.live_records(recs)  # a loop's carried content (carry.py) holds every element
        pred = tuple(self.full_pred())
        if arr.carry is not None:
            carry.noted_read(self, arr, idx, pred, self.st.epoch)
        return SharedRead(arr, idx, pred, self.st.epoch, loc, in_loop, recs,
                          before_loop=in_loop and arr.boundary > 0 and not carried)

    def global_load(self, p: PtrVal, i: Sym, loc: ir.Loc) -> Any:
        rec = self.record_dtype(self.resolve_type(p.elem.base, loc))
        if rec is not None:  # a whole record (`*p`, a reference to one): its bytes are no element to load
            return self.record_read(RecordAddr(p, S.op("add", "int", p.offset, S.cast(i, "int")), rec), loc)
        vinfo = self.vec_info(p.elem.base)
        packed = self.packed_pointer(p) if vinfo else None
        if packed:  # a vector of another element type's bits: its lanes are that type's elements
            vinfo = {"scalar": packed[0], "fields": lane_names(packed[1])}
        if vinfo:
            n = len(vinfo["fields"])
            base_off = S.op("mul", "int", S.op("add", "int", p.offset, S.cast(i, "int")), S.const(n, "int"))
            offs = [S.op("add", "int", base_off, S.const(k, "int")) for k in range(n)]
            if self.vector_lanes_ok(n, base_off):  # one [..., n] block access, split into its lanes
                mask = self.pred_sym()
                mask_or_none = mask if not (mask.is_const and mask.value) else None
                epoch = self.st.store_epoch.get(p.root, 0)
                # the same element read again (`p[i].x`, then `p[i].y`), where nothing stored to its buffer since
                # and in the same loop body, is the block already loaded
                key = (p.root, S.canon(base_off), S.canon(mask_or_none) if mask_or_none is not None else None, epoch,
                       self.st.region)
                hit = self.st.vec_loads.get(key)
                if hit is not None:
                    return hit
                comps = [S.load(p.base, o, mask_or_none, vinfo["scalar"], p.root, epoch) for o in offs]
                self.emit_vector_load(comps, base_off, p.root)
                out = StructVal(p.elem.base, dict(zip(vinfo["fields"], comps)))
                self.st.vec_loads[key] = out
                return out
            return StructVal(p.elem.base, {f: self.load_scalar(p, o, vinfo["scalar"], loc)
                                           for f, o in zip(vinfo["fields"], offs)})
        return self.load_scalar(p, S.op("add", "int", p.offset, S.cast(i, "int") if not ctyping.is_symbolic(i.ctype) else i),
                                p.elem.base, loc)

    def load_scalar(self, p: PtrVal, off: Sym, ctype: str, loc: ir.Loc) -> Sym:
        conds = self.full_pred()
        mask = S.land(*conds)
        mask_or_none = mask if not (mask.is_const and mask.value) else None
        key = self.reload_key(p, off, ctype)
        now = S.conjuncts(*conds) if key is not None else frozenset()
        if key is not None:
            hit = self.earlier_load(key, now, mask)
            if hit is not None:
                return hit
        ld = S.load(p.base, off, mask_or_none, ctype, p.root, self.st.store_epoch.get(p.root, 0))
        if not self.st.defer:
            self.emit_global(ld, hint=p.root)
            self.merge_adjacent(ld)
            if key is not None:
                self.st.scalar_loads[key] = (*self.st.scalar_loads.get(key, ()), (now, ld))
        return ld

    def earlier_load(self, key: tuple, now: frozenset, mask: Sym) -> Sym | None:
        """The value a load `key` issued earlier holds for the threads of the current predicate (`mask`, its
        conjuncts `now`): one issued under it, or under a wider one (`if (a[i] > a[j]) ...`, then `if (... &&
        a[i] < a[j])`), its threads past this predicate zeroed as the masked load it stands for would read them."""
        for then, ld in self.st.scalar_loads.get(key, ()):
            if then == now:
                return ld
            if then <= now:
                return S.where(mask, ld, S.cast(S.const(0, "int"), ld.ctype))
        return None

    def reload_key(self, p: PtrVal, off: Sym, ctype: str) -> tuple | None:
        """What identifies a global element read again at the same address with no store to any global buffer,
        no atomic and no barrier since, in the same loop body (`a[i] & b[j]`, then `a[i] | b[j]`): the value
        already loaded, as nvcc keeps it in a register. None where a reload must stay: a buffer the kernel also
        writes where it fences or reads `volatile` memory (its reads may be polls of other blocks' writes),
        shared memory, a pointer that varies by thread."""
        if p.shared or getattr(p.base, "lanes", True) or (self.kc.polls and p.root in self.shared_globals):
            return None
        stores = sum(self.st.store_epoch.values())
        return (p.root, S.canon(off), ctype, stores, self.st.epoch, self.st.region)

    def reference(self, e: ir.Expr, loc: ir.Loc) -> RefVal | None:
        """The element of memory an lvalue names (`a[i]`, `*p`, `tile[y][x]`, another reference), its address
        fixed now; None for anything else (locals, rvalues)."""
        if isinstance(e, ir.Name):
            b = self.lookup(e.id)
            if b is not None and isinstance(b.val, SharedArr) and b.val.scalar:
                return RefVal(arr=b.val, idx=(S.const(0, "int"),))
            return b.val if b is not None and isinstance(b.val, RefVal) else None
        if isinstance(e, ir.Unary) and e.op == "*":
            base, idx = self.ev(e.arg), [S.const(0, "int")]
        elif isinstance(e, ir.Index):
            base_e, idx_e = self.index_chain(e)
            base = self.ev(base_e)
            if not isinstance(base, PtrVal | SharedArr):
                return None
            idx = [self.data(self.ev(x), loc) for x in idx_e]
        else:
            return None
        if isinstance(base, SharedArr):
            return RefVal(arr=base, idx=tuple(S.cast(i, "int") for i in idx))
        if not isinstance(base, PtrVal) or len(idx) != 1:
            return None
        off = S.op("add", "int", base.offset, S.cast(idx[0], "int"))
        if base.shared:
            return RefVal(arr=base.base, idx=(off,))
        return RefVal(ptr=PtrVal(base.base, off, base.elem, base.root))

    def deref(self, r: RefVal, loc: ir.Loc) -> Any:
        if r.ptr is not None:
            return self.read_at(r.ptr, [S.const(0, "int")], loc)
        return self.shared_read(r.arr, r.idx, loc)

    def write(self, target: ir.Expr, val: Any, loc: ir.Loc) -> None:
        rec = self.record_addr(target) if isinstance(target, ir.Index | ir.Member | ir.Unary) else None
        if rec is not None:  # into a buffer of records
            self.record_write(rec, val, loc)
            return
        if isinstance(target, ir.Name):
            b = self.lookup(target.id)
            if b is not None and isinstance(b.val, RefVal):  # a store through a reference
                r = b.val
                if r.ptr is not None:
                    self.write_at(r.ptr, [S.const(0, "int")], val, loc)
                else:
                    self.shared_write(r.arr, r.idx, val, loc)
                return
            if b is not None and isinstance(b.val, SharedArr) and b.val.scalar:
                self.shared_write(b.val, (S.const(0, "int"),), val, loc)
                return
            alias = self.macro_lvalue(target.id) if b is None else None
            if alias is not None:  # `#define r0 vars[0]` of another file: `r0 = x` stores to vars[0]
                resolving = self.__dict__.setdefault("_resolving", set())
                resolving.add(target.id)
                try:
                    self.write(alias, val, loc)
                finally:
                    resolving.discard(target.id)
                return
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
            if isinstance(base_e, ir.Member) and len(idx_e) == 1 and self.write_member_element(base_e, idx_e[0], val, loc):
                return
            base = self.ev(base_e)
            idx = [self.data(self.ev(x), loc) for x in idx_e]
            if isinstance(base, LocalArray):
                if self.st.runtime_loops > base.loops:  # its elements would have to be carried by the loop
                    raise LiftError("XL2001", "local array declared outside a run-time loop and written inside it", loc)
                b = self.lookup(base_e.id) if isinstance(base_e, ir.Name) else None
                if b is None or b.val is not base:
                    raise LiftError("XL2001", "local array written through another name", loc)
                new = self.convert(val, ir.CType(base.ctype), loc)
                rel = self.rel_pred(b)
                slots = dict(base.slots)  # a new value of the array (a dry run's writes are undone with its scope)
                k = base.slot(idx)
                if k is not None:
                    slots[k] = self.select(rel, new, slots.get(k), loc) if rel is not None else new
                else:  # a run-time index: every element takes the value where the index names it
                    flat = self.flat_index(base, idx, loc)
                    for j in range(base.size):
                        hit = S.op("eq", "bool", flat, S.const(j, "int"))
                        cond = hit if rel is None else S.land(rel, hit)
                        slots[j] = self.select(cond, new, slots.get(j, S.const(0, base.ctype)), loc)
                self.rebind(base_e.id, replace(base, slots=slots))
                return
            if isinstance(base, StructVal) and isinstance(base_e, ir.Name) and self.lane_write(base_e.id, base, idx,
                                                                                              val, loc):
                return
            self.write_at(base, idx, val, loc)
            return
        raise LiftError("XL2001", "assignment target", loc)

    def macro_lvalue(self, name: str) -> ir.Expr | None:
        """What an unbound name assigned to stands for where another file of the program defines it as a macro of
        an element of memory (`#define r0 vars[0]`, `#define top (*p)`): that element. None otherwise (a name
        being expanded already, one for a number, or no macro)."""
        if self.kc.program_value is None or name in self.__dict__.get("_resolving", ()):
            return None
        value = self.kc.program_value(name)
        if isinstance(value, ir.Index | ir.Member) or (isinstance(value, ir.Unary) and value.op == "*"):
            return value
        if isinstance(value, ir.Name) and value.id != name:
            return value
        return None

    def write_member_element(self, member: ir.Member, index: ir.Expr, val: Any, loc: ir.Loc) -> bool:
        """`s.val[k] = v` for an array member of a packed struct (a local, or an element of global memory);
        False when `member` is not one."""
        ctype = None
        if isinstance(member.base, ir.Name):
            b = self.lookup(member.base.id)
            ctype = b.val.ctype if b is not None and isinstance(b.val, StructVal) else None
        elif isinstance(member.base, ir.Index):
            p = self.ev(self.index_chain(member.base)[0])
            ctype = p.elem.base if isinstance(p, PtrVal) and not p.shared else None
        vinfo = self.vec_info(ctype) if ctype is not None else None
        if vinfo is None and ctype is not None and self.record_fields(ctype) is not None:  # a local record
            vinfo = {"fields": list(self.record_fields(ctype))}
        if vinfo is None or f"{member.field}[0]" not in vinfo["fields"]:
            return False
        count = sum(1 for f in vinfo["fields"] if f.startswith(member.field + "["))
        k = self.data(self.ev(index), loc)
        if k.is_const:
            if not 0 <= int(k.value) < count:
                raise LiftError("XL2001", f"index {k.value} outside member array '{member.field}'", loc)
            self.write_member(ir.Member(loc, member.base, f"{member.field}[{int(k.value)}]"), val, loc)
            return True
        if not isinstance(member.base, ir.Name):
            raise LiftError("XL2013", f"member array '{member.field}' of memory written at a run-time index", loc)
        v = self.data(val, loc)
        for j in range(count):  # every lane: the new value where the index names it
            lane = ir.Member(loc, member.base, f"{member.field}[{j}]")
            old = self.ev(lane)
            hit = S.op("eq", "bool", S.cast(k, "int"), S.const(j, "int"))
            self.write_member(lane, self.select(hit, v, old, loc), loc)
        return True

    def write_member(self, target: ir.Member, val: Any, loc: ir.Loc) -> None:
        if isinstance(target.base, ir.Name):
            b = self.lookup(target.base.id)
            if b is None or not isinstance(b.val, StructVal):
                raise LiftError("XL2012", f"member assignment to '{target.base.id}'", loc)
            sv = b.val
            if target.field not in sv.fields:
                raise LiftError("XL2012", f"{sv.ctype} has no member {target.field}", loc)
            scalar = self.struct_field_type(sv.ctype, target.field)
            new = self.convert(val, ir.CType(scalar), loc) if self.is_struct_type(scalar) else S.cast(
                self.data(val, loc), scalar)
            rel = self.rel_pred(b)
            fields = dict(sv.fields)
            fields[target.field] = self.select(rel, new, sv.fields[target.field], loc) if rel is not None else new
            self.rebind(target.base.id, StructVal(sv.ctype, fields))
            return
        if isinstance(target.base, ir.Index):
            base_e, idx_e = self.index_chain(target.base)
            p = self.ev(base_e)
            if not isinstance(p, PtrVal) or p.shared or not self.vec_info(p.elem.base) or self.packed_pointer(p):
                raise LiftError("XL2013", "member store through a pointer", loc)
            vinfo = self.vec_info(p.elem.base)
            k = vinfo["fields"].index(target.field)
            i = self.data(self.ev(idx_e[0]), loc)
            off = S.op("add", "int", S.op("mul", "int", S.op("add", "int", p.offset, S.cast(i, "int")),
                                          S.const(len(vinfo["fields"]), "int")), S.const(k, "int"))
            self.store_scalar(p, off, S.cast(self.data(val, loc), vinfo["scalar"]), loc)
            return
        raise LiftError("XL2001", "member assignment target", loc)

    def write_at(self, base: Any, idx: list[Sym], val: Any, loc: ir.Loc) -> None:
        if isinstance(base, NullPtr):
            raise base.refuse("writes through", loc)
        if isinstance(base, LocalPtr) and len(idx) == 1:
            self.local_write(base, idx[0], val, loc)
            return
        if isinstance(base, SharedArr):
            self.shared_write(base, tuple(S.cast(i, "int") for i in idx), val, loc)
            return
        if isinstance(base, LocalPtr) and len(idx) == 1:
            return self.local_read(base, idx[0], loc)
        if isinstance(base, PtrVal):
            if len(idx) != 1:
                raise LiftError("XL2013", "multi-dimensional indexing of a pointer", loc)
            if base.shared:
                lanes = self.shared_lanes(base, idx[0], loc)
                if lanes is not None:  # a vector view of a shared array of its scalars: one write per lane
                    if not isinstance(val, StructVal) or set(val.fields) != {f for f, _ in lanes}:
                        raise LiftError("XL2012", f"store of a non-{base.elem.base} through a {base.elem.base} pointer",
                                        loc)
                    for f, o in lanes:
                        self.shared_write(base.base, (o,), val.fields[f], loc)
                    return
                self.shared_write(base.base, (S.op("add", "int", base.offset, S.cast(idx[0], "int")),), val, loc)
                return
            rec = self.record_dtype(self.resolve_type(base.elem.base, loc))
            if rec is not None:  # a whole record through a pointer or reference
                self.record_write(RecordAddr(base, S.op("add", "int", base.offset, S.cast(idx[0], "int")), rec), val, loc)
                return
            if base.elem.const:
                raise LiftError("XL2013", f"store through const pointer '{base.root}'", loc)
            vinfo = self.vec_info(base.elem.base)
            packed = self.packed_pointer(base) if vinfo else None
            if packed:  # the lanes of a packed vector, stored as the buffer's elements
                vinfo = {"scalar": packed[0], "fields": lane_names(packed[1])}
            if vinfo:
                if not isinstance(val, StructVal) or (packed_lanes(val) is not None) != bool(packed) or (
                        packed and len(val.fields) != packed[1]):
                    raise LiftError("XL2012", f"store of a non-{base.elem.base} through a {base.elem.base} pointer", loc)
                n = len(vinfo["fields"])
                base_off = S.op("mul", "int", S.op("add", "int", base.offset, S.cast(idx[0], "int")), S.const(n, "int"))
                if self.vector_lanes_ok(n, base_off):  # one [..., n] block store of the joined lanes
                    mask = self.uniform_effect_mask(base_off, None, plain=True)
                    if mask is not None:
                        comps = [S.cast(self.data(val.fields[f], loc), vinfo["scalar"]) for f in vinfo["fields"]]
                        self.emit_vector_store(base.base, base_off, mask, comps, vinfo["scalar"])
                        self.st.store_epoch[base.root] = self.st.store_epoch.get(base.root, 0) + 1
                    return
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

    discarding: ir.Expr | None

    def shared_write(self, arr: SharedArr, idx: tuple[Sym, ...], val: Any, loc: ir.Loc) -> None:
        pred = tuple(self.full_pred())
        if isinstance(val, SharedRead):
            try:
                val = comm.token_view(self, val)
            except comm.NotTokenizable:
                val = self.data(val, loc)
        if isinstance(val, LaneTokens) and val.alt is not None and (comm.thread_private(self, val, pred)
                                                                     or arr.carry is not None
                                                                     or comm.reads_carried(self, val)):
            # `s[t] += x`: a thread's own values only; as data, reads forward it. A combination stored to an array a
            # loop carries, or of its carried content (carry.py), is data too, as each thread computed it: kept as
            # tokens, each stage of a recurrence would recompute every stage before it
            with contextlib.suppress(LiftError):
                val = val.alt()
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
        stored = val
        if isinstance(val, Sym):
            val = S.cast(val, arr.ctype)
            merged = self.merge_rewrite(arr, idx, pred, val, loc)
            if merged is not None:
                pred, val = merged
                arr.records.pop()
        idx = tuple(comm.assuming(i, pred) for i in idx)
        rec = WriteRec(self.next_id(), arr, idx, pred, val, self.st.epoch, loc)
        self.st.records[rec.id] = rec
        arr.records.append(rec)
        if isinstance(stored, Sym) and stored is val and not stored.is_const:
            # the value stays in a register too (`red[t] = sum; ... sum += red[t + n]`): as tokens, thread i's
            # register is this record's value on thread i, so register and slot combine into one reduction
            self.st.pseudo.setdefault(stored.id, rec)

    def merge_rewrite(self, arr: SharedArr, idx: tuple[Sym, ...], pred: tuple[Sym, ...], val: Sym,
                      loc: ir.Loc) -> tuple[tuple[Sym, ...], Sym] | None:
        """A store to the element the array's last store wrote, in the same barrier interval: one store of
        `where(new condition, new value, old value)` under either condition (`if (i < n) s[t] = x[i]; else s[t]
        = 0;` is one store of a select). Left as two records, each read is a chain over both, and reduction idioms
        over the array are not recognised."""
        if len(arr.records) <= arr.boundary:
            return None
        last = arr.records[-1]
        if last.epoch != self.st.epoch or not isinstance(last.value, Sym) or len(last.idx) != len(idx):
            return None
        memo: dict = {}
        if any(S.canon(a, memo) != S.canon(b, memo) for a, b in zip(last.idx, idx)):
            return None
        keys_old = [S.canon(c, memo) for c in last.pred]
        keys_new = [S.canon(c, memo) for c in pred]
        common = 0
        while common < min(len(keys_old), len(keys_new)) and keys_old[common] == keys_new[common]:
            common += 1
        rest_old, rest_new = last.pred[common:], pred[common:]
        if not rest_new:  # the new store covers every thread the old one did: it replaces it
            return pred, val
        new_cond = S.land(*rest_new)
        value = S.where(new_cond, val, last.value, arr.ctype)
        if not rest_old:  # the old store covered every thread the new one does
            return tuple(last.pred), value
        if len(rest_old) == 1 and len(rest_new) == 1 and rest_new[0].op == "lnot" and \
                S.canon(rest_new[0].args[0], memo) == keys_old[common]:
            return pred[:common], value  # if / else: together they cover what the enclosing conditions do
        either = S.op("lor", "bool", S.land(*rest_old), new_cond)
        return (*pred[:common], either), value

    def store_scalar(self, p: PtrVal, off: Sym, v: Sym, loc: ir.Loc) -> None:
        elem = v.ctype if self.vec_info(p.elem.base) else p.elem.base  # components of vector stores: their scalar
        mask = self.uniform_effect_mask(off, v, plain=True)
        if mask is None:
            return
        em = self.em
        addr = em._address(p.base, off, mask, self.ctx)
        if _hidden_lanes(v) and not (off.lanes | p.base.lanes | mask.lanes) and not _hidden_lanes(mask):
            addr = f"{addr} + {em.zeros(self.ctx)}"  # the value is a block (see _hidden_lanes): so must the pointer be
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
        uniform = off.uniform and not off.opaque and (v is None or (v.uniform and not v.opaque and not _hidden_lanes(v)))
        if not uniform or any(_hidden_lanes(c) for c in conds if c.uniform):
            # a condition read from one thread's forwarded loads (`if (t == 0) { if (s[0]) ... }`) holds on that
            # thread only: the thread-index condition that picks it stays
            return S.land(*conds)
        lane_conds = [c for c in conds if c.concrete and c.lanes]
        if not lane_conds or any(not c.uniform for c in conds if c not in lane_conds):
            # another condition that differs between threads (`if (t == 0) { if (sum > cut[b]) ... }`, cut[b]
            # loaded by thread 0 alone) decides the store on each thread by its own value: the one thread stays
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

    def shared_atomic(self, e: ir.Call, at: dict[str, Any], arr: SharedArr, idx: tuple[Sym, ...]) -> Sym:
        """An atomic on one shared element that every thread names alike (`atomicAdd(&block_sum, v)`,
        `atomicAdd(&histo[3], 1)`), its result unused: the element becomes its value before plus the reduction of
        the active threads' operands, which is what any order of the atomics leaves. A per-thread element, a
        result that is read, exchange and compare-and-swap are refused."""
        op = SHARED_ATOMIC_OPS.get(at["tl"])
        if op is None:
            raise LiftError("XL2005", f"{e.fn} on shared memory", e.loc)
        if self.discarding is not e:
            raise LiftError("XL2005", f"the result of {e.fn} on shared memory is used", e.loc)
        idx = tuple(S.cast(i, "int") for i in idx)
        if any(i.lanes or i.opaque for i in idx):
            return self.shared_atomic_slots(e, at, arr, idx)
        ct = arr.ctype
        v = S.cast(self.data(self.ev(e.args[1]), e.loc), ct)
        if at.get("negate"):
            v = S.op("neg", ct, v)
        last = arr.records[-1] if len(arr.records) > arr.boundary else None
        memo: dict = {}
        if last is not None and last.atomic and last.epoch == self.st.epoch and \
                all(S.canon(a, memo) == S.canon(b, memo) for a, b in zip(last.idx, idx)):
            before = last.value  # atomics on it since the last barrier: they combine in any order
        else:
            before = self.data(self.shared_read(arr, idx, e.loc), e.loc)
        conds = self.full_pred()
        mine = S.where(S.land(*conds), v, S.const(comm.identity(op, ct), ct), ct) if conds else v
        total = comm.reduce_sym(op, comm.guarded(self, mine, op), ct)
        after = S.op("add" if op == "sum" else op, ct, before, total)
        rec = WriteRec(self.next_id(), arr, idx, (), after, self.st.epoch, e.loc, atomic=True)
        self.st.records[rec.id] = rec
        arr.records.append(rec)
        self.idiom(f"{e.fn} on shared '{arr.name}' -> block {op} of the operands", e.loc)
        return S.const(0, ct)  # unused (checked above)

    def shared_atomic_slots(self, e: ir.Call, at: dict[str, Any], arr: SharedArr, idx: tuple[Sym, ...]) -> Sym:
        """An atomic at a per-thread element: for each element some thread may name, the threads naming it do the
        one-element atomic above. The elements are those the thread index gives (`atomicAdd(&bins[threadIdx.x %
        8], v)`), or, where the element depends on more (the data: a block-local histogram), every element of a
        one-dimensional array of at most MAX_SLOTS (an index past the array is undefined in CUDA)."""
        try:
            per_lane = [_lane_values(self, i) if (i.lanes or i.opaque) else None for i in idx]
            lanes = self.nlanes or 0
            slots = sorted({tuple(int(a[t]) if a is not None else None for a in per_lane) for t in range(lanes)})
        except (NotConcrete, ZeroDivisionError):
            size = arr.dims[0] if len(arr.dims) == 1 and len(idx) == 1 else None
            if size is None or size > MAX_SLOTS:
                raise LiftError("XL2005", f"{e.fn} on shared memory at a per-thread element of an array of "
                                          f"{size if size is not None else 'unknown'} elements", e.loc) from None
            slots = [(k,) for k in range(size)]
        if not slots or len(slots) > MAX_SLOTS:
            raise LiftError("XL2005", f"{e.fn} on shared memory at {len(slots)} per-thread elements", e.loc)
        for slot in slots:
            at_slot = tuple(S.const(c, "int") if c is not None else i for i, c in zip(idx, slot))
            mine = [S.op("eq", "bool", i, S.const(c, "int")) for i, c in zip(idx, slot) if c is not None]
            self.st.pred.append(S.land(*mine))
            try:
                self.shared_atomic(e, at, arr, at_slot)
            finally:
                self.st.pred.pop()
        return S.const(0, arr.ctype)

    def atomic(self, e: ir.Call, at: dict[str, Any]) -> Sym:
        if len(e.args) != 2:
            raise LiftError("XL2001", f"{e.fn} with {len(e.args)} arguments", e.loc)
        target = e.args[0]
        if isinstance(target, ir.Unary) and target.op == "&":
            ref = self.reference(target.arg, e.loc)
            if ref is not None and ref.arr is not None:
                return self.shared_atomic(e, at, ref.arr, ref.idx)
            p = self.address_of(target.arg, e.loc)
        else:
            p = self.ev(target)
        if isinstance(p, PtrVal) and p.shared and len(p.base.dims) <= 1:  # `atomicAdd(bins + k, v)`: &bins[k]
            return self.shared_atomic(e, at, p.base, (S.cast(p.offset, "int"),))
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
        combined = self.block_combined_atomic(e, at, p, v, mask)
        if combined is not None:
            return combined
        em = self.em
        addr = em._address(p.base, p.offset, mask, self.ctx, value=v)
        code = em.code(v, self.ctx, p.elem.base)
        if not (v.lanes or p.offset.lanes) and mask.lanes:
            if v.is_const and not ctyping.is_symbolic(p.elem.base):  # a Python number has no shape to broadcast
                code = f"tl.full({self.ctx.shape}, {code}, {tl_of(p.elem.base)})"
            else:
                code = em.broadcast(code, v, self.ctx)
        m = "" if mask.is_const else f", mask={em.code(mask, self.ctx, 'bool')}"
        old = em.assign("old", f"{at['tl']}({addr}, {code}{m}{self.atomic_order})")
        self.st.store_epoch[p.root] = self.st.store_epoch.get(p.root, 0) + 1
        return S.var(old, p.elem.base, bool(v.lanes or p.offset.lanes or mask.lanes))

    def block_combined_atomic(self, e: ir.Call, at: dict[str, Any], p: PtrVal, v: Sym, mask: Sym) -> Sym | None:
        """A global integer add/max/min that every thread of the block aims at one address (`atomicAdd(&hits[
        blockIdx.x], n)`), its result unused: one atomic of the block's reduction of the active threads' operands
        instead of one atomic per thread on the same address, which serialise. Exact: integer add (wrapping),
        max and min give the same value in any order and grouping; the atomic is skipped where the total is the
        operator's identity (no change), so no address is touched that the source would not touch. None: not this case (floats round
        differently when regrouped; a read result needs each thread's own old value)."""
        op = SHARED_ATOMIC_OPS.get(at["tl"])
        ct = p.elem.base
        if op is None or self.discarding is not e or ctyping.is_symbolic(ct) or not ctyping.is_int(ct):
            return None
        if p.offset.lanes or p.offset.opaque or p.base.lanes or not (v.lanes or mask.lanes) or self.one_thread(mask):
            return None
        mine = S.where(mask, v, S.const(comm.identity(op, ct), ct), ct)
        total = comm.reduce_sym(op, comm.guarded(self, mine, op), ct)
        # an atomic of the identity changes nothing: skipping it is exact, and where no thread is active (the total
        # is the identity) the address, perhaps past the buffer, is not touched
        some = S.op("ne", "bool", total, S.const(comm.identity(op, ct), ct))
        em = self.em
        addr = em._address(p.base, p.offset, None, self.ctx)
        em.assign("old", f"{at['tl']}({addr}, {em.code(total, self.ctx, ct)}, "
                  f"mask={em.code(some, self.ctx, 'bool')}{self.atomic_order})")
        self.st.store_epoch[p.root] = self.st.store_epoch.get(p.root, 0) + 1
        self.idiom(f"{e.fn} by every thread at one address -> one atomic of the block {op}", e.loc)
        return S.const(0, ct)  # unused (checked above)

    def one_thread(self, mask: Sym) -> bool:
        """Whether the thread-index conditions of `mask` leave at most one thread (`if (threadIdx.x == 0)`):
        its one atomic needs no reduction."""
        conds, stack = [], [mask]
        while stack:  # the conjuncts of the land tree
            c = stack.pop()
            if c.op == "land":
                stack.extend(c.args)
            else:
                conds.append(c)
        lane_conds = [c for c in conds if c.concrete and c.lanes]
        if not lane_conds:
            return False
        try:
            return int(comm.concrete(self, S.land(*lane_conds)).astype(bool).sum()) <= 1
        except (NotConcrete, ZeroDivisionError):
            return False


def _hidden_lanes(v: Sym) -> bool:
    """Whether a value its `lanes` call uniform differs between threads (and is a block in Triton) through the
    masks of its loads: forwarding re-issues a writer's loads under the reader's condition (`if (t == 0) out[b] =
    s[0];` after a tree reduction), which adds thread-dependent masks after the value was built."""
    return v.uniform and S.varies(v, S.LANE_AXES)


def _lane_values(L: Any, i: Sym) -> Any:
    """Each thread's value of a thread-index expression. Casts to a template integer type (`(IdxType)(t % 32)`)
    are looked through where the values fit every integer type (0..127): the cast then changes none of them."""
    try:
        return comm.concrete(L, i)
    except NotConcrete:
        pass
    memo: dict[int, Sym] = {}

    def strip(s: Sym) -> Sym:
        if s.id not in memo:
            if s.op == "cast" and ctyping.is_symbolic(s.ctype):
                memo[s.id] = strip(s.args[0])
            elif s.args and s.op not in ("load", "reduce", "scan", "segreduce", "call"):
                memo[s.id] = S.op(s.op, s.ctype, *(strip(a) for a in s.args))
            else:
                memo[s.id] = s
        return memo[s.id]

    vals = comm.concrete(L, strip(i))
    if vals.size and (vals.min() < 0 or vals.max() > 127):
        raise NotConcrete("a template-typed index outside 0..127")
    return vals
