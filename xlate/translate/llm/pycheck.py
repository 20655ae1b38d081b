"""The allow-list a model-written Triton module must pass before anything compiles, imports or runs it.

A port is: imports of triton, triton.language, torch and math; constants; @triton.jit kernels; and plain
functions (the launcher and helpers) that compute a grid, allocate scratch buffers and launch the kernels.
Everything is checked on Python's `ast` (nothing is executed): each statement and expression kind, each name
(parameters, locals, module constants and functions, imported aliases, a few builtins), each dotted path into
a module (an exact list in xlate/data/llm/allowlist.yaml), and each attribute of a value (tensor metadata and
Triton tensor methods). No getattr/setattr, no dunder, no module-level call besides decorators and tl.constexpr constants.
What is not listed is a violation: a deny-list would have to know every door (os via torch, pickle loads,
native-code loaders), an allow-list does not.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass, field
from typing import Any

from xlate.resources import data

CODING = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.M)
# control and invisible format characters (bidi overrides hide code from a reader: "Trojan Source"); other
# non-ASCII is harmless, since the ast checked is what Python runs (identifiers are NFKC-normalised for both)
BAD_CHAR = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")

STATEMENTS_FN = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.If, ast.For, ast.While, ast.Return,
                 ast.Pass, ast.Break, ast.Continue, ast.Assert)
EXPRESSIONS = (ast.Constant, ast.Name, ast.Attribute, ast.Call, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare,
               ast.IfExp, ast.Subscript, ast.Slice, ast.Tuple, ast.List, ast.keyword, ast.operator, ast.unaryop,
               ast.boolop, ast.cmpop, ast.expr_context)
LAUNCHER_EXTRA = (ast.Lambda, ast.Dict, ast.JoinedStr, ast.FormattedValue, ast.arguments, ast.arg)


@functools.cache
def rules() -> dict[str, Any]:
    return data("llm/allowlist.yaml")["python"]


@functools.cache
def allowed_names() -> frozenset[str]:
    return frozenset(f"{mod}.{n}" for mod, names in rules()["names"].items() for n in names)


def dotted_ok(path: str) -> bool:
    """`path` (canonical, e.g. triton.language.load) is an allowed name."""
    if path in allowed_names() or path in rules()["modules"]:
        return True
    mod, _, last = path.rpartition(".")
    return (mod in rules()["open_modules"] and last.isidentifier() and not last.startswith("_")
            and last not in rules()["open_exclude"])


def source_problems(code: str) -> list[str]:
    """Text-level doors: an encoding cookie (the file would be decoded differently from what was checked) and
    invisible characters."""
    out = []
    for m in CODING.finditer("\n".join(code.splitlines()[:2])):
        if m.group(1).lower().replace("_", "-") not in ("utf-8", "utf8"):
            out.append(f"line 1: an encoding declaration ('{m.group(1)}') is not allowed; files are UTF-8")
    bad = BAD_CHAR.search(code)
    if bad:
        line = code.count("\n", 0, bad.start()) + 1
        out.append(f"line {line}: control or format character U+{ord(bad.group()):04X} is not allowed")
    return out


@dataclass
class Scope:
    kind: str  # module, jit, launcher, annotation
    names: set[str] = field(default_factory=set)


class Checker:
    def __init__(self) -> None:
        self.problems: list[str] = []
        self.aliases: dict[str, str] = {}  # local name -> canonical module path or name
        self.constants: set[str] = set()
        self.functions: set[str] = set()
        self.jit: set[str] = set()

    def bad(self, node: ast.AST, what: str) -> None:
        msg = f"line {getattr(node, 'lineno', 0)}: {what}"
        if msg not in self.problems:
            self.problems.append(msg)

    # -- module level ----------------------------------------------------------------------------------------
    def module(self, tree: ast.Module) -> None:
        for node in tree.body:  # names first: a launcher may precede the kernel it launches
            if isinstance(node, ast.FunctionDef):
                self.functions.add(node.name)
                if node.decorator_list:
                    self.jit.add(node.name)
        for i, node in enumerate(tree.body):
            if isinstance(node, ast.Import | ast.ImportFrom):
                self.imports(node)
            elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                if i != 0:
                    self.bad(node, "a module-level expression is not allowed (only a docstring first)")
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                self.constant(node)
            elif isinstance(node, ast.FunctionDef):
                self.function(node)
            else:
                self.bad(node, f"'{type(node).__name__}' at module level is not allowed in a port (imports, "
                               "constants, @triton.jit kernels and the launcher only)")

    def imports(self, node: ast.Import | ast.ImportFrom) -> None:
        mods = rules()["modules"]
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name not in mods:
                    self.bad(node, f"import of '{a.name}' is not allowed (only {', '.join(mods)})")
                elif a.asname:
                    self.aliases[a.asname] = a.name
                else:
                    root = a.name.split(".")[0]
                    self.aliases[root] = root
            return
        mod = node.module or ""
        if node.level:
            self.bad(node, "relative imports are not allowed")
            return
        if mod == "__future__":
            for a in node.names:
                if a.name not in rules()["future"]:
                    self.bad(node, f"from __future__ import {a.name} is not allowed")
            return
        for a in node.names:
            full = f"{mod}.{a.name}"
            if a.name == "*":
                self.bad(node, "star imports are not allowed")
            elif not (mod in mods or mod.startswith("triton.language")) or not (dotted_ok(full) or _is_open(full)):
                self.bad(node, f"'from {mod} import {a.name}' is not allowed")
            else:
                self.aliases[a.asname or a.name] = full

    def constant(self, node: ast.Assign | ast.AnnAssign) -> None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for t in targets:
            for n in _target_names(t, self, node):
                r = rules()
                if n in self.aliases or n in self.functions or n in r["builtins_launcher"] or n in r["builtins_jit"]:
                    self.bad(node, f"'{n}' is rebound at module level")
                self.constants.add(n)
        if isinstance(node, ast.AnnAssign) and node.annotation is not None:
            self.expr(node.annotation, Scope("annotation"))
        if node.value is not None:
            self.expr(node.value, Scope("module"))

    def function(self, fn: ast.FunctionDef) -> None:
        if fn.name.startswith("__"):
            self.bad(fn, f"function name '{fn.name}' is not allowed")
        jit = bool(fn.decorator_list)
        for d in fn.decorator_list:
            target = d.func if isinstance(d, ast.Call) else d
            path = self.resolve(target)
            if path not in rules()["decorators"]:
                self.bad(d, f"decorator '{ast.unparse(target)}' is not allowed (only "
                            f"{', '.join('@' + p for p in rules()['decorators'])})")
            elif isinstance(d, ast.Call):
                self.expr(d, Scope("module"))
        scope = Scope("jit" if jit else "launcher", self.params(fn))
        scope.names |= _assigned(fn)
        r = rules()
        reserved = set(self.aliases) | self.functions | set(r["builtins_jit"] if jit else r["builtins_launcher"])
        for n in sorted(scope.names & reserved):
            self.bad(fn, f"'{n}' is rebound inside '{fn.name}' (it names a module, function or builtin)")
        for stmt in fn.body:
            self.statement(stmt, scope, first=stmt is fn.body[0])

    def params(self, fn: ast.FunctionDef | ast.Lambda) -> set[str]:
        a = fn.args
        if a.vararg or a.kwarg:
            self.bad(fn, "*args / **kwargs parameters are not allowed")
        names = {p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs]}
        for p in [*a.posonlyargs, *a.args, *a.kwonlyargs]:
            if p.arg.startswith("__"):
                self.bad(p, f"parameter name '{p.arg}' is not allowed")
            if p.annotation is not None:
                self.expr(p.annotation, Scope("annotation"))
        if isinstance(fn, ast.FunctionDef) and fn.returns is not None:
            self.expr(fn.returns, Scope("annotation"))
        for d in [*a.defaults, *(d for d in a.kw_defaults if d is not None)]:
            self.expr(d, Scope("module"))
        return names

    # -- function bodies -------------------------------------------------------------------------------------
    def statement(self, s: ast.stmt, scope: Scope, first: bool = False) -> None:
        if not isinstance(s, STATEMENTS_FN) and not (scope.kind == "launcher" and isinstance(s, ast.Raise)):
            where = "a @triton.jit kernel" if scope.kind == "jit" else "the launcher"
            self.bad(s, f"'{type(s).__name__}' is not allowed in {where}")
            return
        docstring = first and isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str)
        if isinstance(s, ast.Expr) and not isinstance(s.value, ast.Call) and not docstring:
            self.bad(s, "an expression statement that is not a call is not allowed")
            return
        if isinstance(s, ast.Raise) and s.cause is not None:
            self.bad(s, "'raise ... from' is not allowed")
        for child in ast.iter_child_nodes(s):
            if isinstance(child, ast.stmt):
                self.statement(child, scope)
            elif isinstance(child, ast.expr):
                self.expr(child, scope)
            elif isinstance(child, ast.excepthandler | ast.arguments):
                self.bad(child, f"'{type(child).__name__}' is not allowed")

    def expr(self, e: ast.AST, scope: Scope) -> None:
        allowed = EXPRESSIONS + (LAUNCHER_EXTRA if scope.kind in ("launcher", "module") else ())
        if not isinstance(e, allowed):
            self.bad(e, f"'{type(e).__name__}' expressions are not allowed here")
            return
        if isinstance(e, ast.Name):
            self.name(e, scope)
            return
        if isinstance(e, ast.Attribute):
            self.attribute(e, scope)
            return
        if isinstance(e, ast.Call):
            self.call(e, scope)
            return
        if isinstance(e, ast.keyword) and e.arg is None:
            self.bad(e, "'**' in a call is not allowed")
        if isinstance(e, ast.Lambda):
            inner = Scope(scope.kind if scope.kind != "module" else "launcher", scope.names | self.params(e))
            self.expr(e.body, inner)
            return
        if isinstance(e, ast.Constant) and isinstance(e.value, bytes):
            self.bad(e, "bytes literals are not allowed")
        if isinstance(e, ast.Subscript) and not isinstance(e.ctx, ast.Load) and scope.kind != "jit":
            self.bad(e, f"assigning to '{ast.unparse(e)}' is not allowed: the kernels write the outputs")
            return
        for child in ast.iter_child_nodes(e):
            self.expr(child, scope)

    def name(self, e: ast.Name, scope: Scope) -> None:
        n = e.id
        r = rules()
        if n.startswith("__"):
            self.bad(e, f"'{n}' is not allowed (no dunder names)")
            return
        builtins = {"jit": r["builtins_jit"], "launcher": r["builtins_launcher"], "module": [],
                    "annotation": r["builtins_annotation"]}[scope.kind]
        if isinstance(e.ctx, ast.Store):
            return
        if n in scope.names or n in self.constants or n in builtins:
            return
        if n in self.functions:
            if scope.kind == "jit" and n not in self.jit:
                self.bad(e, f"a kernel may only call other @triton.jit functions, not '{n}'")
            return
        if n in self.aliases:
            if not (dotted_ok(self.aliases[n]) or self.aliases[n] in r["modules"]):
                self.bad(e, f"'{n}' is not allowed")
            return
        self.bad(e, f"name '{n}' is not allowed here (parameters, locals, module constants and functions, "
                    f"imported modules{', ' + ', '.join(builtins) if builtins else ''})")

    def resolve(self, e: ast.AST) -> str | None:
        """The canonical dotted path of a Name/Attribute chain rooted at an imported alias, else None."""
        parts: list[str] = []
        while isinstance(e, ast.Attribute):
            parts.append(e.attr)
            e = e.value
        if isinstance(e, ast.Name) and e.id in self.aliases:
            return ".".join([self.aliases[e.id], *reversed(parts)])
        return None

    def attribute(self, e: ast.Attribute, scope: Scope) -> None:
        if not isinstance(e.ctx, ast.Load):
            self.bad(e, f"assigning to an attribute ('{ast.unparse(e)}') is not allowed")
            return
        if e.attr.startswith("_"):
            self.bad(e, f"attribute '.{e.attr}' is not allowed (no private or dunder attributes)")
            return
        path = self.resolve(e)
        if path is not None:
            if not dotted_ok(path):
                self.bad(e, f"'{ast.unparse(e)}' ({path}) is not allowed: not in the allowed set of triton/torch/math names")
            return
        allowed = rules()["attrs_jit" if scope.kind == "jit" else "attrs_launcher"]
        if scope.kind in ("module", "annotation") or e.attr not in allowed:
            self.bad(e, f"attribute '.{e.attr}' is not allowed here")
        self.expr(e.value, scope)  # and whatever it is taken from

    def call(self, e: ast.Call, scope: Scope) -> None:
        func = e.func
        if scope.kind == "module":
            target = func.func if isinstance(func, ast.Call) else func
            path = self.resolve(target)
            if path not in rules()["module_calls"]:
                self.bad(e, f"module-level call '{ast.unparse(func)}(...)' is not allowed")
                return
        elif isinstance(func, ast.Subscript):  # kernel[grid](...)
            if not (isinstance(func.value, ast.Name) and func.value.id in self.jit) or scope.kind == "jit":
                self.bad(e, f"only launches of this module's @triton.jit kernels may be called as '{ast.unparse(func)}(...)'")
                return
            self.expr(func.slice, scope)
        elif not isinstance(func, ast.Name | ast.Attribute):
            self.bad(e, "calling the result of an expression is not allowed")
            return
        else:
            self.expr(func, scope)
        for a in e.args:
            if isinstance(a, ast.Starred):
                self.bad(a, "'*' in a call is not allowed")
            else:
                self.expr(a, scope)
        for k in e.keywords:
            self.expr(k, scope)


def _is_open(path: str) -> bool:
    return path in rules()["open_modules"]


def _target_names(t: ast.AST, checker: Checker, node: ast.AST) -> list[str]:
    if isinstance(t, ast.Name):
        if t.id.startswith("__"):
            checker.bad(node, f"assigning '{t.id}' is not allowed")
        return [t.id]
    if isinstance(t, ast.Tuple | ast.List):
        return [n for x in t.elts for n in _target_names(x, checker, node)]
    checker.bad(node, f"assignment to '{ast.unparse(t)}' at module level is not allowed")
    return []


def _assigned(fn: ast.FunctionDef) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and not node.id.startswith("__"):
            names.add(node.id)
    return names


def check_module(code: str) -> tuple[ast.Module | None, list[str]]:
    """(tree, violations); tree is None when the code does not parse (the caller reports the syntax error)."""
    problems = source_problems(code)
    try:
        tree = ast.parse(code, "<candidate>.py")
    except (SyntaxError, ValueError):
        return None, problems
    checker = Checker()
    checker.module(tree)
    return tree, problems + checker.problems
