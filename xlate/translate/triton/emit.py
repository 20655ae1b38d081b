"""Triton source from symbolic values: one emitter per kernel, writing lines of the @triton.jit body.

Each sym is emitted at most once per scope (CSE); the emitted Triton value always has the dtype the C type
says (`edtype`), with one exception that keeps index arithmetic readable and fast: unsigned ints proven
non-negative (thread and block indices and what is built from them without subtraction) are computed in
int32, which gives the same bits and the same comparisons for values below 2**31.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from xlate.cir import ctype as ctyping
from xlate.identifiers import python_identifier
from xlate.translate.triton.fork import COPY, SCOPES, SHARED, TRUNCATE, VALUE
from xlate.translate.triton.sym import LANE_AXES, Sym, varies
from xlate.translate.triton.tables import math_entry

PYOP = {"add": "+", "sub": "-", "mul": "*", "mod": "%", "shl": "<<", "shr": ">>", "and": "&", "or": "|", "xor": "^",
        "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}


def sanitize(name: str) -> str:
    return python_identifier(name)


def edtype(s: Sym) -> str:
    """The C type whose Triton dtype the emitted code of `s` has."""
    if s.ctype == "unsigned int" and s.nonneg:
        return "int"
    if s.op == "const" and s.ctype == "unsigned int" and s.value < 2**31:
        return "int"
    return s.ctype


def const_full(value: Any, ctype: str, shape: str) -> str:
    """A constant as a tensor of `shape`: its code is a Python number, which tl.broadcast_to cannot take (it wants
    a tensor: `'float' object has no attribute 'type'`), so it is made with tl.full in the dtype it stands for."""
    dt = ctype if ctype == "unsigned int" else edtype(Sym("const", ctype, value=value))
    return f"tl.full({shape}, {literal(value, ctype)}, {tl_of(dt)})"


def tl_of(ctype: str) -> str:
    t = ctyping.tl(ctype)
    if t is None:
        return ctype  # a template parameter or trait typedef: a tl.constexpr dtype of the kernel
    return t


def literal(value, ctype: str) -> str:
    if ctyping.is_float(ctype):
        v = float(value)
        if math.isnan(v):
            return 'float("nan")'
        if math.isinf(v):
            return 'float("inf")' if v > 0 else 'float("-inf")'
        return repr(v)
    if ctype == "bool":
        return "True" if value else "False"
    return str(int(value))


class TooLarge(Exception):
    """A measured dry run went past its line budget (Emitter.budget)."""


@dataclass
class Ctx:
    """How lane axes are spelled: the default (`lane_x`, ...) or an idiom's tile axes."""

    name: str
    lanes: dict[str, str]
    shape: str  # the full shape, e.g. "[BX]" or "[BY, BX]"


@dataclass
class Emitter:
    """The lines of one kernel body. Fields declare how a dry run of the lifter undoes them (fork.py)."""

    lines: list[str] = field(default_factory=list, metadata=TRUNCATE)
    level: int = field(default=1, metadata=VALUE)
    enabled: bool = field(default=True, metadata=VALUE)
    scopes: list[dict[tuple[int, str], str]] = field(default_factory=lambda: [{}], metadata=SCOPES)
    used: set[str] = field(default_factory=set, metadata=COPY)
    # variable-name preferences by sym id: a dry run's choice stands (the real run binds the same syms)
    hints: dict[int, str] = field(default_factory=dict, metadata=SHARED)
    helpers: set[str] = field(default_factory=set, metadata=COPY)  # math wrappers the module must define
    counter: int = field(default=0, metadata=VALUE)
    # a dry run measuring an unrolled loop: the lines it may still emit before it is too large (TooLarge)
    budget: int | None = field(default=None, metadata=VALUE)
    # while set, every sym given a variable (`temp`) is appended: a version of a loop emitted and then put back
    # (unswitch.py) takes back the variables it gave syms built before it
    temp_log: list[Sym] | None = field(default=None, metadata=SHARED)

    # -- plumbing ----------------------------------------------------------------------------------------------

    def line(self, text: str) -> None:
        if self.enabled:
            self.lines.append("    " * self.level + text)
        elif self.budget is not None:
            self.budget -= 1
            if self.budget < 0:
                raise TooLarge()

    def fresh(self, hint: str = "t") -> str:
        base = sanitize(hint)
        name = base
        while name in self.used:
            self.counter += 1
            name = f"{base}_{self.counter}"
        self.used.add(name)
        return name

    def set_temp(self, s: Sym, name: str) -> None:
        """`s` (a load) is held by variable `name` from here on."""
        s.temp = name
        if self.temp_log is not None:
            self.temp_log.append(s)

    def push(self) -> None:
        self.scopes.append({})

    def pop(self) -> None:
        self.scopes.pop()

    def _cached(self, s: Sym, ctx: Ctx) -> str | None:
        key = (s.id, ctx.name)
        for scope in reversed(self.scopes):
            if key in scope:
                return scope[key]
        return None

    def _remember(self, s: Sym, ctx: Ctx, code: str) -> None:
        self.scopes[-1][(s.id, ctx.name)] = code

    def assign(self, hint: str, code: str) -> str:
        name = self.fresh(hint)
        self.line(f"{name} = {code}")
        return name

    # -- expressions -------------------------------------------------------------------------------------------

    def code(self, s: Sym, ctx: Ctx, want: str | None = None) -> str:
        """Code for `s`; with `want`, converted to the Triton dtype of C type `want`."""
        self._name_deep(s, ctx)
        c = self._code(s, ctx)
        if want is not None:
            c = self.convert(c, s, want)
        return c

    def _name_deep(self, s: Sym, ctx: Ctx) -> None:
        """Before emitting a long chain of arithmetic (an unrolled accumulation, `acc += a[k] * b[k]` hundreds of
        times), give every CHAIN_STEP-th link a variable of its own, innermost first: the recursive emission and
        the generated Python expression then nest at most that deep."""
        if s.op not in CHAIN_OPS or self._cached(s, ctx) is not None:
            return
        height: dict[int, int] = {}
        order: list[Sym] = []
        stack: list[tuple[Sym, bool]] = [(s, False)]
        while stack:  # post-order, iteratively: the chain may be deeper than Python's stack
            x, done = stack.pop()
            if done:
                height[x.id] = 1 + max((height.get(a.id, 0) for a in x.args), default=0)
                order.append(x)
                continue
            if x.id in height or x.op not in CHAIN_OPS or self._cached(x, ctx) is not None:
                continue
            height[x.id] = 0
            stack.append((x, True))
            stack.extend((a, False) for a in x.args)
        if height[s.id] <= CHAIN_STEP:
            return
        for x in order:
            if height[x.id] % CHAIN_STEP == 0 and x is not s:
                c = self._code(x, ctx)
                if not c.isidentifier():
                    self._remember(x, ctx, self.assign("t", c))

    def convert(self, code: str, s: Sym, want: str) -> str:
        have = edtype(s)
        if s.op == "const":
            if ctyping.is_symbolic(want):
                return f"tl.full([], {code}, {tl_of(want)})" if s.ctype != want else code
            if ctyping.is_int(want) and ctyping.is_float(s.ctype):
                return literal(int(s.value), want)
            if ctyping.is_float(want) and not ctyping.is_float(s.ctype):
                return literal(float(s.value), want)
            return code
        if have == want:
            return code
        if want == "bool":
            return f"({code} != 0)"
        if s.op == "uni" or not (s.lanes or s.opaque):
            # a scalar argument is a Python number in the interpreter, and Triton's JIT makes an integer argument
            # equal to 1 a constant: `(5 + lg)` is then a Python int, which has no .to()
            return f"tl.cast({code}, {tl_of(want)})"
        return f"{_paren(code)}.to({tl_of(want)})"

    def _code(self, s: Sym, ctx: Ctx) -> str:
        if s.op == "const":
            return literal(s.value, s.ctype)
        if s.op in ("lane", "red"):
            return ctx.lanes[s.axis]
        if s.op in ("uni", "var"):
            return s.name
        cached = self._cached(s, ctx)
        if cached is not None:
            return cached
        if s.op == "load":
            if s.temp is not None and ctx.name == "default":
                return s.temp
            name = self.emit_load(s, ctx)
            return name
        expr, simple = self._expr(s, ctx)
        hint = self.hints.get(s.id)
        if hint is not None and (expr.isidentifier() or _is_number(expr)):
            hint = None  # an alias: no variable of its own
        if hint is not None or not simple or len(expr) > MAX_INLINE:
            name = self.assign(hint or "t", expr)
            self._remember(s, ctx, name)
            return name
        self._remember(s, ctx, expr)
        return expr

    def emit_load(self, s: Sym, ctx: Ctx, mask: Sym | None = None, hint: str = "v") -> str:
        base, offset = s.args
        m = mask if mask is not None else s.mask
        addr = self._address(base, offset, m, ctx)
        if m is not None and not (m.is_const and m.value):
            if m.is_const and not m.value:
                code = literal(0, s.ctype) if not ctyping.is_symbolic(s.ctype) else "0"
                name = self.assign(self.hints.get(s.id, hint), code)
            else:
                name = self.assign(self.hints.get(s.id, hint), f"tl.load({addr}, mask={self.code(m, ctx, 'bool')}, other=0)")
        else:
            name = self.assign(self.hints.get(s.id, hint), f"tl.load({addr})")
        if ctx.name == "default" and self.enabled:  # a dry run's name is never assigned: the sym outlives the
            self.set_temp(s, name)  # dry run (a forwarded shared-memory value), so the real run must issue it itself
        self._remember(s, ctx, name)
        return name

    def _address(self, base: Sym, offset: Sym, mask: Sym | None, ctx: Ctx, value: Sym | None = None) -> str:
        """The pointer(s) of an access; `value`: what a store or atomic writes there."""
        b = self.code(base, ctx)
        if offset.is_const and offset.value == 0:
            addr = b
        else:
            addr = f"{b} + {_paren(self.code(offset, ctx))}"
        lanes = offset.lanes | base.lanes
        if mask is not None and not mask.is_const and (mask.lanes - lanes or (not lanes and varies(mask, LANE_AXES))):
            # a uniform address under a per-thread mask (one that differs between threads only through the masks
            # of its loads too, see sym.varies): Triton wants a block of pointers
            addr = f"{addr} + {self.zeros(ctx)}"
        elif value is not None and not lanes and (value.lanes or varies(value, LANE_AXES)):
            # every thread's own value at one address (`atomicAdd(sum, mine)` after a loop, no condition): a
            # block of values goes with a block of pointers
            addr = f"{addr} + {self.zeros(ctx)}"
        return addr

    def zeros(self, ctx: Ctx) -> str:
        return f"tl.zeros({ctx.shape}, tl.int32)"

    def broadcast(self, code: str, s: Sym, ctx: Ctx) -> str:
        dims = ctx.shape[1:-1]
        return f"tl.broadcast_to({code}, ({dims}{',' if ',' not in dims else ''}))"

    def _expr(self, s: Sym, ctx: Ctx) -> tuple[str, bool]:
        o = s.op
        a = s.args
        if o == "cast":
            return self.convert(self.code(a[0], ctx), a[0], edtype(s)), True
        if o in ("lnot",):
            # `~` on a scalar int1 has the wrong dtype in the interpreter; `== 0` is a logical not everywhere
            return f"{_paren(self.code(a[0], ctx, 'bool'))} == 0", True
        if o in ("land", "lor"):
            sep = " & " if o == "land" else " | "
            uni = [_paren(self.code(x, ctx, "bool")) for x in a if x.uniform and not x.opaque]
            vary = [_paren(self.code(x, ctx, "bool")) for x in a if not (x.uniform and not x.opaque)]
            if uni and vary:
                # a scalar int1 combined with a block by & or | loses its dtype in the interpreter
                u, v = sep.join(uni), sep.join(vary)
                return (f"tl.where({u}, {v}, False)" if o == "land" else f"tl.where({u}, True, {v})"), False
            return sep.join(uni + vary), len(a) <= 2
        if o == "neg":
            return f"-{_paren(self.code(a[0], ctx, self._optype(s)))}", True
        if o == "pos":
            return self.code(a[0], ctx, self._optype(s)), True
        if o == "bnot":
            return f"~{_paren(self.code(a[0], ctx, self._optype(s)))}", True
        if o in ("lt", "le", "gt", "ge", "eq", "ne"):
            common = ctyping.arith(a[0].ctype, a[1].ctype)
            if common == "unsigned int" and a[0].nonneg and a[1].nonneg:
                common = "int"
            return f"{_paren(self.operand(a[0], common, ctx))} {PYOP[o]} {_paren(self.operand(a[1], common, ctx))}", True
        if o == "div":
            t = self._optype(s)
            x, y = self.operand(a[0], t, ctx), self.operand(a[1], t, ctx)
            if ctyping.is_int(t):
                return f"{_paren(x)} // {_paren(y)}", True
            if t == "float":
                return f"tl.div_rn({x}, {y})", True
            return f"{_paren(x)} / {_paren(y)}", True
        if o in PYOP:
            t = self._optype(s)
            x = self.operand(a[0], t, ctx)
            y = self.operand(a[1], t, ctx)
            return f"{_paren(x)} {PYOP[o]} {_paren(y)}", True
        if o in ("min", "max"):
            t = self._optype(s)
            fn = "tl.minimum" if o == "min" else "tl.maximum"
            return f"{fn}({self.operand(a[0], t, ctx)}, {self.operand(a[1], t, ctx)})", False
        if o == "where":
            t = self._optype(s)
            c = self.code(a[0], ctx, "bool")
            x, y = self.operand(a[1], t, ctx), self.operand(a[2], t, ctx)
            if a[1].is_const and a[2].is_const and not ctyping.is_symbolic(t) and t not in ("int", "float", "bool"):
                return f"tl.where({c}, {x}, {y}).to({tl_of(t)})", False
            return f"tl.where({c}, {x}, {y})", False
        if o == "call":
            return self._call(s, ctx), False
        if o == "reduce":
            base = self.full(a[0], ctx)
            fn = {"sum": "tl.sum", "max": "tl.max", "min": "tl.min"}[s.value]
            if "," in ctx.shape:
                base = f"tl.reshape({base}, ({ctx.shape[1:-1].replace(', ', ' * ')},))"
            return f"{fn}({base}, axis=0)", False
        if o == "segreduce":
            op, w = s.value
            base = self.full(a[0], ctx)
            fn = {"sum": "tl.sum", "max": "tl.max", "min": "tl.min"}[op]
            dims = ctx.shape[1:-1]
            if dims not in ("BX", "BY, BX"):
                raise ValueError(f"cannot emit a segmented reduction over lanes {ctx.shape}")
            outer = "BY, " if dims == "BY, BX" else ""
            seg = f"({outer}BX // {w}, {w})"
            axis = 2 if outer else 1
            red = self.assign("seg", f"{fn}(tl.reshape({base}, {seg}), axis={axis}, keep_dims=True)")
            return f"tl.reshape(tl.broadcast_to({red}, {seg}), ({dims},))", False
        if o == "scan":
            base = self.full(a[0], ctx)
            name = self.assign("scan", f"tl.cumsum({base}, axis=0)")
            if s.value == "exclusive":
                return f"{name} - {base}", False
            return name, True
        if o == "dot":
            return self.code(a[0], ctx), True
        if o == "gather":
            if ctx.name != "default":
                raise ValueError(f"cannot emit a lane gather in the {ctx.name} lanes")
            whole = frozenset({"x", "y"} if "," in ctx.shape else {"x"})
            if isinstance(s.value, tuple) and ctx.shape == "[BX]":  # member j of aligned groups (comm.lane_gather)
                return self._group_member(s, ctx, *s.value), False
            src, idx = (self.code(x, ctx, x.ctype) if x.lanes >= whole else self.full(x, ctx) for x in a)
            return f"tl.gather({src}, {idx}, {s.name})", False
        raise ValueError(f"cannot emit sym op {o}")

    def _group_member(self, s: Sym, ctx: Ctx, w: int, j: int) -> str:
        """Member j of each aligned group of w lanes of block s.args[0], for every lane of the group: the module's
        `_xl_group_member` helper (math.yaml), which a batched kernel's [R, BX] rows also take."""
        src = self.code(s.args[0], ctx, s.args[0].ctype) if s.args[0].lanes >= {"x"} else self.full(s.args[0], ctx)
        self.helpers.add("_xl_group_member")
        return f"_xl_group_member({src}, {w}, {j})"

    def full(self, s: Sym, ctx: Ctx) -> str:
        """`s` as a tensor of the full lane shape (a uniform or partially varying value is broadcast)."""
        if s.is_const and not ctyping.is_symbolic(s.ctype):
            return const_full(s.value, s.ctype, ctx.shape)
        code = self.code(s, ctx, s.ctype if not ctyping.is_symbolic(s.ctype) else None)
        return self.broadcast(code, s, ctx)

    def _optype(self, s: Sym) -> str:
        t = s.ctype
        if t == "unsigned int" and s.nonneg:
            return "int"
        return t

    def operand(self, x: Sym, t: str, ctx: Ctx) -> str:
        if ctyping.is_symbolic(t) or (ctyping.is_symbolic(x.ctype) and x.op != "const"):
            return self.code(x, ctx)
        if x.op == "const":
            return literal(x.value, t) if not ctyping.is_symbolic(t) else literal(x.value, x.ctype)
        return self.code(x, ctx, t)

    def _call(self, s: Sym, ctx: Ctx) -> str:
        entry = math_entry(s.name) or {}
        argtypes = entry.get("args", [])
        codes = []
        for i, x in enumerate(s.args):
            t = argtypes[i] if i < len(argtypes) else "arg"
            t = s.args[0].ctype if t == "arg" else t
            if t == "arg" or ctyping.is_symbolic(t):
                codes.append(self.code(x, ctx))
            else:
                code = self.operand(x, t, ctx) if x.op != "const" else self.convert(literal(x.value, x.ctype), x, t)
                # a Python number argument is float32/int32 to Triton and has no .to(): a 0-d tensor of the
                # argument's type where that differs (pow(double, 1.4)) or where every argument is one (cosf(0.5))
                if x.op == "const" and tl_of(t) and (t not in ("float", "int") or all(a.op == "const" for a in s.args)):
                    code = f"tl.full([], {code}, {tl_of(t)})"
                codes.append(code)
        if "tl" in entry:
            return entry["tl"].format(*(_paren(c) for c in codes))
        self.helpers.add(s.name)
        return f"_xl_{s.name}({', '.join(codes)})"


CHAIN_OPS = frozenset({*PYOP, "div", "neg", "pos", "cast", "min", "max", "where"})
CHAIN_STEP = 32  # links of an arithmetic chain between variables (Python's stack, and its parser's nesting)
# characters of an expression spelled inline before it gets a variable: an inline spelling repeats a shared
# sub-expression at every use, exponential in the depth of a value built by unrolled exchanges (each use then
# scanned its whole text)
MAX_INLINE = 10_000
ASSIGN = re.compile(r"^\s*([A-Za-z_]\w*) = (.*)$")
WORD = re.compile(r"[A-Za-z_]\w*")


def eliminate_dead(lines: list[str]) -> list[str]:
    """Drop assignments of names nothing else reads (pure code only: loads and arithmetic, never atomics);
    a loop left empty gets `pass`."""
    while True:
        reads: dict[str, int] = {}
        for ln in lines:
            m = ASSIGN.match(ln)
            target = m.group(1) if m else None
            for w in WORD.findall(m.group(2) if m else ln):
                if w != target:
                    reads[w] = reads.get(w, 0) + 1
        assigned = [m for ln in lines if (m := ASSIGN.match(ln))]
        # a name an atomic assigns anywhere stays with all its assignments: dropping the atomic's line with the
        # name's other, pure ones (`old = tl.full(...)` before a guarded atomicCAS) lost the atomic
        atomic = {m.group(1) for m in assigned if m.group(2).startswith("tl.atomic")}
        dead = {m.group(1) for m in assigned if m.group(1) not in atomic and not reads.get(m.group(1))}
        if not dead:
            break
        lines = [ln for ln in lines if not ((m := ASSIGN.match(ln)) and m.group(1) in dead)]
    out: list[str] = []
    for k, ln in enumerate(lines):
        out.append(ln)
        if ln.rstrip().endswith(":"):
            indent = len(ln) - len(ln.lstrip())
            nxt = lines[k + 1] if k + 1 < len(lines) else ""
            if not nxt or len(nxt) - len(nxt.lstrip()) <= indent:
                out.append(" " * (indent + 4) + "pass")
    return [ln for k, ln in enumerate(out) if not (ln.strip() == "pass" and k > 0 and not out[k - 1].rstrip().endswith(":"))]


def _paren(code: str) -> str:
    if code.isidentifier() or _is_number(code) or (code.startswith("(") and _balanced_outer(code)):
        return code
    if code.endswith(")") and "(" in code and code.split("(")[0].replace(".", "").replace("_", "").isalnum() \
            and _balanced_outer(code[code.index("("):]):
        return code
    return f"({code})"


def _is_number(code: str) -> bool:
    try:
        float(code)
        return not code.startswith("-")
    except ValueError:
        return False


def _balanced_outer(code: str) -> bool:
    """True when the first '(' of `code` closes at its last character."""
    depth = 0
    for i, ch in enumerate(code):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0 and i != len(code) - 1:
                return False
    return depth == 0


def math_wrappers(names: set[str]) -> tuple[list[str], list[tuple[str, str, str]]]:
    """(helper sources, [(name, interpreter body, gpu body)]) for the libdevice calls in `names`.

    libdevice has no interpreter implementation, so each wrapper has two bodies and the module picks one."""
    from xlate.translate.triton.tables import helper_source

    wrappers: list[tuple[str, str, str]] = []
    helpers: list[str] = []
    for n in sorted(names):
        if n.startswith("_xl_"):  # a helper the kernel calls itself (the lane-group pick)
            if n not in helpers:
                helpers.append(n)
            continue
        e = math_entry(n)
        if e is None or "gpu" not in e:
            continue
        args = [f"x{i}" for i in range(len(e.get("args", [])))]
        res = e.get("result")
        cast = f".to({tl_of(res)})" if res not in (None, "arg") else ""
        sig = f"_xl_{n}({', '.join(args)})"
        gpu = e["gpu"].format(*args)
        interp = e["interp"].format(*(f"({a})" for a in args))
        wrappers.append((sig, f"({interp}){cast}", gpu))
        helpers.extend(h for h in e.get("helpers", []) if h not in helpers)
    return [helper_source(h) for h in helpers], wrappers
