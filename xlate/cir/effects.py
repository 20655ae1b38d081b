"""Which pointer parameters a function both reads and writes (syntactically, through local pointers derived from
them). Threads of a CUDA block that communicate through such a buffer rely on `__syncthreads` making each
other's global stores visible; a lifted port has to keep that barrier."""

from __future__ import annotations

import dataclasses
from typing import Any

from xlate.cir import ir


def read_and_written_params(fir: ir.FunctionIR) -> set[str]:
    pointers = {name for name, ct in fir.params if ct.ptr}
    if not pointers:
        return set()
    origin = {p: p for p in pointers}  # local pointer -> the parameter it points into
    for node in ir.walk(fir.body):
        if isinstance(node, ir.Decl) and node.ctype.ptr and node.init is not None:
            roots = ir.names_in(node.init) & set(origin)
            if len(roots) == 1:
                origin[node.name] = origin[roots.pop()]
    written: set[str] = set()
    read: set[str] = set()
    for node in ir.walk(fir.body):
        if isinstance(node, ir.Assign | ir.IncDec):
            root = root_name(node.target)
            if root in origin:
                written.add(origin[root])
                if isinstance(node, ir.IncDec) or node.op != "=":
                    read.add(origin[root])
        elif isinstance(node, ir.Call) and "atomic" in node.fn.lower() and node.args:
            root = root_name(node.args[0])
            if root in origin:
                written.add(origin[root])
                read.add(origin[root])
    for node in _reads(fir.body):
        root = root_name(node)
        if root in origin:
            read.add(origin[root])
    return written & read


def root_name(e: Any) -> str | None:
    """The variable an lvalue or address is rooted at (`a[i].f`, `*p`, `*(p + k)`, `(T*)q`); None for others."""
    while isinstance(e, ir.Index | ir.Member | ir.Unary | ir.Cast):
        e = e.base if isinstance(e, ir.Index | ir.Member) else e.arg
    if isinstance(e, ir.Binary):  # `p + k` as an address
        left, right = root_name(e.left), root_name(e.right)
        return left or right
    return e.id if isinstance(e, ir.Name) else None


def _reads(node: Any):
    """Element accesses read (not the targets of plain `=`)."""
    if isinstance(node, tuple | list):
        for x in node:
            yield from _reads(x)
        return
    if isinstance(node, ir.Assign):
        if node.op != "=":
            yield node.target
        yield from _subscript_reads(node.target)
        yield from _reads(node.value)
        return
    if isinstance(node, ir.Index):
        yield node
        yield from _reads(node.index)
        yield from _reads(node.base)
        return
    if isinstance(node, ir.Unary) and node.op == "*":
        yield node
    if dataclasses.is_dataclass(node) and isinstance(node, ir.Expr | ir.Stmt):
        for f in dataclasses.fields(node):
            if f.name != "loc":
                yield from _reads(getattr(node, f.name))


def _subscript_reads(target: Any):
    while isinstance(target, ir.Index | ir.Member):
        if isinstance(target, ir.Index):
            yield from _reads(target.index)
        target = target.base


