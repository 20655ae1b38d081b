"""C scalar values for the AscendC emulator (emulate.py): C's integer widths, wrap-around, truncating division
and the usual arithmetic conversions, float32 rounding. EMULATION support only."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from xlate.cir import ctype
from xlate.parse.consteval import parse_int_literal


class EmulationError(Exception):
    """The generated code did something the hardware forbids, or something the emulator does not cover."""


# AscendC's own scalar types that generated code declares: event ids are plain ints to the emulator.
ASCENDC_TYPES = {"TEventID": "i32", "event_t": "i32"}


@dataclass(frozen=True)
class CNum:
    v: Any
    t: str  # i32 u32 i64 u64 f32 f64 ...

    @property
    def is_float(self) -> bool:
        return self.t.startswith("f")


def ctype_of(text: str) -> str | None:
    """The emulator's value type (i32, u64, f16 ...) of a C type spelling, from the one C type table."""
    t = " ".join(text.replace("const", " ").replace("constexpr", " ").replace("AscendC::", "").split())
    if t in ASCENDC_TYPES:
        return ASCENDC_TYPES[t]
    row = ctype.table().get(t)
    if row is None:
        return None
    if row["kind"] == "bool":
        return "i32"  # arithmetic on a bool promotes it to int
    if row["kind"] in ("int", "uint"):
        return f"{'u' if row['kind'] == 'uint' else 'i'}{row['bits']}"
    if row["kind"] == "float" and row["numpy"] != "bfloat16":  # bfloat16 rounding is not emulated
        return f"f{row['bits']}"
    return None


def convert(v: CNum | bool | int | float, t: str) -> CNum:
    if isinstance(v, bool):
        v = CNum(int(v), "i32")
    elif isinstance(v, int):
        v = CNum(v, "i32")
    elif isinstance(v, float):
        v = CNum(v, "f64")
    if t.startswith("f"):
        x = float(v.v)
        return CNum(float(np.float32(x)) if t == "f32" else float(np.float16(x)) if t == "f16" else x, t)
    bits = int(t[1:])
    if v.is_float:
        if not math.isfinite(v.v):
            raise EmulationError(f"conversion of {v.v} to an integer")
        x = int(v.v)  # C truncates toward zero
    else:
        x = int(v.v)
    x &= (1 << bits) - 1
    if t[0] == "i" and x >= 1 << (bits - 1):
        x -= 1 << bits
    return CNum(x, t)


def _common(a: CNum, b: CNum) -> str:
    if a.is_float or b.is_float:
        return "f64" if "f64" in (a.t, b.t) else "f32"
    ra, rb = (max(int(a.t[1:]), 32), a.t[0]), (max(int(b.t[1:]), 32), b.t[0])
    if ra[0] != rb[0]:
        big = ra if ra[0] > rb[0] else rb
        small = rb if big is ra else ra
        if big[1] == "u" or small[1] == "i":
            return f"{big[1]}{big[0]}"
        return f"u{big[0]}"  # unsigned of lower rank, signed of higher rank that cannot hold it: C's rule
    return f"{'u' if 'u' in (ra[1], rb[1]) else 'i'}{ra[0]}"


def binop(op: str, a: CNum, b: CNum) -> CNum:
    if op in ("&&", "||"):
        return CNum(int(bool(a.v) and bool(b.v)) if op == "&&" else int(bool(a.v) or bool(b.v)), "i32")
    if op in ("<<", ">>"):
        t = _common(a, CNum(0, "i32"))
        return convert(CNum(a.v << b.v if op == "<<" else a.v >> b.v, t), t)
    t = _common(a, b)
    x, y = convert(a, t).v, convert(b, t).v
    if op in ("<", ">", "<=", ">=", "==", "!="):
        return CNum(int({"<": x < y, ">": x > y, "<=": x <= y, ">=": x >= y, "==": x == y, "!=": x != y}[op]), "i32")
    if t.startswith("f"):
        f = np.float32 if t == "f32" else np.float64
        with np.errstate(all="ignore"):
            r = {"+": f(x) + f(y), "-": f(x) - f(y), "*": f(x) * f(y), "/": f(x) / f(y)}[op]  # IEEE: x/0 is inf/nan
        return CNum(float(r), t)
    if op in ("/", "%") and y == 0:
        raise EmulationError("integer division by zero")
    r = {"+": x + y, "-": x - y, "*": x * y, "/": int(x / y) if op == "/" else 0, "%": x - int(x / y) * y if op == "%" else 0,
         "&": x & y, "|": x | y, "^": x ^ y}[op]
    return convert(CNum(r, t), t)


def literal(text: str) -> CNum:
    t = text.strip()
    iv = parse_int_literal(t)
    if iv is not None:
        return CNum(iv, "u32" if t.lower().rstrip("l").endswith("u") else "i32")
    if t[-1] in "fF":
        return CNum(float(np.float32(float(t[:-1]))), "f32")
    return CNum(float(t), "f64")
