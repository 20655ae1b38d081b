"""Abstract values of the lifter beside plain syms: pointers, CUDA vector structs, cooperative groups, constant
and per-thread arrays, shared arrays with their write records, and the values threads exchange (comm.py's
tokens and shared-memory reads); and the error every lifting failure raises."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from xlate.cir import ir
from xlate.translate.triton.fork import COPY, VALUE
from xlate.translate.triton.sym import Sym


class LiftError(Exception):
    """A construct the lifter cannot port faithfully: becomes a blocking XL2xxx diagnostic."""

    def __init__(self, code: str, what: str, loc: ir.Loc | None = None):
        super().__init__(what)
        self.code = code
        self.what = what
        self.loc = loc
        self.origin: str | None = None  # file:line:col of the construct, where it is in another file


@dataclass
class PtrVal:
    """A pointer: `base` (a pointer parameter, or a shared array) plus an element offset."""

    base: Any  # Sym (global pointer parameter) or SharedArr
    offset: Sym
    elem: ir.CType  # the pointee type
    root: str  # the parameter (or array) it derives from

    @property
    def shared(self) -> bool:
        return isinstance(self.base, SharedArr)


@dataclass(frozen=True)
class NullPtr:
    """A pointer parameter the spec says is always the null pointer (`bias: null`), or `nullptr` handed to a pointer
    parameter of a device function (`name` None): tests against null fold to constants; anything that reads,
    writes or computes through it is refused."""

    name: str | None

    def refuse(self, what: str, loc: ir.Loc | None) -> LiftError:
        said = f"'{self.name}' is a null pointer (`{self.name}: null` in the spec)" if self.name else "a null pointer"
        return LiftError("XL2013", f"{said} and the kernel {what} it where its null test does not rule that out", loc)


@dataclass
class AddrVal:
    """A pointer converted to an integer (`(uintptr_t)p`): only its residue modulo the alignment of its buffer's
    start is known (`align` bytes: cudaMalloc's 256 for a global buffer, 16 for shared memory), so it may only
    be tested for alignment (`% m`, `& (m - 1)`, m dividing `align`)."""

    ptr: PtrVal
    ctype: str
    align: int


@dataclass
class LocalPtr:
    """A pointer into a local vector (`(__half*)&v`, `(__half2*)&v.y`): `bit` bits into variable `var`,
    pointing to `elem`s (packed.py reads and writes the variable's lanes through it)."""

    var: str
    bit: int
    elem: str
    const: bool


@dataclass
class RefVal:
    """A reference to an element of memory (`float& x = a[i]`, a `T&` parameter given `a[i]`): the address is
    fixed where the reference is bound; every read and write goes to that element."""

    ptr: PtrVal | None = None  # a global element (offset included)
    arr: SharedArr | None = None  # or a shared-array element
    idx: tuple[Sym, ...] = ()


@dataclass
class StructVal:
    ctype: str
    fields: dict[str, Any]


@dataclass
class FieldArray:
    """An array member of a packed struct value (`q.val`): indexing it names lane `val[k]` of `struct`."""

    struct: StructVal
    name: str
    count: int


@dataclass
class CGroup:
    kind: str  # block | tile | grid
    size: int = 0


@dataclass
class ConstArray:
    """A `__constant__` array with an initialiser: indexed by compile-time constants only."""

    name: str
    ctype: str
    values: list[float | int]


@dataclass
class LocalArray:
    """A per-thread array with compile-time-constant indexing (scalarised). Its elements are not loop-carried:
    a run-time loop deeper than the declaration may not write them."""

    ctype: str
    size: int
    slots: dict[int, Any] = field(default_factory=dict)
    loops: int = 0  # run-time loops around the declaration
    dims: tuple[int, ...] = ()  # a multi-dimensional array's extents (row-major), () for one dimension

    def slot(self, idx: list[Any]) -> int | None:
        """The element an index list names (constants, one per dimension), or None."""
        dims = self.dims or (self.size,)
        if len(idx) != len(dims) or not all(i.is_const for i in idx):
            return None
        k = 0
        for i, d in zip(idx, dims):
            if not 0 <= int(i.value) < d:
                return None
            k = k * d + int(i.value)
        return k


@dataclass
class TypeVal:
    """A typedef or template type parameter in scope: its (possibly symbolic) C spelling."""

    ctype: str


# -- values threads exchange (comm.py) ------------------------------------------------------------------------


@dataclass
class WriteRec:
    id: int
    arr: SharedArr | None  # None: a per-thread value turned into tokens (shuffles)
    idx: tuple[Sym, ...]
    pred: tuple[Sym, ...]
    value: Any  # Sym or LaneTokens
    epoch: int
    loc: ir.Loc | None = None
    atomic: bool = False  # the block's atomics on one element: its value after them, the same for every thread
    span: tuple[int, int] | None = None  # lowest and highest element a 1-D write stores (comm.disjoint), once known
    chunk: int = -1  # >= 0: a run-time loop's carried content of the array (carry.py), elements chunk * lanes + x


@dataclass
class SharedArr:
    """A `__shared__` array and the writes to it so far (comm.py reads them back). Fields declare how a dry run
    of the lifter undoes them (fork.py)."""

    name: str = field(metadata=VALUE)
    ctype: str = field(metadata=VALUE)
    dims: list[int | None] = field(metadata=VALUE)
    loc: ir.Loc | None = field(metadata=VALUE)
    records: list[WriteRec] = field(default_factory=list, metadata=COPY)
    boundary: int = field(default=0, metadata=VALUE)  # records before this index belong to an enclosing loop's earlier code
    clobbered: bool = field(default=False, metadata=VALUE)  # written inside a runtime loop that has ended: contents unknown
    scalar: bool = field(default=False, metadata=VALUE)  # `__shared__ float s;`: one element, named without an index
    staged: StagedCopy | StagedBody | None = field(default=None, metadata=VALUE)  # filled by a staging loop (staging.py)
    carry: Any = field(default=None, metadata=VALUE)  # carry.Carried: carried as block tensors by the run-time loop


@dataclass(frozen=True)
class StagedCopy:
    """`for (k = tid + c; k < bound; k += threads) [if (cond)] s[k + d] = value;`: element e of s holds `value`
    (and `cond` held) for k = e - d in [c, bound). The expressions are re-evaluated for the element a thread
    reads, in the scopes the loop saw, with k bound to that element's iteration."""

    var: str
    var_type: str  # the loop variable's C type
    value: Any  # ir.Expr
    cond: Any  # ir.Expr | None
    start: Any  # Sym: c
    bound: Any  # Sym
    shift: Any  # Sym: d
    scopes: tuple  # the scopes at the loop (bindings are never changed in place)
    pred: Any  # Sym: the (uniform) condition the loop ran under
    epoch: int  # the barrier epoch of the loop
    stores: tuple  # (buffer, store count) at the loop: the loads it stands for must see the same memory


@dataclass(frozen=True)
class StagedBody:
    """`for (k = tid + c; k < bound; k += threads) BODY` where BODY writes one shared array s, iteration k the
    elements [width * k + base, width * k + base + width) (a vector store and a scalar fallback, say): element e
    was written by iteration (e - base) / width, and a read of it runs BODY again for that iteration (in the
    scopes the loop saw) and takes what it stored there. `prev`: what the array held before (an earlier staging
    loop into it)."""

    var: str
    var_type: str
    body: tuple  # the loop's statements
    start: Any  # Sym: c
    bound: Any  # Sym
    base: Any  # Sym
    width: int
    scopes: tuple
    pred: Any  # Sym: the (uniform) condition the loop ran under
    epoch: int
    stores: tuple  # (buffer, store count) at the loop
    prev: Any = None  # StagedCopy | StagedBody | None


class Tok:
    """What one thread's value is, in terms of per-thread values: op over {record: thread bitmask}."""

    __slots__ = ("bad", "const", "masks", "op")

    def __init__(self, op: str | None, masks: dict[int, int], const: float | None = None, bad: bool = False):
        self.op = op
        self.masks = masks
        self.const = const
        self.bad = bad

    def same(self, other: Tok) -> bool:
        return (self.op, self.masks, self.const, self.bad) == (other.op, other.masks, other.const, other.bad)


@dataclass
class LaneTokens:
    toks: list[Tok]
    ctype: str
    alt: Callable[[], Sym] | None = None  # the same value computed as plain data, when tokens do not resolve
    data: Sym | None = None  # alt's result, as the threads that stored it computed it (comm.stored_data)


@dataclass
class SharedRead:
    arr: SharedArr
    idx: tuple[Sym, ...]
    pred: tuple[Sym, ...]
    epoch: int
    loc: ir.Loc | None
    in_loop: bool
    recs: list[WriteRec] = field(default_factory=list)  # the array's writes visible at the read
    before_loop: bool = False  # the array has writes from before the enclosing runtime loop
    tokens: LaneTokens | None = None
    data: Sym | None = None

    @property
    def ctype(self) -> str:
        return self.arr.ctype
