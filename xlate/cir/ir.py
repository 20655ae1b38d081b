"""A small typed IR of CUDA device code (the subset the lifters understand), built from the front end's tree
(build.py).

Expressions and statements keep their source location so every diagnostic names file:line:col. Types are
canonical C spellings ("float", "unsigned int", "const float*" becomes ctype "float" with pointer depth 1).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Loc:
    line: int
    col: int


@dataclass(frozen=True)
class CType:
    """A C type: base spelling (canonical, or a template/typedef name), pointer depth, constness of the pointee,
    and whether `volatile` qualifies it anywhere (the pointee or the pointer: reads of it may not be merged)."""

    base: str
    ptr: int = 0
    const: bool = False
    volatile: bool = False

    def __str__(self) -> str:
        return self.base + "*" * self.ptr


# -- expressions ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Expr:
    loc: Loc


@dataclass(frozen=True)
class Num(Expr):
    value: int | float
    ctype: str  # "int", "unsigned int", "long long", "float", "double", "bool"


@dataclass(frozen=True)
class Name(Expr):
    id: str


@dataclass(frozen=True)
class Str(Expr):
    text: str  # a string literal as written (printf's format); no value the lifter computes with


@dataclass(frozen=True)
class Builtin(Expr):
    var: str  # threadIdx, blockIdx, blockDim, gridDim
    axis: str  # x, y, z


@dataclass(frozen=True)
class Unary(Expr):
    op: str  # - + ! ~ * &
    arg: Expr


@dataclass(frozen=True)
class Binary(Expr):
    op: str  # + - * / % << >> & | ^ && || < <= > >= == !=
    left: Expr
    right: Expr


@dataclass(frozen=True)
class Cond(Expr):
    test: Expr
    then: Expr
    other: Expr


@dataclass(frozen=True)
class Call(Expr):
    fn: str
    args: tuple[Expr, ...]
    targs: tuple[str, ...] = ()  # template arguments as written


# A braced list used as an expression (`d[i] = {x, y, z};`) is a Call of this name: its type is the one of what
# receives it, which only the consumer knows (a declaration's `= {...}` is Decl.init_list instead).
BRACED = "__xl_braced"


@dataclass(frozen=True)
class MethodCall(Expr):
    obj: Expr
    method: str
    args: tuple[Expr, ...]


@dataclass(frozen=True)
class Index(Expr):
    base: Expr
    index: Expr


@dataclass(frozen=True)
class Member(Expr):
    base: Expr
    field: str


@dataclass(frozen=True)
class Cast(Expr):
    to: CType
    arg: Expr
    kind: str = "c"  # c, static, reinterpret, functional


@dataclass(frozen=True)
class Sizeof(Expr):
    ctype: CType
    of_name: bool = False  # `sizeof(x)`: the grammar cannot tell a type name from a variable; the lifter can


@dataclass(frozen=True)
class Assign(Expr):
    target: Expr
    op: str  # = += -= *= /= %= <<= >>= &= |= ^=
    value: Expr


@dataclass(frozen=True)
class IncDec(Expr):
    target: Expr
    op: str  # ++ or --
    prefix: bool


# -- statements ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stmt:
    loc: Loc


@dataclass(frozen=True)
class Decl(Stmt):
    ctype: CType
    name: str
    init: Expr | None = None
    dims: tuple[Expr | None, ...] = ()  # array dimensions, outer first; None for `[]`
    shared: bool = False
    extern: bool = False
    init_list: tuple[Expr, ...] | None = None  # `= {a, b, c}`
    ref: bool = False  # `T& name = lvalue;`


@dataclass(frozen=True)
class ExprStmt(Stmt):
    expr: Expr


@dataclass(frozen=True)
class If(Stmt):
    test: Expr
    then: tuple[Stmt, ...]
    other: tuple[Stmt, ...] = ()


@dataclass(frozen=True)
class For(Stmt):
    init: tuple[Stmt, ...]
    test: Expr | None
    step: tuple[Expr, ...]
    body: tuple[Stmt, ...]


@dataclass(frozen=True)
class While(Stmt):
    test: Expr
    body: tuple[Stmt, ...]
    do: bool = False  # do { } while (test)


@dataclass(frozen=True)
class Return(Stmt):
    value: Expr | None = None


@dataclass(frozen=True)
class Break(Stmt):
    pass


@dataclass(frozen=True)
class Continue(Stmt):
    pass


@dataclass(frozen=True)
class Typedef(Stmt):
    name: str
    ctype: CType
    trait: tuple[str, str, str] | None = None  # (struct template, argument, member) for `typename S<T>::m`


@dataclass(frozen=True)
class BlockStmt(Stmt):
    body: tuple[Stmt, ...]


@dataclass(frozen=True)
class Unsupported(Stmt):
    what: str  # the construct, for the diagnostic
    code: str = "XL2001"


@dataclass
class FunctionIR:
    name: str
    kind: str  # kernel | device
    params: list[tuple[str, CType]]
    ret: CType
    body: tuple[Stmt, ...]
    template_types: list[str] = field(default_factory=list)
    loc: Loc = field(default_factory=lambda: Loc(1, 1))
    refs: frozenset[str] = frozenset()  # parameters passed by reference (`float& out`)
    # every template parameter in order, (name, kind: type | value), and a value parameter's C type
    template_params: tuple[tuple[str, str, str], ...] = ()
    defaults: tuple[Expr | None, ...] = ()  # each parameter's default argument (`int off = 0`), None where none
    path: str = ""  # the file it was read from, where that is not the kernel's (its locs are that file's)

    def takes(self, nargs: int) -> bool:
        """Whether a call with `nargs` arguments fits: the trailing parameters left out have defaults."""
        n = len(self.params)
        return nargs == n or (nargs < n and all(d is not None for d in self.defaults[nargs:n])
                              and len(self.defaults) == n)


def assigned_names(stmts: tuple[Stmt, ...] | list[Stmt]) -> tuple[set[str], set[str]]:
    """(names assigned, names declared) anywhere in `stmts` (syntactically; calls are not followed)."""
    assigned: set[str] = set()
    declared: set[str] = set()

    def target_name(e: Expr) -> str | None:
        while isinstance(e, Member):
            e = e.base
        return e.id if isinstance(e, Name) else None

    def expr(e: Expr | None) -> None:
        if e is None:
            return
        if isinstance(e, Assign):
            n = target_name(e.target)
            if n:
                assigned.add(n)
            expr(e.value)
            if not isinstance(e.target, Name):
                expr(e.target)
        elif isinstance(e, IncDec):
            n = target_name(e.target)
            if n:
                assigned.add(n)
        for v in vars(e).values():
            if isinstance(v, Expr) and not isinstance(e, Assign | IncDec):
                expr(v)
            elif isinstance(v, tuple):
                for x in v:
                    if isinstance(x, Expr):
                        expr(x)

    def stmt(s: Stmt) -> None:
        if isinstance(s, Decl):
            declared.add(s.name)
            expr(s.init)
        elif isinstance(s, ExprStmt):
            expr(s.expr)
        elif isinstance(s, If):
            expr(s.test)
            for x in (*s.then, *s.other):
                stmt(x)
        elif isinstance(s, For):
            for x in s.init:
                stmt(x)
            expr(s.test)
            for e in s.step:
                expr(e)
            for x in s.body:
                stmt(x)
        elif isinstance(s, While):
            expr(s.test)
            for x in s.body:
                stmt(x)
        elif isinstance(s, BlockStmt):
            for x in s.body:
                stmt(x)
        elif isinstance(s, Return):
            expr(s.value)

    for s in stmts:
        stmt(s)
    return assigned, declared


def contains(stmts: tuple[Stmt, ...], kinds: tuple[type, ...]) -> Stmt | None:
    """The first statement of one of `kinds` in `stmts`, searching nested bodies (not nested loops' own)."""
    for s in stmts:
        if isinstance(s, kinds):
            return s
        inner: tuple[Stmt, ...] = ()
        if isinstance(s, If):
            inner = (*s.then, *s.other)
        elif isinstance(s, BlockStmt):
            inner = s.body
        found = contains(inner, kinds)
        if found is not None:
            return found
    return None


def walk(node: Any) -> Iterator[Expr | Stmt]:
    """Every expression and statement in `node` (a node or a tuple/list of them), parents before children."""
    if isinstance(node, tuple | list):
        for x in node:
            yield from walk(x)
        return
    if dataclasses.is_dataclass(node) and isinstance(node, Expr | Stmt):
        yield node
        for f in dataclasses.fields(node):
            if f.name != "loc":
                yield from walk(getattr(node, f.name))


def names_in(node: Any) -> set[str]:
    return {n.id for n in walk(node) if isinstance(n, Name)}


def has_effects(e: Expr, calls: bool = False) -> bool:
    """Whether evaluating `e` assigns something (an assignment or ++/-- inside it); with `calls`, a call counts too."""
    kinds: tuple[type, ...] = (Assign, IncDec, Call, MethodCall) if calls else (Assign, IncDec)
    return any(isinstance(n, kinds) for n in walk(e))
