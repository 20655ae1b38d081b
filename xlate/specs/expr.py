"""The small, safe expression language of spec annotations (dims, ranges, grid, block, shmem, where).

C-like integer arithmetic (`/` floors, `<<`, `>>`, `%`, `&&`, `||`, `!`), `cdiv`, `min`, `max`, `sizeof(type)`,
names of parameters. Parsed with Python's `ast` and evaluated over a whitelist: nothing is ever exec'd.
"""

from __future__ import annotations

import ast
import functools
import keyword
import math
import re
from typing import Any

from xlate.errors import SpecError

_ALLOWED_BINOPS = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b if isinstance(a, int) and isinstance(b, int) else a / b,
    ast.Div: lambda a, b: a / b,
    ast.Mod: lambda a, b: a % b,
    ast.LShift: lambda a, b: a << b,
    ast.RShift: lambda a, b: a >> b,
    ast.BitAnd: lambda a, b: a & b,
    ast.BitOr: lambda a, b: a | b,
    ast.BitXor: lambda a, b: a ^ b,
    ast.Pow: lambda a, b: a**b,
}
_ALLOWED_CMP = {
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
}


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


FUNCTIONS = {
    "cdiv": _cdiv,
    "min": min,
    "max": max,
    "abs": abs,
    "sqrt": math.sqrt,
    "log2": lambda x: int(math.log2(x)) if x > 0 else 0,
    "dim3": lambda *a: (*a, 1, 1, 1)[:3],
    "next_pow2": lambda x: 1 << max(0, int(x - 1).bit_length()),
}

SIZEOF = re.compile(r"sizeof\s*\(\s*([A-Za-z_][\w\s]*?)\s*\)")


def _to_python(text: str) -> str:
    t = text.strip()
    t = SIZEOF.sub(lambda m: f'__sizeof__("{" ".join(m.group(1).split())}")', t)
    t = t.replace("&&", " and ").replace("||", " or ")
    t = re.sub(r"!(?!=)", " not ", t)
    t = re.sub(r"(?<![/])/(?![/])", "//", t)  # C integer division
    t = re.sub(r"(\d)[uUlL]+\b", r"\1", t)  # 256u, 1024L
    t = re.sub(r"(\d+\.\d*|\d*\.\d+)[fF]\b", r"\1", t)  # 2.0f
    t = re.sub(r"\btrue\b", "True", t)
    t = re.sub(r"\bfalse\b", "False", t)
    # C names that are Python keywords (a parameter called `in`, `is`, `lambda`...) get a private spelling
    return re.sub(r"\b(" + "|".join(_PY_KEYWORDS) + r")\b", r"_kw_\1", t)


_PY_KEYWORDS = sorted(set(keyword.kwlist) - {"and", "or", "not", "if", "else", "True", "False"})


@functools.cache
def parse(text: str) -> ast.expr:
    try:
        tree = ast.parse(_to_python(text), mode="eval")
    except SyntaxError as exc:
        raise SpecError(f"xlate: error: cannot read spec expression '{text}': {exc.msg}") from None
    for node in ast.walk(tree):
        if not isinstance(
            node,
            (ast.Expression, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.Call, ast.Name, ast.Constant,
             ast.Tuple, ast.Load, ast.operator, ast.unaryop, ast.boolop, ast.cmpop, ast.IfExp, ast.Attribute),
        ):
            raise SpecError(f"xlate: error: spec expression '{text}' uses unsupported syntax ({type(node).__name__})")
    return tree.body


def names(text: str) -> set[str]:
    out = set()
    for node in ast.walk(parse(text)):
        if isinstance(node, ast.Name) and node.id not in FUNCTIONS and node.id != "__sizeof__":
            out.add(node.id.removeprefix("_kw_"))
    return out


def evaluate(text: str | int | float, env: dict[str, Any], sizeof: dict[str, int] | None = None) -> Any:
    if isinstance(text, (int, float)):
        return text
    return _eval(parse(str(text)), env, sizeof or {}, str(text))


def _eval(node: ast.AST, env: dict[str, Any], sizeof: dict[str, int], text: str) -> Any:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, (int, float, bool, str)):
            return node.value
    elif isinstance(node, ast.Name):
        name = node.id.removeprefix("_kw_")
        if name in env:
            return env[name]
        raise SpecError(f"xlate: error: spec expression '{text}' names '{node.id}', which is not a parameter or size")
    elif isinstance(node, ast.Attribute):  # block.x, grid.y
        base = _eval(node.value, env, sizeof, text)
        if isinstance(base, tuple) and node.attr in ("x", "y", "z"):
            return base["xyz".index(node.attr)]
    elif isinstance(node, ast.BinOp) and type(node.op) in _ALLOWED_BINOPS:
        a = _eval(node.left, env, sizeof, text)
        b = _eval(node.right, env, sizeof, text)
        try:
            return _ALLOWED_BINOPS[type(node.op)](a, b)
        except ZeroDivisionError:
            raise SpecError(f"xlate: error: spec expression '{text}' divides by zero for {env}") from None
    elif isinstance(node, ast.UnaryOp):
        v = _eval(node.operand, env, sizeof, text)
        if isinstance(node.op, ast.USub):
            return -v
        if isinstance(node.op, ast.UAdd):
            return v
        if isinstance(node.op, ast.Not):
            return not v
        if isinstance(node.op, ast.Invert):
            return ~v
    elif isinstance(node, ast.BoolOp):
        vals = [_eval(v, env, sizeof, text) for v in node.values]
        return all(vals) if isinstance(node.op, ast.And) else any(vals)
    elif isinstance(node, ast.Compare):
        left = _eval(node.left, env, sizeof, text)
        for op, right_node in zip(node.ops, node.comparators):
            right = _eval(right_node, env, sizeof, text)
            if type(op) not in _ALLOWED_CMP or not _ALLOWED_CMP[type(op)](left, right):
                return False
            left = right
        return True
    elif isinstance(node, ast.IfExp):
        return _eval(node.body if _eval(node.test, env, sizeof, text) else node.orelse, env, sizeof, text)
    elif isinstance(node, ast.Tuple):
        return tuple(_eval(e, env, sizeof, text) for e in node.elts)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        if node.func.id == "__sizeof__":
            ctype = _eval(node.args[0], env, sizeof, text)
            if ctype in sizeof:
                return sizeof[ctype]
            from xlate.parse.consteval import ctype_sizes

            if ctype in ctype_sizes():
                return ctype_sizes()[ctype]
            raise SpecError(f"xlate: error: spec expression '{text}': unknown type in sizeof({ctype})")
        fn = FUNCTIONS.get(node.func.id)
        if fn is not None:
            return fn(*[_eval(a, env, sizeof, text) for a in node.args])
    raise SpecError(f"xlate: error: cannot evaluate spec expression '{text}'")
