"""C types, read from the one table (xlate/data/ctypes.yaml): canonical spellings, scalar facts (kind, width,
rank, NumPy and Triton dtypes), vectors, C's integer promotion and usual arithmetic conversions, and the
spellings of dtypes as template arguments.

The IR (ir.py) names types by their canonical spelling; a name the table does not know (a template parameter,
a typedef of the kernel, `?` for the promotion of a symbolic type with a concrete one) is *symbolic*: whoever
instantiates the kernel resolves it.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import numpy as np

from xlate.resources import data

UNKNOWN = "?"  # the promotion of a symbolic type with a concrete one: left to the instantiation
FIELDS = ("x", "y", "z", "w")  # the members of CUDA's vector types, in order
QUALIFIERS = re.compile(r"\b(const|volatile|__restrict__|__restrict|restrict|struct|__device__|__shared__|static|"
                        r"register|inline|__forceinline__)\b")
UNSIGNED_OF = {"int": "unsigned int", "long": "unsigned long", "long long": "unsigned long long"}


@functools.cache
def table() -> dict[str, dict[str, Any]]:
    """spelling -> row (every spelling of one type shares its row)."""
    return data("ctypes.yaml")


def canonical(spelling: str) -> str:
    """'unsigned' -> 'unsigned int', 'uint32_t' -> 'unsigned int', 'half' -> '__half'; qualifiers and `std::`
    dropped; names the table does not know are returned as written."""
    t = " ".join(QUALIFIERS.sub(" ", spelling).split())
    t = t.replace("cuda::std::", "").replace("std::", "")
    row = table().get(t)
    return row["c"] if row else t


def row(ctype: str) -> dict[str, Any] | None:
    """The row of a canonical spelling (None for aliases, symbolic names and vectors)."""
    r = table().get(ctype)
    return r if r is not None and r["c"] == ctype and r["kind"] != "vector" else None


@functools.cache
def vector(ctype: str) -> dict[str, Any] | None:
    """{"scalar": canonical component type, "fields": ("x", "y", ...)} of a canonical vector type."""
    r = table().get(ctype)
    if r is None or r["c"] != ctype or r["kind"] != "vector":
        return None
    return {"scalar": canonical(r["scalar"]), "fields": list(FIELDS[: r["lanes"]])}


def tl(ctype: str) -> str | None:
    """The Triton dtype of a canonical scalar type."""
    r = row(ctype)
    return r["tl"] if r else None


def np_dtype(ctype: str) -> type | None:
    """The NumPy scalar type of a canonical scalar type (None where NumPy has none, e.g. bfloat16)."""
    r = row(ctype)
    return getattr(np, "bool_" if r["numpy"] == "bool" else r["numpy"], None) if r else None


DTYPE_NAMES = ("float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
               "uint32", "uint64", "bool")


def numpy_name(spelling: str) -> str | None:
    """The NumPy dtype name of an element type: a dtype name itself, or any spelling the table knows (None for
    vectors, structs, template parameters and unknown names)."""
    if spelling in DTYPE_NAMES:
        return spelling
    r = table().get(spelling)
    return r.get("numpy") if r else None


def is_symbolic(ctype: str) -> bool:
    return ctype == UNKNOWN or row(ctype) is None


def kind(ctype: str) -> str:
    r = row(ctype)
    return r["kind"] if r else "symbolic"


def is_float(ctype: str) -> bool:
    return kind(ctype) == "float"


def is_int(ctype: str) -> bool:
    return kind(ctype) in ("int", "uint", "bool")


def is_unsigned(ctype: str) -> bool:
    return kind(ctype) == "uint"


def bits(ctype: str) -> int:
    r = row(ctype)
    return int(r["bits"]) if r else 32


def promote(ctype: str) -> str:
    """Integer promotion: bool, char and short become int."""
    r = row(ctype)
    if r and r["kind"] in ("int", "uint", "bool") and r["bits"] < 32:
        return "int"
    return ctype


def arith(a: str, b: str) -> str:
    """The usual arithmetic conversions of C for a binary operator on types a and b."""
    if a == b and not is_symbolic(a):
        return promote(a)
    if is_symbolic(a) or is_symbolic(b):
        if a == b:
            return a
        other = b if is_symbolic(a) else a
        sym = a if is_symbolic(a) else b
        return sym if (not is_symbolic(other) and is_int(other)) else UNKNOWN
    ia, ib = row(a), row(b)
    assert ia is not None and ib is not None
    if ia["kind"] == "float" or ib["kind"] == "float":
        fa = ia["rank"] if ia["kind"] == "float" else -1
        fb = ib["rank"] if ib["kind"] == "float" else -1
        return a if fa >= fb else b
    a, b = promote(a), promote(b)
    if a == b:
        return a
    ia, ib = row(a), row(b)
    assert ia is not None and ib is not None
    if ia["kind"] == ib["kind"]:
        return a if ia["rank"] >= ib["rank"] else b
    u, s = (a, b) if ia["kind"] == "uint" else (b, a)
    iu, is_ = row(u), row(s)
    assert iu is not None and is_ is not None
    if iu["rank"] >= is_["rank"]:
        return u
    if is_["bits"] > iu["bits"]:
        return s
    return UNSIGNED_OF.get(s, u)


@functools.cache
def template_spellings(language: str) -> dict[str, str]:
    """NumPy dtype name -> the C spelling of a template argument of that dtype in `language` (cuda, hip)."""
    return {r["numpy"]: r["c"] for r in table().values() if language in r.get("template", ())}
