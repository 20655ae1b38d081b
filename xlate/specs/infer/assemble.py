"""From a launch seen in the host code to spec items: the program's values are rewritten in terms of the
kernel's parameters (the argument passed for `n` stands for `n` wherever the program uses it: in allocation
sizes, the grid, the block), runtime choices become fuzz axes, and what is left of the program's own values is
replaced by the value it uses."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import sympy as sp

from xlate.model import Function, Param
from xlate.specs.infer.ceval import ctype_size, sizeof_type
from xlate.specs.infer.host import LITERAL_ARGUMENT, Launch, Root
from xlate.specs.infer.sym import CeilDiv, FloorDiv, concrete, to_text
from xlate.specs.infer.values import Dim3, Num, Ptr, Value
from xlate.specs.model import Origin, ctypes_table, normalise_ctype

DEFAULT_SIZE_HI = 4096
# spec keys: a program value named `grid` becomes `grid_2` in the spec
RESERVED = {"grid", "block", "shmem", "where", "op", "values", "rtol", "atol"}


def param_symbol(name: str) -> sp.Symbol:
    return sp.Symbol(f"_P_{name}", integer=True, positive=True)


@dataclass
class Mapped:
    """A launch rewritten over the kernel's parameters."""

    launch: Launch
    subs: dict[sp.Symbol, sp.Expr] = field(default_factory=dict)  # program root -> parameter expression
    composite: list[tuple[sp.Expr, sp.Expr]] = field(default_factory=list)  # program expression -> parameter
    derived: dict[str, sp.Expr] = field(default_factory=dict)  # parameter -> expression over other parameters
    fixed: dict[str, sp.Expr] = field(default_factory=dict)  # parameter -> a literal the launch passes
    axes: dict[str, list[int]] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)  # symbol name -> spec name
    roots_used: dict[str, Root] = field(default_factory=dict)  # parameter -> the program root it stands for
    values: dict[str, tuple[float, str, str]] = field(default_factory=dict)  # parameter -> (program value, where, text)
    free: dict[str, Root] = field(default_factory=dict)  # sizes the kernel does not receive (n in k<<<n/256, 256>>>(x))


FREE_KINDS = ("runtime", "local", "global", "param", "constant", "macro")


class Mapper:
    def __init__(self, fn: Function, launch: Launch, roots: dict[sp.Symbol, Root], pinned: set[str] | None = None,
                 elem_size: Any = None):
        self.fn = fn
        self.launch = launch
        self.roots = roots
        self.pinned = pinned or set()  # program names the kernel also uses: their values are fixed
        self.fixed: set[sp.Symbol] = set()  # program values fixed by the block size
        self.elem_size = elem_size
        self.m = Mapped(launch)
        # the values of the program's constants the kernel also names: known before any matching, so that
        # `n_blocks = BLOCK * cdiv(len, BLOCK) / BLOCK` passed for a parameter is found in `BLOCK * cdiv(len, BLOCK)`
        self.constants = {s: sp.Integer(int(r.value)) for s, r in roots.items()  # type: ignore[arg-type]
                          if r.name in self.pinned and r.kind in ("macro", "constant") and r.value is not None
                          and float(r.value) == int(r.value)}
        self.pnames = {p.name for p in fn.params}
        self.open_values: set[str] = set()  # template value parameters the spec draws under their own name (open)
        for p in fn.params:
            self.m.names[param_symbol(p.name).name] = p.name
        self._map_scalars()

    def open_value(self, name: str) -> None:
        """A template value parameter the spec draws as an item of its own name (`CDIM: choice(1|3)`): the kernel's
        facts name it as a parameter, and it is written as that item."""
        self.open_values.add(name)
        self.m.names[param_symbol(name).name] = name

    def _map_scalars(self) -> None:
        args = self.launch.args
        pending: list[tuple[Param, sp.Expr]] = []
        for i, p in enumerate(self.fn.params):
            if p.is_pointer or i >= len(args) or not isinstance(args[i], Num):
                continue
            e = args[i].e  # type: ignore[union-attr]
            ps = param_symbol(p.name)
            if isinstance(e, sp.Symbol) and e in self.roots and e not in self.m.subs and self.roots[e].kind != "choice":
                self.m.subs[e] = ps
                self.m.roots_used[p.name] = self.roots[e]
            elif e.is_number:
                self.m.fixed[p.name] = e
            else:
                pending.append((p, e))
        for i, p in enumerate(self.fn.params):
            if p.is_pointer or i >= len(args) or not isinstance(args[i], Num):
                continue
            e = sp.sympify(args[i].e)  # type: ignore[union-attr]
            known = {s: sp.Integer(int(r.value)) if float(r.value) == int(r.value) else sp.Float(r.value)
                     for s, r in self.roots.items() if s in e.free_symbols and r.value is not None}
            v = e.xreplace(known) if known else e
            if v.is_number and concrete_float(v) is not None:
                rs = [self.roots[s] for s in e.free_symbols if s in self.roots]
                where = rs[0].where if rs else self.launch.where
                arg_text = self.launch.arg_texts[i] if i < len(self.launch.arg_texts) else str(e)
                self.m.values[p.name] = (concrete_float(v), where, arg_text)  # type: ignore[assignment]
        for p, e in pending:
            rewritten = self._over_composites(sp.sympify(e).xreplace(self.m.subs).xreplace(self.constants))
            if self._derive(p, rewritten):
                continue
            ps = param_symbol(p.name)
            self.m.composite.append((rewritten, ps))
            single = [s for s in rewritten.free_symbols if s in self.roots and s not in self.m.subs]
            if len(single) == 1:
                root = self.roots[single[0]]
                self.m.roots_used.setdefault(p.name, root)
        self._retie(pending)

    def _over_composites(self, rewritten: sp.Expr, composites: list[tuple[sp.Expr, sp.Expr]] | None = None
                         ) -> sp.Expr:
        for big, ps in self.m.composite if composites is None else composites:
            if big.free_symbols & rewritten.free_symbols:  # `g.ld = n + 6` passed before `g.last = n - 1`: ld - 7
                rewritten = _solve_in(rewritten, big, ps)
        return rewritten

    def _derive(self, p: Param, rewritten: sp.Expr) -> bool:
        if not (rewritten.free_symbols - self._param_symbols()) and rewritten.free_symbols and (
                _is_int(p.base_type) or _undivided(rewritten)):  # `/` is C's integer division in a spec:
            self.m.derived[p.name] = rewritten  # `dz = len / nz` for a float is no const the spec can write
            return True
        return self._tie(p, rewritten)

    def _retie(self, pending: list[tuple[Param, sp.Expr]]) -> None:
        """An argument computed from program values that a later argument is passed as (`tiles = (pitch - 1) / 16`
        passed before `pitch = side + 1`): tied to that argument once it is known (`tiles: const((pitch - 1) / 16)`)
        rather than drawn apart from it. Only a tie that leaves no program value of its own is taken."""
        for p, _ in pending:
            ps = param_symbol(p.name)
            mine = [c for c in self.m.composite if c[1] == ps]
            if len(mine) != 1 or p.name in self.m.derived:
                continue
            others = [c for c in self.m.composite if c[1] != ps]
            rewritten = self._over_composites(mine[0][0], others)
            if rewritten == mine[0][0] or rewritten.free_symbols - self._param_symbols():
                continue
            saved, self.m.composite = self.m.composite, others
            if self._derive(p, rewritten):
                self.m.roots_used.pop(p.name, None)
            else:
                self.m.composite = saved

    def _tie(self, p: Param, rewritten: sp.Expr) -> bool:
        """`k<<<..>>>(.., NH, C / NH)`: an integer argument the host computes from another argument stays tied
        to it (d: const(C / NH), C a size of its own), never a free value beside NH that races. Not where the
        relation goes through the block size (the launch fixes it, a free copy of it would not be), a float the
        program truncates, or a value the spec cannot write."""
        i = self.fn.params.index(p)
        arg = self.launch.args[i]
        if not (rewritten.free_symbols & self._param_symbols()) or not _is_int(p.base_type) or not isinstance(
                arg, Num) or arg.flt:
            return False
        block = self.launch.block
        dims = block.dims if isinstance(block, Dim3) else (block.e,) if isinstance(block, Num) else ()
        through = set().union(*(sp.sympify(d).free_symbols for d in dims)) & rewritten.free_symbols if dims else set()
        if through:  # `n / block_x` with the block the program's constant: the same constant in both
            fixed = {s: sp.Integer(int(self.roots[s].value)) for s in through  # type: ignore[arg-type]
                     if s in self.roots and self.roots[s].kind != "choice" and self.roots[s].value is not None
                     and float(self.roots[s].value) == int(self.roots[s].value) and float(self.roots[s].value) >= 1}
            if len(fixed) != len(through):
                return False
            rewritten = rewritten.xreplace(fixed)
        for a in self.launch.args:  # `eval_case(.., true, false)`: the host chose its branches by a literal the
            e = a.e if isinstance(a, Num) else None  # spec draws freely; a tie read under it may not hold. A
            # number the launch passes itself is the spec's constant too (`const(1)`), all but a 0 placeholder
            if e is not None and (e == 0 or (e in self.roots and self.roots[e].detail == LITERAL_ARGUMENT)):
                return False
        literals = {s: sp.Integer(int(self.roots[s].value)) for s in rewritten.free_symbols  # type: ignore[arg-type]
                    if s in self.roots and self.roots[s].detail == LITERAL_ARGUMENT and self.roots[s].value is not None}
        rewritten = rewritten.xreplace(literals)  # `halves(n, 2)`: the 2 is the algorithm's, never a size drawn for it
        free, axes = dict(self.m.free), dict(self.m.axes)
        tied, _ = self.rewrite(rewritten)
        ok = tied is not None and not tied.is_number and not any(
            isinstance(a, sp.Float) or (isinstance(a, sp.Rational) and not a.is_Integer) for a in tied.atoms(sp.Number))
        if ok:
            try:
                self.text(tied)
            except ValueError:
                ok = False
        if ok:
            self.m.derived[p.name] = tied
        else:
            self.m.free, self.m.axes = free, axes  # nothing tied: no sizes of its own left behind
        return ok

    def _param_symbols(self) -> set[sp.Symbol]:
        return {param_symbol(n) for n in self.pnames | self.open_values}

    # -- rewriting --------------------------------------------------------------------------------------------
    def rewrite(self, e: sp.Expr, allow_free: bool = True) -> tuple[sp.Expr | None, list[str]]:
        """`e` over the kernel's parameters and launch axes; None (and the names left) when it cannot be.
        `allow_free`: program values the kernel does not receive may become sizes of their own (not for the
        block: a block size is the program's, or one of the values it tries)."""
        out = sp.sympify(e).xreplace(self.m.subs).xreplace(self.constants)
        for big, ps in sorted(self.m.composite, key=lambda c: -sp.count_ops(c[0])):
            if big.free_symbols and big.free_symbols & out.free_symbols:
                out = out.subs(big, ps)
                flat = sp.expand(big)
                if flat != big and flat.free_symbols & out.free_symbols:  # `h * (w + pad)` passed, `h*w + h*pad` used
                    out = out.subs(flat, ps)
                out = _solve_in(out, big, ps)
        missing: list[str] = []
        values: dict[sp.Symbol, sp.Expr] = {}
        for s in sorted(out.free_symbols, key=str):  # sorted: the sizes it creates come in one order every run
            if s in self._param_symbols() or str(s).startswith("sizeof("):
                continue
            root = self.roots.get(s)
            if root is None:
                missing.append(str(s))
            elif root.kind == "choice" and root.values:
                name = self._axis_name(root)
                self.m.axes[name] = self.axis_values(root)
                values[s] = sp.Symbol(name, integer=True, positive=True)
            elif allow_free and s not in self.fixed and s not in self.launch.fixed and s.is_integer and root.kind in FREE_KINDS and (
                    root.name not in self.pinned or root.kind not in ("macro", "constant")) and (root.value is None or float(root.value) > 1 or (
                        float(root.value) <= 0 and root.kind != "macro")):  # `int n = 0;` set later by code not followed
                same = self._same_value(root)
                if same is not None:  # two program values that are equal stay equal (rows of a and b)
                    values[s] = same
                    continue
                name = self._free_name(root)
                self.m.free[name] = root
                values[s] = sp.Symbol(name, integer=True, positive=True)
            elif root.value is not None:
                values[s] = sp.Integer(int(root.value)) if float(root.value) == int(root.value) else sp.Float(root.value)
                if not allow_free:
                    self.fixed.add(s)  # the grid must use the same value
            else:
                missing.append(root.name)
        if missing:
            return None, missing
        return sp.expand(out.xreplace(values)) if values else out, []

    def axis_values(self, root: Root) -> list[int]:
        """The values of a program choice that reach this launch: `if (C <= 32) k<T, 32><<<...>>>` runs only with
        the Cs the branch admits (all of them where no branch condition reads C alone, or none would be left)."""
        conds = [c for c in self.launch.conds if c.free_symbols == {root.symbol}]

        def admitted(v: int) -> bool:
            try:
                return all(bool(c.xreplace({root.symbol: v})) for c in conds)
            except TypeError:  # a relation sympy cannot decide at the value: keep it
                return True

        kept = [v for v in root.values if admitted(v)]
        return kept or root.values

    def _same_value(self, root: Root) -> sp.Expr | None:
        """A parameter or a free size that already stands for a program value equal to `root`'s."""
        if root.value is None or float(root.value) <= 1:  # 0 and 1 say nothing (a placeholder, a unit dimension)
            return None
        for s, target in self.m.subs.items():
            r = self.roots.get(s)
            if r is not None and r is not root and r.value is not None and float(r.value) == float(root.value):
                return target
        for name, r in self.m.free.items():
            if r is not root and r.value is not None and float(r.value) == float(root.value):
                return sp.Symbol(name, integer=True, positive=True)
        return None

    def _free_name(self, root: Root) -> str:
        for name, r in self.m.free.items():
            if r is root:
                return name
        base = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in root.name).strip("_") or "n"
        name = base
        while name in self.pnames or name in self.m.axes or name in self.m.free or name in RESERVED:
            name += "_"
        return name

    def _axis_name(self, root: Root) -> str:
        base = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in root.name).strip("_") or "axis"
        name = base
        k = 2
        while name in self.pnames or (name in self.m.axes and self.m.axes[name] != self.axis_values(root)) or name in RESERVED:
            name = f"{base}_{k}"
            k += 1
        return name

    def text(self, e: sp.Expr) -> str:
        names = dict(self.m.names)
        for s in e.free_symbols:
            if str(s).startswith("sizeof("):
                names[str(s)] = str(s)
        return to_text(e, names)

    # -- items ------------------------------------------------------------------------------------------------
    def buffer_length(self, p: Param, lanes_type: str) -> tuple[sp.Expr | None, Origin | None, str]:
        """Elements of `p`'s type that the argument's allocation holds past the pointer."""
        i = self.fn.params.index(p)
        arg = self.launch.args[i] if i < len(self.launch.args) else None
        if not isinstance(arg, Ptr) or arg.alloc.bytes is None:
            return None, None, "no allocation found for the argument"
        elem_size = ctype_size(lanes_type)
        esize: sp.Expr = sp.Integer(elem_size) if elem_size else (
            self.elem_size(lanes_type) if self.elem_size is not None else sizeof_type(lanes_type))
        nbytes = arg.alloc.bytes - arg.offset
        length, missing = self.rewrite(nbytes)
        if length is None:
            return None, arg.alloc.origin, f"its size uses {', '.join(missing)}, which the kernel does not receive"
        from xlate.specs.infer.sym import FloorDiv

        return sp.expand(FloorDiv(length, esize)) if not (length / esize).is_integer else sp.expand(length / esize), \
            arg.alloc.origin, ""

    def launch_dims(self, v: Value, allow_free: bool = True) -> tuple[list[sp.Expr] | None, list[str]]:
        if isinstance(v, Dim3):
            dims = list(v.dims)
        elif isinstance(v, Num):
            dims = [v.e]
        else:
            return None, ["(not followed)"]
        out: list[sp.Expr] = []
        for d in dims:
            r, missing = self.rewrite(d, allow_free)
            if r is None:
                return None, missing
            out.append(r)
        while len(out) > 1 and out[-1] == 1:
            out.pop()
        return out, []


def _is_int(ctype: str) -> bool:
    n = numpy_of(ctype)
    return bool(n and n.startswith(("int", "uint")))


def _undivided(e: sp.Expr) -> bool:
    """No division in `e` (`2.0 * n`, not `len / n`)."""
    return not any(isinstance(a, sp.Pow) and a.exp.is_negative for a in sp.preorder_traversal(e)) and not e.has(
        FloorDiv, CeilDiv, sp.Mod) and not any(isinstance(a, sp.Rational) and not a.is_Integer for a in e.atoms(sp.Rational))


def _solve_in(out: sp.Expr, big: sp.Expr, ps: sp.Symbol) -> sp.Expr:
    """`out` with a program expression the launch passes for a parameter (`total - skip` for m) written over the
    parameter where `out` holds a multiple of it (`4 * total - 4 * skip` -> `4 * m`), or a part of it
    (`total` -> `m + skip`): the buffer stays tied to the parameter instead of a free size beside it. A rounded
    quotient of the program's counts the argument holds (`cdiv(nodes, 64) - 1` passed for subm1) is solved for
    as a whole (`64 * cdiv(nodes, 64)` -> `64 * subm1 + 64`)."""
    quotients = {q: sp.Dummy(integer=True, positive=True) for q in big.atoms(FloorDiv, CeilDiv) if q.free_symbols}
    if not quotients:
        return _solve_linear(out, big, ps)
    back = {d: q for q, d in quotients.items()}
    solved = _solve_linear(out.xreplace(quotients), big.xreplace(quotients), ps).xreplace(back)
    return out if solved.free_symbols & set(back) else solved


def _solve_linear(out: sp.Expr, big: sp.Expr, ps: sp.Symbol) -> sp.Expr:
    for x in sorted(big.free_symbols, key=str):
        if x not in out.free_symbols or not big.is_polynomial(x) or sp.degree(big, x) != 1:
            continue
        cx = sp.diff(big, x)
        cand = sp.expand(out.subs(x, (ps - (big - cx * x)) / cx))
        if x in cand.free_symbols or sp.fraction(sp.together(cand))[1] != 1:
            continue
        if all(c.is_Integer for c in sp.Poly(cand, *cand.free_symbols).coeffs()) if cand.free_symbols and cand.is_polynomial(
                *cand.free_symbols) else False:
            return cand
        if cx in (1, -1) and _integer_polynomial(big) and cand.free_symbols:  # x = ps - rest exactly: a quotient
            return cand  # over x (`(side + 1 - 1) / 16`) is one over the parameter (`(pitch - 1) / 16`)
    return out


def _integer_polynomial(e: sp.Expr) -> bool:
    syms = sorted(e.free_symbols, key=str)
    return bool(syms) and e.is_polynomial(*syms) and all(c.is_Integer for c in sp.Poly(e, *syms).coeffs())


def numpy_of(ctype: str) -> str | None:
    info = ctypes_table().get(normalise_ctype(ctype))
    return str(info["numpy"]) if info and info.get("numpy") else None


def root_range(root: Root | None) -> tuple[int, int, str] | None:
    """A size's range from the value the program gives it: 1..value (the program's value is legal; smaller
    ones are the gate's guess, which it checks)."""
    if root is None:
        return None
    if root.values:
        return max(1, min(root.values)), max(root.values), root.where
    if root.value is not None and float(root.value) >= 1 and float(root.value) == int(root.value):
        return 1, int(root.value), root.where
    return None


def concrete_float(e: sp.Expr) -> float | None:
    try:
        return float(e)
    except (TypeError, ValueError, OverflowError):  # a number sympy cannot evaluate
        return None


def concrete_int(e: sp.Expr | None) -> int | None:
    return concrete(e) if e is not None else None
