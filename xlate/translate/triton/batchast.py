"""What the passes over the lifted Python AST (batching.py, rows.py, launch_configs.py, unroll.py) share: the
refusal they raise, three lookups, and the lifter's skip tests they drop. A module of its own so that none
imports another."""

from __future__ import annotations

import ast
import copy


class NotBatchable(Exception):
    pass


def tl_call(node: ast.AST, *names: str) -> str | None:
    """The name of a `tl.NAME(...)` call (one of `names` if given)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
            and node.func.value.id == "tl" and (not names or node.func.attr in names):
        return node.func.attr
    return None


def is_jit(fn: ast.FunctionDef) -> bool:
    """Whether `fn` is a `@triton.jit` function."""
    return any(ast.unparse(d).split("(")[0] in ("triton.jit", "jit") for d in fn.decorator_list)


def single_assign(body: list[ast.stmt], match) -> ast.Assign:
    found = [s for s in body if isinstance(s, ast.Assign) and len(s.targets) == 1
             and isinstance(s.targets[0], ast.Name) and match(s.value)]
    if len(found) != 1:
        raise NotBatchable("no single definition of the block index and the lanes")
    return found[0]


# the lifter's test before a loop that no thread of the program may run (loops.skip_unless_some_thread_runs):
# `__xl_runs = tl.max(...) != 0` then `if __xl_runs:` around the loop; a name no CUDA identifier becomes
SKIP_GUARD = "__xl_runs"
# a loop's unswitched versions (unswitch.py): `__xl_uniform = tl.max(...) == 0`, then `if __xl_uniform:` the version
# for programs whose threads all pass the loop's invariant test, `else:` the general one
UNSWITCH = "__xl_uniform"


def _is_skip_guard(s: ast.stmt) -> bool:
    if isinstance(s, ast.If):
        return isinstance(s.test, ast.Name) and s.test.id.startswith(SKIP_GUARD) and not s.orelse
    return isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) \
        and s.targets[0].id.startswith(SKIP_GUARD)


def _is_unswitch(s: ast.stmt) -> bool:
    if isinstance(s, ast.If):
        return isinstance(s.test, ast.Name) and s.test.id.startswith(UNSWITCH)
    return isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) \
        and s.targets[0].id.startswith(UNSWITCH)


def strip_skip_guards(fn: ast.FunctionDef) -> ast.FunctionDef:
    """A copy of `fn` whose loops run without the lifter's skip tests (exact: a skipped loop is one whose effects
    are all masked off) and in their general version only (unswitch.py), for the rewrites that move blocks and
    lanes between programs (batching, rows)."""
    fn = copy.deepcopy(fn)

    def strip(body: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for s in body:
            if _is_skip_guard(s):
                if isinstance(s, ast.If):
                    out.extend(strip(s.body))
                continue
            if _is_unswitch(s):  # a batched program's blocks may differ: the general version alone
                if isinstance(s, ast.If):
                    out.extend(strip(s.orelse))
                continue
            for field in ("body", "orelse"):
                if isinstance(getattr(s, field, None), list):
                    setattr(s, field, strip(getattr(s, field)))
            out.append(s)
        return out

    fn.body = strip(fn.body)
    return fn
