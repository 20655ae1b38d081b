"""Record element types: structs whose fields have different number types, as a spec writes them.

    opts: in[n] as {S: float32, X: float32, T: int32(1..50)}
    p: scalar as {dt: float32, n: int32, m: float32[3], flag: bool, inner: {a: int8, b: float64}} align(16)

A field is `NAME: TYPE`, TYPE a NumPy dtype name (or a template type parameter of the kernel), `bool` or a nested
`{...}`; `[3]` / `[2, 4]` after it makes a fixed array, `(LO..HI)` bounds its drawn values, `align(N)` is an
`alignas(N)` on it. `align(N)` after the closing brace is the struct's own `alignas`. The layout is C's: each
field at the next multiple of its alignment, the struct aligned to its largest field and padded to a multiple of
it (what `np.dtype(..., align=True)` gives for plain fields, and nvcc for the same struct).

A struct that holds pointers (a tensor-info struct: a data pointer with its sizes and strides) is a record whose
pointer fields are buffers, written as a buffer item, and whose number fields may be computed from the spec's names:

    info: scalar as {data: in[m, k](0..n - 1) as int64, sizes: int32[4] const(m, k), strides: int32[4] const(k, 1),
                     dims: int32 const(2), bias: null}

A pointer field (`in[DIMS](LO..HI) as TYPE`, `out[...]`, `inout[...]`, or `null` for one the program leaves
null) takes 8 bytes aligned to 8; the gate allocates its buffer (guard bands, poison, comparison, like a buffer
parameter) and writes the buffer's device address into those bytes. `const(E1, E2, ...)` after a number field
gives its values (in C order; the rest of an array is zero) instead of drawing them.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from xlate.errors import SpecError

NAME = re.compile(r"[A-Za-z_]\w*$")
ALIGN = re.compile(r"^(.*?)\s*\balign\s*\(\s*(\d+)\s*\)\s*$", re.S)
RANGE = re.compile(r"^(.*?)\s*\(([^()]*\.\.[^()]*)\)\s*$", re.S)
SHAPE = re.compile(r"^(.*?)\s*\[([^\[\]]*)\]\s*$", re.S)


@dataclass(frozen=True)
class Pointee:
    """What a pointer field of a record points at: a buffer of the spec (`data: in[n](0..9) as float32`), or
    nothing (`bias: null`)."""

    role: str  # in, out, inout, or null
    dims: tuple[str, ...] = ()
    lo: str | None = None
    hi: str | None = None


@dataclass(frozen=True)
class Field:
    name: str
    type: str | Record  # a dtype name (or a template type parameter), or a nested record; a pointer's element type
    shape: tuple[int, ...] = ()  # a fixed array: `float m[3]` is `m: float32[3]`
    lo: str | None = None  # drawn values (numbers only), expressions over the spec's names
    hi: str | None = None
    align: int = 0  # alignas(N) on the field
    pointer: Pointee | None = None  # a pointer field: 8 bytes the gate fills with its buffer's device address
    const: tuple[str, ...] | None = None  # values computed from the spec's names, not drawn (`const(m, k)`)


POINTER_BYTES = 8  # a device pointer in a struct passed by value (64-bit CUDA and HIP)


@dataclass(frozen=True)
class Record:
    fields: tuple[Field, ...]
    align: int = 0  # alignas(N) on the struct


@dataclass(frozen=True)
class Leaf:
    """One number field of a record, reached through nested records: `path` the NumPy field names, `shapes`
    each step's fixed-array shape, `dtype` its NumPy dtype."""

    path: tuple[str, ...]
    shapes: tuple[tuple[int, ...], ...]
    dtype: np.dtype
    lo: str | None
    hi: str | None
    const: tuple[str, ...] | None = None  # computed from the spec's names (`const(m, k)`), not drawn

    @property
    def count(self) -> int:
        """Numbers of this leaf in one record (a `float m[3]` has 3)."""
        return math.prod(math.prod(s) for s in self.shapes)

    @property
    def label(self) -> str:
        return ".".join(self.path)

    def element_label(self, sub: int) -> str:
        """`.inner[1].m[2]` for the leaf's `sub`-th number inside one record."""
        dims = [d for s in self.shapes for d in s]
        idx = list(np.unravel_index(sub, dims)) if dims else []
        out = ""
        for name, shape in zip(self.path, self.shapes, strict=True):
            out += f".{name}" + "".join(f"[{int(idx.pop(0))}]" for _ in shape)
        return out

    def values(self, a: np.ndarray) -> np.ndarray:
        """This leaf of every record of `a`, as (records, count)."""
        v = a
        for name in self.path:
            v = v[name]
        return np.asarray(v).reshape(a.shape[0] if a.ndim else 1, self.count)

    def assign(self, a: np.ndarray, v: np.ndarray | list | float) -> None:
        """Set this leaf of every record of `a` from `v`'s numbers in C order, converted to the leaf's dtype."""
        target = a
        for name in self.path[:-1]:
            target = target[name]
        with np.errstate(over="ignore", invalid="ignore"):
            target[self.path[-1]] = np.asarray(v).astype(self.dtype).reshape(target[self.path[-1]].shape)


def is_record(text: str | None) -> bool:
    return bool(text) and text.strip().startswith("{")  # type: ignore[union-attr]


def _split(text: str) -> list[str]:
    from xlate.specs.text import split_top

    return split_top(text)


def _close(text: str) -> int:
    """Index of the brace closing the one `text` opens."""
    depth = 0
    for i, ch in enumerate(text):
        depth += ch == "{"
        depth -= ch == "}"
        if depth == 0:
            return i
    raise SpecError(f"xlate: error: record type '{text}' has no closing brace")


@functools.lru_cache(maxsize=512)
def parse_record(text: str) -> Record:
    """`{a: float32, b: int32[2](0..9)} align(8)` -> Record; SpecError naming what is wrong."""
    t = text.strip()
    if not t.startswith("{"):
        raise SpecError(f"xlate: error: a record type starts with '{{': '{text}'")
    end = _close(t)
    body, rest = t[1:end], t[end + 1 :].strip()
    align = 0
    if rest:
        m = re.fullmatch(r"align\s*\(\s*(\d+)\s*\)", rest)
        if not m:
            raise SpecError(f"xlate: error: cannot read '{rest}' after record type '{t[: end + 1]}' (only align(N))")
        align = _power_of_two(int(m.group(1)), t)
    fields: list[Field] = []
    for item in _split(body):
        if ":" not in item:
            raise SpecError(f"xlate: error: record field '{item}' is not 'name: type', e.g. x: float32")
        name, ftext = (x.strip() for x in item.split(":", 1))
        if not NAME.match(name) or name in {f.name for f in fields}:
            raise SpecError(f"xlate: error: bad or repeated record field name '{name}' in '{text}'")
        fields.append(_field(name, ftext, text))
    if not fields:
        raise SpecError(f"xlate: error: record type '{text}' has no fields")
    return Record(tuple(fields), align)


def _power_of_two(n: int, where: str) -> int:
    if n <= 0 or n & (n - 1):
        raise SpecError(f"xlate: error: align({n}) in '{where}' must be a power of two")
    return n


POINTER_FIELD = re.compile(r"^(in|out|inout)\s*\[")
CONST = re.compile(r"^(.*?)\s*\bconst\s*\((.*)\)\s*$", re.S)


# a buffer item with its element type (the spec language's, xlate/specs/language.py, which imports this module)
POINTER_ITEM = re.compile(r"^(in|out|inout)\s*\[(.*)\]\s*(?:\((.*)\))?\s*as\s+(\w+)$", re.S)


def _pointer_field(name: str, text: str, whole: str) -> Field:
    """`in[m, k](0..n - 1) as int64` or `null`: a pointer field (the buffer item's syntax, `as TYPE` required)."""
    if text == "null":
        return Field(name, "uint8", pointer=Pointee("null"))
    m = POINTER_ITEM.match(text)
    if m is None:
        raise SpecError(f"xlate: error: pointer field '{name}' of '{whole}' must be a buffer item with its element "
                        "type, e.g. 'data: in[n] as float32', or 'null'")
    lo = hi = None
    if m.group(3) is not None:
        parts = m.group(3).split("..")
        if len(parts) != 2 or not all(x.strip() for x in parts) or re.search(r"\b(distinct|ascending)\b", m.group(3)):
            raise SpecError(f"xlate: error: pointer field '{name}' of '{whole}' takes a value range LO..HI only")
        lo, hi = (x.strip() for x in parts)
    dims = tuple(_split(m.group(2)))
    if not dims:
        raise SpecError(f"xlate: error: pointer field '{name}' of '{whole}' has no length")
    return Field(name, m.group(4), pointer=Pointee(m.group(1), dims, lo, hi))


def _field(name: str, text: str, whole: str) -> Field:
    text = text.strip()
    if text == "null" or POINTER_FIELD.match(text):
        return _pointer_field(name, text, whole)
    m = CONST.match(text)
    if m and not text.startswith("{"):
        values = tuple(_split(m.group(2)))
        if not values:
            raise SpecError(f"xlate: error: field '{name}' of '{whole}' has an empty const()")
        plain = _field(name, m.group(1), whole)
        if plain.lo is not None or isinstance(plain.type, Record):
            raise SpecError(f"xlate: error: field '{name}' of '{whole}': const() is for number fields without a range")
        if len(values) > math.prod(plain.shape):
            raise SpecError(f"xlate: error: field '{name}' of '{whole}' holds {math.prod(plain.shape)} numbers, "
                            f"const() gives {len(values)}")
        return Field(plain.name, plain.type, plain.shape, None, None, plain.align, const=values)
    if text.startswith("{"):  # a nested record: `{...} align(N)` (the struct's), then `[shape]`, then the field's align
        end = _close(text)
        m = re.fullmatch(r"(align\s*\(\s*\d+\s*\))?\s*(?:\[([\d\s,]+)\])?\s*(?:align\s*\(\s*(\d+)\s*\))?",
                         text[end + 1 :].strip())
        if m is None:
            raise SpecError(f"xlate: error: cannot read field '{name}' of '{whole}' (a record field takes only "
                            "[N] and align(N))")
        inner = parse_record(text[: end + 1] + (" " + m.group(1) if m.group(1) else ""))
        shape = _shape(m.group(2), name, whole) if m.group(2) else ()
        return Field(name, inner, shape, None, None, _power_of_two(int(m.group(3)), whole) if m.group(3) else 0)
    align, lo, hi, shape = 0, None, None, ()
    m = ALIGN.match(text)
    if m:
        text, align = m.group(1), _power_of_two(int(m.group(2)), whole)
    m = RANGE.match(text)
    if m:
        text = m.group(1)
        lo, hi = (x.strip() for x in m.group(2).split("..", 1))
    m = SHAPE.match(text)
    if m:
        text = m.group(1)
        shape = _shape(m.group(2), name, whole)
    text = text.strip()
    if not NAME.match(text):
        raise SpecError(f"xlate: error: cannot read the type '{text}' of field '{name}' in '{whole}'")
    return Field(name, text, shape, lo, hi, align)


def _shape(text: str, name: str, whole: str) -> tuple[int, ...]:
    try:
        shape = tuple(int(d) for d in text.split(",") if d.strip())
    except ValueError:
        raise SpecError(f"xlate: error: field '{name}' of '{whole}': array sizes must be numbers") from None
    if not shape or any(d <= 0 for d in shape):
        raise SpecError(f"xlate: error: field '{name}' of '{whole}': array sizes must be positive")
    return shape


def record_text(rec: Record) -> str:
    """The record written back in the spec language (parse_record's inverse)."""
    parts = []
    for f in rec.fields:
        if f.pointer is not None:
            parts.append(f"{f.name}: {pointer_text(f)}")
            continue
        t = record_text(f.type) if isinstance(f.type, Record) else f.type
        if f.shape:
            t += f"[{', '.join(str(d) for d in f.shape)}]"
        if f.lo is not None and f.hi is not None:
            t += f"({f.lo}..{f.hi})"
        if f.align:
            t += f" align({f.align})"
        if f.const is not None:
            t += f" const({', '.join(f.const)})"
        parts.append(f"{f.name}: {t}")
    return "{" + ", ".join(parts) + "}" + (f" align({rec.align})" if rec.align else "")


def pointer_text(f: Field) -> str:
    """A pointer field's text: `in[m, k](0..9) as int64`, or `null`."""
    p = f.pointer
    assert p is not None
    if p.role == "null":
        return "null"
    rng = f"({p.lo}..{p.hi})" if p.lo is not None and p.hi is not None else ""
    return f"{p.role}[{', '.join(p.dims)}]{rng} as {f.type}"


def canonical(text: str) -> str:
    return record_text(parse_record(text))


def _base_dtype(name: str, resolve: Callable[[str], np.dtype] | None) -> np.dtype:
    if resolve is not None:
        return resolve(name)
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    try:
        return np.dtype(name)
    except TypeError:
        raise SpecError(f"xlate: error: unknown field type '{name}' (use NumPy names: float32, int32, bool, ...)") from None


def layout(rec: Record, resolve: Callable[[str], np.dtype] | None = None) -> tuple[np.dtype, int]:
    """(NumPy structured dtype with C's offsets and size, C alignment). `resolve` maps a field type name to its
    dtype (template type parameters bound by the case)."""
    names, formats, offsets = [], [], []
    offset, align = 0, max(1, rec.align)
    for f in rec.fields:
        if f.pointer is not None:  # a device address, filled in by the gate
            base, a = np.dtype(np.uint64), POINTER_BYTES
        elif isinstance(f.type, Record):
            base, a = layout(f.type, resolve)
        else:
            base = _base_dtype(f.type, resolve)
            if base.kind not in "biuf" and base.name != "bfloat16":
                raise SpecError(f"xlate: error: record field '{f.name}' has type '{f.type}', not a number")
            a = base.itemsize  # C aligns scalars to their size (x86-64 and the GPUs alike)
        a = max(a, f.align)
        offset = -(-offset // a) * a
        names.append(f.name)
        formats.append(np.dtype((base, f.shape)) if f.shape else base)
        offsets.append(offset)
        offset += formats[-1].itemsize
        align = max(align, a)
    size = max(align, -(-offset // align) * align)
    return np.dtype({"names": names, "formats": formats, "offsets": offsets, "itemsize": size}), align


def record_dtype(text: str, resolve: Callable[[str], np.dtype] | None = None) -> np.dtype:
    return layout(parse_record(text), resolve)[0]


def leaves(rec: Record, dtype: np.dtype) -> list[Leaf]:
    """The record's number fields in memory order, nested records flattened."""
    out: list[Leaf] = []

    def walk(r: Record, dt: np.dtype, path: tuple[str, ...], shapes: tuple[tuple[int, ...], ...]) -> None:
        for f in r.fields:
            if f.pointer is not None:  # not a number: pointer_slots
                continue
            sub = dt.fields[f.name][0]  # type: ignore[index]
            base = sub.base if f.shape else sub
            if isinstance(f.type, Record):
                walk(f.type, base, (*path, f.name), (*shapes, f.shape))
            else:
                out.append(Leaf((*path, f.name), (*shapes, f.shape), base, f.lo, f.hi, f.const))

    walk(rec, dtype, (), ())
    return out


def is_record_dtype(dtype: np.dtype) -> bool:
    return dtype.fields is not None


def names_of(rec: Record) -> set[str]:
    """Names the record's field ranges use (check_names)."""
    from xlate.specs import expr

    out: set[str] = set()
    for f in rec.fields:
        if isinstance(f.type, Record):
            out |= names_of(f.type)
        extra = (*f.pointer.dims, f.pointer.lo, f.pointer.hi) if f.pointer is not None else ()
        for e in (f.lo, f.hi, *(f.const or ()), *extra):
            if e:
                out |= expr.names(e)
    return out


def type_names(rec: Record) -> set[str]:
    """Field type names that are not NumPy dtypes (template type parameters)."""
    out: set[str] = set()
    for f in rec.fields:
        if isinstance(f.type, Record):
            out |= type_names(f.type)
        elif f.type not in _DTYPES and not (f.pointer is not None and f.pointer.role == "null"):
            out.add(f.type)
    return out


@dataclass(frozen=True)
class Slot:
    """A pointer field of a record, reached through nested records: `path` the field names, `offset` its byte
    offset in the record, `field` the field itself (its buffer)."""

    path: tuple[str, ...]
    offset: int
    field: Field

    @property
    def label(self) -> str:
        return ".".join(self.path)


def pointer_slots(rec: Record, dtype: np.dtype) -> list[Slot]:
    """The record's pointer fields with their byte offsets, in memory order (nested records included; a pointer
    inside an array of records is refused: each element would need a buffer of its own)."""
    out: list[Slot] = []

    def walk(r: Record, dt: np.dtype, path: tuple[str, ...], base: int) -> None:
        for f in r.fields:
            sub, off = dt.fields[f.name][:2]  # type: ignore[index]
            if f.pointer is not None:
                out.append(Slot((*path, f.name), base + off, f))
            elif isinstance(f.type, Record):
                if f.shape and has_pointers(f.type):
                    raise SpecError(f"xlate: error: record field '{f.name}' is an array of structs holding pointers: "
                                    "give each element's fields a name of its own")
                walk(f.type, sub.base if f.shape else sub, (*path, f.name), base + off)

    walk(rec, dtype, (), 0)
    return out


def has_pointers(rec: Record) -> bool:
    return any(f.pointer is not None or (isinstance(f.type, Record) and has_pointers(f.type)) for f in rec.fields)


_DTYPES = {"bool", "float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
           "uint32", "uint64"}
