"""SIMT lifting: one CUDA kernel (one thread's program) -> the body of one Triton program (one block).

The lifter interprets the kernel's IR abstractly. Every per-thread value becomes a sym over the block's lanes
(`threadIdx` is `tl.arange`, `blockIdx` is `tl.program_id`); control flow is if-converted into predicates that
mask loads, stores and assignments; loops become unrolled code (constant trip counts), `range` loops (uniform
bounds), strided lane loops (thread-dependent start, uniform bound and step: block- and grid-stride loops) or
masked `while` loops (anything else); device functions are inlined; shared memory and shuffles go through
comm.py. Loads and stores are emitted at their program point; arithmetic is emitted lazily where used.

One job per module, mixed into one Lifter: scopes.py (names and predicates), stmts.py, loops.py, memory.py
(loads, stores, shared memory, atomics), exprs.py, intrinsics.py (calls). Everything the lifter changes lives
in one LiftState (state.py), which dry runs fork and undo; comm.py and idioms.py see the lifter through the
narrow protocols of host.py.
"""

from __future__ import annotations

from typing import Any

from xlate.cir import ctype as ctyping
from xlate.cir import ir
from xlate.cir.effects import read_and_written_params
from xlate.translate.triton import sym as S
from xlate.translate.triton.cub import Cub
from xlate.translate.triton.emit import Ctx, Emitter, sanitize, tl_of
from xlate.translate.triton.exprs import Expressions
from xlate.translate.triton.intrinsics import Intrinsics
from xlate.translate.triton.layout import Layout
from xlate.translate.triton.libmatrices import LibraryMatrices
from xlate.translate.triton.libvectors import LibraryVectors
from xlate.translate.triton.loops import Loops
from xlate.translate.triton.memory import Memory
from xlate.translate.triton.packed import Packed
from xlate.translate.triton.records import Records
from xlate.translate.triton.scopes import Scopes
from xlate.translate.triton.staging import Staging
from xlate.translate.triton.state import Binding, FnCtx, KernelContext, LiftState, ModuleVar
from xlate.translate.triton.stmts import Statements
from xlate.translate.triton.sym import Sym
from xlate.translate.triton.unswitch import Unswitching
from xlate.translate.triton.values import (
    LiftError,
    NullPtr,
    PtrVal,
    RefVal,
    StructVal,
)

BLOCK_ARG = "_xl_bdx"  # the kernel argument holding blockDim.x when the launcher computes it (translator.py)
BOXED = {"double": "torch.float64", "__half": "torch.float16", "__nv_bfloat16": "torch.bfloat16"}
LIFTER_NAMES = frozenset({"pid_x", "pid_y", "pid_z", "lane_x", "lane_y", BLOCK_ARG})  # what every kernel body binds


class Lifter(Statements, Loops, Staging, Memory, Layout, Expressions, Packed, Records, Intrinsics, LibraryVectors,
             LibraryMatrices, Cub, Scopes, Unswitching):
    """One kernel, lifted: the configuration (IR, kernel context, block shape) and the state (`st`)."""

    def __init__(self, fir: ir.FunctionIR, kc: KernelContext, path: str):
        self.fir = fir
        self.kc = kc
        self.path = path
        self.bx, self.by = kc.bx, kc.by  # the program's lanes (powers of two; bx 0: known only at launch)
        self.real_bx, self.real_by = kc.real or (kc.bx, kc.by)  # CUDA's block (real_bx None: at launch)
        self.nlanes = kc.bx * kc.by  # 0 when the block is sized at launch: no analysis may enumerate threads
        self.lane_guard: Sym | None = None  # the lanes that are threads, where the lanes are padded
        self.st = LiftState()
        self.boxed: dict[str, str] = {}  # scalar parameters passed boxed (one-element tensors): name -> C type
        # vectors and packed structs passed by value (`float3 w`): the launcher takes the value (its lanes, a
        # sequence) and hands the kernel one scalar per lane: parameter -> the kernel's lane parameters in order
        self.lanes: dict[str, list[str]] = {}
        self.records: dict[str, Any] = {}  # record types of buffer parameters (records.py): C name -> layout
        self.record_ptrs: dict[tuple[str, str], str] = {}
        self.ctx = Ctx("default", {"x": "lane_x", "y": "lane_y"}, "[BY, BX]" if kc.by > 1 else "[BX]")
        # the module variables the spec lists, seen from every function (Scopes.lookup): never rebound
        self.module_vars = {alias: module_binding(v) for alias, v in kc.module_vars.items()}
        # buffers the kernel reads and writes: threads may pass values through them across a __syncthreads (a
        # module variable it writes may be written in a device function: counted whatever its role)
        self.shared_globals = read_and_written_params(fir) | {v.name for v in kc.module_vars.values() if not v.readonly}
        self.discarding: ir.Expr | None = None  # the expression statement being evaluated for its effects only
        # the memory order of every atomic the port issues: "" keeps Triton's default (kc.fenced)
        self.atomic_order = "" if kc.fenced else ', sem="relaxed"'

    @property
    def em(self) -> Emitter:
        return self.st.em

    def next_id(self) -> int:
        self.st.ids += 1
        return self.st.ids

    def idiom(self, text: str, loc: ir.Loc | None) -> None:
        if self.em.enabled and (text, loc) not in self.st.notes:
            self.st.notes.append((text, loc))

    def lift(self) -> None:
        fir = self.fir
        em = self.em
        if fir.refs:
            raise LiftError("XL2012", f"kernel parameter '{sorted(fir.refs)[0]}' passed by reference", fir.loc)
        em.used.update(sanitize(name) for name, _ in fir.params)  # lane parameters are named around them
        for name, ct in fir.params:
            py = sanitize(name)
            self.st.params.append(py)
            em.used.add(py)
            if name in self.kc.records:  # a buffer of records: its bytes, read field by field
                val = self.record_param(py, self.resolve_type(ct.base, fir.loc), ct, self.kc.records[name])
            else:
                val = NullPtr(name) if name in self.kc.nulls else self.param_value(py, ct, fir.loc)
            self.bind(name, ct, val)
        em.used.update(v.name for v in self.kc.module_vars.values())
        for a, axis in (("x", 0), ("y", 1), ("z", 2))[: max(1, self.kc.grid_dims)]:
            em.used.add(f"pid_{a}")
            em.line(f"pid_{a} = tl.program_id({axis})")
        if self.by > 1:
            em.line("lane_x = tl.arange(0, BX)[None, :]")
            em.line("lane_y = tl.arange(0, BY)[:, None]")
        else:
            em.line("lane_x = tl.arange(0, BX)")
        em.used.update({"lane_x", "lane_y"})
        guards = []  # lanes past CUDA's block (padding to a power of two) are no threads: every effect masked
        if self.real_bx is None:
            guards.append(S.op("lt", "bool", S.lane("x"), self.block_dim("x")))
        elif self.real_bx != self.bx:
            guards.append(S.op("lt", "bool", S.lane("x"), S.const(self.real_bx, "unsigned int")))
        if self.real_by != self.by:
            guards.append(S.op("lt", "bool", S.lane("y"), S.const(self.real_by, "unsigned int")))
        if guards:
            self.lane_guard = S.land(*guards)
            self.st.pred.append(self.lane_guard)
        self.st.fstack.append(FnCtx(fir.name, fir.ret, 0))
        self.stmts(fir.body)
        self.st.fstack.pop()

    def block_dim(self, axis: str) -> Sym:
        """blockDim along `axis`: CUDA's block (not the padded lanes), a kernel argument when set at launch."""
        if axis == "x" and self.real_bx is None:
            return S.uni(BLOCK_ARG, "unsigned int", nonneg=True)
        bz = self.kc.bz
        return S.const({"x": self.real_bx, "y": self.real_by // bz, "z": bz}.get(axis, 1), "unsigned int")

    def param_value(self, py: str, ct: ir.CType, loc: ir.Loc) -> Any:
        base = self.resolve_type(ct.base, loc)
        if ct.ptr:
            if ct.ptr > 1:
                raise LiftError("XL2013", f"parameter '{py}' is a pointer to a pointer", loc)
            vinfo = self.vec_info(base)
            if vinfo:  # a buffer of float2/uchar4...: the tensor holds their components, in order
                return PtrVal(S.uni(py, vinfo["scalar"] + "*"), S.const(0, "int"), ir.CType(base, 0, ct.const), py)
            return PtrVal(S.uni(py, base + "*"), S.const(0, "int"), ir.CType(base, 0, ct.const), py)
        info = ctyping.row(base)
        template = base in self.kc.types.values()
        vinfo = self.vec_info(base) if info is None and not template else None
        if vinfo is not None:
            return self.lane_params(py, base, vinfo, loc)
        if info is None and not template:
            raise LiftError("XL2012", f"parameter '{py}' of type {base}", loc)
        if base in ("int", "bool"):
            return S.uni(py, base)
        if base == "float":  # a 0-d float32 from the start: the interpreter keeps a Python float in float64
            conv = self.em.fresh(py + "_c")
            self.em.line(f"{conv} = {py} + tl.zeros([], tl.float32)")
            return S.uni(conv, base)
        if template or base in BOXED:
            # Triton types a Python float as float32 (and a template scalar has the type of the launch): the
            # launcher passes the value as a one-element tensor of the exact type, read here once
            self.boxed[py] = base
            conv = self.em.fresh(py + "_v")
            self.em.line(f"{conv} = tl.load({py})")
            return S.uni(conv, base)
        conv = self.em.fresh(py + "_c")
        self.em.line(f"{conv} = {py} + tl.zeros([], {tl_of(base)})")
        return S.uni(conv, base)

    def lane_params(self, py: str, base: str, vinfo: dict[str, Any], loc: ir.Loc) -> StructVal:
        """A vector or packed struct passed by value: one scalar parameter of the kernel per lane (`w_x, w_y,
        w_z`), each read as a scalar parameter of the lane's type; the launcher unpacks the value into them."""
        names = [self.em.fresh(f"{py}_{f.replace('[', '_').rstrip(']')}") for f in vinfo["fields"]]
        self.lanes[py] = names
        return StructVal(base, {f: self.param_value(n, ir.CType(vinfo["scalar"]), loc)
                                for f, n in zip(vinfo["fields"], names)})


def module_binding(v: ModuleVar) -> Binding:
    """A module variable as the kernel's code sees it: an array is a pointer to its first element; a scalar is a
    reference to element 0 of its one-element buffer (reads load it, writes store it, `&v` is its address)."""
    ptr = PtrVal(S.uni(v.name, v.ctype + "*"), S.const(0, "int"), ir.CType(v.ctype, 0, v.readonly), v.name)
    if v.array:
        return Binding(ir.CType(v.ctype, 1, v.readonly), ptr)
    return Binding(ir.CType(v.ctype), RefVal(ptr=ptr))
