"""The kernel spec: what to feed a kernel and how to launch it, each item tagged with where it came from."""

from __future__ import annotations

import functools
import re
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from xlate.resources import data

if TYPE_CHECKING:
    from xlate.model import Param

Role = Literal["in", "out", "inout", "size", "scalar", "const", "null"]  # null: a pointer always passed as nullptr
OpClass = Literal["elementwise", "reduction", "scan", "matmul", "movement", "atomic"]
OriginKind = Literal["sidecar", "annotation", "host", "kernel", "default"]
NUMERIC_DTYPES = ("float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
                  "uint32", "uint64")
# The largest case the gate fuzzes, in 4-byte numbers over all buffers (2 GiB): a kernel built for fixed large
# sizes (`#define N 100000000`) is fuzzed on a GPU at its smallest case up to this; inference calls a spec whose
# smallest case is larger a hole.
LARGEST_CASE = 1 << 29


@functools.cache
def ctypes_table() -> dict[str, dict[str, Any]]:
    return data("ctypes.yaml")


def normalise_ctype(base: str) -> str:
    t = re.sub(r"\b(const|volatile|__restrict__|__restrict|restrict|struct|signed(?= \w))\b", " ", base)
    t = re.sub(r"(?<![\w:])(?:::)?std::(?=u?int\d+_t\b|size_t\b|ptrdiff_t\b)", "", t)  # std::uint64_t is uint64_t
    return " ".join(t.split())


@dataclass
class Origin:
    """Where one spec item came from: the user (sidecar, annotation), the program's host code (a launch site, an
    allocation), the kernel's own code (a guard, an index expression) or a default."""

    kind: OriginKind
    where: str = ""  # file:line of the evidence
    detail: str = ""  # the evidence, e.g. "cudaMalloc(&d_out, B * T * C * sizeof(float))"

    def label(self) -> str:
        out = self.kind + (f" {self.where}" if self.where else "")
        return out + (f": {self.detail}" if self.detail else "")


@dataclass
class ParamSpec:
    name: str
    role: Role
    position: int  # -1: a size that is not a parameter (it shapes buffers and the launch only)
    ctype: str  # element type for buffers, value type for scalars ("T" for template-dependent)
    dims: list[str] = field(default_factory=list)  # buffers: row-major shape expressions
    lanes: int = 1  # vector element types (float4*): scalars per element
    lo: str | None = None  # value range (buffers, scalars, sizes)
    hi: str | None = None
    perm: bool = False  # buffer values: a permutation of 0..len-1
    const: str | None = None  # role const: the expression
    distinct: bool = False  # buffer values: pairwise distinct, inside lo..hi (`(0..m - 1 distinct)`)
    # buffer values: non-decreasing inside lo..hi (`(0..m ascending)`: segment offsets, CSR row pointers); with
    # `by` a buffer of segment lengths kept inside the steps: by[k] <= x[k + 1] - x[k] (`(0..m ascending by len)`)
    ascending: bool = False
    ascending_by: str | None = None
    # A module-scope `__device__`/`__constant__` variable the kernel reads or writes, not a parameter (position
    # -1): `d_cost: global inout[1024]`. The gate fills it before each run and reads it back after, like a buffer.
    module_global: bool = False
    # A pointer field of a by-value record parameter (`info: scalar as {data: in[n] as int64, ...}`): the buffer
    # `info.data` (position -1) whose device address the gate writes into the record's bytes; `member` is the
    # record parameter's name, the field's path the rest of the name.
    member: str | None = None

    @property
    def is_buffer(self) -> bool:
        return self.role in ("in", "out", "inout")

    @property
    def is_null(self) -> bool:
        """A pointer parameter the program always passes as a null pointer (`bias: null`): no buffer, the
        kernel's `if (bias)` tests are false on both sides."""
        return self.role == "null"


@dataclass
class KernelSpec:
    kernel: str
    params: list[ParamSpec]
    grid: list[str] = field(default_factory=lambda: ["1"])
    block: list[str] = field(default_factory=lambda: ["1"])
    shmem: str = "0"
    dtype_axes: dict[str, list[str]] = field(default_factory=dict)  # template type param -> numpy dtypes
    value_params: dict[str, str] = field(default_factory=dict)  # template value param -> expression
    # template type param -> a class of the program it is instantiated with, as C++ spells it (`Rng: type(Kiss<int>)`):
    # not drawn, the same on both sides; by-value parameters of it are records of its data members
    type_params: dict[str, str] = field(default_factory=dict)
    axes: dict[str, list[int]] = field(default_factory=dict)  # launch axes (block sizes...): name -> values, preferred first
    op: OpClass = "elementwise"
    op_length: str | None = None
    where: list[str] = field(default_factory=list)
    values: Literal["finite", "special"] = "special"
    rtol: float | None = None
    atol: float | None = None
    source: str = "annotation"  # annotation, xlate.toml, inferred, or mixed
    inferred: list[str] = field(default_factory=list)  # which items were inferred
    origins: dict[str, Origin] = field(default_factory=dict)  # item -> where it came from

    def param(self, name: str) -> ParamSpec | None:
        found = next((p for p in self.params if p.name == name), None)
        if found is None and "." in name:  # a record's pointer field (`info.data`)
            found = next((p for p in self.member_buffers if p.name == name), None)
        return found

    @property
    def buffers(self) -> list[ParamSpec]:
        """Every buffer the gate allocates: the pointer parameters, then the pointer fields of by-value records."""
        return [p for p in self.params if p.is_buffer] + self.member_buffers

    @property
    def member_buffers(self) -> list[ParamSpec]:
        """The buffers of the pointer fields of by-value record parameters, named `param.field` (xlate/specs/records.py)."""
        from xlate.specs.records import has_pointers, is_record, parse_record, pointer_slots, record_dtype

        out: list[ParamSpec] = []
        for p in self.params:
            if p.role != "scalar" or not is_record(p.ctype) or not has_pointers(rec := parse_record(p.ctype)):
                continue
            dtype = record_dtype(p.ctype, lambda t: _layout_only(t))
            for slot in pointer_slots(rec, dtype):
                f, ptr = slot.field, slot.field.pointer
                assert ptr is not None
                if ptr.role == "null":
                    continue
                out.append(ParamSpec(f"{p.name}.{slot.label}", ptr.role, -1, str(f.type), list(ptr.dims), lo=ptr.lo,  # type: ignore[arg-type]
                                     hi=ptr.hi, member=p.name))
        return out

    @property
    def module_globals(self) -> list[ParamSpec]:
        return [p for p in self.params if p.module_global]

    @property
    def sizes(self) -> list[ParamSpec]:
        return [p for p in self.params if p.role == "size"]

    @property
    def nulls(self) -> list[ParamSpec]:
        return [p for p in self.params if p.role == "null"]

    @property
    def scalars(self) -> list[ParamSpec]:
        return [p for p in self.params if p.role == "scalar"]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def pinned(self) -> KernelSpec:
        """This spec with every launch axis fixed at its preferred value: what a translator that needs
        compile-time launch dimensions (Triton's BLOCK, AscendC's tiling) builds against."""
        if not self.axes:
            return self
        fixed = {name: str(values[0]) for name, values in self.axes.items()}

        def sub(text: str | None) -> str | None:
            if text is None:
                return None
            return re.sub(r"\b[A-Za-z_]\w*\b", lambda m: fixed.get(m.group(0), m.group(0)), text)

        params = [replace(p, dims=[sub(d) or d for d in p.dims], lo=sub(p.lo), hi=sub(p.hi), const=sub(p.const))
                  for p in self.params]
        return replace(self, params=params, grid=[sub(g) or g for g in self.grid],
                       block=[sub(b) or b for b in self.block], shmem=sub(self.shmem) or "0",
                       where=[sub(w) or w for w in self.where], op_length=sub(self.op_length), axes={})


def _layout_only(name: str) -> Any:
    """A dtype for field types when only the offsets of pointer fields matter: a template type parameter is
    taken as float32 (pointer_slots' offsets do not depend on it when it comes after them; the gate's own layout
    binds it per case)."""
    import numpy as np

    from xlate.specs.records import _base_dtype

    try:
        return _base_dtype(name, None)
    except Exception:
        return np.dtype("float32")


def param_ctype(p: Param, resolve: Any = None) -> tuple[str, int]:
    """(element ctype, lanes) of a parameter; vector types become their scalar with a lane count; `resolve`
    reads typedefs."""
    base = normalise_ctype(p.base_type)
    if resolve is not None and base not in ctypes_table() and not p.is_template_dependent:
        base = resolve(base)
    info = ctypes_table().get(base)
    if info and info.get("numpy") is None and info.get("scalar"):
        return info["scalar"], int(info.get("lanes", 1))
    aggregate = getattr(resolve, "aggregate", None)
    if info is None and aggregate is not None and not p.is_pointer:  # a struct of numbers passed by value
        agg = aggregate(p.base_type)
        if agg is not None:
            return agg[0], int(agg[1])
    return base, 1
