"""Preprocessor conditionals and pragmas inside one function's text, decided before the lifters read it.

`#if`/`#ifdef`/`#ifndef`/`#elif`/`#else`/`#endif` lines are evaluated as the device compiler would: with the
file's macros, C's rule that an unknown name is 0, and the device pass's own macros (`__CUDA_ARCH__` of the
GPU the gate runs the source on). The branches not taken and every directive line become blanks (newlines
kept, so locations stay those of the file). A conditional whose expression cannot be evaluated is left as it
was, for the builder to report. `#pragma` lines (unroll hints) are blanked: they change no result.
"""

from __future__ import annotations

import ast
import operator
import re

# the device compilation pass: what nvcc/NVRTC define (the gate's GPU is sm_90)
DEVICE_MACROS = {"__CUDA_ARCH__": "900", "__CUDACC__": "1", "__CUDACC_RTC__": "1"}
DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif|pragma|define|undef)\b(.*)$")
DEFINE = re.compile(r"^[ \t]*#[ \t]*(define|undef)[ \t]+([A-Za-z_]\w*)(\([^)]*\))?(.*)$")


def local_macros(text: str) -> tuple[str, list[tuple[str, list[str] | None, str]]]:
    """`#define`/`#undef` lines of a function body, read in order: the text with them blanked, and the
    definitions (name, parameters, body) that hold for the body. None if a name is used before its
    definition in the body or defined twice there (the file's table cannot stand for it): then nothing is
    blanked and the builder reports the line."""
    lines = text.split("\n")
    defs: list[tuple[str, list[str] | None, str]] = []
    out = list(lines)
    end = -1
    for k, line in enumerate(lines):
        if k <= end or DEFINE.match(line) is None:
            continue  # code, or a continuation line of the directive before
        end = k
        while lines[end].rstrip().endswith("\\") and end + 1 < len(lines):  # `#define F(x) \` over lines
            end += 1
        m = DEFINE.match(" ".join(ln.rstrip().removesuffix("\\") for ln in lines[k : end + 1]))
        if m is None or lines[end].rstrip().endswith("\\"):
            return text, []
        name = m.group(2)
        before = "\n".join(lines[:k])
        if m.group(1) == "define":
            if re.search(rf"\b{name}\b", before) or any(d[0] == name for d in defs):
                return text, []
            params = [p.strip() for p in m.group(3)[1:-1].split(",") if p.strip()] if m.group(3) else None
            defs.append((name, params, m.group(4).strip()))
        elif re.search(rf"\b{name}\b", "\n".join(lines[end + 1 :])):
            return text, []  # used again after its #undef: another definition follows
        for j in range(k, end + 1):
            out[j] = _blank(lines[j])
    return "\n".join(out), defs
SUFFIX = re.compile(r"\b(0[xX][0-9a-fA-F]+|\d+)[uUlL]+\b")
IDENT = re.compile(r"[A-Za-z_]\w*")
DEFINED = re.compile(r"\bdefined\s*(?:\(\s*([A-Za-z_]\w*)\s*\)|([A-Za-z_]\w*))")
BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
          ast.Mod: operator.mod, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
          ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor}
CMPOPS = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Eq: operator.eq,
          ast.NotEq: operator.ne}


class Undecidable(Exception):
    pass


def _blank(line: str) -> str:
    return " " * len(line)


def evaluate(expr: str, macros: dict[str, str | None], depth: int = 0) -> int:
    """A `#if` expression's value. `macros`: name -> object-like value (None: a function-like macro)."""
    if depth > 20:
        raise Undecidable(expr)
    expr = re.sub(r"/\*.*?\*/|//.*$", " ", expr)
    expr = DEFINED.sub(lambda m: "1" if (m.group(1) or m.group(2)) in macros else "0", expr)

    def name(m: re.Match[str]) -> str:
        n = m.group(0)
        if n not in macros:
            return "0"  # C: a name that is not a macro is 0 in #if
        v = macros[n]
        if v is None:
            raise Undecidable(n)
        return f"({evaluate(v, {k: x for k, x in macros.items() if k != n}, depth + 1)})"

    expr = IDENT.sub(name, SUFFIX.sub(r"\1", expr))
    py = expr.replace("&&", " and ").replace("||", " or ").replace("/", "//")
    py = re.sub(r"!(?!=)", " not ", py)
    try:
        tree = ast.parse(py.strip(), mode="eval")
    except SyntaxError:
        raise Undecidable(expr) from None
    return int(_eval(tree.body))


def _eval(n: ast.AST) -> int:
    if isinstance(n, ast.Constant) and isinstance(n.value, int):
        return n.value
    if isinstance(n, ast.BoolOp):
        vals = [_eval(v) for v in n.values]
        return int(all(vals)) if isinstance(n.op, ast.And) else int(any(vals))
    if isinstance(n, ast.UnaryOp):
        v = _eval(n.operand)
        if isinstance(n.op, ast.Not):
            return int(not v)
        if isinstance(n.op, ast.USub):
            return -v
        if isinstance(n.op, ast.Invert):
            return ~v
        return v
    if isinstance(n, ast.BinOp) and type(n.op) in BINOPS:
        a, b = _eval(n.left), _eval(n.right)
        if isinstance(n.op, ast.FloorDiv | ast.Mod) and b == 0:
            raise Undecidable("division by zero")
        if isinstance(n.op, ast.FloorDiv):  # C truncates toward zero
            return int(a / b) if (a < 0) != (b < 0) else a // b
        return BINOPS[type(n.op)](a, b)
    if isinstance(n, ast.Compare) and len(n.ops) == 1 and type(n.ops[0]) in CMPOPS:
        return int(CMPOPS[type(n.ops[0])](_eval(n.left), _eval(n.comparators[0])))
    if isinstance(n, ast.IfExp):
        return _eval(n.body) if _eval(n.test) else _eval(n.orelse)
    raise Undecidable(ast.dump(n))


class _GiveUp(Exception):
    """An `#elif` that cannot be decided after its `#if` was: the conditionals are all left as written."""


def select(text: str, macros: dict[str, str | None]) -> str:
    """`text` with its decidable conditionals resolved and its pragmas blanked (same length, same lines)."""
    if "#" not in text:
        return text
    try:
        return _select(text, macros)
    except _GiveUp:
        return "\n".join(_blank(ln) if DIRECTIVE.match(ln) and DIRECTIVE.match(ln).group(1) == "pragma" else ln
                         for ln in text.split("\n"))


def _select(text: str, macros: dict[str, str | None]) -> str:
    table = {**DEVICE_MACROS, **macros}
    lines = text.split("\n")
    # a stack of frames: [taking (this branch is kept), taken (some branch was kept), decided, parent_taking]
    stack: list[list[bool]] = []
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        group = [line]
        while group[-1].endswith("\\") and i + 1 < len(lines):  # a directive continued over lines
            i += 1
            group.append(lines[i])
        i += 1
        m = DIRECTIVE.match(" ".join(g.rstrip("\\") for g in group))
        live = all(f[0] for f in stack if f[2])
        if m is None:
            out.extend(group if live else [_blank(g) for g in group])
            continue
        kind, rest = m.group(1), m.group(2).strip()
        if kind == "pragma":
            out.extend(_blank(g) for g in group)
            continue
        if kind in ("define", "undef"):  # kept where live (build.py reads them in order), blank where not
            out.extend(group if live else [_blank(g) for g in group])
            continue
        undecided_open = any(not f[2] for f in stack)
        if kind in ("if", "ifdef", "ifndef"):
            if not live and not undecided_open:  # inside a branch not taken: blanked whatever it says
                stack.append([False, True, True])
                out.extend(_blank(g) for g in group)
                continue
            try:
                if undecided_open:
                    raise Undecidable("inside an undecided conditional")
                if kind == "if":
                    v = bool(evaluate(rest, table))
                else:
                    word = IDENT.match(rest)
                    if word is None:
                        raise Undecidable(rest)
                    v = (word.group(0) in table) == (kind == "ifdef")
                stack.append([v, v, True])
                out.extend(_blank(g) for g in group)
            except Undecidable:
                stack.append([True, True, False])
                out.extend(group)
            continue
        if not stack:
            out.extend(group)  # unbalanced: leave it for the builder
            continue
        frame = stack[-1]
        if not frame[2]:
            if kind == "endif":
                stack.pop()
            out.extend(group)
            continue
        if kind == "elif":
            try:
                v = not frame[1] and bool(evaluate(rest, table))
            except Undecidable:
                raise _GiveUp from None
            frame[0] = v
            frame[1] = frame[1] or v
        elif kind == "else":
            frame[0] = not frame[1]
            frame[1] = True
        elif kind == "endif":
            stack.pop()
        out.extend(_blank(g) for g in group)
    return "\n".join(out)
