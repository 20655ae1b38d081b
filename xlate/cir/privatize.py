"""Shared-memory slots a thread keeps to itself across a loop become a local for the loop's duration.

    tb[tid] = 0;
    for (; i < n; i += stride) tb[tid] += a[i] * b[i];   // no barrier: only this thread touches tb[tid]

is, for every thread, `{ float p = tb[tid]; for (...) p += a[i] * b[i]; tb[tid] = p; }`. Written as shared memory,
the value read in one iteration is the one stored in the previous iteration, which a lifter that forwards stores
to reads cannot see through a loop it does not unroll; as a local it is an ordinary loop-carried variable.

The rewrite applies to a loop (for, while, do) and a shared array when, inside the loop, every use of the array is
an element access at one and the same subscript, the loop writes that element, the subscript depends on nothing the
loop assigns, the loop has no barrier, no return and no call that could reach the array, and the array's address
is never taken in the function (no pointer can reach the slot behind the rewrite's back). With no barrier in the
loop, another thread touching the same element during it would be a data race in the source; a loop that only
reads the element (a spin-wait on a flag another thread sets) is left alone.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from xlate.cir import ir

BARRIER_WORDS = ("sync", "fence", "barrier")


def privatize_shared_slots(fir: ir.FunctionIR) -> ir.FunctionIR:
    shared = {s.name: s for s in _walk_stmts(fir.body) if isinstance(s, ir.Decl) and s.shared}
    if not shared:
        return fir
    body = fir.body
    counter = [0]
    for name, decl in shared.items():
        if _address_taken(body, name):
            continue
        body = _rewrite(body, name, decl, counter)
    return dataclasses.replace(fir, body=body) if body is not fir.body else fir


# -- the rewrite ------------------------------------------------------------------------------------------------


def _rewrite(stmts: tuple[ir.Stmt, ...], name: str, decl: ir.Decl, counter: list[int]) -> tuple[ir.Stmt, ...]:
    out: list[ir.Stmt] = []
    changed = False
    for s in stmts:
        new = _rewrite_stmt(s, name, decl, counter)
        changed |= new is not s
        out.append(new)
    return tuple(out) if changed else stmts


def _rewrite_stmt(s: ir.Stmt, name: str, decl: ir.Decl, counter: list[int]) -> ir.Stmt:
    if isinstance(s, ir.For | ir.While):
        slot = _private_slot(s, name)
        if slot is not None:
            counter[0] += 1
            local = f"__xl_priv_{name}_{counter[0]}"
            elem = ir.CType(decl.ctype.base, decl.ctype.ptr, False)
            loop = _replace_slot(s, _key(slot), local)
            return ir.BlockStmt(s.loc, (
                ir.Decl(s.loc, elem, local, slot),
                loop,
                ir.ExprStmt(s.loc, ir.Assign(s.loc, slot, "=", ir.Name(s.loc, local))),
            ))
        body = _rewrite(s.body, name, decl, counter)
        return s if body is s.body else dataclasses.replace(s, body=body)
    if isinstance(s, ir.If):
        then, other = _rewrite(s.then, name, decl, counter), _rewrite(s.other, name, decl, counter)
        return s if (then is s.then and other is s.other) else dataclasses.replace(s, then=then, other=other)
    if isinstance(s, ir.BlockStmt):
        body = _rewrite(s.body, name, decl, counter)
        return s if body is s.body else dataclasses.replace(s, body=body)
    return s


def _private_slot(loop: ir.For | ir.While, name: str) -> ir.Expr | None:
    """The one element `name[...]` the loop uses, when it may become a local (see the module's doc)."""
    parts: list[Any] = [loop.body, loop.test]
    if isinstance(loop, ir.For):
        parts += [loop.init, loop.step]
    uses: list[ir.Expr] = []
    bare = [False]
    for p in parts:
        _collect_uses(p, name, uses, bare)
    if bare[0] or not uses:
        return None
    keys = {_key(u) for u in uses}
    if len(keys) != 1:
        return None
    slot = uses[0]
    subscripts = _subscripts(slot)
    if not _writes(parts, keys.pop()):
        return None
    head: tuple[ir.Stmt, ...] = ()
    if isinstance(loop, ir.For):
        head = (*loop.init, *(ir.ExprStmt(e.loc, e) for e in loop.step))
    assigned, declared = ir.assigned_names((*loop.body, *head))
    # a subscript of a name the loop declares (`const int r = k / w; ... s[r * w + c]`) names no element before
    # the loop: it is not one slot, and the local's initialiser could not be read there
    if any(ir.names_in(e) & (assigned | declared) for e in subscripts) or any(ir.has_effects(e, calls=True) for e in subscripts):
        return None
    if any(isinstance(n, ir.Return) for n in ir.walk(loop.body)):
        return None
    if _has_barrier_or_call(parts):
        return None
    return slot


def _replace_slot(node: Any, key: Any, local: str) -> Any:
    if isinstance(node, ir.Index) and _key(node) == key:
        return ir.Name(node.loc, local)
    if isinstance(node, tuple):
        items = tuple(_replace_slot(x, key, local) for x in node)
        return items if any(a is not b for a, b in zip(items, node)) else node
    if dataclasses.is_dataclass(node) and isinstance(node, ir.Expr | ir.Stmt):
        changes = {}
        for f in dataclasses.fields(node):
            if f.name == "loc":
                continue
            v = getattr(node, f.name)
            nv = _replace_slot(v, key, local)
            if nv is not v:
                changes[f.name] = nv
        return dataclasses.replace(node, **changes) if changes else node
    return node


# -- reading the IR ---------------------------------------------------------------------------------------------


def _key(node: Any) -> Any:
    """A structural key of an IR node, without source locations."""
    if isinstance(node, tuple):
        return tuple(_key(x) for x in node)
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        return (type(node).__name__, *(_key(getattr(node, f.name)) for f in dataclasses.fields(node) if f.name != "loc"))
    return node


def _root(e: ir.Expr) -> ir.Expr:
    while isinstance(e, ir.Index):
        e = e.base
    return e


def _subscripts(e: ir.Expr) -> list[ir.Expr]:
    out = []
    while isinstance(e, ir.Index):
        out.append(e.index)
        e = e.base
    return out


def _collect_uses(node: Any, name: str, uses: list[ir.Expr], bare: list[bool], under_index: bool = False) -> None:
    """Every full element access `name[..]..[..]` in `node` into `uses`; `bare[0]` set when the array is used
    any other way (passed, aliased, indexed partially, its element's address taken)."""
    if isinstance(node, tuple | list):
        for x in node:
            _collect_uses(x, name, uses, bare)
        return
    if isinstance(node, ir.Unary) and node.op == "&" and _mentions_name(node.arg, name):
        bare[0] = True
        return
    if isinstance(node, ir.Index):
        root = _root(node)
        if isinstance(root, ir.Name) and root.id == name:
            uses.append(node)
            for sub in _subscripts(node):
                _collect_uses(sub, name, uses, bare)
            return
    if isinstance(node, ir.Name):
        if node.id == name:
            bare[0] = True
        return
    if dataclasses.is_dataclass(node) and isinstance(node, ir.Expr | ir.Stmt):
        if isinstance(node, ir.Decl) and node.name == name:
            bare[0] = True  # a declaration shadowing the array inside the loop
        for f in dataclasses.fields(node):
            if f.name != "loc":
                _collect_uses(getattr(node, f.name), name, uses, bare)


def _address_taken(body: tuple[ir.Stmt, ...], name: str) -> bool:
    """Whether the array, or an element's address, can be reached other than by element accesses."""
    uses: list[ir.Expr] = []
    bare = [False]
    for s in body:
        if isinstance(s, ir.Decl) and s.name == name:
            continue
        _collect_uses(s, name, uses, bare)
    decls = [s for s in _walk_stmts(body) if isinstance(s, ir.Decl) and s.name == name]
    dims = max((len(d.dims) for d in decls), default=1) or 1
    return bare[0] or any(len(_subscripts(u)) != dims for u in uses)


def _walk_stmts(stmts: tuple[ir.Stmt, ...]):
    for s in stmts:
        yield s
        if isinstance(s, ir.If):
            yield from _walk_stmts(s.then)
            yield from _walk_stmts(s.other)
        elif isinstance(s, ir.For):
            yield from _walk_stmts(s.init)
            yield from _walk_stmts(s.body)
        elif isinstance(s, ir.While | ir.BlockStmt):
            yield from _walk_stmts(s.body)




def _mentions_name(e: ir.Expr, name: str) -> bool:
    return name in ir.names_in(e)


def _writes(parts: list[Any], key: Any) -> bool:
    return any(isinstance(n, ir.Assign | ir.IncDec) and _key(n.target) == key for n in ir.walk(parts))




def _has_barrier_or_call(parts: list[Any]) -> bool:
    """A barrier, fence, atomic or warp shuffle (another thread's write could become visible through it), or a
    method call (a cooperative-groups `sync()` among them). Calls that could reach the array through a pointer
    are excluded already: the array's address is never taken."""
    for n in ir.walk(parts):
        if isinstance(n, ir.MethodCall):
            return True
        if isinstance(n, ir.Call):
            low = n.fn.lower()
            if any(w in low for w in BARRIER_WORDS) or "atomic" in low or "shfl" in low:
                return True
    return False
