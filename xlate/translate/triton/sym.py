"""Symbolic values of the lifted program: immutable expression DAGs over the thread index.

A value is *uniform* (the same for every thread of a block: a Triton scalar) when it depends on no lane axis,
*varying* (a Triton block tensor) otherwise. Values built from thread indices and constants alone are
*concrete*: the lifter evaluates them for every thread of the block (the block size is known), which is how it
proves reduction trees, shuffles and shared-memory index maps. Values that are not opaque can be re-evaluated
for another thread (`substitute`), which is how shared-memory reads are forwarded from their writes.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import numpy as np

from xlate.cir import ctype as ctyping

_ids = itertools.count()

BIN = {"add": "+", "sub": "-", "mul": "*", "div": "/", "mod": "%", "shl": "<<", "shr": ">>", "and": "&", "or": "|",
       "xor": "^", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!=", "land": "&&", "lor": "||"}
C2OP = {v: k for k, v in BIN.items()}
CMP = {"lt", "le", "gt", "ge", "eq", "ne"}
LOGIC = {"land", "lor", "lnot"}
NONNEG_OPS = {"add", "mul", "div", "mod", "shr", "and", "or", "min", "max"}


class NotConcrete(Exception):
    pass


class Sym:
    """One node. `op` is const, lane, red, uni, var, load, reduce, scan, segreduce (a reduction over each aligned
    segment of threads, every thread getting its segment's), gather (element args[1] of the block args[0] along
    the lane axis `name`: "-1" the x lanes, "-2" the y lanes), or an operator name."""

    __slots__ = ("_canon", "_key", "_poly", "args", "axis", "below", "concrete", "ctype", "epoch", "id", "lanes", "mask",
                 "name", "nonneg", "op", "opaque", "root", "size", "temp", "value")

    def __init__(self, op: str, ctype: str, args: tuple[Sym, ...] = (), *, value: Any = None, name: str | None = None,
                 axis: str | None = None, varying: bool = False, nonneg: bool | None = None, size: int = 0):
        self.id = next(_ids)
        self.op = op
        self.ctype = ctype
        self.args = args
        self.value = value
        self.name = name
        self.axis = axis
        self.size = size  # extent of a `red` axis
        self.mask: Sym | None = None  # loads: the predicate they were issued under
        self.root: str | None = None  # loads: the buffer (pointer parameter) they read
        self.epoch = 0  # loads: the buffer's store count when issued
        self.temp: str | None = None  # loads: the variable holding the issued load
        self.below: Sym | None = None  # a counted loop's counter: its loop's bound (the counter is less inside it)
        self._key: tuple | None = None
        self._canon: int | None = None  # canon(), computed once (a sym never changes)
        self._poly: dict[tuple[int, ...], int] | None = None
        if op in ("lane", "red"):
            self.lanes = frozenset({axis})
        elif op == "var":
            self.lanes = frozenset({"*"}) if varying else frozenset()
        else:
            self.lanes = frozenset().union(*(a.lanes for a in args)) if args else frozenset()
        self.opaque = (op == "var" and varying) or any(a.opaque for a in args)
        self.concrete = op in ("const", "lane", "red") or (op not in ("uni", "var", "load", "reduce", "scan", "segreduce", "call_opaque")
                                                         and bool(args) and all(a.concrete for a in args))
        if nonneg is None:
            if op == "const":
                nonneg = isinstance(value, int | float | bool | np.integer | np.floating) and value >= 0
            elif op in ("lane", "red"):
                nonneg = True
            elif op in NONNEG_OPS:
                nonneg = all(a.nonneg for a in args)
            elif op == "cast":
                nonneg = args[0].nonneg and ctyping.is_int(ctype) and ctyping.bits(ctype) >= 32
            elif op == "where":
                nonneg = args[1].nonneg and args[2].nonneg
            else:
                nonneg = False
        self.nonneg = bool(nonneg)

    # -- classification --------------------------------------------------------------------------------------

    @property
    def uniform(self) -> bool:
        return not self.lanes

    @property
    def is_const(self) -> bool:
        return self.op == "const"

    def key(self) -> tuple:
        """Structural identity (for comparing predicates); loads compare by identity."""
        if self._key is None:
            if self.op == "const":
                self._key = ("const", self.ctype, repr(self.value))
            elif self.op in ("lane", "red"):
                self._key = (self.op, self.axis)
            elif self.op in ("uni", "var"):
                self._key = (self.op, self.name)
            elif self.op in ("load", "reduce", "scan", "segreduce"):
                self._key = (self.op, self.id)
            else:
                # interned: a nested tuple of a shared sub-DAG would hash as the whole tree, exponential in depth
                self._key = ("k", _intern((self.op, self.ctype, self.name, tuple(a.key() for a in self.args))))
        return self._key

    def __repr__(self) -> str:
        """The expression as C-like text, cut at REPR_LIMIT characters: a value built by unrolled loops spells its
        shared sub-expressions once per use, exponential in its depth (a refusal message quoting a condition
        spent minutes spelling one)."""
        out: list[str] = []
        self._spell(out, [REPR_LIMIT])
        return "".join(out)

    def _spell(self, out: list[str], left: list[int]) -> None:
        if self.op == "const":
            parts: list[Any] = [repr(self.value)]
        elif self.op in ("lane", "red"):
            parts = [f"{self.op}.{self.axis}"]
        elif self.op in ("uni", "var"):
            parts = [str(self.name)]
        elif self.op in BIN:
            parts = ["(", self.args[0], f" {BIN[self.op]} ", self.args[1], ")"]
        else:
            parts = [f"{self.op}{self.name or ''}("]
            for i, a in enumerate(self.args):
                parts += [", ", a] if i else [a]
            parts.append(")")
        for part in parts:
            if left[0] <= 0:  # 0: the budget is spent (mark the cut once, then -1)
                if left[0] == 0:
                    out.append("…")
                    left[0] = -1
                return
            if isinstance(part, Sym):
                part._spell(out, left)
            else:
                out.append(part)
                left[0] = max(0, left[0] - len(part))


REPR_LIMIT = 400  # characters of a sym's spelling (repr) before it is cut with "…"


# -- constructors --------------------------------------------------------------------------------------------


def const(value: Any, ctype: str) -> Sym:
    if ctyping.is_int(ctype) and not isinstance(value, bool):
        value = _wrap_int(int(value), ctype)
    elif ctype == "bool":
        value = bool(value)
    elif ctyping.is_float(ctype):
        value = float(np.float32(value)) if ctype == "float" else float(value)
    return Sym("const", ctype, value=value)


def lane(axis: str) -> Sym:
    return Sym("lane", "unsigned int", axis=axis)


def red(axis: str, size: int) -> Sym:
    return Sym("red", "int", axis=axis, size=size)


def uni(name: str, ctype: str, nonneg: bool = False) -> Sym:
    return Sym("uni", ctype, name=name, nonneg=nonneg)


def var(name: str, ctype: str, varying: bool, nonneg: bool = False) -> Sym:
    return Sym("var", ctype, name=name, varying=varying, nonneg=nonneg)


def load(base: Sym, offset: Sym, mask: Sym | None, ctype: str, root: str, epoch: int) -> Sym:
    s = Sym("load", ctype, (base, offset))
    s.mask = mask
    s.root = root
    s.epoch = epoch
    s.lanes = base.lanes | offset.lanes | (mask.lanes if mask is not None else frozenset())
    s.opaque = base.opaque or offset.opaque or (mask.opaque if mask is not None else False)
    return s


def _wrap_int(v: int, ctype: str) -> int:
    b = ctyping.bits(ctype)
    if ctype == "bool":
        return int(bool(v))
    v &= (1 << b) - 1
    if not ctyping.is_unsigned(ctype) and v >= 1 << (b - 1):
        v -= 1 << b
    return v


def op(name: str, ctype: str, *args: Sym, fn: str | None = None) -> Sym:
    """An operator node, constant-folded when every argument is a constant."""
    if args and all(a.is_const for a in args) and name not in ("call",):
        try:
            v = evaluate(Sym(name, ctype, args, name=fn), {})
            return const(v.item() if hasattr(v, "item") else v, ctype)
        except (NotConcrete, ZeroDivisionError, OverflowError, ValueError, TypeError):
            pass
    s = _simplify(name, ctype, args)
    if s is not None:
        return s
    return Sym(name, ctype, args, name=fn)


def _fold_offset(name: str, ctype: str, args: tuple[Sym, ...]) -> Sym | None:
    """(x + c1) + c2 -> x + (c1 + c2) for int, so shifted thread indices stay short."""
    if ctype != "int" or name not in ("add", "sub") or not args[1].is_const or args[0].is_const:
        return None
    c = int(args[1].value) * (1 if name == "add" else -1)
    x = args[0]
    if x.op in ("add", "sub") and x.ctype == "int" and x.args[1].is_const:
        c += int(x.args[1].value) * (1 if x.op == "add" else -1)
        x = x.args[0]
    else:
        return None
    if c == 0 and x.ctype == "int":
        return x
    return Sym("add", "int", (x, const(c, "int"))) if c > 0 else Sym("sub", "int", (x, const(-c, "int")))


def _simplify(name: str, ctype: str, args: tuple[Sym, ...]) -> Sym | None:
    folded = _fold_offset(name, ctype, args) if len(args) == 2 else None
    if folded is not None:
        return folded
    if not ctyping.is_int(ctype):
        if name == "where" and args[0].is_const:
            return args[1] if args[0].value else args[2]
        return None
    a = args[0] if args else None
    b = args[1] if len(args) > 1 else None
    if name == "add" and b is not None:
        if b.is_const and b.value == 0 and a.ctype == ctype:
            return a
        if a.is_const and a.value == 0 and b.ctype == ctype:
            return b
    if name == "sub" and b is not None and b.is_const and b.value == 0 and a.ctype == ctype:
        return a
    if name == "mul" and b is not None:
        if b.is_const and b.value == 1 and a.ctype == ctype:
            return a
        if a.is_const and a.value == 1 and b.ctype == ctype:
            return b
    if name == "land" and b is not None:
        if a.is_const:
            return b if a.value else const(0, "bool")
        if b.is_const:
            return a if b.value else const(0, "bool")
    if name == "lor" and b is not None:
        if a.is_const:
            return const(1, "bool") if a.value else b
        if b.is_const:
            return const(1, "bool") if b.value else a
    if name == "where" and args[0].is_const:
        return args[1] if args[0].value else args[2]
    if name == "cast" and a is not None and a.ctype == ctype:
        return a
    if b is not None and len(args) == 2:
        return _fold_known(name, ctype, a, b)
    return None


def _fold_known(name: str, ctype: str, a: Sym, b: Sym) -> Sym | None:
    """Integer identities a uniform index or address test meets once unrolled: an exact signed division
    ((x * 8) / 8, (x * 8 + 3) / 8 for x >= 0), an (in)equality of values a constant apart, a mask below the
    value's known trailing zero bits (an alignment test of a multiple), a sign test of a non-negative value.
    Signed overflow is undefined in C, so x * 8 / 8 is x wherever the source is defined; unsigned values wrap,
    and are left alone."""
    if name == "div" and b.is_const and ctyping.is_int(ctype) and ctype != "bool" and a.ctype == ctype:
        if int(b.value) == 1:
            return a
        return None if ctyping.is_unsigned(ctype) else _exact_div(a, int(b.value), ctype)
    if name in ("eq", "ne") and a.ctype == b.ctype and ctyping.is_int(a.ctype) and a.ctype != "bool":
        diff = _poly_diff(a, b)
        if diff is not None and set(diff) <= {()}:
            return const(int((not diff) == (name == "eq")), ctype)
    if name == "and" and ctyping.is_int(ctype) and ctype != "bool":
        for x, m in ((a, b), (b, a)):
            if m.is_const and 0 <= int(m.value) < 1 << min(_trailing_zeros(x, 8), 62) and x.ctype == ctype:
                return const(0, ctype)
    if name in ("ge", "lt") and b.is_const and ctyping.is_int(b.ctype) and int(b.value) == 0 \
            and ctyping.is_int(a.ctype) and a.ctype != "bool" and _sure_nonneg(a, 8):
        return const(int(name == "ge"), ctype)
    if name in ("lt", "le", "gt", "ge"):
        return _loop_bounded_compare(name, ctype, a, b)
    return None


def _loop_bounded_compare(name: str, ctype: str, a: Sym, b: Sym) -> Sym | None:
    """A comparison settled by a counted loop's bound: inside `for (v = s; v < B; v += c)` (c > 0) the counter is
    at most B - 1, so `v < B` holds and `8 * v + j - 8 * B >= 0` (for j < 8) does not -- what a vector loop's
    range test and its tail loop's test meet once an access is rewritten per element. `a - b` as a polynomial
    linear in one counter with a positive coefficient; the counter replaced by B - 1 must leave a constant.
    Signed integers only (signed overflow being undefined in C, as elsewhere here)."""
    if not (ctyping.is_int(a.ctype) and a.ctype == b.ctype and a.ctype != "bool" and not ctyping.is_unsigned(a.ctype)):
        return None
    counters = _counters(a, 6) | _counters(b, 6)
    if not counters:
        return None
    diff = _poly_diff(a, b)  # a - b
    if diff is None:
        return None
    strict = name in ("lt", "ge")  # settled by a < b (else by a <= b)
    # a < b  iff  a - b < 0;  a <= b  iff  a - b - 1 < 0
    if _below_zero(diff, counters, a.ctype, 0 if strict else -1):
        return const(int(name in ("lt", "le")), ctype)
    neg = {m: -c for m, c in diff.items()}  # b - a
    # a >= b  iff  b - a - 1 < 0;  a > b  iff  b - a < 0
    if _below_zero(neg, counters, a.ctype, -1 if strict else 0):
        return const(int(name in ("gt", "ge")), ctype)
    return None


def _counters(s: Sym, depth: int) -> dict[int, Sym]:
    """The counted-loop counters (vars with a `below` bound) `s` reaches through ring arithmetic, by poly atom."""
    if s.op == "var" and s.below is not None:
        return {_intern(("var", s.name)): s}
    if depth <= 0 or s.op not in _RING:
        return {}
    out: dict[int, Sym] = {}
    for x in s.args:
        out.update(_counters(x, depth - 1))
    return out


def _below_zero(p: dict[tuple[int, ...], int], counters: dict[int, Sym], ctype: str, extra: int) -> bool:
    """p + extra < 0 for every value a counter of `p` takes in its loop (p linear in it, positive coefficient)."""
    mod = 1 << ctyping.bits(ctype)
    for atom, v in counters.items():
        k = p.get((atom,))
        if k is None or any(atom in m and m != (atom,) for m in p):
            continue
        k = k - mod if k >= mod // 2 else k
        below = v.below
        assert below is not None
        pb = poly(below) if below.ctype == ctype else None
        if k <= 0 or pb is None:
            continue
        q = {m: c for m, c in p.items() if m != (atom,)}  # k * v replaced by k * (B - 1)
        for m, c in pb.items():
            q[m] = q.get(m, 0) + k * c
        q[()] = q.get((), 0) - k + extra
        q = {m: c % mod for m, c in q.items() if c % mod}
        if set(q) <= {()}:
            c = q.get((), 0)
            if (c - mod if c >= mod // 2 else c) < 0:
                return True
    return False


def _sure_nonneg(s: Sym, depth: int) -> bool:
    """`s` >= 0 for every thread: thread indices, non-negative constants and loop counters, and sums, products
    and quotients of them (signed overflow being undefined); not a cast that may wrap (an unsigned value other
    than a thread index made signed of the same width, or any narrowing)."""
    if ctyping.is_unsigned(s.ctype) or s.op in ("lane", "red"):
        return True
    if s.is_const:
        return isinstance(s.value, int | np.integer) and s.value >= 0
    if s.op in ("uni", "var"):
        return s.nonneg
    if depth <= 0 or not ctyping.is_int(s.ctype) or s.ctype == "bool":
        return False
    if s.op in NONNEG_OPS:
        return all(_sure_nonneg(x, depth - 1) for x in s.args)
    if s.op == "cast":
        if s.args[0].op in ("lane", "red") and ctyping.bits(s.ctype) >= 16:
            return True  # a thread index (< 1024) fits any such type
        src = s.args[0].ctype
        widens = ctyping.is_int(src) and src != "bool" and ctyping.bits(s.ctype) > ctyping.bits(src)
        same_sign = ctyping.is_int(src) and not ctyping.is_unsigned(src) and ctyping.bits(s.ctype) >= ctyping.bits(src)
        return (widens or same_sign) and _sure_nonneg(s.args[0], depth - 1)
    return False


def _exact_div(a: Sym, c: int, ctype: str) -> Sym | None:
    """(x * k) / c -> x * (k / c) where c divides k, and (x * c + d) / c -> x for 0 <= d < c and x >= 0 (C's
    truncating division is exact, or floors a non-negative value); None otherwise."""
    if c <= 0:
        return None
    rest = 0
    if a.op in ("add", "sub") and a.args[1].is_const and a.ctype == ctype:
        rest = int(a.args[1].value) * (1 if a.op == "add" else -1)
        a = a.args[0]
    if a.op != "mul" or a.ctype != ctype:
        return None
    x, k = (a.args[0], a.args[1]) if a.args[1].is_const else (a.args[1], a.args[0])
    if not k.is_const or x.ctype != ctype or int(k.value) <= 0 or int(k.value) % c:
        return None
    if rest and not (0 < rest < c and x.nonneg):
        return None
    return op("mul", ctype, x, const(int(k.value) // c, ctype))


def _poly_diff(a: Sym, b: Sym) -> dict[tuple[int, ...], int] | None:
    """poly(a) - poly(b) (coefficients modulo the type's width), None where either is too large to compare."""
    pa, pb = poly(a), poly(b)
    if pa is None or pb is None:
        return None
    mod = 1 << ctyping.bits(a.ctype)
    out = dict(pa)
    for m, c in pb.items():
        out[m] = out.get(m, 0) - c
    return {m: c % mod for m, c in out.items() if c % mod}


def _trailing_zeros(s: Sym, depth: int) -> int:
    """Low bits known zero in every value of integer `s` (two's complement, so also after a sign-extending or
    truncating cast); 0 where unknown. `depth` bounds the walk (DAGs share nodes)."""
    if s.is_const and isinstance(s.value, int | np.integer) and not isinstance(s.value, bool):
        v = int(s.value)
        return 64 if v == 0 else (v & -v).bit_length() - 1
    if depth <= 0 or not ctyping.is_int(s.ctype) or s.ctype == "bool":
        return 0
    if s.op == "mul":
        return sum(_trailing_zeros(x, depth - 1) for x in s.args)
    if s.op in ("add", "sub"):
        return min(_trailing_zeros(x, depth - 1) for x in s.args)
    if s.op == "shl" and s.args[1].is_const:
        return _trailing_zeros(s.args[0], depth - 1) + int(s.args[1].value)
    if s.op == "cast" and ctyping.is_int(s.args[0].ctype) and s.args[0].ctype != "bool":
        return min(_trailing_zeros(s.args[0], depth - 1), ctyping.bits(s.ctype))
    return 0


def cast(a: Sym, ctype: str) -> Sym:
    if a.ctype == ctype:
        return a
    return op("cast", ctype, a)


def land(*conds: Sym) -> Sym:
    out = const(1, "bool")
    for c in conds:
        out = op("land", "bool", out, c)
    return out


def conj(*conds: Sym) -> Sym:
    """The conjunction of `conds`, each conjunct once (compared by `canon`), the `land` trees flattened."""
    flat: list[Sym] = []
    stack = list(reversed(conds))
    while stack:
        c = stack.pop()
        if c.op == "land":
            stack.extend(reversed(c.args))
        elif not (c.is_const and c.value):
            flat.append(c)
    memo: dict[tuple[str, int], Any] = {}
    seen: set = set()
    out: list[Sym] = []
    for c in flat:
        k = canon(c, memo)
        if k not in seen:
            seen.add(k)
            out.append(c)
    return land(*out)


def conjuncts(*conds: Sym) -> frozenset:
    """The conjuncts of `conds` (the `land` trees flattened, constant truths dropped), by `canon`: a predicate
    whose set holds another's is at least as narrow."""
    out: set = set()
    memo: dict[tuple[str, int], Any] = {}
    stack = list(conds)
    while stack:
        c = stack.pop()
        if c.op == "land":
            stack.extend(c.args)
        elif not (c.is_const and c.value):
            out.add(canon(c, memo))
    return frozenset(out)


def lnot(c: Sym) -> Sym:
    return op("lnot", "bool", c)


def where(c: Sym, a: Sym, b: Sym, ctype: str | None = None) -> Sym:
    return op("where", ctype or a.ctype, c, a, b)


# -- concrete evaluation -------------------------------------------------------------------------------------


def evaluate(s: Sym, lanes: dict[str, np.ndarray], memo: dict[int, Any] | None = None) -> Any:
    """The value of a concrete sym for every thread: `lanes` maps each lane axis to its (broadcastable) indices."""
    memo = {} if memo is None else memo
    if s.id in memo:
        return memo[s.id]
    v = _eval(s, lanes, memo)
    memo[s.id] = v
    return v


def _np(ctype: str):
    dt = ctyping.np_dtype(ctype)
    if dt is None:
        raise NotConcrete(ctype)
    return dt


def _eval(s: Sym, lanes: dict[str, np.ndarray], memo: dict[int, Any]) -> Any:
    if s.op == "const":
        return np.asarray(s.value, dtype=_np(s.ctype))
    if s.op in ("lane", "red"):
        if s.axis not in lanes:
            raise NotConcrete(s.axis)
        return np.asarray(lanes[s.axis], dtype=np.uint32 if s.op == "lane" else np.int32)
    if s.op in ("uni", "var", "load", "reduce", "scan", "segreduce", "call"):
        raise NotConcrete(s.op)
    args = [evaluate(a, lanes, memo) for a in s.args]
    dt = _np(s.ctype)
    with np.errstate(all="ignore"):
        if s.op == "cast":
            a = args[0]
            if np.issubdtype(dt, np.integer) and np.issubdtype(a.dtype, np.floating):
                return np.trunc(a).astype(dt)
            return a.astype(dt)
        if s.op in CMP or s.op in LOGIC:
            if s.op == "lnot":
                return np.logical_not(args[0].astype(bool))
            if s.op == "land":
                return np.logical_and(args[0].astype(bool), args[1].astype(bool))
            if s.op == "lor":
                return np.logical_or(args[0].astype(bool), args[1].astype(bool))
            a, b = args
            ct = ctyping.arith(s.args[0].ctype, s.args[1].ctype)
            cd = _np(ct)
            a, b = a.astype(cd), b.astype(cd)
            return {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
                    "eq": np.equal, "ne": np.not_equal}[s.op](a, b)
        if s.op == "where":
            return np.where(args[0].astype(bool), args[1].astype(dt), args[2].astype(dt))
        if s.op in ("neg", "bnot", "pos"):
            a = args[0].astype(dt)
            return {"neg": np.negative, "bnot": np.invert, "pos": lambda x: x}[s.op](a)
        if s.op in ("min", "max"):
            a, b = (x.astype(dt) for x in args)
            return np.minimum(a, b) if s.op == "min" else np.maximum(a, b)
        if s.op in ("shl", "shr"):
            a = args[0].astype(dt)
            b = args[1].astype(np.int64)
            if np.any(b < 0) or np.any(b >= 8 * a.dtype.itemsize):
                raise NotConcrete("shift count")
            return (np.left_shift(a, b.astype(a.dtype)) if s.op == "shl" else np.right_shift(a, b.astype(a.dtype))).astype(dt)
        a, b = (x.astype(dt) for x in args)
        if s.op == "add":
            return a + b
        if s.op == "sub":
            return a - b
        if s.op == "mul":
            return a * b
        if s.op in ("div", "mod"):
            if np.issubdtype(dt, np.integer):
                if np.any(b == 0):
                    raise ZeroDivisionError
                q = (np.abs(a.astype(np.int64)) // np.abs(b.astype(np.int64))) * np.sign(a.astype(np.int64)) * np.sign(b.astype(np.int64))
                q = q.astype(dt)
                return q if s.op == "div" else (a - q * b).astype(dt)
            return a / b if s.op == "div" else np.fmod(a, b)
        if s.op in ("and", "or", "xor"):
            return {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[s.op](a, b)
    raise NotConcrete(s.op)


# -- rewriting -----------------------------------------------------------------------------------------------


def spelling_length(s: Sym, memo: dict[int, int] | None = None) -> int:
    """len(repr(s)), computed over the DAG: repr spells a shared sub-expression once per use, so a value built by
    unrolled loops has a spelling exponential in its depth that must not be materialised just to be measured."""
    memo = {} if memo is None else memo
    got = memo.get(id(s))
    if got is not None:
        return got
    if s.op == "const" or s.op in ("lane", "red", "uni", "var"):
        n = len(repr(s))
    elif s.op in BIN:
        n = spelling_length(s.args[0], memo) + spelling_length(s.args[1], memo) + len(BIN[s.op]) + 4
    else:
        n = len(s.op) + len(str(s.name or "")) + 2 + sum(spelling_length(a, memo) for a in s.args) \
            + 2 * max(0, len(s.args) - 1)
    memo[id(s)] = n
    return n


def substitute(s: Sym, mapping: dict[str, Sym], memo: dict[int, Sym] | None = None) -> Sym:
    """`s` with each lane/red axis replaced (loads are rebuilt, unissued). Raises NotConcrete on opaque values."""
    return _substitute(s, mapping, {} if memo is None else memo, frozenset(mapping), {})


def _substitute(s: Sym, mapping: dict[str, Sym], memo: dict[int, Sym], axes: frozenset[str],
                deps: dict[int, bool]) -> Sym:
    if s.id in memo:
        return memo[s.id]
    if not s.opaque and not _depends_on(s, axes, deps):
        return s
    if s.opaque:
        raise NotConcrete("opaque value")
    if s.op in ("lane", "red"):
        out = mapping.get(s.axis, s)
    elif s.op == "gather":  # the block is in its writers' lanes (comm._gathered): only the index moves
        out = op("gather", s.ctype, s.args[0], _substitute(s.args[1], mapping, memo, axes, deps), fn=s.name)
    elif s.op == "load":
        base, offset = (_substitute(a, mapping, memo, axes, deps) for a in s.args)
        mask = _substitute(s.mask, mapping, memo, axes, deps) if s.mask is not None else None
        out = load(base, offset, mask, s.ctype, s.root or "", s.epoch)
    else:
        out = op(s.op, s.ctype, *(_substitute(a, mapping, memo, axes, deps) for a in s.args), fn=s.name)
    memo[s.id] = out
    return out


# nodes whose value is a result of their own (memory, a collective, an opaque call), not an operator applied to
# their arguments' values
RESULT_OPS = frozenset({"load", "gather", "reduce", "scan", "segreduce", "call_opaque"})


def replace_var(s: Sym, name: str, value: Sym, memo: dict[int, Sym | None] | None = None) -> Sym | None:
    """`s` with the variable `name` replaced by `value`, the operators rebuilt (and folded again); None where the
    variable reaches `s` through anything but an operator (a load's address, a reduction)."""
    memo = {} if memo is None else memo
    if s.id in memo:
        return memo[s.id]
    out: Sym | None
    if s.op == "var":
        out = value if s.name == name else s
    elif s.op in ("const", "lane", "red", "uni"):
        out = s
    elif s.op in RESULT_OPS:
        out = s if not any(x.op == "var" and x.name == name for x in nodes(s, masks=True)) else None
    else:
        args = [replace_var(a, name, value, memo) for a in s.args]
        if any(a is None for a in args):
            out = None
        elif all(a is b for a, b in zip(args, s.args)):
            out = s
        else:
            out = op(s.op, s.ctype, *args, fn=s.name)  # type: ignore[arg-type]
    memo[s.id] = out
    return out


LANE_AXES = frozenset({"x", "y"})  # the lane axes of a block's threads


def varies(s: Sym, axes: frozenset[str]) -> bool:
    """Whether `s` differs between threads along `axes` (through its loads' masks too)."""
    return _depends_on(s, axes, {})


def _depends_on(s: Sym, axes: frozenset[str], seen: dict[int, bool]) -> bool:
    """Whether `s` varies along `axes`, the masks of its issued loads included: a load issued under a
    thread-dependent mask (`if (threadIdx.x == 0) v = p[row];`) holds `other` on the threads it skipped, so it is
    one thread's value only after its mask is substituted too (its `lanes`, fixed when it was built, miss that)."""
    hit = seen.get(s.id)
    if hit is not None:
        return hit
    dep = bool(s.lanes & axes)
    if s.op == "reduce":  # one value for the whole block, whatever its operand
        seen[s.id] = dep
        return dep
    if not dep and s.op == "load" and s.mask is not None:
        dep = _depends_on(s.mask, axes, seen)
    if not dep:
        dep = any(_depends_on(a, axes, seen) for a in s.args)
    seen[s.id] = dep
    return dep


def dag_size(roots: list[Sym], limit: int) -> int:
    """Distinct nodes under `roots` (arguments and load masks), counted up to limit + 1: what substituting
    them rebuilds."""
    seen: set[int] = set()
    stack = list(roots)
    while stack and len(seen) <= limit:
        x = stack.pop()
        if x.id in seen:
            continue
        seen.add(x.id)
        stack.extend(x.args)
        if x.mask is not None:
            stack.append(x.mask)
    return len(seen)


def nodes(*roots: Sym, masks: bool = False) -> Iterator[Sym]:
    """Every node the `roots` reach through their arguments (and loads' masks with `masks`), each once."""
    seen: set[int] = set()
    stack = list(roots)
    while stack:
        x = stack.pop()
        if x.id in seen:
            continue
        seen.add(x.id)
        yield x
        stack.extend(x.args)
        if masks and x.mask is not None:
            stack.append(x.mask)


def loads_in(s: Sym) -> list[Sym]:
    out: list[Sym] = []
    seen: set[int] = set()
    stack = [s]
    while stack:
        x = stack.pop()
        if x.id in seen:
            continue
        seen.add(x.id)
        if x.op == "load":
            out.append(x)
            if x.mask is not None:
                stack.append(x.mask)
        stack.extend(x.args)
    return out


def affine(s: Sym) -> tuple[dict[str, int], Sym] | None:
    """Write an integer sym as sum(coef[axis] * lane(axis)) + rest, rest lane-free; None if it is not affine.
    `(a / c) * c * k + (a % c) * k` is `a * k` (C's division and remainder recombine for any a): a thread number
    built from lane coordinates split by division (the y lanes of a 3-D block hold y and z) is affine again."""
    out = _affine(s)
    if out is None and s.lanes and ctyping.is_int(s.ctype):
        out = _affine_divmod(s)
    return out


def _affine(s: Sym) -> tuple[dict[str, int], Sym] | None:
    if not ctyping.is_int(s.ctype) and s.ctype != "bool":
        return None
    if not s.lanes:
        return {}, s
    if s.op in ("lane", "red"):
        return {s.axis: 1}, const(0, "int")
    if s.op == "cast" and ctyping.is_int(s.args[0].ctype) and ctyping.bits(s.ctype) >= 32:
        return _affine(s.args[0])
    if s.op in ("add", "sub"):
        a, b = _affine(s.args[0]), _affine(s.args[1])
        if a is None or b is None:
            return None
        sign = 1 if s.op == "add" else -1
        coefs = dict(a[0])
        for k, v in b[0].items():
            coefs[k] = coefs.get(k, 0) + sign * v
        coefs = {k: v for k, v in coefs.items() if v}
        rest = op(s.op, "int", cast(a[1], "int"), cast(b[1], "int"))
        return coefs, rest
    if s.op == "mul":
        for i in (0, 1):
            c = s.args[i]
            if c.is_const and ctyping.is_int(c.ctype):
                inner = _affine(s.args[1 - i])
                if inner is None:
                    return None
                k = int(c.value)
                return {a: v * k for a, v in inner[0].items() if v * k}, op("mul", "int", cast(inner[1], "int"), const(k, "int"))
        return None
    if s.op == "neg":
        inner = _affine(s.args[0])
        if inner is None:
            return None
        return {a: -v for a, v in inner[0].items()}, op("neg", "int", cast(inner[1], "int"))
    return None



def _affine_divmod(s: Sym) -> tuple[dict[str, int], Sym] | None:
    terms: dict[Any, int] = {}
    parts: dict[Any, Sym] = {}
    rest: list[Sym] = []
    if not _linear_terms(s, 1, terms, parts, rest):
        return None
    for key in [k for k in terms if k[0] == "div"]:
        mod = ("mod", *key[1:])
        c = key[2]
        kd, km = terms.get(key, 0), terms.get(mod, 0)
        if km == 0 or kd != c * km:
            return None
        inner = _affine(parts[key])
        if inner is None:
            return None
        del terms[key], terms[mod]
        for a, v in inner[0].items():
            terms[a] = terms.get(a, 0) + km * v
        rest.append(op("mul", "int", cast(inner[1], "int"), const(km, "int")))
    if any(not isinstance(k, str) for k, v in terms.items() if v):
        return None
    total = const(0, "int")
    for r in rest:
        total = op("add", "int", total, r)
    return {k: v for k, v in terms.items() if v}, total


def _linear_terms(s: Sym, k: int, terms: dict[Any, int], parts: dict[Any, Sym], rest: list[Sym]) -> bool:
    """s * k as lane terms, `a / c` and `a % c` terms (a reading lanes, c a positive constant) and a lane-free
    rest; False for anything else."""
    if not s.lanes:
        rest.append(op("mul", "int", cast(s, "int"), const(k, "int")))
        return True
    if s.op in ("lane", "red"):
        terms[s.axis] = terms.get(s.axis, 0) + k
        return True
    if s.op == "cast" and ctyping.is_int(s.args[0].ctype) and ctyping.bits(s.ctype) >= 32:
        return _linear_terms(s.args[0], k, terms, parts, rest)
    if s.op in ("add", "sub"):
        return _linear_terms(s.args[0], k, terms, parts, rest) and \
            _linear_terms(s.args[1], k if s.op == "add" else -k, terms, parts, rest)
    if s.op == "neg":
        return _linear_terms(s.args[0], -k, terms, parts, rest)
    if s.op == "mul":
        for i in (0, 1):
            c = s.args[i]
            if c.is_const and ctyping.is_int(c.ctype):
                return _linear_terms(s.args[1 - i], k * int(c.value), terms, parts, rest)
        return False
    if s.op in ("div", "mod") and s.args[1].is_const and ctyping.is_int(s.args[1].ctype) and int(s.args[1].value) > 0:
        key = (s.op, canon(s.args[0]), int(s.args[1].value))
        terms[key] = terms.get(key, 0) + k
        parts[key] = s.args[0]
        return True
    return False


# -- canonical forms -----------------------------------------------------------------------------------------

MAX_TERMS = 64  # a product grown past this many monomials is an atom of its own instead
_RING = {"add", "sub", "mul", "neg", "pos", "cast"}
_INTERN: dict[Any, int] = {}  # structural key -> small id: keys of shared sub-DAGs stay small (no tree blow-up)


def _intern(key: Any) -> int:
    k = _INTERN.get(key)
    if k is None:  # never cleared: syms keep their ids (a sym's canonical id is cached on it)
        k = _INTERN[key] = len(_INTERN) + 1
    return k


def canon(s: Sym, memo: dict[tuple[str, int], Any] | None = None) -> int:
    """An id equal for syms that compute the same value by the same means: integer ring arithmetic (+, -, *,
    same-width casts) is compared as a polynomial over its atoms, so `(y - 8) + 8` and `y` agree; everything
    else structurally over canonical arguments. Loads are (buffer, offset, mask, stores before)."""
    if s._canon is None:
        memo = {} if memo is None else memo
        if ctyping.is_int(s.ctype) and s.ctype != "bool":
            s._canon = _intern(("P", ctyping.bits(s.ctype), tuple(sorted(_poly(s, memo).items()))))
        else:
            s._canon = _struct(s, memo)
    return s._canon


def poly(s: Sym, memo: dict[tuple[str, int], Any] | None = None) -> dict[tuple[int, ...], int] | None:
    """An integer sym as {monomial: coefficient} (a monomial: the sorted ids of its atoms, () the constant);
    None for a sym that is not an integer. Coefficients wrap at the type's width."""
    if not ctyping.is_int(s.ctype) or s.ctype == "bool":
        return None
    return _poly(s, {} if memo is None else memo)


def lane_atom(axis: str) -> int:
    """The monomial atom of thread-index axis `axis` in `poly`."""
    return _intern(("lane", axis))


def _struct(s: Sym, memo: dict[tuple[str, int], Any]) -> int:
    low = _low_bits_key(s, memo)
    if low is not None:
        return low
    if s.op in ("lane", "red"):
        return _intern((s.op, s.axis))
    if s.op in ("uni", "var"):
        return _intern((s.op, s.name, s.ctype))
    if s.op == "const":
        return _intern(("const", s.ctype, repr(s.value)))
    if s.op == "load":
        return _intern(("load", s.root, s.epoch, s.ctype, canon(s.args[0], memo), canon(s.args[1], memo),
                        canon(s.mask, memo) if s.mask is not None else None))
    if s.op in ("reduce", "scan", "segreduce"):
        return _intern((s.op, s.id))
    return _intern((s.op, s.ctype, s.name, s.value if isinstance(s.value, str | int | float | None) else repr(s.value),
                    tuple(canon(a, memo) for a in s.args), tuple(a.ctype for a in s.args)))


def _low_bits_key(s: Sym, memo: dict[tuple[str, int], Any]) -> int | None:
    """`x & (2**k - 1)` depends on x modulo 2**k only: the same id for every x whose polynomial agrees modulo
    2**k, through casts between integer types of at least k bits (they keep the low bits). So an alignment test
    of `(base + 16 * i) * 2` is seen to be the one of `base * 2` (a test a loop's iterations share: unswitch.py)."""
    if s.op != "and" or len(s.args) != 2 or not ctyping.is_int(s.ctype) or s.ctype == "bool":
        return None
    x, m = (s.args[0], s.args[1]) if s.args[1].is_const else (s.args[1], s.args[0])
    if not m.is_const or not isinstance(m.value, int | np.integer) or isinstance(m.value, bool):
        return None
    mask = int(m.value)
    k = (mask + 1).bit_length() - 1
    if mask <= 0 or mask & (mask + 1) or k > 32:
        return None
    p = _low_poly(x, k, memo, 12)
    if p is None:
        return None
    return _intern(("lowbits", s.ctype, k, tuple(sorted(p.items()))))


def _low_poly(s: Sym, k: int, memo: dict[tuple[str, int], Any], depth: int) -> dict[tuple[int, ...], int] | None:
    """`s` modulo 2**k as a polynomial over atoms (see `_low_bits_key`); None where it is not an integer."""
    if not ctyping.is_int(s.ctype) or s.ctype == "bool" or ctyping.bits(s.ctype) < k:
        return None
    mod = 1 << k
    out: dict[tuple[int, ...], int] | None = None
    if s.is_const and isinstance(s.value, int | np.integer) and not isinstance(s.value, bool):
        out = {(): int(s.value)}
    elif depth > 0 and s.op == "cast":
        out = _low_poly(s.args[0], k, memo, depth - 1)
    elif depth > 0 and s.op in ("add", "sub", "neg", "pos", "mul") and all(
            ctyping.is_int(a.ctype) and a.ctype != "bool" for a in s.args):
        parts = [_low_poly(a, k, memo, depth - 1) for a in s.args]
        if any(p is None for p in parts):
            return None
        out = _ring(s.op, parts)  # type: ignore[arg-type]
    elif depth > 0 and s.op == "shl" and s.args[1].is_const and 0 <= int(s.args[1].value) < 64:
        p = _low_poly(s.args[0], k, memo, depth - 1)
        out = None if p is None else {m: c << int(s.args[1].value) for m, c in p.items()}
    if out is None:  # anything else (a product grown past MAX_TERMS included): an atom
        out = {(_intern(("atom", canon(s, memo))),): 1}
    return {m: c % mod for m, c in out.items() if c % mod}


def _ring(op_name: str, parts: list[dict[tuple[int, ...], int]]) -> dict[tuple[int, ...], int] | None:
    """The polynomial of ring operator `op_name` over its arguments' polynomials (coefficients not yet reduced);
    None for a product past MAX_TERMS monomials."""
    if op_name in ("cast", "pos"):
        return dict(parts[0])
    if op_name == "neg":
        return {m: -c for m, c in parts[0].items()}
    if op_name in ("add", "sub"):
        out = dict(parts[0])
        for m, c in parts[1].items():
            out[m] = out.get(m, 0) + (c if op_name == "add" else -c)
        return out
    if len(parts[0]) * len(parts[1]) > MAX_TERMS:
        return None
    out = {}
    for ma, ca in parts[0].items():
        for mb, cb in parts[1].items():
            m = tuple(sorted(ma + mb))
            out[m] = out.get(m, 0) + ca * cb
    return out


def _same_width(s: Sym) -> bool:
    return all(ctyping.is_int(a.ctype) and a.ctype != "bool" and ctyping.bits(a.ctype) == ctyping.bits(s.ctype)
               for a in s.args)


def _poly(s: Sym, memo: dict[tuple[str, int], Any]) -> dict[tuple[int, ...], int]:
    if s._poly is not None:
        return s._poly
    mod = 1 << ctyping.bits(s.ctype)
    out: dict[tuple[int, ...], int] | None = None
    if s.op == "const":
        out = {(): int(s.value)}
    elif s.op in ("lane", "red"):
        out = {(_intern((s.op, s.axis)),): 1}
    elif s.op in ("uni", "var"):
        out = {(_intern((s.op, s.name)),): 1}
    elif s.op in _RING and _same_width(s):
        out = _ring(s.op, [_poly(a, memo) for a in s.args])
    if out is None:  # not ring arithmetic of its arguments: an atom of its own
        out = {(_intern(("atom", _struct(s, memo))),): 1}
    out = {m: c % mod for m, c in out.items() if c % mod}
    if len(out) > 4 * MAX_TERMS:  # sums grown large: compared structurally from here on
        out = {(_intern(("atom", _struct(s, memo))),): 1}
    s._poly = out
    return out
