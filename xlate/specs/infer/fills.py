"""What the host writes into a buffer before a kernel reads it, and the hash probes that depend on it.

A program that fills a buffer with one constant before every launch of a kernel (`cudaMemset(d, 0, bytes)` for an
accumulator, `cudaMemset(keys, 0xff, bytes)` for a hash table's empty key, `thrust::fill`) gives that kernel a
buffer holding that constant: the spec draws it so (`in[n](c..c)`). Only where every launch of the kernel finds it
(host.py records, per launch, the fill no launch and no host write has touched since, outside any loop the launch
runs in that the fill is not in).

A kernel that probes a buffer in an unbounded loop (`while (true) { ... loc = (loc + 1) % capacity; }`) ends only
for some contents: a lookup stops at the empty key, an insert needs a free slot. Such a buffer is fuzzable only
when the program empties it before every launch, and an insert only when the host keeps the inserting threads
within the capacity (`where: capacity >= len`); otherwise it is a hole (a spec under which a correct source hangs
is not a spec)."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import sympy as sp
import tree_sitter as ts

from xlate.model import Function
from xlate.specs.infer import Inference
from xlate.specs.infer.assemble import numpy_of
from xlate.specs.infer.ceval import walk_tree
from xlate.specs.infer.host import Launch
from xlate.specs.infer.program import FuncDef, Program, text
from xlate.specs.infer.values import Fill, Num
from xlate.specs.model import Origin

MAX_DEPTH = 4
EXACT_FLOAT = 2 ** 53  # the gate evaluates a range's ends as doubles: a constant beyond this is not drawn exactly


def typed_value(fill: Fill, dtype_name: str | None) -> int | float | None:
    """The element value a fill leaves, read as the buffer's type (a memset byte repeated over each element)."""
    if dtype_name is None:
        return None
    try:
        dt = np.dtype(dtype_name)
    except TypeError:  # bfloat16 and other types NumPy does not name: no fact
        return None
    if fill.byte is not None:
        if dt.kind == "f":
            return 0.0 if fill.byte == 0 else None  # 0xff.. is a NaN pattern: not a range
        if dt.kind not in "iu":
            return None
        u = int.from_bytes(bytes([fill.byte]) * dt.itemsize, "little")
        return u - (1 << (8 * dt.itemsize)) if dt.kind == "i" and u >= 1 << (8 * dt.itemsize - 1) else u
    if isinstance(fill.value, float):
        return fill.value if dt.kind == "f" else None
    if fill.value is None:
        return None
    if dt.kind == "f":
        return float(fill.value)
    if dt.kind not in "iu":
        return None
    bits = 8 * dt.itemsize
    u = int(fill.value) % (1 << bits)  # C converts to the element type by wrapping
    return u - (1 << bits) if dt.kind == "i" and u >= 1 << (bits - 1) else u


def _drawable(v: int | float) -> bool:
    return isinstance(v, float) or abs(v) <= EXACT_FLOAT


def _launches(fn: Function, launches: list[Launch]) -> list[Launch]:
    """The kernel's launches, each seen with the most context: a launcher run on its own (its object and arguments
    unknown) is left out where the same site is also reached through a caller (`[insert]` beside
    `[balance, insert]`); launchers reached through no caller stay."""
    mine = [lc for lc in launches if lc.kernel == fn.name and len(lc.args) == len(fn.params)]

    def seen_deeper(lc: Launch) -> bool:
        n = len(lc.chain)
        return any(o.where == lc.where and len(o.chain) > n and o.chain[-n:] == lc.chain for o in mine) if n else False
    return [lc for lc in mine if not seen_deeper(lc)]


def _with_range(item: str, lo: str, hi: str) -> str | None:
    """`x: inout[n](0..m - 1)` -> `x: inout[n](lo..hi)`; None for a struct buffer (its lanes have no one range)."""
    head, sep, rest = item.partition("]")
    if not sep or " as " in rest:
        return None
    if rest.startswith("("):
        depth = 0
        for i, ch in enumerate(rest):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0:
                rest = rest[i + 1:]
                break
    return f"{head}]({lo}..{hi}){rest}"


def apply_fills(fn: Function, program: Program, launches: list[Launch], inf: Inference,
                known: dict[sp.Symbol, sp.Expr] | None = None) -> None:
    """Give `in`/`inout` buffers the constant every launch finds in them; make hash probes that may not end holes.
    `known`: the values of the program's named constants (`const double LOAD = 0.25`), to compare launch values."""
    from xlate.specs.infer.kernelspec import _elem_type, resolved

    fn = resolved(fn, program)
    mine = _launches(fn, launches)
    constants: dict[str, int | float] = {}
    for i, p in enumerate(fn.params):
        if not p.is_pointer or p.name not in inf.items or not mine:
            continue
        item, _ = inf.items[p.name]
        role = item.split(":", 1)[1].strip().split("[", 1)[0]
        if role not in ("in", "inout"):
            continue  # an `out` buffer is poisoned by the gate: what the program put there is not read
        seen = [lc.fills.get(i) for lc in mine]
        if any(f is None for f in seen):
            continue
        values = {typed_value(f, numpy_of(_elem_type(p, fn, lc, program.resolve_type)))  # type: ignore[arg-type]
                  for f, lc in zip(seen, mine)}
        if len(values) != 1 or None in values:
            continue
        v = values.pop()
        if v is None or not _drawable(v):
            continue
        c = (str(int(v)) if v.is_integer() else repr(v)) if isinstance(v, float) else str(v)
        new = _with_range(item, c, c)
        if new is None:
            continue
        f0 = seen[0]
        assert f0 is not None
        inf.items[p.name] = (new, Origin("host", f0.where, f"the program writes {c} over all of it before every "
                                                           "launch of the kernel"))
        constants[p.name] = v
    _probes(fn, program, mine, inf, constants, {k: sp.nsimplify(v, rational=True) for k, v in (known or {}).items()})


# -- unbounded probe loops ----------------------------------------------------------------------------------


def _unbounded(node: ts.Node) -> bool:
    """`while (true)`, `for (;;)`, or a while loop that only the buffer contents it reads end (`while (t[h] != E)`:
    no counter compared with a bound in its condition)."""
    t = node.type
    if t in ("while_statement", "do_statement"):
        cond = node.child_by_field_name("condition")
        c = text(cond).strip("() \t") if cond is not None else ""
        return c in ("true", "1") or ("[" in c and not re.search(r"<|>", c))
    if t == "for_statement":
        return node.child_by_field_name("condition") is None
    return False



WRAP_MASK = re.compile(r"=[^;=][^;]*[\w)\]]\s*&\s*[\w(]")  # `slot = (slot + 1) & (cap - 1)`, not `&x[i]`


def _probed(program: Program, fd: FuncDef, names: dict[str, str], depth: int,
            out: list[tuple[set[str], set[str]]]) -> None:
    """Each unbounded loop that wraps an index with `%` (a hash probe): the kernel buffers it reads and the kernel
    scalars the wrap divides by. Device functions are followed through their arguments that are kernel
    parameters."""
    body = fd.node.child_by_field_name("body")
    if body is None or depth > MAX_DEPTH:
        return
    for n in walk_tree(body):
        if _unbounded(n):
            loop = text(n)
            if "%" not in loop and not WRAP_MASK.search(loop):
                continue
            moduli = {names[m] for m in re.findall(r"(?:%|[\w)\]]\s*&)\s*\(?\s*([A-Za-z_]\w*)", loop) if m in names}
            # the buffers the wrapped index reads (`t[h]` with `h = (h + 1) % cap`, or `& (cap - 1)` for a
            # power-of-two table): the table probed
            wrapped = set(re.findall(r"\b([A-Za-z_]\w*)\s*=[^;=](?:[^;]*%|[^;]*[\w)\]]\s*&[^&=])", loop))
            bufs = {kparam for local, kparam in names.items() if re.search(
                rf"\b{re.escape(local)}\s*\[[^\]]*\b({'|'.join(map(re.escape, wrapped))})\b" if wrapped else
                rf"\b{re.escape(local)}\s*\[", loop)}
            if bufs:
                out.append((bufs, moduli))
        elif n.type == "call_expression":
            fname = text(n.child_by_field_name("function")).split("<")[0].split("::")[-1].strip()
            args_node = n.child_by_field_name("arguments")
            args = [a for a in (args_node.named_children if args_node is not None else []) if a.type != "comment"]
            callee = program.function(fname, space="device", arity=len(args)) or program.function(
                fname, arity=len(args))
            if callee is None or callee is fd or callee.space == "kernel":
                continue
            sub = {pname: names[text(a)] for (pname, _, _), a in zip(callee.params, args)
                   if pname and a.type == "identifier" and text(a) in names}
            if sub:
                _probed(program, callee, sub, depth + 1, out)


def _at_least(big: Any, small: Any, known: dict[sp.Symbol, sp.Expr]) -> bool:
    if not (isinstance(big, Num) and isinstance(small, Num)):
        return False
    big_e = sp.nsimplify(big.e.xreplace(known), rational=True)
    big_e = big_e.replace(sp.floor, lambda x: x - 1)  # floor(x) > x - 1: a lower bound of the larger side
    d = sp.expand(big_e - small.e.xreplace(known))
    if d.is_number:
        return bool(d >= 0)
    xs = sorted(d.free_symbols, key=str)
    if not d.is_polynomial(*xs):
        return bool(d.is_nonnegative)
    # sizes are at least 1: a polynomial whose non-constant terms all have positive coefficients is smallest there
    poly = sp.Poly(d, *xs)
    if all(c >= 0 for m, c in zip(poly.monoms(), poly.coeffs()) if any(m)):
        return bool(d.subs({x: 1 for x in xs}) >= 0)
    return bool(d.is_nonnegative)


def _probes(fn: Function, program: Program, mine: list[Launch], inf: Inference,
            constants: dict[str, int | float], known: dict[sp.Symbol, sp.Expr]) -> None:
    fd = program.function(fn.name, space="kernel", arity=len(fn.params))
    if fd is None:
        return
    params = {p.name: p for p in fn.params}
    probed: list[tuple[set[str], set[str]]] = []
    _probed(program, fd, {p.name: p.name for p in fn.params}, 0, probed)
    index = {p.name: i for i, p in enumerate(fn.params)}

    def role_of(buf: str) -> str:
        return inf.items[buf][0].split(":", 1)[1].strip().split("[", 1)[0] if buf in inf.items else ""

    holes: dict[str, str] = {}
    for bufs, moduli in probed:
        bufs = {b for b in bufs if b in params and params[b].is_pointer and role_of(b) in ("in", "inout")}
        if not bufs:
            continue
        # the loop ends on the table's empty key: it is safe once one buffer it reads is emptied by the program
        # (the others are read beside it: values found with a key); an insert also needs a free slot
        emptied = sorted(b for b in bufs if b in constants)
        if not emptied:
            for b in bufs:
                holes[b] = "the program does not empty it before every launch of the kernel"
            continue
        for b in emptied:
            if role_of(b) != "inout":
                continue
            clause = _room_clause(fn, mine, moduli, index, known)
            if clause is None:
                holes[b] = (f"the program empties it ({constants[b]}), but nothing the host code shows keeps the "
                            "inserts within its capacity")
                continue
            inf.add_where([clause], Origin(
                "host", mine[0].where if mine else "", f"the host keeps the inserts into '{b}' within its capacity"))
    for buf, why in holes.items():
        role = role_of(buf)
        del inf.items[buf]
        inf.holes[buf] = (f"cannot fuzz the contents of '{buf}' in '{fn.name}': a hash table probed in an "
                          f"unbounded loop, which ends only for some contents ({why}); annotate it, e.g. "
                          f"'// xlate: {buf}: {role}[n](c..c)' with the empty key and a 'where' that leaves a free slot")


def _room_clause(fn: Function, mine: list[Launch], moduli: set[str], index: dict[str, int],
                 known: dict[sp.Symbol, sp.Expr]) -> str | None:
    """`M >= P`: M a modulus of the probe, P an integer parameter whose value at every launch the host shows to be
    at most M's and that the grid is computed from (the count of inserting threads)."""
    for m in sorted(moduli):
        if m not in index:
            continue
        for p in fn.params:
            if p.is_pointer or p.name == m:
                continue
            i, j = index[m], index[p.name]
            ok = True
            for lc in mine:
                big, small = lc.args[i], lc.args[j]
                grid = lc.grid
                gsyms = set()
                for g in (grid.dims if hasattr(grid, "dims") else [grid.e] if isinstance(grid, Num) else []):
                    gsyms |= sp.sympify(g).free_symbols
                if not (_at_least(big, small, known) and isinstance(small, Num) and small.e.free_symbols & gsyms):
                    ok = False
                    break
            if ok:
                return f"{m} >= {p.name}"
    return None


__all__ = ["apply_fills", "typed_value"]
