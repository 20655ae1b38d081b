"""A `return` inside a run-time loop, rewritten as an exit flag and breaks (an IR-to-IR rewrite).

    for (...) { ...; if (c) return v; ... }          bool done = false; T ret = 0;
    rest;                                       ->   for (...) { ...; if (c) { ret = v; done = true; break; } ... }
                                                     if (done) return ret;
                                                     rest;

A masked Triton loop has no early exit of its own for one thread, but it has `break` (the thread leaves the loop's
active set). The return after the loop is outside it, where the lifter's function exit (a per-thread `done`
mask) handles it. Loops nested in the rewritten one break out level by level: after each inner loop that held a
return comes `if (done) break;`, so no statement of an enclosing loop runs for a thread that returned. The
rewrite is applied to the outermost run-time loop that holds a return (loops.py), so the loops inside it see
breaks only.
"""

from __future__ import annotations

import dataclasses
import itertools

from xlate.cir import ir
from xlate.translate.triton.values import LiftError

_ids = itertools.count()


def has_return(body: tuple[ir.Stmt, ...] | list[ir.Stmt]) -> bool:
    """Whether a return lies anywhere in `body`, nested loops' bodies included."""
    return any(isinstance(n, ir.Return) for n in ir.walk(tuple(body)))


def rewrite(body: tuple[ir.Stmt, ...], ret: ir.CType | None,
            loc: ir.Loc) -> tuple[list[ir.Stmt], tuple[ir.Stmt, ...], list[ir.Stmt]]:
    """(declarations before the loop, the loop's new body, statements after it) for a loop body with returns.

    `ret` is the enclosing function's return type (None or void: a kernel or a void function)."""
    n = next(_ids)
    done, val = f"_xl_ret_done{n}", f"_xl_ret_value{n}"
    void = ret is None or (ret.base == "void" and ret.ptr == 0)
    if not void and ret.ptr:
        raise LiftError("XL2007", f"return of a {ret} inside a run-time loop", loc)
    pre: list[ir.Stmt] = [ir.Decl(loc, ir.CType("bool"), done, ir.Num(loc, 0, "bool"))]
    if not void:
        pre.append(ir.Decl(loc, ret, val, ir.Num(loc, 0, "int")))  # type: ignore[arg-type]
    new_body = _stmts(body, done, None if void else val)
    flag = ir.Name(loc, done)
    post: list[ir.Stmt] = [ir.If(loc, flag, (ir.Return(loc, None if void else ir.Name(loc, val)),))]
    return pre, new_body, post


def _exit(s: ir.Return, done: str, val: str | None) -> ir.Stmt:
    loc = s.loc
    out: list[ir.Stmt] = []
    if val is not None and s.value is not None:
        out.append(ir.ExprStmt(loc, ir.Assign(loc, ir.Name(loc, val), "=", s.value)))
    out.append(ir.ExprStmt(loc, ir.Assign(loc, ir.Name(loc, done), "=", ir.Num(loc, 1, "bool"))))
    out.append(ir.Break(loc))
    return ir.BlockStmt(loc, tuple(out))


def _stmts(ss: tuple[ir.Stmt, ...], done: str, val: str | None) -> tuple[ir.Stmt, ...]:
    out: list[ir.Stmt] = []
    for s in ss:
        if not has_return((s,)):
            out.append(s)
            continue
        if isinstance(s, ir.Return):
            out.append(_exit(s, done, val))
        elif isinstance(s, ir.If):
            out.append(dataclasses.replace(s, then=_stmts(s.then, done, val), other=_stmts(s.other, done, val)))
        elif isinstance(s, ir.BlockStmt):
            out.append(dataclasses.replace(s, body=_stmts(s.body, done, val)))
        elif isinstance(s, ir.For | ir.While):
            # the inner loop's break leaves it; the enclosing loop then leaves too
            out.append(dataclasses.replace(s, body=_stmts(s.body, done, val)))
            out.append(ir.If(s.loc, ir.Name(s.loc, done), (ir.Break(s.loc),)))
        else:
            raise LiftError("XL2007", f"return inside a {type(s).__name__} in a run-time loop", s.loc)
    return tuple(out)
