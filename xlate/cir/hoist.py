"""Integer atomics a loop issues at one address become one atomic of the thread's total after the loop.

    for (i = ...; i < n; i += stride) { ...; if (c) atomicAdd(&dist[k], count); }

is, for every thread, `{ int t = 0; for (...) { ...; if (c) t += count; } if (t != 0) atomicAdd(&dist[k], t); }`.
Integer add, or, xor, max and min give the same value in any order and grouping, and the atomic's result is unused, so the
buffer ends the same; an atomic of the identity changes nothing, so skipping it is exact and touches no address
the source does not touch (a loop that runs no iteration touches none). The Triton lifter then combines the
block's totals into one atomic per program (memory.py), where a per-iteration atomic was a block reduction and
an atomic in every iteration.

atomicMax/atomicMin likewise keep the thread's largest/smallest operand (from the type's lowest/highest value).

It applies to a loop (for, while, do) and an atomicAdd/Sub/Or/Xor/Max/Min statement in its body (under
ifs and blocks, or left by this rewrite after an inner loop) when: the target is an integer buffer parameter at
an address of names the loop does not assign (no memory read, no call); the loop mentions that buffer nowhere
else and has no return; nothing the loop writes or reads through another pointer can be the buffer (a buffer of
another element type, a const one, an array of the kernel's own), its pointer arguments of calls included; and
every call in it is a known function (math, intrinsics, atomics: not a device function, which could reach the
buffer through a struct). Kernels that fence (`__threadfence`) are left
alone by the caller: what their atomics publish is ordered by where the atomics are.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from xlate.cir import ctype as ctyping
from xlate.cir import ir

# atomic -> how the thread's total takes its operand: a compound assignment (identity 0), or the larger/smaller
# of the two (identity the type's lowest/highest value)
HOISTABLE = {"atomicAdd": "+=", "atomicSub": "+=", "atomicOr": "|=", "atomicXor": "^=", "atomicMax": ">",
             "atomicMin": "<"}
HOISTABLE |= {f"{name}_block": how for name, how in HOISTABLE.items()}
MAX_MIN = (">", "<")  # the atomics whose total is the largest / smallest operand
LITERAL_TYPES = ("int", "unsigned int", "long long", "unsigned long long")  # the atomics' 32/64-bit integers
PURE_EXPRS = (ir.Name, ir.Num, ir.Builtin, ir.Binary, ir.Cond, ir.Cast)
NOTE = "{fn} in a loop at one address -> one {fn} of the thread's total after the loop"


def hoist_loop_atomics(fir: ir.FunctionIR, known_call: Callable[[str], bool]) -> tuple[ir.FunctionIR, list[tuple[str, ir.Loc]]]:
    """The kernel with its loops' hoistable atomics moved after them (see the module's doc), and a note per
    atomic moved. `known_call(fn)`: a call that cannot reach a buffer it is not passed (math, intrinsics)."""
    params = {name: ct for name, ct in fir.params}
    local_pointers = {s.name for s in ir.walk(fir.body) if isinstance(s, ir.Decl) and s.ctype.ptr}
    rw = _Rewrite(params, local_pointers, known_call)
    body = rw.stmts(fir.body)
    return (dataclasses.replace(fir, body=body) if body is not fir.body else fir), rw.notes


@dataclasses.dataclass
class _Rewrite:
    params: dict[str, ir.CType]
    local_pointers: set[str]
    known_call: Callable[[str], bool]
    notes: list[tuple[str, ir.Loc]] = dataclasses.field(default_factory=list)
    count: int = 0

    def stmts(self, stmts: tuple[ir.Stmt, ...]) -> tuple[ir.Stmt, ...]:
        out = tuple(self.stmt(s) for s in stmts)
        return out if any(a is not b for a, b in zip(out, stmts)) else stmts

    def stmt(self, s: ir.Stmt) -> ir.Stmt:
        if isinstance(s, ir.For | ir.While):
            body = self.stmts(s.body)  # inner loops first: what they leave after them may move out of this one
            loop = s if body is s.body else dataclasses.replace(s, body=body)
            return self.hoist(loop)
        if isinstance(s, ir.If):
            then, other = self.stmts(s.then), self.stmts(s.other)
            return s if (then is s.then and other is s.other) else dataclasses.replace(s, then=then, other=other)
        if isinstance(s, ir.BlockStmt):
            body = self.stmts(s.body)
            return s if body is s.body else dataclasses.replace(s, body=body)
        return s

    def hoist(self, loop: ir.For | ir.While) -> ir.Stmt:
        head: tuple[ir.Stmt, ...] = ()
        if isinstance(loop, ir.For):
            head = (*loop.init, *(ir.ExprStmt(e.loc, e) for e in loop.step))
        parts: tuple[Any, ...] = (loop.body, loop.test, head)
        if any(isinstance(n, ir.Return) for n in ir.walk(loop.body)):
            return loop
        assigned, declared = ir.assigned_names((*loop.body, *head))
        changed = set(assigned | declared)
        before: list[ir.Stmt] = []
        after: list[ir.Stmt] = []
        for atomic in _atomic_statements(loop.body):
            call = atomic.expr
            assert isinstance(call, ir.Call)
            root = self.root(call.args[0])
            if root is None or root not in self.params or root in self.local_pointers:
                continue
            elem = ctyping.canonical(self.params[root].base)
            if self.params[root].ptr != 1 or not ctyping.is_int(elem) or ctyping.kind(elem) == "bool":
                continue
            if ir.names_in(call.args[0]) & changed or not _pure_address(call.args[0]):
                continue
            if _mentions(parts, root) != _mentions(call.args[0], root):
                continue  # the buffer is read, written or passed elsewhere in the loop
            if not self.others_apart(parts, root, elem, atomic):
                continue
            how = HOISTABLE[call.fn]
            identity = _identity(how, elem, call.loc)
            if identity is None or (how in MAX_MIN and ir.has_effects(call.args[1], calls=True)):
                continue  # max/min read the operand twice: only one without effects
            self.count += 1
            total = f"__xl_total_{self.count}"
            loc = call.loc
            acc = ir.Name(loc, total)
            if how in MAX_MIN:  # total = ((T)v > total) ? (T)v : total, the operand converted as the atomic does
                v = ir.Cast(loc, ir.CType(elem), call.args[1])
                update = ir.Assign(loc, acc, "=", ir.Cond(loc, ir.Binary(loc, how, v, acc), v, acc))
            else:
                update = ir.Assign(loc, acc, how, call.args[1])
            loop = _replace_stmt(loop, atomic, ir.ExprStmt(atomic.loc, update))
            before.append(ir.Decl(loop.loc, ir.CType(elem), total, identity))
            after.append(ir.If(loop.loc, ir.Binary(loc, "!=", acc, identity),
                               (ir.ExprStmt(atomic.loc, dataclasses.replace(call, args=(call.args[0], acc))),)))
            self.notes.append((NOTE.format(fn=call.fn), loc))
            parts = (loop.body, loop.test, head)
        return ir.BlockStmt(loop.loc, (*before, loop, *after)) if before else loop

    def others_apart(self, parts: tuple[Any, ...], root: str, elem: str, atomic: ir.ExprStmt) -> bool:
        """Whether no other memory access or call of the loop can reach buffer `root` (of element type `elem`)."""
        for node in ir.walk(list(parts)):
            if isinstance(node, ir.MethodCall):
                return False
            if isinstance(node, ir.Call) and node is not atomic.expr:
                if not self.known_call(node.fn):
                    return False
                # a pointer argument (another atomic's target, `__ldg(p + i)`): memory the call reaches
                for arg in node.args:
                    other = self.root(arg)
                    if other is not None and self.pointer(other) and not self.apart(other, root, elem):
                        return False
                continue
            if isinstance(node, ir.Index):
                other = self.root(node.base)
            elif isinstance(node, ir.Unary) and node.op == "*":
                other = self.root(node.arg)
            else:
                continue
            if other is None or not self.apart(other, root, elem):
                return False
        return True

    def apart(self, other: str, root: str, elem: str) -> bool:
        """Whether memory reached through `other` cannot be buffer `root`: an array of the kernel's own, a const
        buffer, one of another element type (a local pointer could point anywhere)."""
        if other in self.local_pointers:
            return False
        ct = self.params.get(other)
        return ct is None or not ct.ptr or other == root or ct.const or ctyping.canonical(ct.base) != elem

    def root(self, e: ir.Expr) -> str | None:
        """The array or pointer an address or access names (`&b[i]`, `b + i`, `i + b`, `b[i]`, `*b`: b); None
        where that is not one name (a struct member, a call)."""
        if isinstance(e, ir.Name):
            return e.id
        if isinstance(e, ir.Unary) and e.op in ("&", "*"):
            return self.root(e.arg)
        if isinstance(e, ir.Index):
            return self.root(e.base)
        if isinstance(e, ir.Cast):
            return self.root(e.arg)
        if isinstance(e, ir.Binary) and e.op in ("+", "-"):
            sides = (e.left, e.right) if e.op == "+" else (e.left,)
            found = [r for r in map(self.root, sides) if r is not None and self.pointer(r)]
            return found[0] if len(found) == 1 else None
        return None

    def pointer(self, name: str) -> bool:
        return (name in self.params and self.params[name].ptr > 0) or name in self.local_pointers


def _identity(how: str, elem: str, loc: ir.Loc) -> ir.Num | None:
    """The value that leaves the buffer unchanged: 0, or the lowest (max) / highest (min) value of `elem`."""
    if how not in MAX_MIN:
        return ir.Num(loc, 0, "int")
    if elem not in LITERAL_TYPES:
        return None
    bits = ctyping.bits(elem)
    lo, hi = (0, 2**bits - 1) if ctyping.is_unsigned(elem) else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    return ir.Num(loc, lo if how == ">" else hi, elem)


def _atomic_statements(stmts: tuple[ir.Stmt, ...]) -> list[ir.ExprStmt]:
    """The atomic statements of a loop body, under ifs and blocks (not inside inner loops)."""
    out: list[ir.ExprStmt] = []
    for s in stmts:
        if isinstance(s, ir.ExprStmt) and isinstance(s.expr, ir.Call) and s.expr.fn in HOISTABLE and len(s.expr.args) == 2:
            out.append(s)
        elif isinstance(s, ir.If):
            out += _atomic_statements(s.then) + _atomic_statements(s.other)
        elif isinstance(s, ir.BlockStmt):
            out += _atomic_statements(s.body)
    return out


def _pure_address(e: ir.Expr) -> bool:
    """`&b[expr]`, `b + expr` or `b` with an expression of names, numbers and arithmetic only (nothing read from
    memory, no call, no assignment)."""
    if isinstance(e, ir.Unary) and e.op == "&":
        e = e.arg
        if not isinstance(e, ir.Index) or not isinstance(e.base, ir.Name):
            return False
        return _pure(e.index)
    return _pure(e)


def _pure(e: ir.Expr) -> bool:
    return all(isinstance(n, PURE_EXPRS) or (isinstance(n, ir.Unary) and n.op in "-+~!") for n in ir.walk(e))


def _mentions(node: Any, name: str) -> int:
    return sum(1 for n in ir.walk(list(node) if isinstance(node, tuple) else node)
               if isinstance(n, ir.Name) and n.id == name)


def _replace_stmt(node: Any, old: ir.Stmt, new: ir.Stmt) -> Any:
    if node is old:
        return new
    if isinstance(node, tuple):
        items = tuple(_replace_stmt(x, old, new) for x in node)
        return items if any(a is not b for a, b in zip(items, node)) else node
    if isinstance(node, ir.Stmt) and dataclasses.is_dataclass(node):
        changes = {f.name: v2 for f in dataclasses.fields(node) if f.name != "loc"
                   if (v2 := _replace_stmt(v := getattr(node, f.name), old, new)) is not v}
        return dataclasses.replace(node, **changes) if changes else node
    return node
