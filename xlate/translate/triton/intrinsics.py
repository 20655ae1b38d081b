"""Calls: CUDA intrinsics (barriers, fences, warp shuffles and the warp intrinsics that are refused, by the
categories of xlate/data/cuda_intrinsics.yaml), cooperative groups, vector constructors, atomics and math
functions (maps/math.yaml), and device functions, which are inlined."""

from __future__ import annotations

import contextlib
import functools
import os
import re
from collections.abc import Callable
from dataclasses import fields, replace
from typing import Any

import numpy as np

from xlate.cir import ctype as ctyping
from xlate.cir import ir
from xlate.translate.triton import comm
from xlate.translate.triton import sym as S
from xlate.translate.triton.cub import (
    CubBlockIO,
    CubBlockReduce,
    CubWarpReduce,
    io_args,
    reducer_type,
    warp_reducer_type,
)
from xlate.translate.triton.emit import _paren, tl_of
from xlate.translate.triton.state import FnCtx, KernelContext, LiftState
from xlate.translate.triton.sym import Sym
from xlate.translate.triton.tables import atomic_entry, intrinsic_lowering, math_entry, vector_entry
from xlate.translate.triton.values import (
    CGroup,
    ConstArray,
    LaneTokens,
    LiftError,
    LocalArray,
    PtrVal,
    RefVal,
    SharedArr,
    SharedRead,
    StructVal,
    TypeVal,
)

MAX_INLINE_DEPTH = 16
BIT_SCANS = {"__clz": 32, "__clzll": 64, "__ffs": 32, "__ffsll": 64}
BIT_REVERSES = {"__brev": 32, "__brevll": 64}
ATOMIC_SCOPE = re.compile(r"_(system|block)$")  # a scope wider or narrower than the device's: same effect here
SINCOS = {"sincosf": ("sinf", "cosf"), "sincos": ("sin", "cos"), "__sincosf": ("__sinf", "__cosf"),
          "sincospif": ("sinpif", "cospif"), "sincospi": ("sinpi", "cospi")}
# numeric_limits members the launcher computes for a template type (C++'s values: 0 where integers have none)
LIMIT_MEMBERS = ("max", "min", "lowest", "epsilon", "infinity", "quiet_NaN")
NUMERIC_LIMITS = re.compile(r"(?:(?:cuda::)?std::)?numeric_limits<(.+)>::(\w+)")
INT_LITERAL_MACRO = re.compile(r"(U?INT)(8|16|32|64)_C")
CG_REDUCE_OPS = {"plus": "sum", "greater": "max", "less": "min"}  # cg::reduce's functors, as token operators
SHUFFLE = re.compile(r"__shfl(?:_(up|down|xor))?(_sync)?")  # __shfl_down_sync: kind down, a mask argument first
CG_UNQUALIFIED = ("this_thread_block", "this_grid", "tiled_partition")  # names distinctive enough without one


def reaches_fence(fir: ir.FunctionIR, kc: KernelContext) -> bool:
    """Whether the kernel or a device function it calls (followed by name, every overload) calls a memory fence.
    CUDA's atomics are relaxed; Triton's are acquire-release unless told otherwise, which fences around each
    one. The port's atomics are relaxed unless the kernel fences: code that
    publishes data with `__threadfence(); atomicAdd(&done, 1)` keeps Triton's ordering, which the fence (lowered
    to nothing) relies on."""
    return reaches(fir, kc, lambda node: isinstance(node, ir.Call) and intrinsic_lowering(node.fn) == "fence")


POLLING_LOADS = frozenset({"__ldcv"})  # loads that fetch again whatever the cache holds


def reaches_volatile(fir: ir.FunctionIR, kc: KernelContext) -> bool:
    """Whether the kernel or a device function it calls declares, casts to or takes something `volatile`, or
    reads with a load that bypasses the caches (`__ldcv`): memory another thread may change while it runs,
    read on purpose again and again, so no read of it may reuse an earlier one."""
    def volatile(node: Any) -> bool:
        if isinstance(node, ir.Decl):
            return node.ctype.volatile
        if isinstance(node, ir.Cast):
            return node.to.volatile
        return isinstance(node, ir.Call) and node.fn in POLLING_LOADS
    functions = _reachable(fir, kc)
    return any(ct.volatile for f in functions for _, ct in f.params) or \
        any(volatile(node) for f in functions for node in ir.walk(f.body))


def _reachable(fir: ir.FunctionIR, kc: KernelContext) -> list[ir.FunctionIR]:
    """The kernel and every device function it calls, directly or not (followed by name, every overload, and
    into the program's other files where the kernel's own has no such function)."""
    seen: dict[int, ir.FunctionIR] = {id(fir): fir}
    todo = [fir]
    while todo:
        for node in ir.walk(todo.pop().body):
            if not isinstance(node, ir.Call):
                continue
            callees = list(kc.overloads.get(node.fn, [])) or ([kc.devices[node.fn]] if node.fn in kc.devices else [])
            if not callees and kc.program_device is not None and intrinsic_lowering(node.fn) is None:
                other = kc.program_device(node.fn, len(node.args))
                callees = [other] if other is not None else []
            for f in callees:
                if id(f) not in seen:
                    seen[id(f)] = f
                    todo.append(f)
    return list(seen.values())


def reaches(fir: ir.FunctionIR, kc: KernelContext, test: Callable[[Any], bool]) -> bool:
    """Whether `test(node)` holds for a node of the kernel or of a device function it calls."""
    return any(test(node) for f in _reachable(fir, kc) for node in ir.walk(f.body))


def cg_function(fn: str) -> str:
    """The cooperative-groups function a call names (`cg::this_grid`, or `this_grid` under `using namespace`), ''
    for any other call. The front end spells the namespace and its aliases `cg::` (cpre.normalise)."""
    if fn.startswith("cg::"):
        return fn[len("cg::"):]
    return fn if fn in CG_UNQUALIFIED else ""


class Intrinsics:
    """Calls (mixed into the Lifter)."""

    st: LiftState
    kc: KernelContext
    bx: int
    by: int
    nlanes: int
    shared_globals: set[str]
    atomic_order: str

    def call(self, e: ir.Call) -> Any:
        fn = e.fn
        lowering = intrinsic_lowering(fn)
        if lowering == "barrier":
            self.barrier(e.loc, warp=fn == "__syncwarp")
            return S.const(0, "int")
        if lowering in ("none", "fence"):  # a fence: the kernel's atomics were given their order (reaches_fence)
            return S.const(0, "int")
        shuffle = SHUFFLE.fullmatch(fn) if lowering == "shuffle" else None
        if shuffle is not None:
            kind, has_mask = shuffle.group(1) or "idx", shuffle.group(2) is not None
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
        if lowering is not None:
            raise LiftError("XL2003", f"warp intrinsic {fn}", e.loc)
        cg = cg_function(fn)
        if cg == "reduce" and len(e.args) == 3:
            return self.cg_reduce(e)
        if cg == "this_thread_block":
            return CGroup("block", self.real_bx * self.real_by if self.real_bx is not None else 0)
        if cg == "this_grid":
            return CGroup("grid")
        if cg == "tiled_partition":
            if not e.targs or not e.targs[0].isdigit():
                raise LiftError("XL2003", "tiled_partition with a run-time size", e.loc)
            size = int(e.targs[0])
            threads = self.real_bx * self.real_by if self.real_bx is not None else 0
            if size > 32 or size & (size - 1) or not threads or threads % size or self.lane_guard is not None:
                raise LiftError("XL2003", f"tiled_partition<{size}>", e.loc)
            return CGroup("tile", size)
        vinfo = ctyping.vector(fn[5:]) if fn.startswith("make_") else None  # make_float4 ...
        if vinfo is not None:
            ct = fn[5:]
            if len(e.args) != len(vinfo["fields"]):
                raise LiftError("XL2012", f"{fn} with {len(e.args)} arguments", e.loc)
            return StructVal(ct, {f: S.cast(self.data(self.ev(a), e.loc), vinfo["scalar"]) for f, a in zip(vinfo["fields"], e.args)})
        if ATOMIC_SCOPE.sub("", fn) == "atomicCAS":
            return self.atomic_cas(e)
        at = atomic_entry(fn) or atomic_entry(ATOMIC_SCOPE.sub("", fn))  # atomicExch_system: one block's view
        if at is not None:
            return self.atomic(e, at)
        if fn in BIT_SCANS and len(e.args) == 1:
            return self.bit_scan(fn, e)
        if fn in BIT_REVERSES and len(e.args) == 1:
            return self.bit_reverse(fn, e)
        if fn.removeprefix("::") in SINCOS and len(e.args) == 3:
            return self.sincos(fn.removeprefix("::"), e)
        if fn == "__nv_cvt_float_to_fp8" and len(e.args) == 3:
            return self.to_fp8(e)
        if fn.removeprefix("::").removeprefix("std::") == "frexpf" and len(e.args) == 2:
            return self.frexpf(e)
        spelled = self.lookup(fn)
        spelled = spelled.val.ctype if spelled is not None and isinstance(spelled.val, TypeVal) else fn
        if reducer_type(spelled) is not None:  # `BlockReduce(temp)`: a CUB block reduction (cub.py)
            return self.cub_reducer(spelled, e.loc)
        if warp_reducer_type(spelled) is not None and len(e.args) == 1:  # `WarpReduce(temp[w])` (cub.py)
            return self.cub_warp_reducer(spelled, e.loc)
        if io_args(spelled) is not None and len(e.args) == 1:  # `BlockLoad(temp)`: CUB's block load or store
            return self.cub_io(spelled, e.loc)
        callee = self.callee(e)
        if callee is not None:
            return self.inline(callee, e)
        entry = math_entry(fn)
        if entry is not None:
            return self.math(fn.removeprefix("cuda::").removeprefix("std::").removeprefix("::"), entry, e)
        vec = vector_entry(fn)
        if vec is not None:
            return self.vector_call(fn, vec, e)
        if fn == "printf":
            # console output is no effect the port (or its verification) can have: dropped, with a note; its
            # arguments are not evaluated, so one that assigns something must stay
            calls = [n for a in e.args for n in ir.walk(a) if isinstance(n, ir.Call)]
            if any(ir.has_effects(a) for a in e.args) or any(self.callee(c) is not None for c in calls):
                raise LiftError("XL2001", "printf with an argument that has effects", e.loc)
            self.idiom("printf dropped: the port prints nothing", e.loc)
            return S.const(0, "int")
        if fn.startswith("printf"):
            raise LiftError("XL2001", "printf", e.loc)
        if fn == "assert" and len(e.args) == 1:
            return self.device_assert(e)
        paired = self.lanewise_call(fn, e)
        if paired is not None:
            return paired
        built = self.library_vector_call(fn, e)
        if built is not None:  # `vec3(x, y, z)`, `glm::dot(a, b)`: a library's vectors (libvectors.py)
            return built
        made = self.constructor(fn, e)
        if made is not None:  # `Position(x, y)`: a struct of the program built by its constructor
            return self.inline(made, e)
        as_type = self.resolve_type(fn, e.loc) if len(e.args) == 1 and fn.isidentifier() else None
        if as_type is not None and (as_type != fn or fn in self.kc.types) and (
                ctyping.row(as_type) is not None or as_type in self.kc.types.values()):  # Real_t(x), T(x): a cast
            return self.cast(ir.Cast(e.loc, ir.CType(fn), e.args[0], "functional"))
        limits = NUMERIC_LIMITS.fullmatch(fn)
        if limits is not None and not e.args:
            return self.numeric_limit(limits.group(1), limits.group(2), e.loc)
        literal = INT_LITERAL_MACRO.fullmatch(fn)
        if literal is not None and len(e.args) == 1:  # UINT32_C(x): x as a constant of that type
            ct = ctyping.canonical(f"{literal.group(1).lower()}{literal.group(2)}_t")
            return S.cast(self.data(self.ev(e.args[0]), e.loc), ct)
        found = self.argument_dependent_call(fn, e)
        if found is not None:  # `length(v)` of a glm vector: glm::length, by argument-dependent lookup
            return found
        raise self.library_refusal(fn, e.loc) or LiftError("XL2008", f"call of '{fn}'", e.loc)

    def to_fp8(self, e: ir.Call) -> Sym:
        """__nv_cvt_float_to_fp8(x, saturation, format): the conversion maps/math.yaml names for the two constant
        enumerators (__NV_SATFINITE / __NV_NOSAT, __NV_E4M3 / __NV_E5M2)."""
        sat, fmt = (self.data(self.ev(a), e.loc) for a in e.args[1:])
        if not (sat.is_const and fmt.is_const) or int(fmt.value) not in (0, 1):
            raise LiftError("XL2001", "__nv_cvt_float_to_fp8 with a run-time saturation or format", e.loc)
        name = f"__xl_cvt_fp8_{('e4m3', 'e5m2')[int(fmt.value)]}_{'satfinite' if sat.value else 'nosat'}"
        return self.math_data(name, math_entry(name), [self.ev(e.args[0])], e.loc)

    def atomic_cas(self, e: ir.Call) -> Sym:
        """old = atomicCAS(p, compare, value) on global memory: tl.atomic_cas, which takes no mask. A thread the
        conditions leave out does a compare-and-swap that changes nothing (compare and value alike) at an active
        thread's address, and where no thread is active none is done; its result is dropped."""
        if len(e.args) != 3:
            raise LiftError("XL2001", f"{e.fn} with {len(e.args)} arguments", e.loc)
        target = e.args[0]
        if isinstance(target, ir.Unary) and target.op == "&":
            ref = self.reference(target.arg, e.loc)
            p = None if ref is not None and ref.arr is not None else self.address_of(target.arg, e.loc)
        else:
            p = self.ev(target)
        if isinstance(p, SharedArr) or (isinstance(p, PtrVal) and p.shared) or p is None:
            raise LiftError("XL2005", f"{e.fn} on shared memory", e.loc)
        if not isinstance(p, PtrVal) or p.base.lanes or p.base.opaque:
            raise LiftError("XL2013", f"{e.fn} target", e.loc)
        ct = p.elem.base
        if ctyping.is_symbolic(ct) or not ctyping.is_int(ct) or ctyping.bits(ct) not in (32, 64):
            raise LiftError("XL2001", f"{e.fn} on {ct}", e.loc)
        cmp = S.cast(self.data(self.ev(e.args[1]), e.loc), ct)
        val = S.cast(self.data(self.ev(e.args[2]), e.loc), ct)
        masks = {m.key() if m is not None else None: m for m in (self.uniform_effect_mask(p.offset, x, plain=False)
                                                                  for x in (cmp, val))}
        if len(masks) != 1:  # the two operands disagree on whether the effect is one thread's: every condition
            masks = {0: S.land(*self.full_pred())}
        mask = next(iter(masks.values()))
        if mask is None:
            return S.const(0, ct)
        em, ctx = self.em, self.ctx
        lanes = bool(p.offset.lanes or cmp.lanes or val.lanes or mask.lanes or p.offset.opaque or mask.opaque)
        dt = tl_of(ct)
        shape = ctx.shape if lanes else "[]"

        def operand(x: Sym) -> str:
            if x.is_const:
                return f"tl.full({shape}, {em.code(x, ctx, ct)}, {dt})"
            code = em.code(x, ctx, ct)
            return f"({code}) + tl.zeros({shape}, {dt})" if lanes and not (x.lanes or x.opaque) else code

        base = em.code(p.base, ctx)
        off = em.code(p.offset, ctx, "long long")
        off = f"({off}) + tl.zeros({shape}, tl.int64)" if lanes and not (p.offset.lanes or p.offset.opaque) else off
        c, v = operand(cmp), operand(val)
        always = mask.is_const and mask.value
        m = "" if always else em.code(mask, ctx, "bool")
        old = em.fresh("old")
        if always:
            em.line(f"{old} = tl.atomic_cas({base} + {_paren(off)}, {c}, {v}{self.atomic_order})")
        else:
            em.line(f"{old} = tl.full({shape}, 0, {dt})")
            offs = em.fresh("cas_off")
            em.line(f"{offs} = {off}")
            em.line(f"if tl.max(({m}).to(tl.int32)) > 0:" if lanes else f"if {m}:")
            em.level += 1
            if lanes:  # the others at an active thread's element (offsets into the buffer are not negative)
                em.line(f"{offs} = tl.where({m}, {offs}, tl.max(tl.where({m}, {offs}, -1)))")
                em.line(f"{old} = tl.atomic_cas({base} + {offs}, {c}, tl.where({m}, {v}, {c}){self.atomic_order})")
            else:
                em.line(f"{old} = tl.atomic_cas({base} + {offs}, {c}, {v}{self.atomic_order})")
            em.level -= 1
        self.st.store_epoch[p.root] = self.st.store_epoch.get(p.root, 0) + 1
        return S.var(old, ct, lanes)

    def vector_call(self, fn: str, entry: dict[str, Any], e: ir.Call) -> Any:
        """A half/bfloat16 pair built from or read as numbers (maps/math.yaml `vectors`): each result lane an
        argument or a lane of one, rounded to the result's lane type."""
        want = entry["args"]
        if len(e.args) != len(want):
            raise LiftError("XL2008", f"{fn} with {len(e.args)} arguments", e.loc)
        args: list[Any] = []
        for a, t in zip(e.args, want):
            v = self.ev(a)
            if ctyping.vector(t) is not None:
                if not (isinstance(v, StructVal) and ctyping.canonical(v.ctype) == t):
                    raise LiftError("XL2012", f"{fn} of a {getattr(v, 'ctype', type(v).__name__)}, not a {t}", e.loc)
                args.append(v)
            else:
                args.append(S.cast(self.data(v, e.loc), t))
        lanes = []
        for spec in entry["lanes"]:
            k, _, field = spec.strip("{}").partition("}.")
            v = args[int(k)]
            lanes.append(self.data(v.fields[field], e.loc) if field else v)
        res = entry["result"]
        info = ctyping.vector(res)
        if info is None:
            return S.cast(lanes[0], res)
        return StructVal(res, {f: S.cast(x, info["scalar"]) for f, x in zip(info["fields"], lanes)})

    def constructor(self, fn: str, e: ir.Call) -> ir.FunctionIR | None:
        """The constructor a call `T(args)` of a packed struct T of the program runs, as a device function that
        returns the struct (structs.py); None where `fn` names no such struct or it has no such constructor."""
        if not fn.isidentifier():
            return None
        ct = self.resolve_type(fn, e.loc)
        info = self.vec_info(ct) if ctyping.vector(ct) is None else None
        src = (info or {}).get("constructors", {}).get(len(e.args))
        if src is None:
            return None
        cache = self.__dict__.setdefault("_constructors", {})
        if src not in cache:
            from xlate.cir.build import BuildError, build_function
            from xlate.parse import parse_string

            try:
                unit = parse_string(src, "<constructor>.cu", "cuda")
                cache[src] = build_function(unit, unit.device_functions[0])
            except (BuildError, IndexError, ValueError):
                cache[src] = None
        return cache[src]

    def lanewise_call(self, fn: str, e: ir.Call) -> StructVal | None:
        """`__hadd2(a, b)` of two-lane vectors (__half2, __nv_bfloat162): the scalar intrinsic (`__hadd`) on each
        lane, as CUDA defines the paired forms; None where `fn` is no such pair of a mapped scalar intrinsic."""
        scalar = fn[:-1] if fn.endswith("2") and fn.startswith("__h") else None
        entry = math_entry(scalar) if scalar else None
        if entry is None or not e.args:
            return None
        args = [self.ev(a) for a in e.args]
        kinds = {a.ctype for a in args if isinstance(a, StructVal)}
        vinfo = self.vec_info(next(iter(kinds))) if len(kinds) == 1 else None
        if vinfo is None or len(vinfo["fields"]) != 2 or not all(isinstance(a, StructVal) for a in args):
            return None
        out = {}
        for f in vinfo["fields"]:
            self.push_scope()
            try:
                names = []
                for j, a in enumerate(args):
                    names.append(ir.Name(e.loc, f"__xl_lane{j}"))
                    self.bind(names[-1].id, ir.CType(vinfo["scalar"]), a.fields[f])
                out[f] = S.cast(self.data(self.math(scalar, entry, ir.Call(e.loc, scalar, tuple(names))), e.loc),
                                vinfo["scalar"])
            finally:
                self.pop_scope()
        return StructVal(next(iter(kinds)), out)

    def callee(self, e: ir.Call) -> ir.FunctionIR | None:
        """The device function a call inlines: of the kernel's file (the overload taking that many arguments), or
        of another file of the program; None for anything else."""
        if e.targs:
            special = self.specialization(e)
            if special is not None:
                return special
        if e.fn in self.kc.devices:
            same = [f for f in self.kc.overloads.get(e.fn, []) if f.takes(len(e.args))]
            if len(same) > 1 and e.targs:
                same = _explicit_viable(same, len(e.targs)) or same
            if len(same) > 1:
                return self.overload(same, e)
            return same[0] if len(same) == 1 else self.kc.devices[e.fn]
        if self.kc.program_device is not None and intrinsic_lowering(e.fn) is None and atomic_entry(e.fn) is None:
            if math_entry(e.fn) is None:
                return self.kc.program_device(e.fn, len(e.args))
            # the program's own `int log2(int)` (another file): C++ picks it over the math library's float and
            # double overloads where the arguments' types are exactly its parameters'
            own = self.kc.program_device(e.fn, len(e.args))
            if own is not None and self.exact_match(own, e):
                return own
        return None

    def exact_match(self, f: ir.FunctionIR, e: ir.Call) -> bool:
        """Whether every argument of `e` has exactly the type of `f`'s parameter (no template parameters)."""
        if f.template_params or f.template_types:
            return False
        with self.st.dry_run():
            try:
                types = [_type_of(self.ev(a)) for a in e.args]
            except (LiftError, S.NotConcrete):
                return False
        for (_, ct), t in zip(f.params, types):
            if t is None or t != (self.resolve_type(ct.base, e.loc), ct.ptr):
                return False
        return True

    def specialization(self, e: ir.Call) -> ir.FunctionIR | None:
        """The explicit specialization (`template <> float f<3>(float x)`) a call `f<DEGREE>(x)` names, its
        template arguments evaluated here; None where the file defines none for them."""
        parts = []
        for t in e.targs:
            v = self.template_value(t, e.loc)
            if v is not None:
                parts.append(str(int(v.value)) if not ctyping.is_float(v.ctype) else repr(v.value))
            else:
                parts.append(self.resolve_type(ctyping.canonical(t), e.loc))
        want = f"{e.fn}<{','.join(parts)}>"
        for name, f in self.kc.devices.items():
            if "<" in name and name.replace(" ", "") == want.replace(" ", ""):
                return f
        return None

    def overload(self, cands: list[ir.FunctionIR], e: ir.Call) -> ir.FunctionIR:
        """Of overloads taking as many arguments as the call gives, the one C++ picks for the arguments' types
        (found by evaluating them in a dry run): an exact match of the non-template parameters first, else the
        only one whose mismatches are arithmetic conversions, else the first."""
        with self.st.dry_run():
            try:
                types = [_type_of(self.ev(a)) for a in e.args]
            except (LiftError, S.NotConcrete):
                types = [None] * len(e.args)

        def score(f: ir.FunctionIR) -> int | None:  # 2 per exact parameter, 1 generic or converted, None: no
            total = 0
            for (_, ct), t in zip(f.params, types):
                base = self.resolve_type(ct.base, e.loc) if ct.base not in f.template_types else None
                if base is None or t is None:
                    total += 1
                elif t == (base, ct.ptr):
                    total += 2
                elif ct.ptr or t[1] or ctyping.row(base) is None or ctyping.row(t[0]) is None:
                    return None
                else:
                    total += 1
            return total

        self.refuse_generic_pick(cands, e, types)
        scored = [(score(f), k) for k, f in enumerate(cands)]
        ok = sorted(((sc, k) for sc, k in scored if sc is not None), key=lambda p: (-p[0], p[1]))
        if ok and (len(ok) == 1 or ok[0][0] > ok[1][0]):
            return cands[ok[0][1]]
        return cands[0]

    def refuse_generic_pick(self, cands: list[ir.FunctionIR], e: ir.Call, types: list[tuple[str, int] | None]) -> None:
        """Refuse a call whose overload the kernel's template type decides: an argument of template type T where
        some overload (or explicit specialisation, `template <> int f(int v)`) spells that parameter with a
        concrete type. C++ picks per instantiation; the port is one body generic in T, so no one pick is right."""
        generic = set(self.kc.types.values())
        for k, t in enumerate(types):
            if t is None or t[0] not in generic:
                continue
            for f in cands:
                if k < len(f.params) and f.params[k][1].base not in f.template_types:
                    raise LiftError("XL2012", f"the overload of '{e.fn}' that an argument of template type {t[0]} "
                                              "picks depends on the instantiation (the port is generic in it)", e.loc)

    def device_assert(self, e: ir.Call) -> Sym:
        """assert(c): Triton's device assertion of `c` on the threads that reach it (checked where Triton checks
        assertions: the interpreter, and GPU builds with debug on)."""
        c = self.cond(self.ev(e.args[0]), e.loc)
        pred = self.pred_sym()
        ok = c if pred.is_const and pred.value else S.op("lor", "bool", S.lnot(pred), c)
        if not (ok.is_const and ok.value):
            self.em.line(f"tl.device_assert({self.em.code(ok, self.ctx, 'bool')}, \"assert at line {e.loc.line}\")")
        return S.const(0, "int")

    def bit_scan(self, fn: str, e: ir.Call) -> Sym:
        """__clz/__clzll (leading zeros) and __ffs/__ffsll (1 + index of the lowest set bit, 0 for 0) as a
        binary search of shifts and compares: Triton has no such op, libdevice's has no interpreter version."""
        bits = BIT_SCANS[fn]
        ut = "unsigned int" if bits == 32 else "unsigned long long"
        x = S.cast(self.data(self.ev(e.args[0]), e.loc), ut)
        zero = S.const(0, ut)
        if fn.startswith("__ffs"):
            x = S.op("and", ut, x, S.op("sub", ut, zero, x))  # the lowest set bit alone
        n, y = S.const(0, "int"), x
        step = bits // 2
        while step:
            top_clear = S.op("eq", "bool", S.op("shr", ut, y, S.const(bits - step, "int")), zero)
            n = S.where(top_clear, S.op("add", "int", n, S.const(step, "int")), n, "int")
            y = S.where(top_clear, S.op("shl", ut, y, S.const(step, "int")), y, ut)
            step //= 2
        is_zero = S.op("eq", "bool", x, zero)
        if fn.startswith("__ffs"):
            return S.where(is_zero, S.const(0, "int"), S.op("sub", "int", S.const(bits, "int"), n), "int")
        return S.where(is_zero, S.const(bits, "int"), n, "int")

    def bit_reverse(self, fn: str, e: ir.Call) -> Sym:
        """__brev/__brevll: the bits in reverse order, by swapping halves, quarters, ... down to single bits."""
        bits = BIT_REVERSES[fn]
        ut = "unsigned int" if bits == 32 else "unsigned long long"
        y = S.cast(self.data(self.ev(e.args[0]), e.loc), ut)
        full = (1 << bits) - 1
        step = bits // 2
        while step:
            low = 0  # the lower `step` bits of every 2*step-bit group
            for k in range(0, bits, 2 * step):
                low |= ((1 << step) - 1) << k
            hi = full ^ low
            shifted_down = S.op("shr", ut, S.op("and", ut, y, S.const(hi, ut)), S.const(step, "int"))
            shifted_up = S.op("shl", ut, S.op("and", ut, y, S.const(low, ut)), S.const(step, "int"))
            y = S.op("or", ut, shifted_down, shifted_up)
            step //= 2
        return y

    def sincos(self, fn: str, e: ir.Call) -> Sym:
        """sincosf(x, &s, &c): sin and cos of x stored through the two pointers (locals or memory)."""
        from xlate.translate.triton.exprs import has_effects

        x = e.args[0]
        if has_effects(x):
            raise LiftError("XL2001", f"{fn} of an argument with side effects", e.loc)
        sin_fn, cos_fn = SINCOS[fn]
        for name, out in ((sin_fn, e.args[1]), (cos_fn, e.args[2])):
            val = self.ev(ir.Call(e.loc, name, (x,)))
            target = out.arg if isinstance(out, ir.Unary) and out.op == "&" else ir.Unary(out.loc, "*", out)
            self.write(target, val, e.loc)
        return S.const(0, "int")

    def frexpf(self, e: ir.Call) -> Sym:
        """frexpf(x, &e): x = m * 2^e with |m| in [0.5, 1), from x's bits (a subnormal scaled by 2^23 first); for
        0, inf and NaN m is x and e is 0, as C defines (e unspecified for inf/NaN; 0 is glibc's and CUDA's)."""
        from xlate.translate.triton.exprs import has_effects

        if has_effects(e.args[0]):
            raise LiftError("XL2001", "frexpf of an argument with side effects", e.loc)
        ut = "unsigned int"
        x = S.cast(self.data(self.ev(e.args[0]), e.loc), "float")

        def bits_of(v: Sym) -> Sym:
            return self.math_data("__float_as_uint", math_entry("__float_as_uint"), [v], e.loc)

        def field(b: Sym) -> Sym:
            return S.op("and", ut, S.op("shr", ut, b, S.const(23, "int")), S.const(0xFF, ut))

        zero = S.op("eq", "bool", x, S.const(0.0, "float"))
        sub = S.land(S.op("eq", "bool", field(bits_of(x)), S.const(0, ut)), S.lnot(zero))
        x2 = S.where(sub, S.op("mul", "float", x, S.const(8388608.0, "float")), x, "float")
        b2 = bits_of(x2)
        f2 = field(b2)
        keep = S.op("lor", "bool", zero, S.op("eq", "bool", f2, S.const(0xFF, ut)))
        exp = S.op("sub", "int", S.cast(f2, "int"), S.where(sub, S.const(149, "int"), S.const(126, "int"), "int"))
        mant_bits = S.op("or", ut, S.op("and", ut, b2, S.const(0x807FFFFF, ut)), S.const(0x3F000000, ut))
        mant = self.math_data("__uint_as_float", math_entry("__uint_as_float"), [mant_bits], e.loc)
        out = e.args[1]
        target = out.arg if isinstance(out, ir.Unary) and out.op == "&" else ir.Unary(out.loc, "*", out)
        self.write(target, S.where(keep, S.const(0, "int"), exp, "int"), e.loc)
        return S.where(keep, x, mant, "float")

    def numeric_limit(self, spelling: str, member: str, loc: ir.Loc) -> Sym:
        """std::numeric_limits<T>::member() of a type the lift knows (a template type is known only at launch)."""
        ct = self.resolve_type(ctyping.canonical(" ".join(spelling.split())), loc)
        dt = ctyping.np_dtype(ct)
        if dt is None and ct in self.kc.types.values() and member in LIMIT_MEMBERS:
            return self.launch_limit(ct, member)
        if dt is None:
            raise LiftError("XL2012", f"numeric_limits of {spelling} (a type known only at launch)", loc)
        if ctyping.is_float(ct):
            fi = np.finfo(dt)
            table = {"max": fi.max, "min": fi.tiny, "lowest": fi.min, "epsilon": fi.eps, "infinity": np.inf,
                     "quiet_NaN": np.nan}
        else:
            ii = np.iinfo(dt)
            table = {"max": ii.max, "min": ii.min, "lowest": ii.min}
        if member not in table:
            raise LiftError("XL2008", f"numeric_limits<{spelling}>::{member}", loc)
        v = table[member]
        return S.const(float(v) if ctyping.is_float(ct) else int(v), ct)

    def launch_limit(self, tname: str, member: str) -> Sym:
        """numeric_limits<T>::member() of a template type T (a constexpr dtype of the kernel): a constexpr the
        launcher computes from T's dtype (LIMIT_MEMBERS), made a scalar of dtype T in the kernel."""
        name = f"{tname}_{member}_"
        self.st.limits[name] = (tname, member)
        return S.uni(f"tl.full([], {name}, {tname})", tname)

    def barrier(self, loc: ir.Loc, warp: bool = False) -> None:
        # Threads that returned from the kernel have exited: a barrier waits only for the threads still running
        # (`if (tid >= n) return; ... __syncthreads();`), so their exit is not a divergent condition.
        exited = {S.lnot(self.st.fstack[0].done).key()} if self.st.fstack else set()
        if self.lane_guard is not None:  # the padding lanes past CUDA's block are no threads
            exited.add(self.lane_guard.key())
        for c in self.full_pred():
            if (c.lanes or c.opaque) and c.key() not in exited:
                # `if (tid < 32) { ...; __syncwarp(); ... }`: a warp barrier under a condition every warp takes
                # or skips as a whole is reached by all the threads of the warps it syncs
                if warp and not c.opaque and self.nlanes and self.nlanes % 32 == 0 and comm.segment_uniform(self, c, 32):
                    continue
                raise LiftError("XL2015", f"{'__syncwarp' if warp else '__syncthreads'} under a thread-dependent condition",
                                loc)
        self.st.epoch += 1
        if self.shared_globals and self.em.enabled:
            # one thread's global store read by another after the barrier: the program's threads must wait too
            self.em.line("tl.debug_barrier()")

    def math(self, fn: str, entry: dict[str, Any], e: ir.Call) -> Any:
        if entry.get("store"):
            if len(e.args) != 2:
                raise LiftError("XL2008", f"{fn} with {len(e.args)} arguments", e.loc)
            self.assign(ir.Assign(e.loc, ir.Unary(e.loc, "*", e.args[0]), "=", e.args[1]))
            return S.const(0, "int")
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

    def method(self, e: ir.MethodCall) -> Any:
        obj = self.ev(e.obj)
        if isinstance(obj, CubBlockReduce):
            return self.cub_method(obj, e)
        if isinstance(obj, CubWarpReduce):
            return self.cub_warp_method(obj, e)
        if isinstance(obj, CubBlockIO):
            return self.cub_io_method(obj, e)
        if isinstance(obj, CGroup) and obj.kind == "grid":
            return self.grid_method(e)
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
                return S.const(obj.size, "unsigned int") if obj.size else self.block_dim("x")
            if m == "thread_rank":
                return linear if obj.kind == "block" else S.op("mod", "unsigned int", linear, S.const(obj.size, "unsigned int"))
            if obj.kind == "tile" and m == "meta_group_rank":
                return S.op("div", "unsigned int", linear, S.const(obj.size, "unsigned int"))
            if obj.kind == "tile" and m == "meta_group_size":
                return S.const(self.real_bx * self.real_by // obj.size, "unsigned int")
            if obj.kind == "tile" and m in ("shfl_down", "shfl_up", "shfl_xor", "shfl"):
                v = self.ev(e.args[0])
                arg = self.data(self.ev(e.args[1]), e.loc)
                kind = {"shfl_down": "down", "shfl_up": "up", "shfl_xor": "xor", "shfl": "idx"}[m]
                return comm.shuffle(self, v, kind, arg, obj.size, e.loc)
            raise LiftError("XL2003", f"cooperative-groups member {m}()", e.loc)
        raise LiftError("XL2001", f"method call .{e.method}()", e.loc)

    def grid_method(self, e: ir.MethodCall) -> Sym:
        """`cg::this_grid()`'s members: the thread's rank in the grid (its block's linear index times the block's
        threads, plus its rank in the block, as CUDA numbers them: x fastest), the grid's threads and blocks. A grid
        barrier (`sync`) has no Triton equivalent: refused."""
        m = e.method
        dims = [(self.builtin(ir.Builtin(e.loc, "blockIdx", a)), self.builtin(ir.Builtin(e.loc, "gridDim", a)))
                for a in "xyz"]
        threads = S.op("mul", "unsigned int", S.op("mul", "unsigned int", self.block_dim("x"), self.block_dim("y")),
                       self.block_dim("z"))
        blocks = S.op("mul", "unsigned int", S.op("mul", "unsigned int", dims[0][1], dims[1][1]), dims[2][1])
        if m in ("thread_rank", "block_rank"):
            # x + X * (y + Y * z)
            rank = S.op("add", "unsigned int", dims[0][0], S.op("mul", "unsigned int", dims[0][1],
                        S.op("add", "unsigned int", dims[1][0], S.op("mul", "unsigned int", dims[1][1], dims[2][0]))))
            if m == "block_rank":
                return rank
            return S.op("add", "unsigned int", S.op("mul", "unsigned int", rank, threads), self.linear_tid())
        if m in ("size", "num_threads"):
            return S.op("mul", "unsigned int", blocks, threads)
        if m == "num_blocks":
            return blocks
        raise LiftError("XL2003", f"cooperative-groups grid member {m}()", e.loc)

    def cg_reduce(self, e: ir.Call) -> Any:
        """cg::reduce(tile, v, cg::plus<T>{}) (or greater: max, less: min): every thread of the tile gets the
        tile's reduction, which is a butterfly of xor shuffles over the tile (what CUDA computes it with)."""
        group = self.ev(e.args[0])
        opn = e.args[2]
        name = opn.fn if isinstance(opn, ir.Call) and not opn.args else ""
        space, _, functor = name.rpartition("::")
        op = CG_REDUCE_OPS.get(functor) if space in ("cg", "cooperative_groups") else None
        if op is None:
            raise LiftError("XL2003", "cg::reduce with an operator other than plus, greater or less", e.loc)
        if not isinstance(group, CGroup) or group.kind != "tile":
            raise LiftError("XL2003", "cg::reduce over a group other than a thread-block tile", e.loc)
        v = self.ev(e.args[1])
        d = group.size // 2
        while d:
            other = comm.shuffle(self, v, "xor", S.const(d, "int"), group.size, e.loc)
            try:
                v = comm.token_binary(self, op, v, other, lambda a=v, b=other: self.pair_data(op, a, b, e.loc))
            except comm.NotTokenizable as exc:
                raise LiftError("XL2003", f"cg::reduce ({exc})", e.loc) from None
            d //= 2
        return v

    def pair_data(self, op: str, a: Any, b: Any, loc: ir.Loc) -> Sym:
        """a + b, max(a, b) or min(a, b) of two per-thread values, as cg's functors compute them."""
        if op == "sum":
            return self.binary_data("+", a, b, loc)
        x, y = self.data(a, loc), self.data(b, loc)
        t = ctyping.arith(x.ctype, y.ctype)
        x, y = S.cast(x, t), S.cast(y, t)
        return S.where(S.op("lt" if op == "max" else "gt", "bool", x, y), y, x, t)

    def linear_tid(self) -> Sym:
        x = S.lane("x") if self.bx > 1 or self.real_bx is None else S.const(0, "unsigned int")
        if self.by > 1:
            return S.op("add", "unsigned int", x, S.op("mul", "unsigned int", S.lane("y"), self.block_dim("x")))
        return x

    def inline(self, f: ir.FunctionIR, e: ir.Call) -> Any:
        key = f"{f.name}/{len(f.params)}"  # overloads of one name are different functions
        if len(self.st.fstack) > MAX_INLINE_DEPTH or any(fc.name == key for fc in self.st.fstack):
            raise LiftError("XL2014", f"recursive call of '{f.name}'", e.loc)
        if not f.takes(len(e.args)):
            raise LiftError("XL2008", f"'{f.name}' called with {len(e.args)} arguments, takes {len(f.params)}", e.loc)
        if len(e.args) < len(f.params):  # the default arguments of the parameters left out
            e = replace(e, args=(*e.args, *(d for d in f.defaults[len(e.args):] if d is not None)))
        f, e = self.pointer_refs(f, e)
        vals, copy_out = self.call_args(f, e)
        deduced = self.template_args(f, e, vals)
        values = self.template_values(f, e)
        saved = self.st.scopes
        self.st.scopes = [{}]
        try:
            for tname, tval in deduced.items():
                self.bind(tname, ir.CType(tname), TypeVal(tval))
            for tname, (ct, tv) in values.items():
                self.bind(tname, ir.CType(ct), tv)
            for (name, ct), v in zip(f.params, vals):
                if ct.base.startswith("__xl_") or (ct.ptr and isinstance(v, SharedArr | LocalArray)) or isinstance(v, RefVal):
                    self.bind(name, ct, v)
                else:
                    self.bind(name, ct, self.convert(v, ct, e.loc))
            fc = FnCtx(key, f.ret, len(self.st.pred), loops=self.st.runtime_loops)
            self.st.fstack.append(fc)
            try:
                self.stmts(f.body)
            except LiftError as exc:
                if f.path:  # a function of another file: its line and column are that file's, not the kernel's
                    if exc.origin is None:
                        at = f":{exc.loc.line}:{exc.loc.col}" if exc.loc is not None else ""
                        exc.origin = f"{os.path.basename(f.path)}{at}"
                        exc.what = f"{exc.what} (at {exc.origin}, in '{f.name}', called here)"
                        exc.args = (exc.what,)
                    exc.loc = e.loc  # the call in the kernel's file
                raise
            self.st.fstack.pop()
            finals = [(target, self.lookup(name).val) for name, target in copy_out]
        finally:
            self.st.scopes = saved
        for target, v in finals:  # a reference parameter bound to a local: its final value is the local's
            self.copy_back(target, v, e.loc)
        if fc.value is None:
            return S.const(0, "int")
        return fc.value

    def pointer_refs(self, f: ir.FunctionIR, e: ir.Call) -> tuple[ir.FunctionIR, ir.Call]:
        """`f(x, &out)` where f only dereferences its pointer parameter (`*p`, `p[0]`, `p->m`): the parameter is
        a reference to the local (copied in, and out when the call returns), its dereferences the reference."""
        names: list[str] = []
        args = list(e.args)
        for k, ((name, ct), a) in enumerate(zip(f.params, e.args)):
            if ct.ptr == 1 and isinstance(a, ir.Cond):  # `opt ? &local : nullptr` with `opt` known here
                a = args[k] = self.constant_branch(a, e.loc)
            if ct.ptr != 1 or name in f.refs or not (isinstance(a, ir.Unary) and a.op == "&"):
                continue
            if self.local_lvalue(a.arg, e.loc) is None:
                continue
            body = _deref_param(f.body, name)
            if body is None:
                raise LiftError("XL2013", f"address of a local passed to '{f.name}', which uses '{name}' as a pointer "
                                          "(not only *" + name + ")", e.loc)
            f = replace(f, body=body)
            names.append(name)
            args[k] = a.arg
        if not names:
            return f, e
        params = [(n, replace(ct, ptr=0) if n in names else ct) for n, ct in f.params]
        return replace(f, params=params, refs=f.refs | frozenset(names)), replace(e, args=tuple(args))

    def constant_branch(self, c: ir.Cond, loc: ir.Loc) -> ir.Expr:
        """The branch of `c` its test picks where the test is a constant here (`buf == nullptr` of a buffer);
        `c` itself otherwise (also where the test has effects, which the branch alone would drop)."""
        if ir.has_effects(c.test):
            return c
        with self.st.dry_run():
            try:
                test = self.cond(self.ev(c.test), loc)
            except (LiftError, S.NotConcrete):
                return c
        if not test.is_const:
            return c
        return c.then if test.value else c.other

    def template_args(self, f: ir.FunctionIR, e: ir.Call, vals: list[Any]) -> dict[str, str]:
        """The types a template device function is called with: written at the call (`f<float>(x)`), else deduced
        from the arguments whose parameter is spelled with the template parameter (`K a`, `K& a`, `K* p`)."""
        out: dict[str, str] = {}
        if f.template_params:  # written at the call, in the order declared (types and values mixed)
            for (tname, kind, _), written in zip(f.template_params, e.targs):
                if kind == "type":
                    out[tname] = self.resolve_type(ctyping.canonical(written), e.loc)
        else:
            for tname, written in zip(f.template_types, e.targs):
                out[tname] = self.resolve_type(ctyping.canonical(written), e.loc)
        for (_, ct), v in zip(f.params, vals):
            if ct.base not in f.template_types or ct.base in out:
                continue
            if isinstance(v, RefVal):
                v = self.deref(v, e.loc)
            if ct.ptr and isinstance(v, PtrVal):
                out[ct.base] = self.resolve_type(v.elem.base, e.loc)
            elif isinstance(v, SharedArr) if ct.ptr else isinstance(v, StructVal | Sym | SharedRead | LaneTokens):
                out[ct.base] = v.ctype
        return out

    def template_values(self, f: ir.FunctionIR, e: ir.Call) -> dict[str, tuple[str, Sym]]:
        """The value template parameters a call writes (`f<3>(x)`, `f<N>(x)` with N a constant here): name ->
        (C type, constant). One not written, or not a constant, stays unbound (a use of it is refused)."""
        out: dict[str, tuple[str, Sym]] = {}
        for (tname, kind, ct), written in zip(f.template_params, e.targs):
            if kind != "value":
                continue
            v = self.template_value(written, e.loc)
            if v is not None:
                t = ctyping.canonical(ct or "int")
                out[tname] = (t, S.cast(v, t) if ctyping.row(t) is not None else v)
        return out

    def template_value(self, written: str, loc: ir.Loc) -> Sym | None:
        """A template argument as written, a number (`3`, `16u`), a name (`N`, a constant here) or a constant
        expression of them (`N / 2`): its value, or None for anything else."""
        from xlate.cir.build import parse_number

        w = written.strip()
        try:
            if w in ("true", "false"):
                return S.const(int(w == "true"), "bool")
            with contextlib.suppress(ValueError):
                v, ct = parse_number(w)
                return S.const(v, ct)
            if w.isidentifier():
                d = self.data(self.ev(ir.Name(loc, w)), loc)
                return d if d.is_const else None
            e = _template_arg_expr(w)
            if e is not None:
                d = self.data(self.ev(e), loc)
                return d if d.is_const else None
        except (LiftError, S.NotConcrete, ValueError):
            return None
        return None

    def call_args(self, f: ir.FunctionIR, e: ir.Call) -> tuple[list[Any], list[tuple[str, ir.Expr]]]:
        """The values the parameters of inlined `f` start with, and the locals its reference parameters stand
        for (copied in, and out when the call returns: the callee sees no other way to those locals, so copying
        is the reference). A memory element passed by reference stays a reference to it."""
        vals: list[Any] = []
        copy_out: list[tuple[str, ir.Expr]] = []
        roots: dict[str, bool] = {}  # locals passed by reference -> written
        for (name, ct), a in zip(f.params, e.args):
            arr = self.local_array_arg(ct, a, e.loc)
            if arr is not None:  # `f(s)` of a local `T s[N]` for a `T* x`: the array itself, copied back after
                if arr in roots and (roots[arr] or not ct.const):
                    raise LiftError("XL2001", f"'{arr}' passed to two pointer parameters of '{f.name}'", e.loc)
                roots[arr] = roots.get(arr, False) or not ct.const
                vals.append(self.lookup(arr).val)
                if not ct.const:
                    copy_out.append((name, a))
                continue
            if name not in f.refs:
                vals.append(self.ev(a))
                continue
            r = self.reference(a, e.loc)
            if r is not None:
                vals.append(r)
                continue
            target = self.local_lvalue(a, e.loc)
            if target is None:
                if not ct.const:
                    raise LiftError("XL2001", f"argument of reference parameter '{name}' of '{f.name}' is not a "
                                              "variable or an element of memory", e.loc)
                vals.append(self.ev(a))  # a temporary bound to a const reference
                continue
            root = target
            while isinstance(root, ir.Member | ir.Index):
                root = root.base
            n = root.id if isinstance(root, ir.Name) else ""
            if n in roots and (roots[n] or not ct.const):
                raise LiftError("XL2001", f"'{n}' passed to two reference parameters of '{f.name}'", e.loc)
            roots[n] = roots.get(n, False) or not ct.const
            vals.append(self.ev(target))
            if not ct.const:
                copy_out.append((name, target))
        return vals, copy_out

    def local_array_arg(self, ct: ir.CType, a: ir.Expr, loc: ir.Loc) -> str | None:
        """The name of the one-dimensional local array `a` names where it is passed to a pointer parameter `ct` to
        its element type (C passes the array's first element's address); None for any other argument."""
        if ct.ptr != 1 or not isinstance(a, ir.Name):
            return None
        b = self.lookup(a.id)
        if b is None or not isinstance(b.val, LocalArray) or b.val.dims:
            return None
        if self.resolve_type(ct.base, loc) != self.resolve_type(b.val.ctype, loc):
            raise LiftError("XL2013", f"local array '{a.id}' of {b.val.ctype} passed as a {ct.base}*", loc)
        return a.id

    def copy_back(self, target: ir.Expr, final: Any, loc: ir.Loc) -> None:
        """A reference parameter's final value into the caller's variable it stood for: an array (a local array
        passed to a pointer parameter) element by element, each as an assignment of the caller's would be."""
        if not isinstance(final, LocalArray):
            self.write(target, final, loc)
            return
        b = self.lookup(target.id) if isinstance(target, ir.Name) else None
        old = b.val if b is not None and isinstance(b.val, LocalArray) else None
        for k in range(final.size):
            v = final.slots.get(k)
            if v is None or (old is not None and old.slots.get(k) is v):
                continue  # never written, or unchanged by the callee
            self.write(ir.Index(loc, target, ir.Num(loc, k, "int")), v, loc)

    def local_lvalue(self, a: ir.Expr, loc: ir.Loc) -> ir.Expr | None:
        """`a` as an lvalue of a local (a variable, a member of a local vector, an element of a local array at
        a constant index, fixed now); None if it is not one."""
        if isinstance(a, ir.Name):
            b = self.lookup(a.id)
            if b is None or isinstance(b.val, LocalArray | SharedArr | ConstArray | CGroup | TypeVal):
                return None
            if isinstance(b.val, RefVal) and b.val.ptr is not None:  # a global element (a scalar module variable)
                return None  # its address is a pointer into its buffer (address_of)
            return a
        if isinstance(a, ir.Member) and isinstance(a.base, ir.Name):
            b = self.lookup(a.base.id)
            return a if b is not None and isinstance(b.val, StructVal) else None
        if isinstance(a, ir.Index) and isinstance(a.base, ir.Name):
            b = self.lookup(a.base.id)
            if b is None or not isinstance(b.val, LocalArray):
                return None
            k = self.data(self.ev(a.index), loc)
            if not k.is_const:
                return None
            return ir.Index(a.loc, a.base, ir.Num(a.loc, int(k.value), "int"))
        return None


def _deref_param(body: tuple[ir.Stmt, ...], name: str) -> tuple[ir.Stmt, ...] | None:
    """`body` with `*name` and `name[0]` read as `name`; None where `name` is used otherwise (pointer arithmetic,
    passed on, reassigned, compared) or declared again."""
    ok = True

    def walk(x: Any) -> Any:
        nonlocal ok
        if isinstance(x, ir.Unary) and x.op == "*" and isinstance(x.arg, ir.Name) and x.arg.id == name:
            return x.arg
        if isinstance(x, ir.Binary) and x.op in ("==", "!=") and _null_test_of(x, name):
            return ir.Num(x.loc, int(x.op == "!="), "bool")  # the address of a local is never the null pointer
        if isinstance(x, ir.Index) and isinstance(x.base, ir.Name) and x.base.id == name and \
                isinstance(x.index, ir.Num) and x.index.value == 0:
            return x.base
        if isinstance(x, ir.Call):  # passed on to another function: the address of the local again
            args = tuple(ir.Unary(a.loc, "&", a) if isinstance(a, ir.Name) and a.id == name else walk(a)
                         for a in x.args)
            return replace(x, args=args)
        if isinstance(x, ir.Name) and x.id == name:
            ok = False
            return x
        if isinstance(x, ir.Decl) and x.name == name:
            ok = False
        if isinstance(x, tuple | list):
            return type(x)(walk(v) for v in x)
        if isinstance(x, ir.Expr | ir.Stmt):
            changes = {}
            for fld in fields(x):
                v = getattr(x, fld.name)
                w = walk(v)
                if w is not v:
                    changes[fld.name] = w
            return replace(x, **changes) if changes else x
        return x

    out = walk(body)
    return out if ok else None


def _null_test_of(x: ir.Binary, name: str) -> bool:
    """Whether `x` compares the pointer `name` with the null pointer (`p != nullptr`, `NULL == p`)."""
    sides = (x.left, x.right)
    return any(isinstance(a, ir.Name) and a.id == name and isinstance(b, ir.Num) and b.value == 0
               for a, b in (sides, sides[::-1]))


@functools.lru_cache(maxsize=256)
def _template_arg_expr(text: str) -> ir.Expr | None:
    """The IR of a template argument written as an expression (`N / 2`); None where it is no expression (a type)."""
    from xlate.cir.build import BuildError, build_function
    from xlate.parse import parse_string

    try:
        unit = parse_string(f"__device__ long long __xl_targ() {{ return ({text}); }}\n", "<targ>.cu", "cuda")
        fn = unit.function("__xl_targ")
        body = build_function(unit, fn).body if fn is not None else ()
    except (BuildError, ValueError, RecursionError):
        return None
    if len(body) != 1 or not isinstance(body[0], ir.Return) or body[0].value is None:
        return None
    return body[0].value


def _explicit_viable(cands: list[ir.FunctionIR], given: int) -> list[ir.FunctionIR]:
    """The function templates a call with `given` explicit template arguments can name: those with at least that
    many template parameters, each of the rest deducible from the parameter types (named in one of them)."""
    out = []
    for f in cands:
        rest = f.template_params[given:] if len(f.template_params) >= given else None
        if rest is None:
            continue
        spelled = " ".join(ct.base for _, ct in f.params)
        if all(re.search(rf"\b{re.escape(name)}\b", spelled) for name, _, _ in rest):
            out.append(f)
    return out


def _type_of(v: Any) -> tuple[str, int] | None:
    """(C type, pointer depth) of a lifted value, for overload resolution; None where it is not known."""
    if isinstance(v, PtrVal):
        return (v.elem.base, 1)
    if isinstance(v, RefVal):
        return None
    if isinstance(v, Sym | StructVal | SharedRead | LaneTokens):
        return (v.ctype, 0)
    return None
