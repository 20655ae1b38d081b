"""C arithmetic typing for the lifter: integer promotion, the usual arithmetic conversions, and the NumPy
dtypes used to evaluate thread-index arithmetic concretely. Type names not in maps/types.yaml (template
parameters, trait typedefs) are symbolic: Triton resolves them when the kernel is specialised."""

from __future__ import annotations

import numpy as np

from xlate.translate.triton.tables import scalar_info

NUMPY = {"bool": np.bool_, "char": np.int8, "signed char": np.int8, "unsigned char": np.uint8, "short": np.int16,
         "unsigned short": np.uint16, "int": np.int32, "unsigned int": np.uint32, "long": np.int64,
         "unsigned long": np.uint64, "long long": np.int64, "unsigned long long": np.uint64, "float": np.float32,
         "double": np.float64, "__half": np.float16}
UNKNOWN = "?"  # the promotion of a symbolic type with a concrete one: left to Triton


def info(ctype: str):
    return scalar_info(ctype)


def is_symbolic(ctype: str) -> bool:
    return ctype == UNKNOWN or info(ctype) is None


def kind(ctype: str) -> str:
    i = info(ctype)
    return i["kind"] if i else "symbolic"


def is_float(ctype: str) -> bool:
    return kind(ctype) == "float"


def is_int(ctype: str) -> bool:
    return kind(ctype) in ("int", "uint", "bool")


def is_unsigned(ctype: str) -> bool:
    return kind(ctype) == "uint"


def bits(ctype: str) -> int:
    i = info(ctype)
    return int(i["bits"]) if i else 32


def promote(ctype: str) -> str:
    """Integer promotion: bool, char and short become int."""
    i = info(ctype)
    if i and i["kind"] in ("int", "uint", "bool") and i["bits"] < 32:
        return "int"
    return ctype


UNSIGNED_OF = {"int": "unsigned int", "long": "unsigned long", "long long": "unsigned long long"}


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
    ia, ib = info(a), info(b)
    if ia["kind"] == "float" or ib["kind"] == "float":
        fa = ia["rank"] if ia["kind"] == "float" else -1
        fb = ib["rank"] if ib["kind"] == "float" else -1
        return a if fa >= fb else b
    a, b = promote(a), promote(b)
    if a == b:
        return a
    ia, ib = info(a), info(b)
    if ia["kind"] == ib["kind"]:
        return a if ia["rank"] >= ib["rank"] else b
    u, s = (a, b) if ia["kind"] == "uint" else (b, a)
    iu, is_ = info(u), info(s)
    if iu["rank"] >= is_["rank"]:
        return u
    if is_["bits"] > iu["bits"]:
        return s
    return UNSIGNED_OF.get(s, u)


def np_dtype(ctype: str):
    return NUMPY.get(ctype)
