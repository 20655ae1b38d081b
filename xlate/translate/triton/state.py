"""The lifter's state: what it knows about the kernel (KernelContext, fixed) and everything it changes while it
interprets the kernel (LiftState), in one object that can be forked and undone."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from xlate.cir import ir
from xlate.translate.triton import sym as S
from xlate.translate.triton.emit import Emitter
from xlate.translate.triton.fork import COPY, IN_PLACE, NESTED, SCOPES, SHARED, VALUE, restore, save
from xlate.translate.triton.sym import Sym
from xlate.translate.triton.values import ConstArray, SharedArr, WriteRec


@dataclass
class KernelContext:
    """What the translator knows about the kernel beyond its IR."""

    bx: int
    by: int
    grid_dims: int
    devices: dict[str, ir.FunctionIR]
    types: dict[str, str]  # template type params and trait typedefs -> constexpr name
    traits: dict[tuple[str, str, str], str]  # (struct, arg, member) -> constexpr name
    const_arrays: dict[str, ConstArray]
    constants: dict[str, tuple[str, Any]]  # file-scope constants: name -> (ctype, value)
    typedefs: Callable[[str], str] | None = None  # a type name through the program's typedefs and aliases
    values: dict[str, tuple[str, Any]] = field(default_factory=dict)  # template value parameters at the launch
    structs: Callable[[str], dict[str, Any] | None] | None = None  # packed structs of the program (structs.py)
    program_value: Callable[[str], ir.Expr | None] | None = None  # macros/constants of other files (context.py)
    program_device: Callable[[str, int], ir.FunctionIR | None] | None = None  # device functions of other files
    overloads: dict[str, list[ir.FunctionIR]] = field(default_factory=dict)  # names with several definitions
    real: tuple[int | None, int] | None = None  # CUDA's block when (bx, by) are padded lanes; None x: run time
    # every device function of one name in the program (its own file's and other files'): operator overloads
    program_overloads: Callable[[str], list[ir.FunctionIR]] | None = None
    bz: int = 1  # a 3-D block's z extent (translator.Block.z): real y = Y * bz, the y lanes hold (y, z)
    # the module variables the spec lists, by every name the code may spell them with (`v`, `ns::v`)
    module_vars: dict[str, ModuleVar] = field(default_factory=dict)
    # pointer parameters the spec says are always null (`bias: null`): the launcher passes None for them
    nulls: frozenset[str] = frozenset()
    # dynamic shared arrays declared at file scope (`extern __shared__ float s[];`): name -> element type
    file_shared: dict[str, str] = field(default_factory=dict)
    # bytes of dynamic shared memory (an extern __shared__ array) where the spec's shmem is a constant
    shmem: int | None = None
    # buffer parameters of records (`opts: in[n] as {S: float32, T: int32}`): name -> NumPy dtype in C's layout
    records: dict[str, Any] = field(default_factory=dict)
    # locals of the program's structs of mixed numbers (structs.py StructLayouts.members): field -> C type
    members: Callable[[str], dict[str, str] | None] | None = None
    # the kernel or a device function it calls fences (intrinsics.reaches_fence): its atomics keep Triton's
    # acquire-release order and stay where they are; True unless the translator found no fence
    fenced: bool = True
    # the kernel or what it calls fences, or reads memory as `volatile` (intrinsics.reaches_volatile): a buffer
    # it writes may be polled for other threads' stores, so each read of one is issued again; True unless the
    # translator found neither, where a read repeated with no store, atomic or barrier between reuses the first
    polls: bool = True
    # lines of the file with a for loop its author kept rolled (`#pragma unroll 1`; unroll.rolled_lines)
    rolled_lines: frozenset[int] = frozenset()


@dataclass(frozen=True)
class ModuleVar:
    """A module variable the spec lists (`d_cost: global inout[N]`, a `__device__`/`__constant__`/`__managed__`
    variable): an extra pointer parameter of the Triton kernel and a keyword of its launcher, named `name`."""

    name: str
    ctype: str  # the declared element type, canonical
    array: bool  # False: a scalar variable, passed as a one-element buffer (`x` is element 0)
    readonly: bool  # the spec's role is `in` (a `__constant__` is always)


@dataclass
class Binding:
    """A name in scope. Bindings are replaced, never changed, so a copied scope is a snapshot."""

    ctype: ir.CType
    val: Any
    decl_pred: int = 0  # len(pred) when declared: assignments are predicated on what was pushed since
    decl_done: tuple[int, ...] = ()  # ids of the exit flags in force when declared


@dataclass
class FnCtx:
    """A function being interpreted (the kernel, or an inlined device function)."""

    name: str = field(metadata=VALUE)
    ret: ir.CType = field(metadata=VALUE)
    pred_base: int = field(metadata=VALUE)
    value: Any = field(default=None, metadata=VALUE)  # what it returns, so far
    done: Sym = field(default_factory=lambda: S.const(0, "bool"), metadata=VALUE)  # threads that have returned
    loops: int = field(default=0, metadata=VALUE)  # run-time loops around the call: a return inside one is refused


@dataclass
class LoopCtx:
    """A loop being unrolled: the threads that have left it (break) or this iteration (continue)."""

    brk: Sym = field(default_factory=lambda: S.const(0, "bool"), metadata=VALUE)
    cont: Sym = field(default_factory=lambda: S.const(0, "bool"), metadata=VALUE)
    pred_base: int = field(default=0, metadata=VALUE)


@dataclass
class LiftState:
    """Everything the lifter changes while it interprets one kernel. Each field declares how `fork()` saves it
    (fork.py): a dry run forks, runs ahead, and `Fork.undo()` puts every field back."""

    em: Emitter = field(default_factory=Emitter, metadata=NESTED)
    scopes: list[dict[str, Binding]] = field(default_factory=lambda: [{}], metadata=SCOPES)
    pred: list[Sym] = field(default_factory=list, metadata=COPY)  # conditions of the enclosing ifs
    fstack: list[FnCtx] = field(default_factory=list, metadata=IN_PLACE)
    lstack: list[LoopCtx] = field(default_factory=list, metadata=IN_PLACE)
    epoch: int = field(default=0, metadata=VALUE)  # barriers passed
    store_epoch: dict[str, int] = field(default_factory=dict, metadata=COPY)  # stores per buffer
    shared: list[SharedArr] = field(default_factory=list, metadata=IN_PLACE)
    records: dict[int, WriteRec] = field(default_factory=dict, metadata=COPY)  # every write record, by id
    pseudo: dict[int, WriteRec] = field(default_factory=dict, metadata=COPY)  # per-thread values as tokens, by sym id
    red_axes: dict[str, int] = field(default_factory=dict, metadata=COPY)  # tl.dot axes being evaluated -> extent
    runtime_loops: int = field(default=0, metadata=VALUE)  # run-time loops around the program point
    defer: int = field(default=0, metadata=VALUE)  # > 0: loads are built, not issued (an idiom evaluates operands)
    notes: list[tuple[str, ir.Loc | None]] = field(default_factory=list, metadata=COPY)  # idioms recognised
    uses_const: set[str] = field(default_factory=set, metadata=COPY)  # __constant__ arrays baked into the port
    rolled: set[str] = field(default_factory=set, metadata=COPY)  # loop variables of loops kept rolled (unroll.py)
    vec_loads: dict[tuple, Any] = field(default_factory=dict, metadata=COPY)  # vector block loads issued (layout.py)
    scalar_loads: dict[tuple, Any] = field(default_factory=dict, metadata=COPY)  # global loads issued (reload_key)
    region: int = field(default=0, metadata=VALUE)  # the loop body being emitted (loads are reused within one)
    # the run-time loops around the program point whose variable runs over constants: its name -> the values
    loop_ranges: dict[str, range] = field(default_factory=dict, metadata=COPY)
    load_runs: dict[tuple, Any] = field(default_factory=dict, metadata=COPY)  # adjacent scalar loads (layout.py)
    params: list[str] = field(default_factory=list, metadata=COPY)  # the kernel's parameters, as Python names
    # the threads that had returned at the last program exit test (loops.exit_if_all_returned): none new since,
    # another test would only repeat it
    exit_tested: tuple | None = field(default=None, metadata=VALUE)
    # numeric_limits of template types: constexpr name -> (type's constexpr, member); a dry run's entry stays (an
    # unread constexpr argument is harmless)
    limits: dict[str, tuple[str, str]] = field(default_factory=dict, metadata=SHARED)
    # canonical ids (sym.canon) of per-thread conditions taken as true on every thread that runs the code being
    # lifted: a loop's version for blocks whose threads all pass its invariant test (unswitch.py)
    assumed: frozenset[int] = field(default=frozenset(), metadata=VALUE)
    # ids of write records and idiom axes: never reused, so nothing a dry run saw is mistaken for later work
    ids: int = field(default=0, metadata=SHARED)

    def fork(self) -> Fork:
        return Fork(self, save(self))

    @contextlib.contextmanager
    def dry_run(self) -> Iterator[None]:
        """Run ahead without emitting (trip counts, carried kinds, trial unrolls): whatever the block changes,
        the emitter's switch included, is undone when it ends, however it ends."""
        fork = self.fork()
        self.em.enabled = False
        try:
            yield
        finally:
            fork.undo()


@dataclass
class Fork:
    """A point to return to: `undo()` puts the state back as it was when it was forked."""

    state: LiftState
    saved: dict[str, Any] = field(repr=False)

    def undo(self) -> None:
        restore(self.state, self.saved)
