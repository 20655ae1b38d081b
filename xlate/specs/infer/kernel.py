"""What a kernel's own code says about its spec: every access `p[e]` with the guards and loop bounds around it,
so the extent of each buffer is the largest index it can touch plus one; which parameters bound thread indices
(sizes), which flow into indexing (they must not be fuzzed freely), the values of index buffers, and a launch
guessed from the guards when the host code shows none."""

from __future__ import annotations

import collections
import contextlib
import functools
import re
from dataclasses import dataclass, field
from typing import Any

import sympy as sp
import tree_sitter as ts

from xlate.model import Function, KernelUnit
from xlate.specs.infer.assemble import param_symbol
from xlate.specs.infer.ceval import (
    Evaluator,
    _first_named,
    ctype_size,
    is_float_type,
    parse_expr,
    parse_statements,
    walk_tree,
)
from xlate.specs.infer.program import FuncDef, Program, text
from xlate.specs.infer.sym import CeilDiv, FloorDiv, concrete, to_text
from xlate.specs.infer.values import Dim3, Num, Value
from xlate.specs.model import Origin, normalise_ctype

BUILTINS = {"threadIdx": "t", "blockIdx": "b", "blockDim": "B", "gridDim": "G"}
MAX_INLINE = 4
# atomics under other names: PyTorch's (ATen/cuda/Atomic.cuh) and HIP's unsafe/safe variants
ATOMIC_PREFIXES = ("gpuAtomic", "fastAtomic", "unsafeAtomic", "safeAtomic")
# namespaced functions and methods that take their arguments by value (a call of one changes no local it is
# handed): the math library's, and cooperative groups' (its functions and the methods of its groups and tiles)
BY_VALUE_CALLS = frozenset({"min", "max", "abs", "fabs", "sqrt", "pow", "exp", "log", "floor", "ceil", "round",
                            "fmin", "fmax", "clamp", "shfl", "shfl_down", "shfl_up", "shfl_xor", "any", "all",
                            "ballot", "match_any", "match_all", "sync", "thread_rank", "size", "num_threads"})
BY_VALUE_NAMESPACES = ("cg::", "cooperative_groups::", "std::")
STATEMENT_BUDGET = 20000
KERNEL_EVAL_BUDGET = 60000  # expression nodes: macro-heavy stencils expand exponentially


def builtin(kind: str, axis: str) -> sp.Symbol:
    return sp.Symbol(f"{kind}{axis}", integer=True, nonnegative=True)


BLOCK = [builtin("B", a) for a in "xyz"]
GRID = [builtin("G", a) for a in "xyz"]
TID = [builtin("t", a) for a in "xyz"]
BID = [builtin("b", a) for a in "xyz"]


# cooperative groups' handles: `cg::this_grid()`, `cg::this_thread_block()` (any namespace spelling)
CG_HANDLES = {"this_grid": "grid", "this_thread_block": "block"}


@dataclass(frozen=True)
class Group:
    """A cooperative-groups handle (`auto g = cg::this_grid();`): its members are thread-index arithmetic."""

    kind: str  # grid | block


@dataclass
class KPtr:
    param: str  # the kernel parameter it points into ("" for shared/local arrays)
    offset: sp.Expr  # in elements of the parameter's type
    width: sp.Expr = sp.S.One  # parameter elements per element of this view (float4 view of float: 4)
    shared: str | None = None  # a __shared__ array's name
    elem_size: sp.Expr = field(default_factory=lambda: sp.Integer(4))  # bytes per element of this view
    align: int = 1  # parameter elements the view's type must be aligned to (a float4 view of float: 4)


@dataclass
class Var:
    """A local integer the kernel computes: its definitions (more than one after a branch) and the guards that
    bound it where an access happens."""

    symbol: sp.Symbol
    defs: list[sp.Expr]
    unbounded: bool = False  # a value we cannot follow (loop-carried, data-dependent control)
    lo: sp.Expr | None = None
    hi: sp.Expr | None = None  # exclusive, from a loop header
    via: set[str] = field(default_factory=set)  # parameters its value was computed from before it was havocked
    step: sp.Expr | None = None  # a counted loop's variable: what each iteration adds to it (from defs[0] on)
    cause: str = ""  # why it is unbounded, where that is worth saying (a call not followed set it)


@dataclass
class Access:
    param: str
    index: sp.Expr  # in parameter elements (first touched)
    last: sp.Expr  # index of the last element touched (vector views touch width elements)
    bounds: dict[sp.Symbol, sp.Expr]  # symbol -> exclusive upper bound in force
    write: bool
    where: str
    atomic: bool = False  # through atomicAdd & co: threads may share the element
    align: int = 1  # through a vector view: `index` must be a multiple of this (a float4 load of floats: 4)


@dataclass
class Load:
    symbol: sp.Symbol
    param: str
    flt: bool
    index: sp.Expr | None = None  # the element read (None: through code not followed)
    guessed: bool = False  # of a template type, followed as an integer without knowing it is one


@dataclass
class KernelFacts:
    fn: Function
    accesses: list[Access] = field(default_factory=list)
    shared_accesses: list[tuple[int, sp.Expr, dict[sp.Symbol, sp.Expr]]] = field(default_factory=list)
    vars: dict[sp.Symbol, Var] = field(default_factory=dict)
    loads: dict[sp.Symbol, Load] = field(default_factory=dict)
    index_params: set[str] = field(default_factory=set)
    guards: set[str] = field(default_factory=set)  # parameters that bound a thread index
    thread_guards: dict[int, sp.Expr] = field(default_factory=dict)  # axis -> bound of the global thread index
    row_guards: dict[int, sp.Expr] = field(default_factory=dict)  # axis -> bound of blockIdx alone
    single_guards: set[int] = field(default_factory=set)  # axes whose index is only tested for one value
    names_used: set[str] = field(default_factory=set)
    uses: set[str] = field(default_factory=set)  # builtins used: "tx", "bx", ...
    unknown: bool = False  # something could not be followed (be conservative about scalars)
    truncated: bool = False  # the analysis stopped early: its accesses are not all there
    opaque: set[str] = field(default_factory=set)  # parameters handed to code that was not followed
    launch_bounds: int | None = None
    where: str = ""
    _ranges: dict[str, tuple[str, str]] = field(default_factory=dict)
    _extents_cache: dict[Any, Any] = field(default_factory=dict)
    _keep_minimum: bool = False  # see index_ranges
    # sizes the spec draws as multiples (`C % 4 == 0`, for the vector views' alignment) and the accesses they
    # align: an aligned view's first index never passes the last multiple of its width below its bound
    multiples: dict[sp.Symbol, int] = field(default_factory=dict)
    aligned: set[int] = field(default_factory=set)  # id() of the accesses the multiples align
    body_text: str = ""
    # index buffers whose values reach an address xlate could not evaluate (`c + g * K` with K unknown): buffer ->
    # (the buffer addressed, the expression): no range of theirs is known to keep that access inside
    lost: dict[str, tuple[str, str, list[str]]] = field(default_factory=dict)
    # buffers accessed through a pointer moved by an amount xlate cannot evaluate (`p += f(n)`): buffer -> that
    # amount. No length is known to cover those accesses, so the host's allocation (sized for the program's own
    # sizes, not the drawn ones) is no proof either
    moved: dict[str, str] = field(default_factory=dict)

    # -- launch ---------------------------------------------------------------------------------------------
    def block_ok(self, v: int) -> bool:
        if self.launch_bounds is not None and v > self.launch_bounds:
            return False
        for size, index, bounds in self.shared_accesses:
            m = _maxval(index.xreplace({BLOCK[0]: sp.Integer(v), BLOCK[1]: sp.Integer(1), BLOCK[2]: sp.Integer(1)}),
                        bounds, self)
            c = concrete(m) if m is not None else None
            if c is not None and c >= size:
                return False
        return True

    def _block_guess(self) -> list[int]:
        dims2 = "ty" in self.uses
        if dims2:
            return list(DEFAULT_2D)
        for cand in (256, 128, 64, 32, 512, 1024):
            if self.block_ok(cand) and (self.launch_bounds is None or cand <= self.launch_bounds):
                return [cand]
        return [self.launch_bounds or 32]

    def guess_launch(self) -> tuple[str | None, str | None, Origin]:
        origin = Origin("kernel", self.where, "from the kernel's guards (no launch site found)")
        uses_t = any(u.startswith("t") for u in self.uses)
        uses_b = any(u.startswith("b") for u in self.uses) or any(u.startswith("G") for u in self.uses)
        block = self._block_guess() if uses_t else [1]
        if not uses_b:
            return "1", _dims_text(block), Origin("kernel", self.where, "the kernel does not use blockIdx: one block")
        grid: list[str] = []
        def usable(b: sp.Expr) -> bool:  # a bound over the kernel's parameters only (not locals or loads)
            return all(x.name.startswith("_P_") for x in sp.sympify(b).free_symbols)

        for axis in range(3):
            if axis in self.thread_guards and usable(self.thread_guards[axis]):
                bound = self.thread_guards[axis]
                b = block[axis] if axis < len(block) else 1
                grid.append(_ptext(CeilDiv(bound, b)))
            elif axis in self.row_guards and usable(self.row_guards[axis]):
                grid.append(_ptext(self.row_guards[axis]))
            elif axis in self.single_guards:
                grid.append("1")
            elif ("b" + "xyz"[axis]) in self.uses or ("G" + "xyz"[axis]) in self.uses:
                return None, _dims_text(block), origin
            else:
                grid.append("1")
        while len(grid) > 1 and grid[-1] == "1":
            grid.pop()
        return (grid[0] if len(grid) == 1 else f"({', '.join(grid)})"), _dims_text(block), origin

    def launch_values(self, grid: list[sp.Expr] | None, block: list[sp.Expr] | None
                      ) -> tuple[list[sp.Expr] | None, list[sp.Expr] | None, dict[sp.Symbol, sp.Expr]]:
        """The launch's grid and block (guessed from the kernel where not given) and gridDim/blockDim's values."""
        if grid is None or block is None:
            gg, bb = self.guessed_dims()
            grid, block = grid or gg, block or bb
        launch: dict[sp.Symbol, sp.Expr] = {}
        for syms, vals in ((GRID, grid), (BLOCK, block)):
            for i, s in enumerate(syms):
                if vals is not None:
                    launch[s] = vals[i] if i < len(vals) else sp.Integer(1)
        return grid, block, launch

    def guessed_dims(self) -> tuple[list[sp.Expr] | None, list[sp.Expr] | None]:
        g, b, _ = self.guess_launch()
        from xlate.specs import expr as spec_expr

        def parse(t: str | None) -> list[sp.Expr] | None:
            if t is None:
                return None
            parts = t[1:-1].split(",") if t.startswith("(") else [t]
            out = []
            for part in parts:
                try:
                    out.append(_from_spec(part.strip(), self.fn))
                except Exception:
                    return None
            return out

        _ = spec_expr
        return parse(g), parse(b)

    # -- extents --------------------------------------------------------------------------------------------
    def extent(self, pname: str, mapper: Any, grid: list[sp.Expr] | None, block: list[sp.Expr] | None,
               loads: bool = False, known_only: bool = False) -> tuple[sp.Expr, Origin] | None:
        """The buffer's length from its accesses: the largest index any can touch, plus one. With `loads`, an
        extent may depend on the values of index buffers (U_<buffer>: the largest value that buffer holds). With
        `known_only`, accesses whose reach is not known (`x[idx[i]]`, a loop bound loaded at run time) are left
        out: a lower bound of the length, what the other accesses need whatever the unknown ones do."""
        if self.truncated or pname in self.opaque:
            return None
        mine = [a for a in self.accesses if a.param == pname]
        if not mine:
            return None
        grid, block, launch = self.launch_values(grid, block)
        key = (pname, tuple(grid or ()), tuple(block or ()), loads, known_only)
        if key in self._extents_cache:
            return self._extents_cache[key]
        self._extents_cache[key] = None
        # sizes of the spec the launch brings in (`length` of grid = length / block_size): as final as parameters
        spec_sizes = {x for v in launch.values() for x in sp.sympify(v).free_symbols}
        tops: list[sp.Expr] = []
        for a in mine:
            m = self._aligned_last(a, launch) if a.align > 1 and id(a) in self.aligned else None
            m = m if m is not None else _maxval(a.last, a.bounds, self)
            if m is None:
                if known_only:
                    continue
                return None
            m = sp.expand(m.xreplace(launch)) if launch else m
            if any(not _is_outcome(s) and s not in spec_sizes for s in m.free_symbols) or any(
                    s in GRID or s in BLOCK for s in m.free_symbols):
                if known_only:
                    continue
                return None
            if known_only and not loads and any(s.name.startswith("U_") for s in m.free_symbols):
                continue
            tops.extend(m.args if isinstance(m, sp.Max) else (m,))
        if not tops:
            return None
        args = _dominant([sp.expand(t + 1) for t in dict.fromkeys(tops)])
        ext = args[0] if len(args) == 1 else sp.Max(*args, evaluate=False)
        if ext.is_number and ext <= 0:
            return None
        if not loads and ext.free_symbols and any(s.name.startswith("U_") for s in ext.free_symbols):
            return None
        self._extents_cache[key] = ext, Origin("kernel", mine[0].where, f"largest index of {pname} under the kernel's guards")
        return self._extents_cache[key]

    def lowest_indices(self, grid: list[sp.Expr] | None, block: list[sp.Expr] | None) -> list[tuple[sp.Expr, Access]]:
        """The lowest element each buffer access can touch, where that depends on the kernel's parameters (a
        backward sweep's `x[n * (m - 2) + i]` is below 0 for m = 1): in parameter symbols, launch values in. An
        access through a loaded value, or whose lowest index is a number, is left out (a lower guard such as
        `if (i > 0)` is not tracked: a lone `-1` says nothing about sizes)."""
        grid, block, launch = self.launch_values(grid, block)
        out: list[tuple[sp.Expr, Access]] = []
        for a in self.accesses:
            if self.loads_in(a.index):
                continue
            low = _minval(a.index, a.bounds, self)
            if low is None:
                continue
            low = sp.expand(low.xreplace(launch)) if launch else sp.expand(low)
            if low.is_number or any(not s.name.startswith("_P_") for s in low.free_symbols):
                continue
            out.append((low, a))
        return out

    def value_range(self, pname: str) -> tuple[str, str] | None:
        return self._ranges.get(pname)

    def loads_in(self, e: sp.Expr, depth: int = 0) -> set[sp.Symbol]:
        """Load symbols `e` depends on, through the locals it names."""
        out: set[sp.Symbol] = set()
        for s in sp.sympify(e).free_symbols:
            if s.name.startswith("L_"):
                out.add(s)
            var = self.vars.get(s)
            if var is not None and depth < 8:
                for d in [*var.defs, *([var.hi] if var.hi is not None else []), *([var.lo] if var.lo is not None else [])]:
                    out |= self.loads_in(d, depth + 1)
        return out

    def _reach(self, e: sp.Expr) -> set[sp.Symbol]:
        """The symbols `e` is computed from, through the definitions of the locals it names (not their loop
        bounds: `for (j = ptr[r]; j < ptr[r + 1]; j++) y[j]` takes j's values from a range, not from ptr)."""
        out: set[sp.Symbol] = set()
        todo = list(sp.sympify(e).free_symbols)
        while todo and len(out) < 400:
            x = todo.pop()
            if x in out:
                continue
            out.add(x)
            var = self.vars.get(x)
            for d in (var.defs if var is not None else []):
                todo.extend(d.free_symbols)
        return out

    def _through_loads(self, e: sp.Expr) -> sp.Expr:
        """`e` with the locals that carry loaded values replaced by their definitions (`c[o * C + ch]` with
        `o = out[op]` becomes `L_out * C + ch`); locals that do not (ch, bounded by its guards) stay."""
        d = sp.expand(e)
        for _ in range(8):
            subs = {}
            for v in d.free_symbols:
                var = self.vars.get(v)
                if var is not None and len(var.defs) == 1 and not var.unbounded and var.hi is None and any(
                        x in self.loads for x in self._reach(var.defs[0])):
                    subs[v] = var.defs[0]
            if not subs:
                break
            d = sp.expand(d.xreplace(subs))
        return d

    def distinct_indexes(self, grid: list[sp.Expr] | None, block: list[sp.Expr] | None
                         ) -> dict[str, list[tuple[sp.Expr, sp.Expr]]]:
        """Integer index buffers whose values address a plain global write (a store or a read-modify-write, not an
        atomic) that moves with the thread: `c[out[i] * C + j] += a[i]` is free of races only while out holds no
        value twice, so such a buffer is drawn with distinct values. Only where distinct values do make the writes
        apart: the index is `stride * value + rest` with rest in 0..stride-1 (j < C by the kernel's guards), or
        with the clause that makes it so (`ld >= n` for a rest below n): buffer -> [(big, small)], big >= small.
        A write that covers a run from the value (`y[off[i] + j]` for j < len[i]) gets nothing: distinct starts do
        not keep runs apart. The kernel's own outputs are not drawn."""
        if self.truncated:
            return {}
        grid, block, launch = self.launch_values(grid, block)
        threads = {*TID, *BID}
        const = {p.name for p in self.fn.params if p.is_const}  # `&a[i]` of a const buffer reads it
        written = {a.param for a in self.accesses if a.write}
        out: dict[str, list[tuple[sp.Expr, sp.Expr]]] = {}
        refused: set[str] = set()
        for a in self.accesses:
            if not a.write or a.atomic or a.param in const:
                continue
            reach = self._reach(a.index)
            loads = [self.loads[s] for s in reach if s in self.loads and not self.loads[s].flt]
            if not loads or not (reach & threads or any(
                    ld.index is not None and self._reach(ld.index) & threads for ld in loads)):
                continue
            owners = {ld.param for ld in loads} - written
            d = self._through_loads(a.index)
            mine = [s for s in d.free_symbols if s in self.loads]
            if len(mine) != 1 or len(owners) != 1 or self.loads[mine[0]].param not in owners:
                refused |= owners  # several values mixed (i + w * j): distinct values alone do not keep them apart
                continue
            s = mine[0]
            coeff = sp.expand(d.coeff(s))
            rest = sp.expand(d - coeff * s)
            if s in rest.free_symbols or coeff.free_symbols & set(self.loads) or coeff == 0:
                refused |= owners
                continue
            with self._load_minimum():
                mn = _minval(rest, a.bounds, self)
            mx = _maxval(rest, a.bounds, self)
            mn = sp.expand(mn.xreplace(launch)) if mn is not None else None
            mx = sp.expand(mx.xreplace(launch)) if mx is not None else None
            final = all(_is_final(x) and not x.name.startswith(("U_", "D_")) and x not in GRID and x not in BLOCK
                        for e in (mx, coeff) if e is not None for x in e.free_symbols)
            if mn is None or mx is None or not final or not _never_negative(mn):
                refused |= owners
                continue
            gap = sp.expand(coeff - 1 - mx)
            q = self.loads[s].param
            conds = out.setdefault(q, [])
            if not _never_negative(gap):
                conds.append((coeff, sp.expand(mx + 1)))
        return {q: c for q, c in out.items() if q not in refused}

    def ascending_indexes(self) -> dict[str, str | None]:
        """Integer input buffers of segment offsets, which the program keeps non-decreasing: buffer -> None, or ->
        the buffer of the segments' lengths. A segment is a loop or a guarded index running from one value to
        another: from p[e] to p[e + 1] (`for (j = p[r]; j < p[r + 1]; j++)`, a count `p[b + 1] - p[b]`) makes p
        ascending; from p[e] over len[e] elements (`for (k = p[i]; k < p[i] + len[i]; k++)`, `x[p[i] + j]` under
        `j < len[i]`) makes p ascending by len. Drawn unsorted, segments overlap and a correct kernel races."""
        if self.truncated:
            return {}
        written = {a.param for a in self.accesses if a.write}
        out: dict[str, str | None] = {}
        refused: set[str] = set()
        for start, end in self._segment_spans():
            for lo, hi in self._alternatives(start, end):
                found = self._segment_relation(lo, hi, written)
                if found is None:
                    continue
                p, by = found
                if by is None:
                    out.setdefault(p, None)
                elif out.get(p) not in (None, by):
                    refused.add(p)  # lengths from two buffers: only the order is sure
                else:
                    out[p] = by
        for p in self._compactions(written):
            out.setdefault(p, None)
        return {p: (None if p in refused else by) for p, by in out.items()}

    def _compactions(self, written: set[str]) -> set[str]:
        """Buffers holding a running count that picks where each kept element goes: a plain write through p[e]
        under `p[e] > p[e - 1]` (stream compaction over an inclusive scan). Only non-decreasing counts send two
        threads to two elements."""
        out: set[str] = set()
        for a in self.accesses:
            if not a.write or a.atomic:
                continue
            targets = {(ld.param, sp.expand(ld.index)) for x in self._through_loads(a.index).free_symbols
                       if (ld := self.loads.get(x)) is not None and not ld.flt and ld.index is not None}
            for below, above in a.bounds.items():
                lo, hi = self.loads.get(below), self.loads.get(above) if isinstance(above, sp.Symbol) else None
                if lo is None or hi is None or lo.param != hi.param or lo.param in written or lo.flt:
                    continue
                if lo.index is not None and hi.index is not None and sp.expand(hi.index - lo.index) == 1 and (
                        hi.param, sp.expand(hi.index)) in targets:
                    out.add(hi.param)
        return out

    def _segment_spans(self) -> list[tuple[sp.Expr, sp.Expr]]:
        """(first, end) of every run of indices the kernel walks: counted loops (lo..hi) and the guarded term of
        an index (`x[base + j]` under `j < b`: base + lo .. base + b)."""
        spans = [(v.lo, v.hi) for v in self.vars.values() if not v.unbounded and v.lo is not None and v.hi is not None]
        for a in self.accesses:
            d = self._through_loads(a.index)
            for sym, bound in a.bounds.items():
                if sym not in d.free_symbols or sp.expand(d.coeff(sym)) != 1:
                    continue
                var = self.vars.get(sym)
                lo = var.lo if var is not None and var.lo is not None else sp.Integer(0)
                base = sp.expand(d - sym)
                if sym not in base.free_symbols:
                    spans.append((sp.expand(base + lo), sp.expand(base + bound)))
        return spans

    def _alternatives(self, start: sp.Expr, end: sp.Expr) -> list[tuple[sp.Expr, sp.Expr]]:
        """(start, end) through the locals' definitions; a local set on two paths (`start = 0; if (w > 0) start =
        cut[w - 1];`) gives one pair per definition."""
        start, end = self._through_loads(start), self._through_loads(end)
        pairs = [(start, end)]
        for _ in range(4):
            multi = [x for e in pairs[0] for x in e.free_symbols
                     if (v := self.vars.get(x)) is not None and not v.unbounded and v.hi is None and 1 <= len(v.defs) <= 3]
            if not multi:
                break
            x = multi[0]
            pairs = [(sp.expand(a.xreplace({x: d})), sp.expand(b.xreplace({x: d})))
                     for a, b in pairs for d in self.vars[x].defs][:16]
            pairs = [(self._through_loads(a), self._through_loads(b)) for a, b in pairs]
        return pairs

    def _segment_relation(self, start: sp.Expr, end: sp.Expr, written: set[str]) -> tuple[str, str | None] | None:
        """(p, None) when end - start is p[e + 1] - p[e] (plus terms of no loaded value), (p, q) when it is q[e]
        and start holds p[e]: the segment between two neighbours of p, or of q[e] elements from p[e]."""

        def terms(e: sp.Expr) -> list[tuple[str, sp.Expr, sp.Expr]] | None:
            out = []
            for t in sp.Add.make_args(sp.expand(e)):
                ld = [x for x in t.free_symbols if x in self.loads]
                if not ld:
                    continue
                load = self.loads[ld[0]]
                coeff = sp.expand(t / ld[0])
                if len(ld) > 1 or not coeff.is_number or load.flt or load.index is None or load.param in written:
                    return None
                out.append((load.param, sp.expand(load.index), coeff))
            return out

        diff, first = terms(end - start), terms(start)
        if diff is None:
            return None
        if len(diff) == 2 and diff[0][0] == diff[1][0] and {diff[0][2], diff[1][2]} == {1, -1}:
            (p, up, _), (_, down, _) = sorted(diff, key=lambda t: -t[2])
            return (p, None) if sp.expand(up - down) == 1 else None
        if len(diff) == 1 and diff[0][2] == 1 and first is not None:
            q, at, _ = diff[0]
            owners = [p for p, idx, c in first if c == 1 and p != q and sp.expand(idx - at) == 0]
            return (owners[0], q) if len(owners) == 1 else None
        return None

    def stride_clauses(self, grid: list[sp.Expr] | None, block: list[sp.Expr] | None) -> list[tuple[sp.Expr, sp.Expr]]:
        """Clauses that keep the threads' plain writes apart: `out[i * ld + j]` with i and j from the thread and
        `j < n` by guard writes one element from two threads (i, j) and (i + 1, j - ld) unless `ld >= n`:
        [(ld, n)], meaning ld >= n. Only where the index is one thread-dependent row times a stride of
        parameters plus a rest that is never negative, and the rest's largest value is not already below the
        stride (`x < w` before `out[y * w + x]` needs nothing)."""
        if self.truncated:
            return []
        grid, block, launch = self.launch_values(grid, block)
        threads = {*TID, *BID}
        const = {p.name for p in self.fn.params if p.is_const}
        out: list[tuple[sp.Expr, sp.Expr]] = []
        for a in self.accesses:
            if not a.write or a.atomic or a.param in const:
                continue
            d = sp.expand(a.index)
            if self._reach(d) & set(self.loads):
                continue  # through index values: distinct_indexes
            rows = []
            for t in sp.Add.make_args(d):
                factors = sp.Mul.make_args(t)
                stride = sp.Mul(*[f for f in factors if isinstance(f, sp.Symbol) and f.name.startswith("_P_")])
                row = sp.Mul(*[f for f in factors if not (isinstance(f, sp.Symbol) and f.name.startswith("_P_"))])
                if stride != 1 and isinstance(row, sp.Symbol) and self._reach(row) & threads:
                    rows.append((t, stride, row))
            if len(rows) != 1:
                continue
            t, stride, row = rows[0]
            rest = sp.expand(d - t)
            if row in self._reach(rest) or not self._reach(rest) & threads:
                continue
            mn, mx = _minval(rest, a.bounds, self), _maxval(rest, a.bounds, self)
            if mn is None or mx is None:
                continue
            mn, mx = sp.expand(mn.xreplace(launch)), sp.expand(mx.xreplace(launch))
            if not all(x.name.startswith("_P_") for x in mx.free_symbols) or not _never_negative(mn) or mx.has(
                    FloorDiv, CeilDiv, sp.Mod, sp.Max, sp.Min):  # a bound from the launch's rounding, not a guard
                continue
            if not _never_negative(sp.expand(stride - 1 - mx)):
                out.append((stride, sp.expand(mx + 1)))
        return list(dict.fromkeys(out))

    def field_clauses(self) -> list[tuple[sp.Expr, sp.Expr]]:
        """Fields of one element written at fixed offsets (`out[(y * w + x) * ch + 0]`, `... + 1`, `... + 2`):
        element x's field 2 is element x + 1's field 0 unless the stride holds every field, `ch >= 3`. The
        thread-dependent terms share the stride (a parameter, or a product of them); the offsets are numbers."""
        if self.truncated:
            return []
        threads = {*TID, *BID}
        const = {p.name for p in self.fn.params if p.is_const}
        groups: dict[tuple[str, sp.Expr, sp.Expr], set[int]] = {}
        for a in self.accesses:
            if not a.write or a.atomic or a.param in const:
                continue
            d = sp.expand(a.index)
            if self._reach(d) & set(self.loads):
                continue
            moving = [t for t in sp.Add.make_args(d) if self._reach(t) & threads]
            rest = sp.expand(d - sp.Add(*moving))
            if not moving or not rest.is_Integer:
                continue
            shared = set.intersection(*({f for f in sp.Mul.make_args(t) if isinstance(f, sp.Symbol)
                                         and f.name.startswith("_P_")} for t in moving))
            if not shared:
                continue
            stride = sp.Mul(*sorted(shared, key=str))
            groups.setdefault((a.param, stride, sp.expand(sp.Add(*moving) / stride)), set()).add(int(rest))
        out = []
        for (_, stride, _), offsets in groups.items():
            span = max(offsets) - min(offsets)
            if span > 0 and not _never_negative(sp.expand(stride - 1 - span)):
                out.append((stride, sp.Integer(span + 1)))
        return out

    def index_ranges(self, lengths: dict[str, sp.Expr], grid: list[sp.Expr] | None,
                     block: list[sp.Expr] | None, segments: dict[str, str] | None = None
                     ) -> tuple[dict[str, tuple[sp.Expr, sp.Expr]], dict[str, str]]:
        """Buffers whose values index other buffers (`x[idx[i]]`, CSR row pointers bounding loops): the range
        (lowest, highest) each may hold so every access stays inside the lengths found, and those no range can
        be found for (float values used as indices, products of index values, an index the kernel cannot keep
        non-negative). An index value the kernel guards itself (`if (j >= n) return;`) needs no bound of its own
        past the guard's. `segments` (offsets -> lengths, drawn `ascending by`: off[k] + len[k] <= off[k + 1] <=
        the range's end) lets an access that reaches off[k] + len[k] take the whole room for off, len capped by
        off's end, instead of half of it each."""
        segments = segments or {}
        tied: dict[str, str] = {}  # lengths -> offsets whose range caps them
        grid, block, launch = self.launch_values(grid, block)
        his: dict[str, list[sp.Expr]] = {}
        los: dict[str, list[sp.Expr]] = {}
        bad: dict[str, str] = {}
        if self.truncated:
            return {}, {q: "the kernel is too large to follow" for q in {ld.param for ld in self.loads.values()}}

        spec_sizes = {x for v in launch.values() for x in sp.sympify(v).free_symbols}

        def settle(e: sp.Expr | None) -> sp.Expr | None:
            if e is None:
                return None
            e = sp.expand(e.xreplace(launch)) if launch else e
            return None if any(not _is_final(x) and x not in spec_sizes for x in e.free_symbols) else e

        for a in self.accesses:
            loads = self.loads_in(a.last)
            if not loads:
                continue
            owners = {self.loads[s].param for s in loads if s in self.loads}
            if any(s in self.loads and self.loads[s].flt for s in loads):
                for q in owners:
                    bad.setdefault(q, f"its values are used as indices into '{a.param}' after arithmetic xlate cannot bound")
                continue
            why = f"its values index '{a.param}' in a way xlate cannot bound"
            length = lengths.get(a.param)
            m = settle(_maxval(a.last, a.bounds, self))
            m = self._segment_ends(m, segments, tied)
            with self._load_minimum():
                low = settle(_minval(a.index, a.bounds, self))
            if length is None or m is None or low is None:
                for q in owners:
                    bad.setdefault(q, self._unbounded_why(a, length, m, low) or why)
                continue
            us = sorted((x for x in m.free_symbols if x.name.startswith("U_")), key=lambda x: x.name)
            ds = sorted((x for x in low.free_symbols if x.name.startswith("D_")), key=lambda x: x.name)
            caps = _solve_caps(m, us, sp.expand(length - 1))
            floors = _solve_floors(low, ds)
            if caps is None or floors is None:
                for q in owners:
                    bad.setdefault(q, why)
                continue
            for u, hi in caps.items():
                his.setdefault(u.name[2:], []).append(hi)
            for d, lo in floors.items():
                los.setdefault(d.name[2:], []).append(lo)
            for q in owners - {u.name[2:] for u in us}:  # guarded: its values no longer reach the index
                cap = self._guard_cap(q, loads, a, launch, length)
                if cap is None:
                    bad.setdefault(q, why)
                else:
                    his.setdefault(q, []).append(cap)
        for q, (param, expr, unknown) in self.lost.items():
            bad.setdefault(q, f"its values index '{param}' through '{expr}', which xlate cannot evaluate" + (
                f" (no value known for {', '.join(repr(n) for n in unknown)})" if unknown else ""))
        # a template-typed buffer was followed as integers on a guess: where no range is found it stays as before
        # (no range) rather than a hole; where one is found it is the range integers need
        guessed = {ld.param for ld in self.loads.values() if ld.guessed}
        bad = {q: why for q, why in bad.items() if q not in guessed}
        out: dict[str, tuple[sp.Expr, sp.Expr]] = {}
        for q, caps_q in his.items():
            if q in bad:
                continue
            lo_list = los.get(q, [])
            lo = sp.Integer(0) if not lo_list else (lo_list[0] if len(lo_list) == 1 else sp.Max(*lo_list))
            out[q] = (lo, caps_q[0] if len(caps_q) == 1 else sp.Min(*caps_q))
        for q, p in tied.items():  # a length never exceeds the room its offsets have
            if p in out and q not in bad:
                out[q] = (out[q][0], sp.Min(out[q][1], out[p][1])) if q in out else (sp.Integer(0), out[p][1])
        return out, bad

    def _unbounded_why(self, a: Access, length: sp.Expr | None, m: sp.Expr | None, low: sp.Expr | None) -> str | None:
        """Why the values reaching `a`'s index get no range, named after what stops it: the buffer's unknown
        length, or the local whose value has no bound (`out[td + off]` with td set by a call not followed)."""
        if length is None:
            return f"its values index '{a.param}', whose length xlate does not know"
        if m is None:
            for s in sorted(self._reach(a.last), key=str):
                var = self.vars.get(s)
                if s in a.bounds or s in self.loads or _is_final(s) or s in TID or s in BID or (
                        var is not None and not var.unbounded):
                    continue  # bounded, or made of other symbols (those are in the reach too)
                local = re.fullmatch(r"[vl]_(.+)_\d+", s.name)
                if local is None:
                    continue
                if local.group(1) == "staged":
                    return (f"its values index '{a.param}' after a round trip through a __shared__ array whose stores "
                            "xlate cannot match to one form")
                cause = var.cause if var is not None and var.cause else "a value xlate cannot bound"
                return f"its values index '{a.param}' together with '{local.group(1)}', {cause}"
        if low is None:
            return f"its values index '{a.param}' where xlate cannot keep the index non-negative"
        return None

    @staticmethod
    def _segment_ends(m: sp.Expr | None, segments: dict[str, str], tied: dict[str, str]) -> sp.Expr | None:
        """`m` (an access's largest index over the loaded values' maxima U_<buffer>) with off[k] + len[k] read as
        off's own maximum where off is drawn ascending by len (both with one coefficient): the drawing keeps
        the end of every segment inside off's range."""
        if m is None:
            return m
        us = {x.name[2:]: x for x in m.free_symbols if x.name.startswith("U_")}
        for p, q in segments.items():
            if p in us and q in us:
                cp, cq = sp.expand(m).coeff(us[p]), sp.expand(m).coeff(us[q])
                if cp == cq and cp.is_number and cp > 0:
                    m = sp.expand(m.xreplace({us[q]: 0}))
                    tied[q] = p
        return m

    @contextlib.contextmanager
    def _load_minimum(self):
        """While set, a loaded integer's smallest value is a symbol D_<buffer> (not 0): what an index needs of
        it to stay non-negative."""
        self._keep_minimum = True
        try:
            yield
        finally:
            self._keep_minimum = False

    def _guard_cap(self, q: str, loads: set[sp.Symbol], a: Access, launch: dict[sp.Symbol, sp.Expr],
                   length: sp.Expr) -> sp.Expr | None:
        """The largest value worth giving q when the kernel's guards bound the index it drives: the guard's own
        bound where it tests the loaded value directly, else the last index of the buffer it reaches."""
        caps = []
        for s in loads:
            if s not in self.loads or self.loads[s].param != q:
                continue
            mx = _maxval(s, a.bounds, self)
            mx = sp.expand(mx.xreplace(launch)) if mx is not None and launch else mx
            if mx is not None and not any(x.name.startswith("U_") or not _is_final(x) for x in mx.free_symbols):
                caps.append(mx)
        if caps:
            return caps[0] if len(caps) == 1 else sp.Min(*caps)
        return sp.expand(length - 1)

    def _aligned_last(self, a: Access, launch: dict[sp.Symbol, sp.Expr]) -> sp.Expr | None:
        """The last element an aligned vector access of W elements can touch: its first index is a multiple of W,
        so at most W * (m // W) for m its largest value, and the access ends W - 1 past that. Read with the sizes
        the spec draws as multiples (`n = 2 * n'`), so a guard `i < n` with n even gives n - 1, not n."""
        w = sp.expand(a.last - a.index + 1)
        if not w.is_Integer or int(w) != a.align:
            return None
        m = _maxval(a.index, a.bounds, self)
        if m is None:
            return None
        m = sp.expand(m.xreplace(launch)) if launch else m
        primes = {s: sp.Symbol(f"{s.name}__m", integer=True, positive=True) for s in self.multiples}
        m = sp.expand(m.xreplace({s: k * primes[s] for s, k in self.multiples.items()}))
        w = a.align
        const, rest = m.as_coeff_Add()
        if const.is_Integer and all((c := t.as_coeff_Mul()[0]).is_Integer and int(c) % w == 0 for t in sp.Add.make_args(rest)):
            floor = sp.expand(rest + w * (int(const) // w))  # every term but the constant already a multiple of w
        else:
            q = FloorDiv(m, sp.Integer(w))
            if isinstance(q, FloorDiv):
                return None  # no simpler than the index itself: the plain bound says as much
            floor = sp.expand(w * q)
        return sp.expand((floor + w - 1).xreplace({primes[s]: s / k for s, k in self.multiples.items()}))

    def alignment_needs(self, grid: list[sp.Expr] | None, block: list[sp.Expr] | None,
                        values: dict[sp.Symbol, sp.Expr] | None = None) -> dict[int, list[tuple[int, frozenset]]] | None:
        """What the kernel's vector views need of the sizes: for each access through a view aligned to W elements
        (a float4 load of floats, W = 4), its first index must be a multiple of W for every thread. Each term of
        the index (locals replaced by what they stand for, loop variables by their start plus any number of
        steps) is `c * sizes * (anything)`: c a multiple of W needs nothing, else one of its sizes must be a
        multiple of W / gcd(c, W). Where a guard bounds the first index (`i < n` before `*(float2*)&x[i]`), the
        bound is the buffer's end the program keeps a multiple of W, or the last vector reads past it: n's terms
        are needed too. id(access) -> [(k, sizes one of which must be a multiple of k)]; an access with a term
        no size can fix (a constant offset of 1, a local we cannot follow) is left out."""
        if self.truncated:
            return None
        grid, block, launch = self.launch_values(grid, block)
        values = values or {}
        out: dict[int, list[tuple[int, frozenset]]] = {}
        for a in self.accesses:
            if a.align <= 1:
                continue
            w = a.align
            forms = self._forms(_element_index(a.index, w))
            if forms is None:
                continue
            needs: list[tuple[int, frozenset]] = []
            ok = True
            for f in forms:
                got = _term_needs(sp.expand(f.xreplace(launch).xreplace(values)), w, opaque_ok=True)
                if got is None:
                    ok = False
                    break
                needs += got
            if not ok:
                continue
            width = sp.expand(a.last - a.index + 1)
            m = _maxval(a.index, a.bounds, self) if width == w else None
            if m is not None:  # the bound the first index stays below (a guard, a loop's end)
                end = sp.expand((m + 1).xreplace(launch).xreplace(values))
                const = end.as_coeff_Add()[0]
                if const.is_Integer and int(const) % w == 0 and not any(
                        x in GRID or x in BLOCK or x.name.startswith(("U_", "D_")) for x in end.free_symbols):
                    got = _term_needs(end, w, opaque_ok=False)
                    needs += got or []
            out[id(a)] = list(dict.fromkeys(needs))
        return out

    def _forms(self, e: sp.Expr) -> list[sp.Expr] | None:
        """`e` over the kernel's parameters, thread indices and opaque integers: its locals replaced by their
        definitions (each one of a local set in two branches), a counted loop's variable by `start + step * k`
        (k any number), a local we cannot follow by an opaque integer; divisions, remainders, minima and loaded
        values are opaque integers too. None past a few alternatives."""
        def opaque(f: sp.Expr) -> sp.Expr:
            atoms = {x: sp.Symbol(f"__o_{x}", integer=True, nonnegative=True) for x in f.atoms(
                FloorDiv, CeilDiv, sp.Mod, sp.Min, sp.Max, sp.floor, sp.ceiling)}
            return sp.expand(f.xreplace(atoms)) if atoms else sp.expand(f)

        forms = [opaque(e)]
        for _ in range(24):
            nxt: list[sp.Expr] = []
            changed = False
            for f in forms:
                locals_ = sorted((x for x in f.free_symbols if x in self.vars), key=str)
                if not locals_:
                    nxt.append(f)
                    continue
                changed = True
                subs: dict[sp.Symbol, sp.Expr] = {}
                branch: tuple[sp.Symbol, list[sp.Expr]] | None = None
                for local in locals_:
                    var = self.vars[local]
                    k = sp.Symbol(f"__k_{local.name}", integer=True, nonnegative=True)
                    if var.step is not None and len(var.defs) == 1 and not var.unbounded:
                        subs[local] = var.defs[0] + var.step * k
                    elif var.unbounded or var.hi is not None or var.lo is not None or not var.defs:
                        subs[local] = k
                    elif len(var.defs) == 1:
                        subs[local] = var.defs[0]
                    elif branch is None:
                        branch = (local, list(var.defs))
                if branch is None:
                    nxt.append(opaque(f.xreplace(subs)))
                else:
                    nxt += [opaque(f.xreplace({**subs, branch[0]: d})) for d in branch[1]]
            forms = list(dict.fromkeys(nxt))
            if len(forms) > 16:
                return None
            if not changed:
                return forms
        return None

    def int_range(self, pname: str) -> tuple[int, int]:
        return 0, 16


DEFAULT_2D = (16, 16)
_IDENT = re.compile(r"\b[A-Za-z_]\w*\b")


def _dims_text(block: list[int]) -> str:
    return str(block[0]) if len(block) == 1 else f"({', '.join(str(b) for b in block)})"


def _ptext(e: sp.Expr) -> str:
    names = {s.name: s.name[3:] for s in e.free_symbols if s.name.startswith("_P_")}
    return to_text(e, names)


def _from_spec(t: str, fn: Function) -> sp.Expr:
    from xlate.specs import expr as spec_expr

    env: dict[str, Any] = {p.name: param_symbol(p.name) for p in fn.params}
    node = spec_expr.parse(t)
    return _ast_to_sym(node, env)


def _ast_to_sym(node: Any, env: dict[str, Any]) -> sp.Expr:
    import ast

    if isinstance(node, ast.Constant):
        return sp.Integer(node.value) if isinstance(node.value, int) else sp.Float(node.value)
    if isinstance(node, ast.Name):
        return env[node.id]
    if isinstance(node, ast.BinOp):
        a, b = _ast_to_sym(node.left, env), _ast_to_sym(node.right, env)
        if isinstance(node.op, ast.Add):
            return a + b
        if isinstance(node.op, ast.Sub):
            return a - b
        if isinstance(node.op, ast.Mult):
            return a * b
        if isinstance(node.op, ast.FloorDiv):
            return FloorDiv(a, b)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "cdiv":
        return CeilDiv(_ast_to_sym(node.args[0], env), _ast_to_sym(node.args[1], env))
    raise ValueError("unsupported")


def _is_outcome(s: sp.Symbol) -> bool:
    return _is_final(s)


def _dominant(args: list[sp.Expr]) -> list[sp.Expr]:
    """The candidates no other one provably exceeds (b - a a sum of non-negative terms): the arguments a
    maximum needs. Numbers fold into the largest."""
    nums = [a for a in args if a.is_number]
    rest = [a for a in args if not a.is_number]
    keep: list[sp.Expr] = []
    for i, a in enumerate(rest):
        dominated = False
        for j, b in enumerate(rest):
            if i == j:
                continue
            d = sp.expand(b - a)
            if (d != 0 or j < i) and all(_nonneg_term(t) for t in sp.Add.make_args(d)):
                dominated = True
                break
        if not dominated:
            keep.append(a)
    if nums:
        top = max(nums)
        if not any(all(_nonneg_term(t) for t in sp.Add.make_args(sp.expand(k - top))) for k in keep):
            keep.append(top)
    return keep or args[:1]


def _simplify_max(e: sp.Expr) -> sp.Expr:
    args = list(e.args)
    keep = []
    for a in args:
        if any(b is not a and sp.simplify(b - a).is_nonnegative for b in args):
            continue
        keep.append(a)
    return sp.Max(*keep) if len(keep) > 1 else keep[0]


def _linear_upper(e: sp.Expr, us: list[sp.Symbol]) -> sp.Expr | None:
    """An upper bound of `e` that is linear in `us`: integer divisions by positive values become real ones
    (a / b >= a // b), a remainder its divisor less one, a minimum any of its arguments."""
    for _ in range(16):
        atoms = [f for f in e.atoms(FloorDiv, CeilDiv, sp.Mod, sp.Min) if f.free_symbols & set(us)]
        if not atoms:
            return sp.expand(e)
        f = atoms[0]
        if _sign(e, f) != 1:
            return None
        if isinstance(f, FloorDiv):
            rep = f.args[0] / f.args[1]
        elif isinstance(f, CeilDiv):
            rep = (f.args[0] + f.args[1] - 1) / f.args[1]
        elif isinstance(f, sp.Mod):
            rep = f.args[1] - 1
        else:
            rep = next((x for x in f.args if x.free_symbols & set(us)), f.args[0])
        if isinstance(f, (FloorDiv, CeilDiv, sp.Mod)) and not (f.args[1].is_positive or _positive_final(f.args[1])):
            return None
        e = sp.expand(e.xreplace({f: rep}))
    return None


def _outside(x: sp.Symbol) -> bool:
    """A symbol that stands for something outside the kernel's code (a parameter, a size of the spec, a launch
    dimension), not one of its locals, loads or thread indices."""
    return _is_final(x) or not (x.name.startswith(("v_", "l_", "L_", "__")) or x in TID or x in BID)


def _positive_final(e: sp.Expr) -> bool:
    return all(_outside(x) for x in e.free_symbols) and all(_nonneg_term(t) for t in sp.Add.make_args(sp.expand(e))) and (
        e != 0)


def _floor_of_ratio(num: sp.Expr, den: sp.Expr) -> sp.Expr:
    q = sp.cancel(num / den)
    if q.is_polynomial() and all(c.is_Integer for c in sp.Poly(q, *q.free_symbols).coeffs()) if q.free_symbols else q.is_Integer:
        return sp.expand(q)
    n, d = sp.fraction(sp.together(q))
    return FloorDiv(sp.expand(n), sp.expand(d))


def _solve_caps(m: sp.Expr, us: list[sp.Symbol], limit: sp.Expr) -> dict[sp.Symbol, sp.Expr] | None:
    """Caps on the load bounds `us` that keep m <= limit: m is made linear (upper bound), each of the k loads
    gets 1/k of the room left (sound for any sum of non-negative terms)."""
    if not us:
        return {}
    maxes = [f for f in m.atoms(sp.Max) if f.free_symbols & set(us)]
    if maxes:  # every argument of the maximum must stay within the limit: the tightest caps of each
        per: dict[sp.Symbol, list[sp.Expr]] = {}
        for arg in maxes[0].args:
            sub = _solve_caps(sp.expand(m.xreplace({maxes[0]: arg})), [u for u in us if u in arg.free_symbols or u in (
                m.free_symbols - maxes[0].free_symbols)], limit)
            if sub is None:
                return None
            for u, cap in sub.items():
                per.setdefault(u, []).append(cap)
        return {u: caps[0] if len(caps) == 1 else sp.Min(*caps) for u, caps in per.items()}
    lin = _linear_upper(m, us)
    if lin is None:
        return None
    coeffs = {u: sp.expand(sp.diff(lin, u)) for u in us}
    rest = sp.expand(lin - sum(c * u for u, c in coeffs.items()))
    if rest.free_symbols & set(us) or any(c.free_symbols & set(us) for c in coeffs.values()):
        return None  # products of index values
    if any(not _outside(x) for x in rest.free_symbols):
        return None
    out = {}
    for u, c in coeffs.items():
        if not (c.is_positive or _positive_final(c)):
            return None
        out[u] = _floor_of_ratio(sp.expand(limit - rest), len(us) * c)
    return out


def _solve_floors(low: sp.Expr, ds: list[sp.Symbol]) -> dict[sp.Symbol, sp.Expr] | None:
    """Floors on the loads' smallest values `ds` that keep the index `low` >= 0; None when it may go negative
    whatever they hold."""
    low = sp.expand(low)
    if low.is_nonnegative or all(_nonneg_term(t) for t in sp.Add.make_args(low)):
        return {}
    if not ds:
        return None
    coeffs = {d: sp.expand(sp.diff(low, d)) for d in ds}
    rest = sp.expand(low - sum(c * d for d, c in coeffs.items()))
    if rest.free_symbols & set(ds) or any(c.free_symbols & set(ds) or not (c.is_nonnegative or _positive_final(c))
                                           for c in coeffs.values()):
        return None
    if rest.is_nonnegative or all(_nonneg_term(t) for t in sp.Add.make_args(rest)):
        return {}
    if any(not (c.is_Integer and int(c) > 0) for c in coeffs.values()):
        return None
    if not rest.is_Integer:  # x[idx[i] - n]: idx's values start at n (one index buffer, a deficit over sizes)
        if len(ds) != 1 or not all(_outside(x) for x in rest.free_symbols):
            return None
        (d, c), = coeffs.items()
        return {d: sp.expand(-rest) if c == 1 else CeilDiv(sp.expand(-rest), c)}
    need = -int(rest)
    return {d: sp.Integer(-(-need // (len(ds) * int(c)))) for d, c in coeffs.items()}


# -- bounds ----------------------------------------------------------------------------------------------------


def _maxval(e: sp.Expr, bounds: dict[sp.Symbol, sp.Expr], facts: KernelFacts, depth: int = 0) -> sp.Expr | None:
    return _extreme(e, bounds, facts, True, depth)


def _minval(e: sp.Expr, bounds: dict[sp.Symbol, sp.Expr], facts: KernelFacts, depth: int = 0) -> sp.Expr | None:
    return _extreme(e, bounds, facts, False, depth)


def _extreme(e: sp.Expr, bounds: dict[sp.Symbol, sp.Expr], facts: KernelFacts, upper: bool, depth: int) -> sp.Expr | None:
    """The largest (smallest) value of `e` over every thread and loop iteration, given the guards in force:
    each eliminable symbol is replaced by its own extreme, chosen by the sign of its coefficient."""
    if depth > 12:
        return None
    e = sp.expand(sp.sympify(e))
    for _ in range(40):
        if isinstance(e, (sp.Min, sp.Max)):
            parts = [_extreme(a, bounds, facts, upper, depth + 1) for a in e.args]
            if isinstance(e, sp.Min) and upper:
                got = [p for p in parts if p is not None]
                return sp.Min(*got) if got else None
            if isinstance(e, sp.Max) and not upper:
                got = [p for p in parts if p is not None]
                return sp.Max(*got) if got else None
            if any(p is None for p in parts):
                return None
            return (sp.Max if upper else sp.Min)(*parts)  # type: ignore[arg-type]
        # outermost first, in a fixed order: atoms() is a set, and its order (hash-seeded) changed which bound
        # was found (groupnorm's weight[c] extent came and went between identical runs)
        funcs = sorted((f for f in e.atoms(FloorDiv, CeilDiv, sp.Mod, sp.Min, sp.Max, sp.floor, sp.ceiling)
                        if any(not _is_final(x) for x in f.free_symbols)), key=lambda f: (-sp.count_ops(f), str(f)))
        if funcs:
            f = funcs[0]
            sign = _sign(e, f)
            if sign is None:
                return None
            want_upper = upper if sign > 0 else not upper
            if isinstance(f, sp.Mod):
                a, b = f.args
                if b.free_symbols <= _outcomes(b) and want_upper:
                    rep = b - 1
                elif not want_upper:
                    rep = sp.Integer(0)
                else:  # a % c4 with c4 a local (C / 4): below the largest value of the divisor
                    top = _extreme(b, bounds, facts, True, depth + 1)
                    if top is None:
                        return None
                    rep = top - 1
            elif isinstance(f, (FloorDiv, CeilDiv)):
                a, b = f.args
                inner = _extreme(a, bounds, facts, want_upper, depth + 1)
                if inner is None:
                    return None
                rep = type(f)(inner, b)
            elif isinstance(f, (sp.floor, sp.ceiling)):
                inner = _extreme(f.args[0], bounds, facts, want_upper, depth + 1)
                if inner is None:
                    return None
                rep = type(f)(inner)
            else:
                rep = _extreme(f, bounds, facts, want_upper, depth + 1)
                if rep is None:
                    return None
            e = sp.expand(e.xreplace({f: rep}))
            continue
        elim = [s for s in e.free_symbols if not _is_final(s)]
        if not elim:
            return e
        s = sorted(elim, key=_elim_order)[0]
        sign = _sign(e, s)
        if sign is None:
            return None
        want_upper = upper if sign > 0 else not upper
        rep = _symbol_extreme(s, bounds, facts, want_upper, depth)
        if rep is None:
            return None
        e = sp.expand(e.xreplace({s: rep}))
    return None


def _never_negative(e: sp.Expr) -> bool:
    """Whether `e` (over positive sizes) is never negative: by its terms, or, for identities sympy does not see
    through (`C - 4 * (C / 4) - C % 4`), at every point of a grid of small and odd sizes, where a real lower
    bound (`ld - n`) is negative at once."""
    import itertools

    e = sp.expand(e)
    if (e.is_number and e >= 0) or e.is_nonnegative or all(_nonneg_term(t) for t in sp.Add.make_args(e)):
        return True
    xs = sorted(e.free_symbols, key=str)
    if len(xs) > 3:
        return False
    points = (1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 100, 255, 1000)
    try:
        return all(float(e.subs(dict(zip(xs, pt)))) >= 0 for pt in itertools.product(points, repeat=len(xs)))
    except (TypeError, ValueError, ZeroDivisionError):
        return False


def _outcomes(e: sp.Expr) -> set[sp.Symbol]:
    return {s for s in e.free_symbols if _is_final(s)}


def _is_final(s: sp.Symbol) -> bool:
    """Symbols that stay in an extent: parameters, launch dimensions, sizeof of template types, load bounds."""
    return s.name.startswith(("_P_", "sizeof(", "U_", "D_")) or s in GRID or s in BLOCK


def _elim_order(s: sp.Symbol) -> tuple[int, str]:
    # locals first (their guards are the tightest), then loads, loops and thread/block indices
    if s.name.startswith("v_"):
        return (0, s.name)
    if s.name.startswith("L_"):
        return (1, s.name)
    return (2, s.name)


def _sign(e: sp.Expr, s: sp.Expr) -> int | None:
    if isinstance(s, sp.Symbol):
        d = sp.diff(e, s)
    else:
        z = sp.Symbol("__z", integer=True, nonnegative=True)
        d = sp.diff(e.xreplace({s: z}), z)
    if d == 0:
        return 1
    d = sp.expand(d)
    if d.is_nonnegative or all(_nonneg_term(t) for t in sp.Add.make_args(d)):
        return 1
    if d.is_nonpositive or all(_nonneg_term(-t) for t in sp.Add.make_args(d)):
        return -1
    return None


def _nonneg_term(t: sp.Expr) -> bool:
    coeff, _ = t.as_coeff_Mul()
    return bool(coeff >= 0) and all(
        (getattr(f, "is_nonnegative", False) or isinstance(f, (FloorDiv, CeilDiv, sp.Mod)))
        for f in sp.Mul.make_args(t) if not f.is_number)


def _symbol_extreme(s: sp.Symbol, bounds: dict[sp.Symbol, sp.Expr], facts: KernelFacts, upper: bool, depth: int) -> sp.Expr | None:
    name = s.name
    if not upper:
        var = facts.vars.get(s)
        if var is not None and not var.unbounded and var.lo is not None:
            return _minval(var.lo, bounds, facts, depth + 1)
        if var is not None and not var.unbounded and var.defs:
            vals = [_minval(d, bounds, facts, depth + 1) for d in var.defs]
            if any(v is None for v in vals):
                return sp.Integer(0) if not var.unbounded else None
            return sp.Min(*vals) if len(vals) > 1 else vals[0]  # type: ignore[arg-type]
        if name.startswith("L_") and s in facts.loads and not facts.loads[s].flt:
            if facts._keep_minimum:
                return sp.Symbol(f"D_{facts.loads[s].param}", integer=True, nonnegative=True)
            return sp.Integer(0)
        return sp.Integer(0) if (name[:1] in "tbl" or var is not None) else None
    if s in bounds:
        return bounds[s] - 1
    for i, t in enumerate(TID):
        if s == t:
            return BLOCK[i] - 1
    for i, b in enumerate(BID):
        if s == b:
            return GRID[i] - 1
    if name.startswith("L_"):
        load = facts.loads.get(s)
        if load is None or load.flt:
            return None
        return sp.Symbol(f"U_{load.param}", integer=True, nonnegative=True)
    var = facts.vars.get(s)
    if var is None or var.unbounded:
        return None
    if var.hi is not None:
        return _maxval(var.hi - 1, bounds, facts, depth + 1)
    vals = [_maxval(d, bounds, facts, depth + 1) for d in var.defs]
    if not vals or any(v is None for v in vals):
        return None
    return sp.Max(*vals) if len(vals) > 1 else vals[0]  # type: ignore[arg-type]


# -- the interpreter -------------------------------------------------------------------------------------------


class KernelInterpreter(Evaluator):
    def __init__(self, program: Program, fn: Function, unit: KernelUnit, bindings: dict[str, str] | None = None,
                 open_values: frozenset[str] = frozenset()):
        super().__init__(program)
        self._open = open_values  # template values the spec draws: `g * CDIM` is over a size, not unknown
        self._bindings = dict(bindings or {})  # the launch's template arguments: the types a vector view is read with
        self._local_types: dict[str, str] = {}  # `using pack_t = uint4;` inside the kernel
        self._values = {t.name: int(self._bindings[t.name]) for t in fn.template_params if t.kind != "type" and re.fullmatch(
            r"\d+", self._bindings.get(t.name, "").strip())}  # template values the launch gives: `VEC` is 2
        self.fn = fn
        self.unit = unit
        self.facts = KernelFacts(fn)
        self.bounds: dict[sp.Symbol, sp.Expr] = {}
        self.budget = STATEMENT_BUDGET
        self._n = 0
        self._inline_depth = 0
        self._param_types = {p.name: normalise_ctype(p.base_type) for p in fn.params}
        self._template_types = {t.name for t in fn.template_params if t.kind == "type"}
        self._aliases: dict[sp.Expr, sp.Symbol] = {}
        self.eval_budget = KERNEL_EVAL_BUDGET
        self._frozen: set[str] = set()  # induction variables of the loops being run: their range covers every update
        self._aggregates: dict[sp.Symbol, tuple[str, str]] = {}  # by-value vector/struct parameter -> (name, scalar)
        self._atomic = False  # evaluating the address an atomic operation receives
        # __shared__ arrays: what `a[i] = v` stored through each view (its form over `Q_<buffer>` symbols and
        # whether each buffer's type is a guessed template type; None: a value not followed), how many writes of
        # each array were such stores, and the integer buffers stored there; a load reads one back (_staged_value)
        self._staged: dict[tuple[str, str], list[tuple[sp.Expr, dict[str, bool]] | None]] = {}
        self._prior: KernelInterpreter | None = None  # a first run over the whole kernel: every store it saw
        self._staged_writes: collections.Counter[str] = collections.Counter()
        self._array_writes: collections.Counter[str] = collections.Counter()
        self._array_names: collections.defaultdict[str, set[str]] = collections.defaultdict(set)  # views' names
        self._staged_from: collections.defaultdict[str, set[str]] = collections.defaultdict(set)
        self._tickets: set[sp.Symbol] = set()  # what atomics returned: counters other threads move, not contents
        self._moves: dict[sp.Symbol, str] = {}  # offsets of pointers moved by amounts not evaluated -> the amount

    def fresh(self, prefix: str, name: str) -> sp.Symbol:
        self._n += 1
        return sp.Symbol(f"{prefix}_{name}_{self._n}", integer=True, nonnegative=True)

    def new_var(self, name: str, defs: list[sp.Expr], unbounded: bool = False) -> sp.Symbol:
        s = self.fresh("v", name)
        self.facts.vars[s] = Var(s, defs, unbounded)
        return s

    # -- entry --------------------------------------------------------------------------------------------------
    def run(self, node: ts.Node) -> KernelFacts:
        env: dict[str, Any] = {}
        for p in self.fn.params:
            if p.is_pointer:
                esize = self.sizeof(self._param_types[p.name])
                env[p.name] = KPtr(p.name, sp.Integer(0), sp.Integer(1), None, esize)
            else:
                env[p.name] = Num(param_symbol(p.name), is_float_type(p.base_type))
                agg = aggregate_of(self.program, p.base_type)
                if agg is not None:  # float3 w, a struct of numbers: its fields are parameters of their own
                    self._aggregates[param_symbol(p.name)] = (p.name, agg[0])
        if self.fn.launch_bounds:
            with contextlib.suppress(ValueError):
                self.facts.launch_bounds = int(self.fn.launch_bounds[0])
        body = node.child_by_field_name("body")
        if body is not None:
            self.facts.body_text = text(body)
            self.facts.names_used |= self._names_through({text(n) for n in walk_tree(body) if n.type == "identifier"})
            self.block(body, env)
        if self.budget <= 0 or self.eval_budget <= 0:
            self.facts.unknown = True
            self.facts.truncated = True  # too big to follow in full: no extent from the kernel's own code
        return self.facts

    def _names_through(self, names: set[str]) -> set[str]:
        """The names the kernel uses, with those its macros, the constants it names and the device functions it calls
        use in turn (`Node(i, iH)` expanding to `node[i * MAX_VARS_PER_NODE + iH]`): a program constant the kernel
        depends on keeps its value in the spec (drawn smaller, the kernel's fixed layout no longer fits its buffers)."""
        consts = {n: text(value) for n, (value, _) in self.program.initialisers.items()}
        out = set(names)
        todo = list(names)
        while todo and len(out) < 5000:
            n = todo.pop()
            texts = []
            m = self.program.macros.get(n)
            if m is not None and m.body:
                texts.append(m.body)
            if n in consts:
                texts.append(consts[n])
            for fd in self.program.functions.get(n, []):
                body = fd.node.child_by_field_name("body")
                head = text(fd.node)[: body.start_byte - fd.node.start_byte] if body is not None else ""
                callable_here = fd.space == "device" or "__device__" in head  # __host__ __device__ too, not host-only
                if callable_here and not fd.cls and body is not None and body.end_byte - body.start_byte < 100_000:
                    texts.append(text(body))
            for t in texts:
                for w in _IDENT.findall(t):
                    if w not in out:
                        out.add(w)
                        todo.append(w)
        return out

    # -- statements ---------------------------------------------------------------------------------------------
    def block(self, node: ts.Node, env: dict[str, Any]) -> None:
        saved = dict(self.bounds)
        children = [c for c in node.named_children if c.type != "comment"]
        for child in children:
            if self.budget <= 0:
                break
            self.statement(child, env)
            # `if (cond) return;` guards the rest of the block with the negation of cond
            if child.type == "if_statement" and child.child_by_field_name("alternative") is None and _exits(
                    child.child_by_field_name("consequence")):
                self.constrain(child.child_by_field_name("condition"), env, negate=True)
        self.bounds = saved

    def statement(self, node: ts.Node, env: dict[str, Any]) -> None:
        self.budget -= 1
        t = node.type
        if t == "compound_statement":
            self.block(node, env)
        elif t == "declaration":
            self.declare_local(node, env)
        elif t == "expression_statement":
            e = _first_named(node)
            macro = self.program.macros.get(text(e)) if e is not None and e.type == "identifier" else None
            if macro is not None and macro.params is None and text(e) not in self._macro_active and (
                    ";" in macro.body or parse_expr(macro.body)[1] is None):  # `BODY;`: a macro of statements
                _, stmts = parse_statements(macro.body)
                if stmts is not None:
                    self._macro_active.add(text(e))
                    try:
                        self.block(stmts, env)
                    finally:
                        self._macro_active.discard(text(e))
            elif e is not None:
                self.effect(e, env)
        elif t == "if_statement":
            cond = node.child_by_field_name("condition")
            self.ev(cond, env)
            saved = dict(self.bounds)
            before = dict(env)
            self.constrain(cond, env)
            yes = node.child_by_field_name("consequence")
            if yes is not None:
                self.statement(yes, env)
            self.bounds = dict(saved)
            after_yes = dict(env)
            env.clear()
            env.update(before)
            no = node.child_by_field_name("alternative")
            if no is not None:
                self.constrain(cond, env, negate=True)
                self.statement(no, env)
                self.bounds = dict(saved)
            self.merge(env, before, after_yes)
        elif t == "else_clause":
            for c in node.named_children:
                self.statement(c, env)
        elif t == "for_statement":
            self.for_loop(node, env)
        elif t in ("while_statement", "do_statement"):
            self.opaque_loop(node, env)
        elif t == "switch_statement":
            before = dict(env)
            body = node.child_by_field_name("body")
            if body is not None:
                self.statement(body, env)
            self.merge(env, before, dict(env))
        elif t in ("case_statement", "labeled_statement"):
            for c in node.named_children:
                if c.type.endswith("statement") or c.type in ("declaration", "compound_statement"):
                    self.statement(c, env)
        elif t in ("alias_declaration", "type_definition"):
            self._local_type(node)
        elif t == "return_statement":
            e = _first_named(node)
            if e is not None:
                v = self.ev(e, env)
                if "__return__" not in env:
                    env["__return__"] = v

    def merge(self, env: dict[str, Any], before: dict[str, Any], other: dict[str, Any]) -> None:
        """After a branch: a local assigned on either side takes either value."""
        for name in set(env) | set(other):
            a, b = env.get(name), other.get(name)
            if a is b or name not in before:
                if name not in env and name in other:
                    env[name] = other[name]
                continue
            if isinstance(a, Num) and isinstance(b, Num) and not a.flt and not b.flt:
                if a.e == b.e:
                    continue
                env[name] = Num(self.new_var(name, [a.e, b.e]))
            elif isinstance(a, KPtr) and isinstance(b, KPtr) and a.param == b.param:
                off = self.new_var(name, [a.offset, b.offset])
                env[name] = KPtr(a.param, off, a.width, a.shared, a.elem_size, a.align)
            elif isinstance(a, Num) and isinstance(b, Num):
                env[name] = Num(self.fresh("l", name), True)
            else:
                env[name] = a if a is not None else b

    def declare_local(self, node: ts.Node, env: dict[str, Any]) -> None:
        type_text = text(node.child_by_field_name("type"))
        is_shared = "__shared__" in text(node)[: max(0, len(text(node)) - len(text(node).lstrip()))] or any(
            text(c) == "__shared__" for c in node.children)
        for d in node.children_by_field_name("declarator"):
            decl, value_node = (d.child_by_field_name("declarator"), d.child_by_field_name("value")) if (
                d.type == "init_declarator") else (d, None)
            name, indirect, arrays = _decl(decl)
            if not name:
                continue
            if arrays:
                size = 1
                for a in arrays:
                    v = self.ev(a, env) if a is not None else None
                    c = self.concrete(v.e) if isinstance(v, Num) else None
                    size = size * c if c is not None and size is not None else None
                env[name] = KPtr("", sp.Integer(0), sp.Integer(1), name if (is_shared or "__shared__" in text(node)) else name + "#local",
                                 self.sizeof(type_text))
                if size is not None and ("__shared__" in text(node)):
                    env[name].shared = f"{name}:{size}"
                continue
            value = self.ev(value_node, env) if value_node is not None else None
            if isinstance(value, Group) and not indirect:  # `auto g = cg::this_grid();`
                env[name] = value
                continue
            if isinstance(value, KPtr) and not indirect and "auto" in type_text.split():
                env[name] = value  # `auto count = count_ + b * n`: the pointer itself, its writes are count_'s
                if value.shared and not value.param:
                    self._array_names[value.shared].add(name)
                continue
            if indirect:
                if isinstance(value, KPtr):
                    elem = self.sizeof(type_text)
                    env[name] = self.view(value, elem, type_text)
                    if value.shared and not value.param:
                        self._array_names[value.shared].add(name)
                else:
                    env[name] = None
                continue
            env[name] = self.local_value(name, type_text, value, value_node is not None)
            local = env[name]
            if value_node is not None and not isinstance(value, Num) and isinstance(local, Num) and local.e in self.facts.vars:
                # an initialiser we could not evaluate (a name from a header we do not see): the parameters it
                # names still flow into what it indexes
                for ident in set(re.findall(r"[A-Za-z_]\w*", text(value_node))):
                    v = env.get(ident)
                    if isinstance(v, Num) and not v.flt:
                        self.facts.vars[local.e].via |= self._params_through_locals(v.e)

    def view(self, p: KPtr, elem_size: sp.Expr, ctype: str | None = None) -> KPtr:
        """The same memory seen through another element type (float4* over float*): its width and the alignment
        its type needs, in the parameter's elements. Types are read through the kernel's own `using` aliases and
        the launch's template arguments (`aligned_vector<scalar_t, VEC>` launched with float and 2)."""
        if not p.param:
            return p
        layout = self._layout(ctype) if ctype is not None else None
        base = self._layout(self._param_types.get(p.param, "float"))
        if layout is not None and base is not None and layout[0] % base[0] == 0:
            width = layout[0] // base[0]
            align = max(1, layout[1] // base[0]) if layout[1] % base[0] == 0 else 1
            if width == 1 and sp.Integer(layout[0]) == p.elem_size:
                return p
            return KPtr(p.param, p.offset, sp.Integer(width), p.shared, sp.Integer(layout[0]), align if width > 1 else 1)
        if elem_size != p.elem_size:
            width = sp.cancel(elem_size / self.sizeof(self._param_types.get(p.param, "float")))
            if not width.is_Integer:
                return KPtr(p.param, p.offset, p.width, p.shared, p.elem_size, p.align)
            return KPtr(p.param, p.offset, width, p.shared, elem_size)
        return p

    def sizeof(self, ctype: str) -> sp.Expr:
        layout = self._layout(ctype) if (self._bindings or self._local_types) else None
        return sp.Integer(layout[0]) if layout is not None else super().sizeof(ctype)

    def _local_type(self, node: ts.Node) -> None:
        """`using pack_t = uint4;` / `typedef float4 vec_t;` in the kernel: the name stands for the type."""
        if node.type == "alias_declaration":
            name, ty = node.child_by_field_name("name"), node.child_by_field_name("type")
            if name is not None and ty is not None:
                self._local_types[text(name)] = text(ty)
            return
        ty = node.child_by_field_name("type")
        for d in node.children_by_field_name("declarator"):
            if d.type == "type_identifier" and ty is not None:
                self._local_types[text(d)] = text(ty)

    def _view_type(self, ctype: str) -> str:
        """A type named in the kernel with its local aliases and the launch's template arguments put in."""
        t = normalise_ctype(ctype).replace("*", "").strip()
        names = {**self._bindings, **self._local_types}
        for _ in range(6):
            new = re.sub(r"\b[A-Za-z_]\w*\b", lambda m: names.get(m.group(0), m.group(0)), t)
            if new == t:
                break
            t = normalise_ctype(new)
        return self.program.resolve_type(t)

    def _layout(self, ctype: str) -> tuple[int, int] | None:
        """(size, alignment) in bytes of a type: numbers and CUDA vector types (float4: 16, aligned to 16; float3:
        12, aligned to 4), structs of numbers with their `alignas` (template arguments bound); None if unknown."""
        return type_layout(self.program, self._view_type(ctype))

    def local_value(self, name: str, type_text: str, value: Value, initialised: bool) -> Value:
        flt = is_float_type(type_text)
        if isinstance(value, Num):
            if flt or value.flt:
                return Num(value.e, True)
            if value.e.is_number or isinstance(value.e, sp.Symbol):
                return value
            return Num(self.new_var(name, [value.e]))
        if not initialised:
            return Num(self.new_var(name, [], unbounded=True), flt) if not flt else Num(self.fresh("l", name), True)
        if type_text.replace("const", "").strip() == "bool":  # `bool ok = (i < n) && ...;`: 0 or 1, whatever it tests
            return Num(self.new_var(name, [sp.Integer(0), sp.Integer(1)]))
        return Num(self.new_var(name, [], unbounded=True)) if not flt else Num(self.fresh("l", name), True)

    def effect(self, e: ts.Node, env: dict[str, Any]) -> None:
        t = e.type
        if self._frozen and t in ("assignment_expression", "update_expression"):
            target = e.child_by_field_name("left" if t == "assignment_expression" else "argument")
            if target is not None and text(target) in self._frozen:  # its range already covers this update
                if t == "assignment_expression":
                    self.ev(e.child_by_field_name("right"), env)
                return
        if t == "assignment_expression":
            left = e.child_by_field_name("left")
            op = text(e.child_by_field_name("operator")) or "="
            right = e.child_by_field_name("right")
            value = self.ev(right, env)
            if left is not None and left.type == "identifier":
                name = text(left)
                old = env.get(name)
                if op != "=" and isinstance(old, Num) and isinstance(value, Num):
                    from xlate.specs.infer.ceval import arith

                    value = arith(op[:-1], old, value, self.concrete)
                elif op in ("+=", "-=") and isinstance(old, KPtr) and isinstance(value, Num) and not value.flt:
                    # `x += blockIdx.x * row`: the pointer moves on; accesses through it stay followed
                    sign = 1 if op == "+=" else -1
                    value = KPtr(old.param, old.offset + sign * value.e * old.width, old.width, old.shared, old.elem_size, old.align)
                elif op != "=":
                    if isinstance(old, KPtr) and old.param and op in ("+=", "-=") and not isinstance(value, KPtr):
                        self._lost(old.param, right, env)
                        value = self._moved(old, right, -1 if op == "-=" else 1)
                    else:
                        value = None
                if isinstance(old, KPtr) or (old is None and op == "=" and isinstance(value, KPtr)):
                    # (a pointer declared first and set later, `float* p; ... p = dist + x;`, is followed as well)
                    env[name] = value if isinstance(value, KPtr) else None
                elif isinstance(old, Num) and old.flt:
                    env[name] = Num(self.fresh("l", name), True)
                else:
                    env[name] = self.local_value(name, "int", value, True)
            else:
                if op == "=" and left is not None and left.type == "subscript_expression":
                    self._stage(left, value, env)
                self.ev(left, env, write=True)  # type: ignore[call-arg]
        elif t == "update_expression":
            arg = e.child_by_field_name("argument")
            if arg is not None and arg.type == "identifier":
                old = env.get(text(arg))
                if isinstance(old, Num) and not old.flt:
                    step = 1 if "++" in text(e) else -1
                    env[text(arg)] = self.local_value(text(arg), "int", Num(old.e + step), True)
                elif isinstance(old, KPtr):
                    env[text(arg)] = KPtr(old.param, old.offset + (1 if "++" in text(e) else -1) * old.width, old.width,
                                          old.shared, old.elem_size, old.align)
            else:
                self.ev(arg, env, write=True)  # type: ignore[call-arg]
        elif t == "comma_expression":
            for c in e.named_children:
                self.effect(c, env)
        else:
            self.ev(e, env)

    def for_loop(self, node: ts.Node, env: dict[str, Any]) -> None:
        init = node.child_by_field_name("initializer")
        cond = node.child_by_field_name("condition")
        body = node.child_by_field_name("body")
        update = node.child_by_field_name("update")
        var = None
        start: Value = None
        if init is not None and init.type == "declaration":
            d = next(iter(init.children_by_field_name("declarator")), None)
            if d is not None and d.type == "init_declarator":
                var = text(d.child_by_field_name("declarator"))
                start = self.ev(d.child_by_field_name("value"), env)
        elif init is not None and init.type == "assignment_expression":
            var = text(init.child_by_field_name("left"))
            start = self.ev(init.child_by_field_name("right"), env)
        elif init is None and (name := _stepped_local(update, cond)) is not None and isinstance(env.get(name), Num):
            var, start = name, env[name]  # `int y = t * 2; for (; y < w; y += s)`: counted from its value
        before = dict(env)
        self.havoc(body, env, skip=var)
        self.havoc(update, env, skip=var)
        saved = dict(self.bounds)
        if var:
            s = self.fresh("v", var)
            v = Var(s, [start.e] if isinstance(start, Num) and not start.flt else [])
            v.unbounded = not (isinstance(start, Num) and not start.flt)
            decreasing = update is not None and ("--" in text(update) or "-=" in text(update) or ">>=" in text(update)
                                                 or "/=" in text(update))
            self.facts.vars[s] = v
            env[var] = Num(s)
            if decreasing and isinstance(start, Num) and not start.flt:
                v.hi = start.e + 1  # counts down from its start
                v.lo = sp.Integer(0)
                v.defs = [start.e]
            elif isinstance(start, Num):
                v.lo = start.e
                v.step = _step(update, var, self, env) if not start.flt else None
            if cond is not None:
                self.constrain(cond, env)
                if s in self.bounds and not decreasing:
                    v.hi = self.bounds[s]
                    v.unbounded = False
                    v.defs = [v.defs[0]] if v.defs else []
            if not decreasing and v.hi is None:
                v.unbounded = True
        elif cond is not None:
            self.constrain(cond, env)
        inductions = self.inductions(node, var, env, before) if var else {}
        env.update(inductions)
        self._frozen |= set(inductions)
        if body is not None:
            self.statement(body, env)
        self._frozen -= set(inductions)
        self.bounds = saved
        env.clear()
        env.update(before)
        self.havoc(body, env, skip=None)
        env.update(inductions)  # after the loop too: never past the last value

    # -- induction variables ----------------------------------------------------------------------------------
    def inductions(self, node: ts.Node, var: str, env: dict[str, Any], before: dict[str, Any]) -> dict[str, Value]:
        """Locals (and parameters) a counted loop only ever increases by constants (`++index` under an inner
        `for (j = 0; j < w; j++)`): inside the loop and after it, each lies between its value before the loop and
        that plus the most the loop can add (trip count times the increases of one iteration). A local set any
        other way, or increased in a loop with no trip count (`while`), is left to havoc."""
        v = self.facts.vars.get(env[var].e) if isinstance(env.get(var), Num) else None
        step = _unit_step(node.child_by_field_name("update"), var, self, env)
        if v is None or v.unbounded or v.hi is None or v.lo is None or step is None:
            return {}
        trips = _maxval(CeilDiv(sp.expand(v.hi - v.lo), step) if step != 1 else sp.expand(v.hi - v.lo), self.bounds,
                        self.facts)
        if trips is None:
            return {}
        per: dict[str, sp.Expr] = {}
        bad: set[str] = set()
        for part in (node.child_by_field_name("body"), node.child_by_field_name("update")):
            if part is not None:
                self._increments(part, env, sp.Integer(1), per, bad, var)
        out: dict[str, Value] = {}
        for name, inc in per.items():
            x0 = before.get(name)
            if name in bad or name == var or name in self._frozen:
                continue
            total = _maxval(sp.expand(trips * inc), self.bounds, self.facts)
            if total is None or any(not _is_final(x) for x in total.free_symbols):
                continue
            if isinstance(x0, Num) and not x0.flt:
                s = self.new_var(name, [x0.e])
                self.facts.vars[s].lo, self.facts.vars[s].hi = x0.e, sp.expand(x0.e + total + 1)
                out[name] = Num(s)
            elif isinstance(x0, KPtr):
                s = self.new_var(name, [x0.offset])
                self.facts.vars[s].lo, self.facts.vars[s].hi = x0.offset, sp.expand(x0.offset + total * x0.width + 1)
                out[name] = KPtr(x0.param, s, x0.width, x0.shared, x0.elem_size, x0.align)
        return out

    def _increments(self, node: ts.Node, env: dict[str, Any], mult: sp.Expr | None, per: dict[str, sp.Expr],
                    bad: set[str], var: str) -> None:
        t = node.type
        if t == "for_statement":
            trips = _loop_trips(node, self, env)
            inner = None if mult is None or trips is None else mult * trips
            for field_name in ("initializer", "condition"):
                part = node.child_by_field_name(field_name)
                if part is not None:
                    self._increments(part, env, mult, per, bad, var)
            for field_name in ("body", "update"):
                part = node.child_by_field_name(field_name)
                if part is not None:
                    self._increments(part, env, inner, per, bad, var)
            return
        if t in ("while_statement", "do_statement"):
            mult = None
        if t == "declaration":
            for d in node.children_by_field_name("declarator"):
                name, _, _ = _decl(d.child_by_field_name("declarator") if d.type == "init_declarator" else d)
                bad.add(name)  # a shadowing declaration: not the same variable
        target, amount = None, None
        if t == "update_expression":
            target = node.child_by_field_name("argument")
            amount = sp.Integer(1) if "++" in text(node) else None
        elif t == "assignment_expression":
            target = node.child_by_field_name("left")
            if text(node.child_by_field_name("operator")) == "+=":
                r = self.ev(node.child_by_field_name("right"), env) if _pure(node.child_by_field_name("right")) else None
                c = self.concrete(r.e) if isinstance(r, Num) and not r.flt else None
                amount = sp.Integer(c) if c is not None and c >= 0 else None
        if target is not None and target.type == "identifier":
            name = text(target)
            if amount is None or mult is None:
                bad.add(name)
            else:
                per[name] = per.get(name, sp.Integer(0)) + amount * mult
        for child in node.named_children:
            self._increments(child, env, mult, per, bad, var)

    def call(self, node: ts.Node, env: dict[str, Any]) -> Value:
        fn = node.child_by_field_name("function")
        if fn is not None and fn.type == "field_expression":  # p[i].mass(): the method touches the element
            obj = fn.child_by_field_name("argument")
            op = next((text(c) for c in fn.children if text(c) in (".", "->")), ".")
            base = self.ev(obj, env)
            if isinstance(base, Group):
                return self.group_member(base, text(fn.child_by_field_name("field")))
            if op == "->" and isinstance(base, KPtr):
                self.touch(base, sp.Integer(0), node, False)
        elif fn is not None:
            group = CG_HANDLES.get("".join(text(fn).split()).rpartition("::")[2])
            args = node.child_by_field_name("arguments")
            if group is not None and (args is None or not args.named_children):
                return Group(group)  # type: ignore[return-value]
        return super().call(node, env)

    def group_member(self, g: Group, member: str) -> Value:
        """Cooperative groups' ranks and sizes as CUDA numbers them (x fastest): a thread's rank in its block is
        tx + Bx * (ty + By * tz), in the grid its block's rank times the block's threads plus that. Only the x
        builtins count as used (a launch guessed for a kernel that numbers its threads by rank is one-dimensional;
        the y and z terms vanish on it)."""
        in_block = TID[0] + BLOCK[0] * (TID[1] + BLOCK[1] * TID[2])
        threads = BLOCK[0] * BLOCK[1] * BLOCK[2]
        block_rank = BID[0] + GRID[0] * (BID[1] + GRID[1] * BID[2])
        values = {("block", "thread_rank"): in_block, ("block", "size"): threads, ("block", "num_threads"): threads,
                  ("grid", "thread_rank"): block_rank * threads + in_block, ("grid", "block_rank"): block_rank,
                  ("grid", "size"): GRID[0] * GRID[1] * GRID[2] * threads,
                  ("grid", "num_threads"): GRID[0] * GRID[1] * GRID[2] * threads,
                  ("grid", "num_blocks"): GRID[0] * GRID[1] * GRID[2]}
        if g.kind == "block" and member in ("group_index", "thread_index", "dim_threads", "group_dim"):
            syms = {"group_index": BID, "thread_index": TID, "dim_threads": BLOCK, "group_dim": GRID}[member]
            return Dim3((syms[0], syms[1], syms[2]))  # its .x/.y/.z: field_value
        e = values.get((g.kind, member))
        if e is None:
            return Num(self.fresh("l", "group"))
        self.facts.uses |= {x.name for x in e.free_symbols if x.name.endswith("x")}  # a builtin's name is its use
        return Num(e)

    def unknown_call(self, name: str, node: ts.Node, vals: list[Value], env: dict[str, Any]) -> Value:
        """A call xlate does not follow. A method (`scan.ExclusiveSum(x, x)`) or a namespaced function
        (`cub::Sum(x)`) may take its arguments by reference: the locals handed to it are unknown values after it
        (kept, a block scan's output read as its 0/1 input), still computed from what they were (an index value
        handed to it stays one). Where the program defines the callee, only its non-const reference parameters
        count. Free functions are left alone: CUDA's intrinsics and the math library take values."""
        fn = node.child_by_field_name("function")
        args = node.child_by_field_name("arguments")
        method = name.rsplit(".", 1)[-1].rsplit("->", 1)[-1].split("::")[-1].split("<")[0]
        if fn is not None and args is not None and (fn.type == "field_expression" or "::" in name) and (
                method not in BY_VALUE_CALLS) and (method == "swap" or not name.startswith(BY_VALUE_NAMESPACES)):
            params = {p.name for p in self.fn.params}
            call = _snippet(node, 50)
            actual = [a for a in args.named_children if a.type != "comment"]
            defs = [fd for fd in self.program.functions.get(method, []) if len(fd.params) == len(actual)]
            refs = set().union(*(_mutable_references(fd) for fd in defs)) if defs else set(range(len(actual)))
            for k, a in enumerate(actual):
                local = text(a)
                old = env.get(local)
                if k not in refs or a.type != "identifier" or local in params or local in self._frozen or not isinstance(
                        old, Num):
                    continue
                if old.flt:
                    env[local] = Num(self.fresh("l", local), True)
                else:
                    env[local] = Num(self.new_var(local, [old.e], unbounded=True))
                    self.facts.vars[env[local].e].cause = f"set by '{call}', a call xlate does not follow"
        return super().unknown_call(name, node, vals, env)

    def run_statements(self, body: ts.Node, env: dict[str, Any]) -> None:
        self.block(body, env)  # a function-like macro holding statements (`CHECK_BOUNDS(i, n)`): run them here

    def conditional(self, node: ts.Node, env: dict[str, Any]) -> Value:
        """`i < n ? in[i] : 0`: each side is evaluated under its side of the condition (its accesses are guarded);
        an integer result is either side's value."""
        cond = node.child_by_field_name("condition")
        c = self.ev(cond, env)
        saved = dict(self.bounds)
        self.constrain(cond, env)
        yes = self.ev(node.child_by_field_name("consequence"), env)
        self.bounds = dict(saved)
        self.constrain(cond, env, negate=True)
        no = self.ev(node.child_by_field_name("alternative"), env)
        self.bounds = saved
        cv = self.concrete(c.e) if isinstance(c, Num) else None
        if cv is not None:
            return yes if cv else no
        if isinstance(yes, Num) and isinstance(no, Num):
            if yes.flt or no.flt:
                return Num(self.fresh("l", "select"), True)
            return yes if sp.expand(yes.e - no.e) == 0 else Num(self.new_var("select", [yes.e, no.e]))
        if isinstance(yes, KPtr) and isinstance(no, KPtr) and yes.param == no.param and yes.width == no.width:
            return KPtr(yes.param, self.new_var("select", [yes.offset, no.offset]), yes.width, yes.shared, yes.elem_size, yes.align)
        return None

    def opaque_loop(self, node: ts.Node, env: dict[str, Any]) -> None:
        body = node.child_by_field_name("body")
        self.havoc(body, env, skip=None)
        saved = dict(self.bounds)
        cond = node.child_by_field_name("condition")
        if cond is not None and node.type == "while_statement":
            self.constrain(cond, env)
        if body is not None:
            self.statement(body, env)
        self.bounds = saved
        self.havoc(body, env, skip=None)

    def havoc(self, node: ts.Node | None, env: dict[str, Any], skip: str | None) -> None:
        """Locals a loop body assigns take unknown values in it (and after it)."""
        if node is None:
            return
        for n in walk_tree(node):
            target = None
            if n.type == "assignment_expression":
                target = n.child_by_field_name("left")
            elif n.type == "update_expression":
                target = n.child_by_field_name("argument")
            if target is None or target.type != "identifier":
                continue
            name = text(target)
            if name == skip or name not in env or name in self._frozen:
                continue
            old = env[name]
            if isinstance(old, Num):
                env[name] = Num(self.new_var(name, [], unbounded=True), old.flt) if not old.flt else Num(self.fresh("l", name), True)
                if not old.flt:  # what it was computed from still flows into the indices it reaches
                    self.facts.vars[env[name].e].via = self._params_through_locals(old.e)
            elif isinstance(old, KPtr):
                env[name] = KPtr(old.param, self.new_var(name, [], unbounded=True), old.width, old.shared, old.elem_size, old.align)

    # -- guards -------------------------------------------------------------------------------------------------
    def constrain(self, cond: ts.Node | None, env: dict[str, Any], negate: bool = False) -> None:
        if cond is None:
            return
        while cond is not None and cond.type in ("condition_clause", "parenthesized_expression"):
            cond = _first_named(cond)
        if cond is None:
            return
        if cond.type == "unary_expression" and text(cond.child_by_field_name("operator")) == "!":
            self.constrain(cond.child_by_field_name("argument"), env, not negate)
            return
        if cond.type != "binary_expression":
            return
        op = text(cond.child_by_field_name("operator"))
        left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
        if op == ("||" if negate else "&&"):
            self.constrain(left, env, negate)
            self.constrain(right, env, negate)
            return
        if op in ("&&", "||"):
            return
        if op == "==" and not negate:  # `if (idx == 0)`: one thread works; any grid holds it
            a, b = self.ev(left, env), self.ev(right, env)
            for x, y in ((a, b), (b, a)):
                if isinstance(x, Num) and isinstance(y, Num) and y.e.is_number and not x.flt:
                    d = self._thread_def(x.e) if isinstance(x.e, sp.Symbol) else sp.expand(x.e)
                    for axis in range(3):
                        if d is not None and (_is_global_index(d, axis, self._flat()) or sp.expand(d - BID[axis]) == 0):
                            self.facts.single_guards.add(axis)
            return
        flip = {"<": ">=", ">=": "<", ">": "<=", "<=": ">"}
        if negate:
            if op not in flip:
                return
            op = flip[op]
        a, b = self.ev(left, env), self.ev(right, env)
        if not isinstance(a, Num) or not isinstance(b, Num) or a.flt or b.flt:
            return
        if op in (">", ">="):
            a, b = b, a
            op = "<" if op == ">" else "<="
        if op not in ("<", "<="):
            return
        bound = b.e if op == "<" else b.e + 1
        self.bound(a.e, bound)

    def bound(self, e: sp.Expr, bound: sp.Expr) -> None:
        """Record e < bound."""
        e = sp.expand(e)
        target: sp.Symbol | None = None
        c, rest = e.as_coeff_Mul()
        if c.is_Integer and int(c) > 1 and isinstance(rest, sp.Symbol):  # `8 * j < width`: j < cdiv(width, 8)
            e, bound = rest, CeilDiv(bound, c)
        if isinstance(e, sp.Symbol):
            target = e
        elif e.free_symbols & set(TID + BID) or any(s.name.startswith("v_") for s in e.free_symbols):
            target = self._aliases.get(e)
            if target is None:
                target = self.new_var("guard", [e])
                self._aliases[e] = target
        if target is None:
            return
        old = self.bounds.get(target)
        self.bounds[target] = bound if old is None else sp.Min(old, bound)
        params = {s.name[3:] for s in sp.sympify(bound).free_symbols if s.name.startswith("_P_")}
        defs = self._thread_def(target)
        for axis in range(3):
            if defs is not None and _is_global_index(defs, axis, self._flat()):
                self.facts.thread_guards.setdefault(axis, bound)
                self.facts.guards |= params
            elif defs is not None and sp.expand(defs - BID[axis]) == 0:
                self.facts.row_guards.setdefault(axis, bound)
                self.facts.guards |= params
        if defs is not None and defs.free_symbols & set(TID + BID):
            self.facts.guards |= params
        self.facts.index_params |= params

    def _flat(self) -> bool:
        """The kernel reads no y or z builtin itself: a rank over every axis is its x index on the 1-D launch a
        guess gives it."""
        return not any(u[-1] in "yz" for u in self.facts.uses)

    def _thread_def(self, s: sp.Symbol) -> sp.Expr | None:
        if s in TID or s in BID:
            return s
        var = self.facts.vars.get(s)
        if var is None or len(var.defs) != 1 or var.unbounded:
            return None
        d = var.defs[0]
        for _ in range(6):
            subs = {v: self.facts.vars[v].defs[0] for v in d.free_symbols if v in self.facts.vars and len(
                self.facts.vars[v].defs) == 1 and not self.facts.vars[v].unbounded and self.facts.vars[v].hi is None}
            if not subs:
                break
            d = sp.expand(d.xreplace(subs))
        return d

    # -- memory ---------------------------------------------------------------------------------------------------
    def ev(self, node: ts.Node | None, env: dict[str, Any], write: bool = False) -> Value:  # type: ignore[override]
        if node is not None and node.type == "subscript_expression":
            return self.access(node, env, write)
        if write and node is not None and node.type == "call_expression":  # `F(i, j) = v`: an accessor macro
            fn = node.child_by_field_name("function")
            macro = self.program.macros.get(text(fn)) if fn is not None and fn.type == "identifier" else None
            if macro is not None and macro.params is not None and macro.name not in self._macro_active:
                args_node = node.child_by_field_name("arguments")
                args = [text(c) for c in args_node.named_children if c.type != "comment"] if args_node else []
                return self.expand(macro.name, macro.params, macro.body, args, env, write=True)
        if write and node is not None and node.type == "pointer_expression" and text(
                node.child_by_field_name("operator")) == "*":  # `*out = v`: a write through the pointer
            base = self.ev(node.child_by_field_name("argument"), env)
            if isinstance(base, KPtr):
                return self.touch(base, sp.Integer(0), node, True)
        return super().ev(node, env)

    def field_value(self, node: ts.Node, env: dict[str, Any]) -> Value:
        arg = node.child_by_field_name("argument")
        obj = text(arg)
        fld = text(node.child_by_field_name("field"))
        kind = BUILTINS.get(obj)
        if kind is not None and fld in ("x", "y", "z"):
            self.facts.uses.add(kind + fld)
            return Num(builtin(kind, fld))
        if arg is not None and arg.type == "call_expression" and fld in ("x", "y", "z"):
            dims = self.ev(arg, env)  # `block.group_index().y`: blockIdx.y
            if isinstance(dims, Dim3):
                e = dims.dims["xyz".index(fld)]
                if e in (*TID, *BID, *BLOCK, *GRID):
                    self.facts.uses.add(e.name)  # a builtin's name (`by`) is its use
                return Num(e)
        # p[i].x, p->x: the element is touched (vector and struct elements)
        op = next((text(c) for c in node.children if text(c) in (".", "->")), ".")
        base = self.ev(arg, env)
        if isinstance(base, Num) and base.e in self._aggregates and op == ".":
            pname, scalar = self._aggregates[base.e]  # w.x of a float3 parameter w: the parameter `w.x`
            return Num(param_symbol(f"{pname}.{fld}"), is_float_type(scalar))
        if op == "->" and isinstance(base, KPtr):
            self.touch(base, sp.Integer(0), node, False)
        return Num(self.fresh("l", "field"), True)

    def name(self, name: str, node: ts.Node, env: dict[str, Any]) -> Value:
        if name == "warpSize":
            return Num(sp.Integer(32))
        if name not in env and name in self._values:  # `idx * VEC` launched as k<float, 2>
            return Num(sp.Integer(self._values[name]))
        if name not in env and name in self._open:
            return Num(param_symbol(name))
        v = super().name(name, node, env)
        if v is None and name not in env:
            v = self._file_constant(name)
        return v

    def _file_constant(self, name: str) -> Value:
        """A file-scope `const int ID_RHOT = 3;` (any file of the program): its value, as a macro's. Unknown, the
        kernel's indices `ID_RHOT * (nz + 2 * hs) * ...` had no largest value, and the buffer no extent."""
        value, const = self.program.initialisers.get(name, (None, False))
        if value is None or not const or name in self._macro_active:
            return None
        self._macro_active.add(name)
        try:
            v = self.ev(value, {})
        finally:
            self._macro_active.discard(name)
        return v if isinstance(v, Num) and v.e.is_number else None

    def access(self, node: ts.Node, env: dict[str, Any], write: bool = False) -> Value:
        base = self.ev(node.child_by_field_name("argument"), env)
        idx_nodes = node.child_by_field_name("indices") or node.child_by_field_name("index")
        idx = self.ev(_first_named(idx_nodes), env) if idx_nodes is not None else None
        if isinstance(base, KPtr) and isinstance(idx, Num) and not idx.flt:
            return self.touch(base, idx.e, node, write)
        if isinstance(base, KPtr) and base.param:
            self.facts.unknown = True
            self.facts.accesses.append(Access(base.param, sp.Symbol("L_unknown", integer=True), sp.Symbol(
                "L_unknown", integer=True), dict(self.bounds), write, self._where(node)))
            self._lost(base.param, _first_named(idx_nodes) if idx_nodes is not None else None, env)
        elif isinstance(base, KPtr) and base.shared and write:
            self._array_writes[base.shared] += 1  # a store at an index not followed is a store all the same
        return self.load_value(base, node)

    def touch(self, p: KPtr, index: sp.Expr, node: ts.Node, write: bool, address: bool = False) -> Value:
        first = sp.expand(p.offset + index * p.width)
        last = sp.expand(first + p.width - 1)
        first, last = self._alias(first), self._alias(last)
        if p.param:
            self.facts.accesses.append(Access(p.param, first, last, dict(self.bounds), write, self._where(node),
                                              self._atomic, p.align))
            self._note_moved(p)
            self.facts.index_params |= self._params_through_locals(sp.expand(p.offset + index))  # row pointers too
        elif p.shared and ":" in p.shared:
            size = int(p.shared.split(":")[1])
            self.facts.shared_accesses.append((size, last, dict(self.bounds)))
        if write and not address and not p.param and p.shared:  # `&sh[k]` writes nothing: it makes a view
            self._array_writes[p.shared] += 1
        value = self.load_value(p, node)
        if isinstance(value, Num) and value.e in self.facts.loads:
            self.facts.loads[value.e].index = first
        return value

    def _params_through_locals(self, e: sp.Expr) -> set[str]:
        """Parameters an index depends on, also through the locals it names (`index = base + w * by` with
        `by = width - bx - 1`: `width` indexes too, and a range of -100..100 for it faults a correct kernel)."""
        out: set[str] = set()
        seen: set[sp.Symbol] = set()
        todo = list(e.free_symbols)
        while todo and len(seen) < 200:
            x = todo.pop()
            if x in seen:
                continue
            seen.add(x)
            if x.name.startswith("_P_"):
                out.add(x.name[3:])
                continue
            var = self.facts.vars.get(x)
            for d in (var.defs if var is not None else []):
                todo.extend(d.free_symbols)
            out |= var.via if var is not None else set()
        return out

    def _alias(self, e: sp.Expr) -> sp.Expr:
        for big, s in self._aliases.items():
            if big.free_symbols <= e.free_symbols and len(sp.Add.make_args(big)) > 1:
                e = sp.expand(e.subs(big, s))
        return e

    def load_value(self, p: Value, node: ts.Node) -> Value:
        if isinstance(p, KPtr) and p.param:
            ty = self._param_types.get(p.param, "float")
            # a template type (`const Offset* seg_begins`) may be bound to an integer: its values are followed like
            # integers, so values that index other buffers get a range (drawn as floats, a range still holds)
            flt = is_float_type(ty) or (ctype_size(ty) is None and ty not in self._template_types)
            s = sp.Symbol(f"L_{p.param}_{self._next()}", integer=not flt, nonnegative=True)
            self.facts.loads[s] = Load(s, p.param, flt, guessed=ty in self._template_types)
            return Num(s, flt)
        staged = self._staged_value(p) if isinstance(p, KPtr) and p.shared else None
        stored_from = (self._prior or self)._staged_from.get(p.shared) if isinstance(p, KPtr) and p.shared else None
        if staged is None and stored_from:
            # stores of integer buffers' values we cannot read back as one form: what is read is some value of
            # those buffers changed in a way not followed, and an index made of it bounds none of them
            staged = Num(sp.Add(*(self._fresh_load(q) for q in sorted(stored_from)),
                                self.new_var("staged", [], unbounded=True)))
        return staged if staged is not None else Num(self.fresh("l", "shared"), True)

    def _fresh_load(self, param: str, guessed: bool = False) -> sp.Symbol:
        s = sp.Symbol(f"L_{param}_{self._next()}", integer=True, nonnegative=True)
        self.facts.loads[s] = Load(s, param, False, guessed=guessed)
        return s

    def _stage(self, left: ts.Node, value: Value, env: dict[str, Any]) -> None:
        """`sh[t] = k * idx[i]` into a __shared__ array (one subscript of the array's own name): the value stored,
        as an expression over loaded integers and the kernel's parameters, or None where it is not one."""
        arg = left.child_by_field_name("argument")
        p = env.get(text(arg)) if arg is not None and arg.type == "identifier" else None
        if not isinstance(p, KPtr) or p.param or not p.shared or p.shared.endswith("#local"):
            return  # a thread's own array (registers): its loads stay unknown values, as before
        e = None
        if isinstance(value, Num):  # (a ticket an atomic returned stays an unknown value, as it always was)
            self._staged_from[p.shared] |= {self.facts.loads[x].param for x in self.facts.loads_in(value.e)
                                            if x in self.facts.loads and not self.facts.loads[x].flt
                                            and x not in self._tickets}
        if isinstance(value, Num) and not value.flt and not (self.facts.loads_in(value.e) & self._tickets):
            f = sp.expand(self.facts._through_loads(value.e))
            loads = {x: self.facts.loads[x] for x in f.free_symbols if x in self.facts.loads}
            params = [ld.param for ld in loads.values()]
            if all(x.name.startswith("_P_") or (x in loads and not loads[x].flt) for x in f.free_symbols) and (
                    len(params) == len(set(params))):  # not a thread index, a float, two reads of one buffer
                e = (f.xreplace({x: sp.Symbol("Q_" + ld.param) for x, ld in loads.items()}),
                     {ld.param: ld.guessed for ld in loads.values()})
        self._staged.setdefault((p.shared, str(p.offset)), []).append(e)
        self._staged_writes[p.shared] += 1

    def _staged_value(self, p: KPtr) -> Num | None:
        """A load from a __shared__ array whose every write is `a[i] = f(x[j])`, one form `f` over integer
        buffers and parameters (`sh[t] = n * col[p]`, read back by another thread as `y[sh[k] + c]`): the value
        is `f` of some other element of the same buffers, so each read stands as a fresh load of them. The index
        it forms then bounds `col`'s values as a direct `y[n * col[p] + c]` would; unfollowed, the access used
        to read as unknown and `col` was drawn freely."""
        src = self._prior or self  # the first run saw every store: a load may read one made later in the code
        forms = src._staged.get((p.shared, str(p.offset)))
        if not forms or any(f is None for f in forms) or src._staged_writes[p.shared] != src._array_writes[p.shared]:
            return None
        names = "|".join(re.escape(n) for n in {p.shared.split(":")[0].split("#")[0], *src._array_names[p.shared]})
        if _handed_to_call(names, self.facts.body_text):
            return None  # the array or a view of it is handed to a call (an atomic, a helper): it may write there
        if len({f for f, _ in forms}) != 1:
            return None
        form, guessed = forms[0]
        return Num(form.xreplace({sp.Symbol("Q_" + q): self._fresh_load(q, g) for q, g in guessed.items()}))

    def _next(self) -> int:
        self._n += 1
        return self._n

    def deref(self, v: Value, node: ts.Node, env: dict[str, Any]) -> Value:
        if isinstance(v, KPtr):
            return self.touch(v, sp.Integer(0), node, False)
        return None

    def address_of_element(self, node: ts.Node, env: dict[str, Any]) -> Value:
        base = self.ev(node.child_by_field_name("argument"), env)
        idx_nodes = node.child_by_field_name("indices") or node.child_by_field_name("index")
        idx = self.ev(_first_named(idx_nodes), env) if idx_nodes is not None else None
        if isinstance(base, KPtr) and isinstance(idx, Num) and not idx.flt:
            self.touch(base, idx.e, node, True, address=True)
            return KPtr(base.param, base.offset + idx.e * base.width, base.width, base.shared, base.elem_size, base.align)
        return None

    def binary(self, node: ts.Node, env: dict[str, Any]) -> Value:
        op = text(node.child_by_field_name("operator"))
        if op not in ("+", "-"):
            return super().binary(node, env)
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        a, b = self.ev(left, env), self.ev(right, env)
        out = self.combine(op, a, b)
        if out is None:  # `p + g * K` with K unknown: the pointer is lost, and with it what g's values reach
            for ptr, other in ((a, right), (b, left)):
                if isinstance(ptr, KPtr) and ptr.param:
                    self._lost(ptr.param, other, env)
            if isinstance(a, KPtr) and a.param and not isinstance(b, KPtr):
                return self._moved(a, right, -1 if op == "-" else 1)
            if isinstance(b, KPtr) and b.param and op == "+" and not isinstance(a, KPtr):
                return self._moved(b, left, 1)
        return out

    def _moved(self, p: KPtr, amount: ts.Node | None, sign: int) -> KPtr:
        """`p` moved by `amount`, which xlate cannot evaluate (`p += f(n)`): still a pointer into its buffer, at
        an offset nothing bounds. Its accesses are kept (what indexes through it is not drawn freely) and mark the
        buffer moved (touch)."""
        expr = _snippet(amount, 60) if amount is not None else "?"
        s = self.new_var("moved", [], unbounded=True)
        self.facts.vars[s].cause = f"moved by '{expr}', which xlate cannot evaluate"
        self._moves[s] = expr
        return KPtr(p.param, p.offset + sign * s * p.width, p.width, p.shared, p.elem_size, p.align)

    def _note_moved(self, p: KPtr) -> None:
        """Mark `p`'s buffer as reached through a move not evaluated (KernelFacts.moved), naming the shortest."""
        moves = sorted((self._moves[x] for x in p.offset.free_symbols if x in self._moves), key=len)
        if moves:
            self.facts.moved.setdefault(p.param, moves[0])

    def _lost(self, param: str, node: ts.Node | None, env: dict[str, Any]) -> None:
        """An offset into `param` xlate cannot evaluate (`node`): the integer buffers whose loaded values it is
        computed from can no longer be given a range that keeps the access inside `param`."""
        if node is None:
            return
        names = [text(n) for n in walk_tree(node) if n.type == "identifier" and not (
            n.parent is not None and n.parent.type == "call_expression" and n.parent.child_by_field_name("function") == n)]
        owners: set[str] = set()
        for n in dict.fromkeys(names):
            v = env.get(n)
            if isinstance(v, Num) and not v.flt:
                owners |= {self.facts.loads[x].param for x in self.facts.loads_in(v.e)
                           if x in self.facts.loads and not self.facts.loads[x].flt and x not in self._tickets}
        if not owners:
            return
        unknown = [n for n in dict.fromkeys(names) if env.get(n) is None and n not in self._values and not isinstance(
            self.name(n, node, env), Num)]
        expr = _snippet(node, 60)
        for q in sorted(owners):
            self.facts.lost.setdefault(q, (param, expr, unknown))

    def combine(self, op: str, a: Value, b: Value) -> Value:
        if op in ("+", "-"):
            if isinstance(a, KPtr) and isinstance(b, Num) and not b.flt:
                return KPtr(a.param, a.offset + (b.e if op == "+" else -b.e) * a.width, a.width, a.shared, a.elem_size, a.align)
            if isinstance(b, KPtr) and isinstance(a, Num) and op == "+" and not a.flt:
                return KPtr(b.param, b.offset + a.e * b.width, b.width, b.shared, b.elem_size, b.align)
        return super().combine(op, a, b)

    def cast(self, type_text: str, v: Value) -> Value:
        if isinstance(v, KPtr):
            ty = normalise_ctype(type_text)
            if ty.endswith("*"):
                inner = ty.rstrip("*").strip()
                return self.view(v, self.sizeof(inner), inner)
            return None
        return super().cast(type_text, v)

    def special_call(self, name: str, node: ts.Node, args: list[ts.Node], env: dict[str, Any]) -> tuple[bool, Value]:
        base = name.split("::")[-1]
        if base.startswith(ATOMIC_PREFIXES) and not base.startswith("atomic"):
            base = "atomic" + base  # PyTorch's and ROCm's wrappers (`gpuAtomicAdd(p + i, v)`): an atomic all the same
        if base.startswith(("atomic", "__ldg", "__stcs", "__ldcs", "__ldca", "__stwt", "__ldcg", "__stcg")) and args:
            saved, self._atomic = self._atomic, base.startswith("atomic")  # `&c[idx[i]]` is an atomic's address
            try:
                p = self.ev(args[0], env)
                for a in args[1:]:
                    self.ev(a, env)
                if isinstance(p, KPtr):
                    if base.startswith("atomic"):  # read-modify-write: the old value matters
                        self.touch(p, sp.Integer(0), node, False)
                    got = self.touch(p, sp.Integer(0), node, base.startswith(("atomic", "__st")))
                    if base.startswith("atomic") and isinstance(got, Num) and got.e in self.facts.loads:
                        self._tickets.add(got.e)
                    return True, got
            finally:
                self._atomic = saved
            return True, None
        fd = self.program.function(base, arity=len(args))
        if fd is not None and fd.space in ("device", "host") and self._inline_depth < MAX_INLINE:
            refs = _mutable_references(fd)  # `svd(out[i], ...)` into `float& u`: the callee writes out[i]
            vals = [self.ev(a, env, write=True) if i in refs and a.type == "subscript_expression" else self.ev(a, env)
                    for i, a in enumerate(args)]
            return True, self.inline_device(fd, vals)
        macro = self.program.macros.get(base)
        if base not in _KNOWN_PURE and not (macro is not None and macro.params is not None):
            for a in args:
                v = self.ev(a, env)
                if isinstance(v, KPtr) and v.param:
                    self.facts.unknown = True
                    self.facts.opaque.add(v.param)  # its accesses happen where we cannot see them
                    # handed on after a move not evaluated: wherever it reaches, no length covers it
                    self._note_moved(v)
        return False, None

    def inline_device(self, fd: FuncDef, vals: list[Value]) -> Value:
        body = fd.node.child_by_field_name("body")
        if body is None:
            return None
        env: dict[str, Any] = {}
        for (pname, ptype, indirect), v in zip(fd.params, vals):
            if not pname:
                continue
            if isinstance(v, KPtr) and indirect:
                env[pname] = self.view(v, self.sizeof(ptype), ptype) if ctype_size(ptype) else v
            else:
                env[pname] = v
        saved = dict(self.bounds)
        self._inline_depth += 1
        try:
            self.block(body, env)
        finally:
            self._inline_depth -= 1
            self.bounds = saved
        return env.get("__return__")

    def _where(self, node: ts.Node) -> str:
        sf = self.program.source_of(node)
        return sf.where(node) if sf is not None else ""


_KNOWN_PURE = {"sqrt", "sqrtf", "exp", "expf", "log", "logf", "sin", "cos", "sinf", "cosf", "fabs", "fabsf", "min", "max",
               "fminf", "fmaxf", "__syncthreads", "__syncwarp", "printf", "__shfl_sync", "__shfl_down_sync",
               "__shfl_xor_sync", "__shfl_up_sync", "tanh", "tanhf", "pow", "powf", "rsqrt", "rsqrtf", "fma", "fmaf"}


def aggregate_of(program: Program, ctype: str) -> tuple[str, int] | None:
    """A by-value parameter type made of numbers of one type: (scalar C type, how many). CUDA vector types
    (`float3`), structs and classes of one number type (`struct { float m[9]; }`), `std::pair<T, T>`."""
    from xlate.specs.model import ctypes_table

    t = normalise_ctype(ctype)
    info = ctypes_table().get(t)
    if info is not None:
        return (str(info["scalar"]), int(info.get("lanes", 1))) if info.get("numpy") is None and info.get("scalar") else None
    m = re.fullmatch(r"(?:std::)?pair\s*<\s*([\w ]+?)\s*,\s*([\w ]+?)\s*>", t)
    if m and program.resolve_type(m.group(1)) == program.resolve_type(m.group(2)):
        scalar = program.resolve_type(m.group(1))
        return (scalar, 2) if scalar in ctypes_table() and ctypes_table()[scalar].get("numpy") else None
    resolved_t = program.resolve_type(t)
    if resolved_t in ctypes_table():
        return None
    return program.struct_lanes(resolved_t)


def _is_size(x: sp.Symbol) -> bool:
    """A symbol the spec draws: a kernel parameter or a size of its own (not a local, a thread index, a load)."""
    return x.name.startswith("_P_") or not (x.name.startswith(("v_", "l_", "L_", "U_", "D_", "__", "sizeof("))
                                            or x in TID or x in BID or x in GRID or x in BLOCK)


def _snippet(node: ts.Node, limit: int) -> str:
    """The source text of `node` on one line, cut to `limit` characters (a message quotes it)."""
    s = " ".join(text(node).split())
    return s if len(s) <= limit else s[:limit - 3] + "..."


def _stepped_local(update: ts.Node | None, cond: ts.Node | None) -> str | None:
    """The variable a loop with no initializer counts with: the one its update steps (`y += s`, `y = y + s`,
    `++y`) and its condition compares first (`y < w`)."""
    if update is None or cond is None or cond.type != "binary_expression":
        return None
    if update.type == "update_expression":
        target = update.child_by_field_name("argument")
    elif update.type == "assignment_expression":
        target = update.child_by_field_name("left")
    else:
        return None
    left = cond.child_by_field_name("left")
    if target is None or target.type != "identifier" or left is None or text(left) != text(target):
        return None
    return text(target)


def _element_index(index: sp.Expr, w: int) -> sp.Expr:
    """The element a vector view's index stands for: `((half2*)x)[e >> 1]` loads the pair holding element e,
    which is the pair starting at e only when e is even; the program keeps it so (rows of an even width), or
    two threads' pairs overlap. `w * (e / w)` is read as `e`, whose terms then need the alignment."""
    quotients = {q: q.args[0] / w for q in index.atoms(FloorDiv) if q.args[1] == w}
    if not quotients:
        return index
    out = sp.expand(index.xreplace(quotients))
    return out if all(r.is_Integer for r in out.atoms(sp.Rational)) else index


def _term_needs(e: sp.Expr, w: int, opaque_ok: bool) -> list[tuple[int, frozenset]] | None:
    """For `e` to be a multiple of w whatever its non-size symbols hold: [(k, sizes)] per term, one of the sizes
    a multiple of k; None when a term has no size to make so (a constant or an opaque value alone whose
    coefficient is not a multiple of w), or, without `opaque_ok`, when a term holds anything but sizes."""
    import math

    out = []
    for t in sp.Add.make_args(sp.expand(e)):
        c, rest = t.as_coeff_Mul()
        if not c.is_Integer:
            return None
        need = w // math.gcd(int(c), w)
        if need == 1:
            continue
        factors = [f.base if f.is_Pow else f for f in sp.Mul.make_args(rest) if not f.is_number]
        sizes = frozenset(f for f in factors if isinstance(f, sp.Symbol) and _is_size(f))
        if not sizes or (not opaque_ok and len(sizes) != len(factors)):
            return None
        out.append((need, sizes))
    return out


def type_layout(program: Program, ctype: str) -> tuple[int, int] | None:
    """(size, alignment) in bytes of a resolved type: a number, a CUDA vector type (2- and 4-lane ones aligned to
    their size up to 16, 3-lane ones to their lane), a struct of numbers with its `alignas` (`template <typename T,
    int N> struct alignas(sizeof(T) * N) vec { T v[N]; }` given its arguments); None where it is not known."""
    from xlate.specs.model import ctypes_table
    from xlate.specs.records import Record, parse_record

    t = normalise_ctype(ctype)
    info = ctypes_table().get(t)
    if info is not None:
        size = int(info["size"])
        if info.get("kind") == "vector":
            lanes = int(info.get("lanes", 1))
            return size, (min(size, 16) if lanes in (1, 2, 4) else size // max(1, lanes))
        return size, size
    record, _ = program.record_of(t)
    if record is None:
        lanes = program.struct_lanes(t)
        size = ctype_size(lanes[0]) if lanes is not None else None
        return (size * lanes[1], size) if size else None
    import numpy as np

    from xlate.specs.records import record_dtype

    def align_of(rec: Record) -> int:
        out = rec.align
        for f in rec.fields:
            inner = align_of(f.type) if isinstance(f.type, Record) else np.dtype(f.type).itemsize if f.type in np.sctypeDict else 1
            out = max(out, f.align, inner)
        return max(out, 1)

    try:
        rec = parse_record(record)
        size, align = record_dtype(record).itemsize, align_of(rec)
    except Exception:
        return None
    align = max(align, _template_alignas(program, t))
    return -(-size // align) * align, align


def _template_alignas(program: Program, ctype: str) -> int:
    """`alignas(sizeof(T) * N)` on a class template, for the arguments `ctype` gives it (`vec<float, 2>`: 8); 0
    where there is none or it is not a number (plain `alignas(16)` is already in the struct's record)."""
    m = re.fullmatch(r"([A-Za-z_][\w:]*)\s*<(.*)>", ctype)
    if m is None:
        return 0
    name = m.group(1).split("::")[-1]
    node = program.struct_nodes.get(name)
    body = node.child_by_field_name("body") if node is not None else None
    if body is None:
        return 0
    head = text(node)[: body.start_byte - node.start_byte]
    a = re.search(r"\b(?:alignas|__align__)\s*\(", head)
    if a is None:
        return 0
    depth, i = 1, a.end()
    while i < len(head) and depth:
        depth += {"(": 1, ")": -1}.get(head[i], 0)
        i += 1
    expr_text = head[a.end(): i - 1]
    args = [x.strip() for x in re.split(r",(?![^<]*>)", m.group(2))]
    binding = dict(zip(program.class_tparams.get(name, []), args))

    def size_of(mm: re.Match) -> str:
        size = ctype_size(program.resolve_type(binding.get(mm.group(1).strip(), mm.group(1).strip())))
        return str(size) if size else "x"

    expr_text = re.sub(r"\bsizeof\s*\(\s*([\w ]+?)\s*\)", size_of, expr_text)
    expr_text = re.sub(r"\b[A-Za-z_]\w*\b", lambda mm: binding.get(mm.group(0), mm.group(0)), expr_text)
    if not re.fullmatch(r"[\d\s*+()]+", expr_text):
        return 0
    try:
        value = int(eval(expr_text, {"__builtins__": {}}))  # digits, + * and parentheses only
    except Exception:
        return 0
    return value if value > 0 and not value & (value - 1) else 0


def _pure(node: ts.Node | None) -> bool:
    """An expression evaluating which touches no memory and calls nothing (safe to evaluate twice)."""
    return node is not None and not any(n.type in ("subscript_expression", "call_expression", "assignment_expression",
                                                   "update_expression", "pointer_expression") for n in walk_tree(node))


def _unit_step(update: ts.Node | None, var: str, ev: Evaluator, env: dict[str, Any]) -> sp.Expr | None:
    """The constant a loop adds to its variable each iteration (`i++`, `i += 4`, `i = i + 4`); None otherwise."""
    step = _step(update, var, ev, env)
    c = ev.concrete(step) if step is not None else None
    return sp.Integer(c) if c is not None and c > 0 else None


def _step(update: ts.Node | None, var: str, ev: Evaluator, env: dict[str, Any]) -> sp.Expr | None:
    """What a loop adds to its variable each iteration, as an expression (`i += blockDim.x * gridDim.x * VEC`,
    `i++`); None for anything else (a decrement, a product, a call)."""
    if update is None:
        return None
    if update.type == "update_expression" and text(update.child_by_field_name("argument")) == var:
        return sp.Integer(1) if "++" in text(update) else None
    if update.type == "assignment_expression" and text(update.child_by_field_name("left")) == var:
        op = text(update.child_by_field_name("operator"))
        right = update.child_by_field_name("right")
        if op == "=" and right is not None and right.type == "binary_expression" and text(
                right.child_by_field_name("operator")) == "+" and text(right.child_by_field_name("left")) == var:
            op, right = "+=", right.child_by_field_name("right")
        if op != "+=" or not _pure(right):
            return None
        r = ev.ev(right, env)
        return sp.expand(r.e) if isinstance(r, Num) and not r.flt else None
    return None


def _loop_trips(node: ts.Node, ev: Evaluator, env: dict[str, Any]) -> sp.Expr | None:
    """How many times a nested `for (j = a; j < b; j += c)` runs, read from its header alone (evaluated in the
    enclosing loop's scope); None when the header is not that simple."""
    init, cond = node.child_by_field_name("initializer"), node.child_by_field_name("condition")
    var, start = None, None
    if init is not None and init.type == "declaration":
        d = next(iter(init.children_by_field_name("declarator")), None)
        if d is not None and d.type == "init_declarator":
            var, start = text(d.child_by_field_name("declarator")), d.child_by_field_name("value")
    elif init is not None and init.type == "assignment_expression":
        var, start = text(init.child_by_field_name("left")), init.child_by_field_name("right")
    if not var or start is None or cond is None or cond.type != "binary_expression" or not _pure(start) or not _pure(cond):
        return None
    op = text(cond.child_by_field_name("operator"))
    left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
    if text(left) == var and op in ("<", "<="):
        bound_node, inclusive = right, op == "<="
    elif text(right) == var and op in (">", ">="):
        bound_node, inclusive = left, op == ">="
    else:
        return None
    step = _unit_step(node.child_by_field_name("update"), var, ev, env)
    a, b = ev.ev(start, env), ev.ev(bound_node, env)
    if step is None or not isinstance(a, Num) or not isinstance(b, Num) or a.flt or b.flt:
        return None
    span = sp.expand(b.e - a.e + (1 if inclusive else 0))
    return span if step == 1 else CeilDiv(span, step)


def _exits(node: ts.Node | None) -> bool:
    if node is None:
        return False
    if node.type in ("return_statement", "continue_statement", "break_statement"):
        return node.type == "return_statement"
    if node.type == "compound_statement":
        stmts = [c for c in node.named_children if c.type != "comment"]
        return bool(stmts) and stmts[-1].type == "return_statement"
    if node.type == "expression_statement":
        return False
    return False


def _mutable_references(fd: FuncDef) -> set[int]:
    """Positions of a function's non-const reference parameters (`float& u`): what it may write back."""
    decl = fd.node.child_by_field_name("declarator")
    while decl is not None and decl.type != "function_declarator":
        decl = decl.child_by_field_name("declarator")
    plist = decl.child_by_field_name("parameters") if decl is not None else None
    out = set()
    params = [c for c in (plist.named_children if plist is not None else [])
              if c.type in ("parameter_declaration", "optional_parameter_declaration")]
    for i, p in enumerate(params):
        d = p.child_by_field_name("declarator")
        if d is not None and d.type == "reference_declarator" and "const" not in re.findall(
                r"\w+", text(p)[: d.start_byte - p.start_byte]):
            out.add(i)
    return out


_NAMED_CAST = re.compile(r"\b(?:reinterpret|static|const)_cast\s*<[^;{}()]*>\s*$")


def _handed_to_call(names: str, body: str) -> bool:
    """One of `names` (an array or its views) or the address of one of its elements is an argument of a call:
    `f(a)`, `atomicAdd(&a[k], v)`. A named cast (`reinterpret_cast<float3*>(&a[n])`, a view of the same array
    further on) is not a call: it writes nothing."""
    for m in re.finditer(r"[(,]\s*&?\s*(" + names + r")\b\s*(\[[^\]]*\]\s*)?[,)]", body):
        if not (body[m.start()] == "(" and _NAMED_CAST.search(body, 0, m.start())):
            return True
    return False


# the y and z builtins on a one-dimensional launch
_FLAT = {**{s: sp.Integer(0) for s in (TID[1], TID[2], BID[1], BID[2])},
         **{s: sp.Integer(1) for s in (BLOCK[1], BLOCK[2], GRID[1], GRID[2])}}


def _is_global_index(d: sp.Expr, axis: int, flat: bool = False) -> bool:
    """`d` is blockIdx * blockDim + threadIdx along `axis`; with `flat` (a kernel that reads no y or z builtin
    itself), also a rank over all axes that is that on a one-dimensional launch (`cg::this_grid().thread_rank()`)."""
    if sp.expand(d - (BID[axis] * BLOCK[axis] + TID[axis])) == 0:
        return True
    return flat and axis == 0 and sp.expand(d.xreplace(_FLAT) - (BID[0] * BLOCK[0] + TID[0])) == 0


def _decl(d: ts.Node | None) -> tuple[str, bool, list[ts.Node | None]]:
    from xlate.specs.infer.host import _declarator

    return _declarator(d)


@functools.lru_cache(maxsize=512)
def _cache_key(path: str, name: str, text_hash: int) -> int:
    return hash((path, name, text_hash))


def kernel_facts(program: Program, fn: Function, unit: KernelUnit, bindings: dict[str, str] | None = None,
                 open_values: frozenset[str] = frozenset()) -> KernelFacts:
    """What the kernel's code says; `bindings`: the launch's template arguments (the types its vector views read);
    `open_values`: template value parameters the spec draws (`CDIM: choice(1|3)`), read as symbols of their own."""
    base = fn.name.split("<")[0].strip()
    line = fn.span.line if fn.span is not None else 0
    mine = [f for f in program.functions.get(base, []) if f.space == "kernel"]
    fd = next((f for f in mine if f.path == unit.path and abs(f.node.start_point[0] + 1 - line) <= 3), None) or next(
        (f for f in mine if f.path == unit.path), None) or (mine[0] if mine else None)
    interp = KernelInterpreter(program, fn, unit, bindings, open_values)
    if fd is None:
        interp.facts.unknown = True
        return interp.facts
    facts = _run(interp, fd, unit)
    if interp._staged:  # stores into __shared__ arrays: run again, each load of one reading any store to it
        again = KernelInterpreter(program, fn, unit, bindings, open_values)
        again._prior = interp
        facts = _run(again, fd, unit)
    _value_ranges(facts)
    return facts


def _run(interp: KernelInterpreter, fd: FuncDef, unit: KernelUnit) -> KernelFacts:
    interp.facts.where = f"{unit.path.rsplit('/', 1)[-1]}:{fd.node.start_point[0] + 1}"
    try:
        return interp.run(fd.node)
    except RecursionError:
        interp.facts.unknown = True
        return interp.facts


def _value_ranges(facts: KernelFacts) -> None:
    """Index buffers: `x[idx[i]]` needs idx's values inside x. Solved later against x's length; here only the
    constraint shape is kept."""
    return
