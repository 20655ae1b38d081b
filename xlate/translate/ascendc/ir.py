"""The value IR the CUDA kernel body is lifted into: what one thread computes, as an expression DAG.

Leaves are loads of the thread's element of a buffer (`Load`), kernel scalar parameters (`Param`), numbers
(`Const`) and thread-geometry builtins (`Builtin`); `Reduce` is a whole-row reduction (one value per row).
Nodes are frozen dataclasses, so equal sub-expressions are equal values (common sub-expressions merge).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterator
from dataclasses import dataclass, fields


@dataclass(frozen=True)
class Node:
    def children(self) -> tuple[Node, ...]:
        out: list[Node] = []
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, Node):
                out.append(v)
            elif isinstance(v, tuple):
                out.extend(x for x in v if isinstance(x, Node))
        return tuple(out)


@dataclass(frozen=True)
class Const(Node):
    value: float
    kind: str = "float"  # the C type of the literal: int | float | double (promotions follow C)


@dataclass(frozen=True)
class Param(Node):
    name: str  # a scalar kernel parameter (or a size parameter used as a value)


@dataclass(frozen=True)
class Builtin(Node):
    name: str  # gid (global thread index), tid, bid, bdim, gdim, stride (bdim*gdim)


@dataclass(frozen=True)
class Load(Node):
    buf: str  # the thread's element (elementwise) or the row element (row kernels) of a pointer parameter


@dataclass(frozen=True)
class Bin(Node):
    op: str  # + - * / < > <= >= == != && ||
    a: Node
    b: Node


@dataclass(frozen=True)
class Neg(Node):
    a: Node


@dataclass(frozen=True)
class Call(Node):
    fn: str
    args: tuple[Node, ...]


@dataclass(frozen=True)
class Select(Node):
    cond: Node
    a: Node
    b: Node


@dataclass(frozen=True)
class Reduce(Node):
    op: str  # max | sum
    arg: Node  # per-element expression over the row
    init: Node  # the CUDA accumulator's initial value


@dataclass(frozen=True)
class Meta(Node):
    name: str  # a pattern metavariable (X: vector, S: scalar, ...)


COMPARISONS = ("<", ">", "<=", ">=", "==", "!=")
KIND_RANK = {"int": 0, "float": 1, "double": 2}


def is_number(node: object, value: float) -> bool:
    return isinstance(node, Const) and node.value == value


def promote(a: str, b: str) -> str:
    """C's usual arithmetic conversions over the three kinds the lifter tracks."""
    return a if KIND_RANK[a] >= KIND_RANK[b] else b


def walk(node: Node) -> Iterator[Node]:
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children()))


def is_vector(node: Node) -> bool:
    """Depends on the thread's element (a Load): computed with vector instructions over a tile."""
    if isinstance(node, Load):
        return True
    if isinstance(node, Reduce):
        return False  # one value per row: a scalar once reduced
    return any(is_vector(c) for c in node.children())


def loads(node: Node) -> set[str]:
    return {n.buf for n in walk(node) if isinstance(n, Load)}


def float32(value: float) -> float:
    return struct.unpack("f", struct.pack("f", value))[0] if math.isfinite(value) else value


def c_float(value: float) -> str:
    """A C float literal that reads back as the same float32 value."""
    v = float32(value)
    if math.isnan(v):
        return "NAN"
    if math.isinf(v):
        return "INFINITY" if v > 0 else "-INFINITY"
    import numpy as np

    text = str(np.float32(v))  # shortest text that reads back as this float32
    if "e" not in text and "." not in text:
        text += ".0"
    return text + "f"


def to_c(node: Node, names: dict[str, str]) -> str:
    """C++ text of a scalar expression (no Loads), parameter names mapped through `names`."""
    if isinstance(node, Const):
        if node.kind == "int":
            return str(int(node.value))
        if node.kind == "double" and math.isfinite(node.value):
            return repr(float(node.value))
        return c_float(node.value)
    if isinstance(node, Param):
        return names.get(node.name, node.name)
    if isinstance(node, Neg):
        return f"(-{to_c(node.a, names)})"
    if isinstance(node, Bin):
        return f"({to_c(node.a, names)} {node.op} {to_c(node.b, names)})"
    if isinstance(node, Select):
        return f"({to_c(node.cond, names)} ? {to_c(node.a, names)} : {to_c(node.b, names)})"
    if isinstance(node, Call):
        return f"{node.fn}({', '.join(to_c(a, names) for a in node.args)})"
    if isinstance(node, Reduce):
        return names[f"reduce:{id_of(node)}"]
    raise ValueError(f"not a scalar expression: {node!r}")


def id_of(node: Node) -> str:
    return f"{abs(hash(node)) & 0xFFFFFFFF:08x}"


def show(node: Node) -> str:
    """CUDA-like text of an expression, for messages."""
    if isinstance(node, Const):
        return c_float(node.value)
    if isinstance(node, Param):
        return node.name
    if isinstance(node, Builtin):
        return node.name
    if isinstance(node, Load):
        return f"{node.buf}[i]"
    if isinstance(node, Meta):
        return node.name
    if isinstance(node, Neg):
        return f"-{show(node.a)}"
    if isinstance(node, Bin):
        return f"({show(node.a)} {node.op} {show(node.b)})"
    if isinstance(node, Select):
        return f"({show(node.cond)} ? {show(node.a)} : {show(node.b)})"
    if isinstance(node, Call):
        return f"{node.fn}({', '.join(show(a) for a in node.args)})"
    if isinstance(node, Reduce):
        return f"{node.op}_row({show(node.arg)})"
    return repr(node)
