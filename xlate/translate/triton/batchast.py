"""What the batching passes (batching.py, rows.py) share about the lifted Python AST: the refusal they raise and two
lookups. A module of its own so that neither imports the other."""

from __future__ import annotations

import ast


class NotBatchable(Exception):
    pass


def tl_call(node: ast.AST, *names: str) -> str | None:
    """The name of a `tl.NAME(...)` call (one of `names` if given)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
            and node.func.value.id == "tl" and (not names or node.func.attr in names):
        return node.func.attr
    return None


def single_assign(body: list[ast.stmt], match) -> ast.Assign:
    found = [s for s in body if isinstance(s, ast.Assign) and len(s.targets) == 1
             and isinstance(s.targets[0], ast.Name) and match(s.value)]
    if len(found) != 1:
        raise NotBatchable("no single definition of the block index and the lanes")
    return found[0]
