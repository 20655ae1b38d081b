"""Hypothesis strategies for fuzz cases, biased toward what breaks kernels: 0 and 1 where legal, primes,
one below/above every block and wavefront multiple, large sizes within the backend's budget."""

from __future__ import annotations

import contextlib
import math
import re

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st

from xlate.errors import SpecError
from xlate.specs import KernelSpec, ParamSpec, expr
from xlate.specs.records import Leaf
from xlate.verify.cases import (
    FLOAT_PROFILES,
    INT_PROFILES,
    Case,
    budget_length,
    ctype_dtype,
    distinct_fits,
    environment,
    is_float,
    record_leaves,
)

WIDTHS = (16, 32, 64, 128, 256, 512, 1024)
PRIMES = (2, 3, 5, 7, 13, 31, 61, 97, 127, 257, 509, 1021, 2039, 4093, 8191, 65521, 131071)


def interesting_sizes(lo: int, hi: int, blocks: list[int]) -> list[int]:
    """Boundary values inside [lo, hi], smallest first (Hypothesis shrinks toward the front)."""
    vals = {lo, lo + 1, hi, hi - 1, 0, 1, 2, 3}
    for w in {*WIDTHS, *blocks}:
        for k in (1, 2, 3):
            vals |= {w * k - 1, w * k, w * k + 1}
    vals |= set(PRIMES)
    vals |= {hi // 2, hi // 2 + 1}
    return sorted(v for v in vals if lo <= v <= hi)


SMALL = 1 << 12  # most sizes: where boundary bugs live, and fast to run
MEDIUM = 1 << 16


def tiered(lo: int, hi: int, special: list[int], draw, label: str, unit: int = 1) -> int:
    """A size in [lo, hi]: half the draws a boundary value up to SMALL, a third anything up to SMALL, one in eight
    up to MEDIUM, one in sixteen anywhere up to `hi` (the large special values among them). A 100-example run
    still meets sizes that fill a GPU, without moving gigabytes for every example; shrinking goes toward small.
    `unit`: the size is the drawn value times `unit` (a size drawn as a multiple)."""
    small_hi, medium_hi = max(1, SMALL // unit), max(1, MEDIUM // unit)
    small = [v for v in special if v <= small_hi] or special
    large = [v for v in special if v > small_hi]
    tier = draw(st.integers(0, 15), label=f"{label} size tier")
    if tier < 8:
        return draw(st.sampled_from(small), label=label)
    if tier < 13:
        return draw(st.integers(lo, min(hi, max(lo, small_hi))), label=label)
    if tier < 15:
        return draw(st.integers(lo, min(hi, max(lo, medium_hi))), label=label)
    return draw(st.one_of(st.sampled_from(large), st.integers(lo, hi)) if large else st.integers(lo, hi), label=label)


def _int_range(p: ParamSpec, cap: int) -> tuple[int, int]:
    lo = math.floor(float(expr.evaluate(p.lo or "0", {})))
    hi = math.ceil(float(expr.evaluate(p.hi or "4096", {})))
    return lo, max(lo, min(hi, cap))


def _literal_blocks(spec: KernelSpec) -> list[int]:
    out = []
    for b in spec.block:
        try:
            out.append(int(expr.evaluate(b, {})))
        except Exception:
            continue
    for values in spec.axes.values():
        out.extend(values)
    return out


_MULTIPLE = re.compile(r"^\(?\s*([A-Za-z_]\w*)\s*\)?\s*%\s*(\d+)\s*==\s*0$")


# `(kEven != 1 || n % 128 == 0)`: an instantiation the program launches only for multiples (a template value axis)
_AXIS_MULTIPLE = re.compile(r"^\(?\s*([A-Za-z_]\w*)\s*!=\s*(-?\d+)\s*\|\|\s*\(?\s*([A-Za-z_]\w*)\s*\)?\s*%\s*(\d+)\s*==\s*0\s*\)?\s*\)?$")


def multiples(spec: KernelSpec, axes: dict[str, int] | None = None) -> dict[str, int]:
    """Sizes that a `where` requires to be multiples of a constant (`n % 256 == 0`): drawn as multiples, not
    filtered (filtering wastes nearly every draw). With the launch axes drawn (`axes`), also those a clause
    requires for the axis value drawn (`(kEven != 1 || n % 128 == 0)` with kEven 1)."""
    out: dict[str, int] = {}
    names = {p.name for p in spec.sizes}
    for w in spec.where:
        for part in re.split(r"\band\b|&&", w):
            m = _MULTIPLE.match(part.strip().strip("()").strip())
            if m and m.group(1) in names and int(m.group(2)) > 1:
                out[m.group(1)] = math.lcm(out.get(m.group(1), 1), int(m.group(2)))
            a = _AXIS_MULTIPLE.match(part.strip()) if axes else None
            if a and axes and axes.get(a.group(1)) == int(a.group(2)) and a.group(3) in names and int(a.group(4)) > 1:
                out[a.group(3)] = math.lcm(out.get(a.group(3), 1), int(a.group(4)))
    return out


_BOUND = re.compile(r"^\(?\s*([A-Za-z_]\w*)\s*(>=|>|<=|<)\s*([A-Za-z_]\w*)\s*(?:([+-])\s*(\d+))?\s*\)?$")


def lower_bounds(spec: KernelSpec) -> dict[str, list[tuple[str, int]]]:
    """`where` clauses that bound one size from below by another (`ld >= cols`, `n > k + 1`, `cols <= ld`):
    size -> [(other size, offset)], meaning size >= other + offset. Such a size is drawn from its bound up;
    drawn freely and filtered, two `ld >= cols` clauses threw away four draws in five."""
    names = {p.name for p in spec.sizes}
    out: dict[str, list[tuple[str, int]]] = {}
    for w in spec.where:
        for part in re.split(r"\band\b|&&", w):
            m = _BOUND.match(part.strip())
            if not m:
                continue
            a, op, b, sign, k = m.groups()
            k_val = int(k or 0) * (-1 if sign == "-" else 1)
            if op in (">=", ">"):  # a >= b + k
                big, small, offset = a, b, k_val + (op == ">")
            else:  # a <= b + k  ->  b >= a - k
                big, small, offset = b, a, -k_val + (op == "<")
            if big in names and small in names and big != small:
                out.setdefault(big, []).append((small, offset))
    return out


def _draw_order(spec: KernelSpec, bounds: dict[str, list[tuple[str, int]]]) -> list[ParamSpec]:
    """Sizes with every size that bounds them drawn first (declaration order otherwise; a cycle keeps it)."""
    pending, done, order = list(spec.sizes), set(), []
    while pending:
        ready = [p for p in pending if all(s in done or s not in {q.name for q in pending} for s, _ in bounds.get(p.name, []))]
        for p in ready or pending[:1]:
            order.append(p)
            done.add(p.name)
            pending.remove(p)
    return order


def float_bounds(lo: float, hi: float, dtype: np.dtype) -> tuple[float, float]:
    """Decimal bounds rounded outward to values the dtype can hold: `0.0001` is not a float32, and Hypothesis
    refuses bounds it cannot represent exactly."""
    ftype = np.float16 if dtype.itemsize == 2 else np.float32 if dtype.itemsize == 4 else np.float64
    with np.errstate(over="ignore"):
        a, b = ftype(lo), ftype(hi)
        if float(a) > lo:
            a = np.nextafter(a, ftype(-np.inf))
        if float(b) < hi:
            b = np.nextafter(b, ftype(np.inf))
    return float(a), float(b)


def _width(dtype: np.dtype) -> int:
    return 16 if dtype.itemsize == 2 else 32 if dtype.itemsize == 4 else 64


def _leaf_bounds(lo_text: str | None, hi_text: str | None, dtype: np.dtype, env: dict) -> tuple[float, float]:
    """A number's drawing range: the stated one, else the defaults of `scalar` (floats -4..4, integers
    -100..100, unsigned from 0, bool 0..1), clipped to the dtype."""
    if dtype.kind == "b":
        return 0, 1
    if is_float(dtype):
        lo = float(expr.evaluate(lo_text, env)) if lo_text else -4.0
        hi = float(expr.evaluate(hi_text, env)) if hi_text else 4.0
        return float_bounds(min(lo, hi), max(lo, hi), dtype)
    info = np.iinfo(dtype)
    lo = math.ceil(float(expr.evaluate(lo_text, env))) if lo_text else (0 if dtype.kind == "u" else -100)
    hi = math.floor(float(expr.evaluate(hi_text, env))) if hi_text else 100
    lo, hi = max(lo, int(info.min)), min(hi, int(info.max))
    return lo, max(lo, hi)


def _leaf_draw(leaf: Leaf, p: ParamSpec, env: dict, draw) -> int | float | list[int | float]:
    """One number field of a by-value record: its own range, else the parameter's, else the defaults."""
    lo_t, hi_t = (leaf.lo, leaf.hi) if leaf.lo is not None else (p.lo, p.hi)
    lo, hi = _leaf_bounds(lo_t, hi_t, leaf.dtype, env)
    if is_float(leaf.dtype):
        specials = [v for v in (0.0, 1.0, -1.0, lo, hi, 0.5) if lo <= v <= hi]
        one = st.one_of(st.sampled_from(specials), st.floats(lo, hi, allow_nan=False, allow_infinity=False,
                                                             width=_width(leaf.dtype)))
    else:
        one = st.integers(int(lo), int(hi))
    label = f"{p.name}.{leaf.label}"
    if leaf.count == 1 and not any(leaf.shapes):
        return draw(one, label=label)
    return draw(st.lists(one, min_size=leaf.count, max_size=leaf.count), label=label)


def _leaf_middle(leaf: Leaf, p: ParamSpec, env: dict | None = None) -> int | float | list[int | float]:
    """The explicit cases' value of a by-value record's field: the middle of its range (not 0 if avoidable)."""
    lo_t, hi_t = (leaf.lo, leaf.hi) if leaf.lo is not None else (p.lo, p.hi)
    lo, hi = _leaf_bounds(lo_t, hi_t, leaf.dtype, env or {})
    mid = (lo + hi) / 2 if is_float(leaf.dtype) else (int(lo) + int(hi)) // 2
    v = mid if mid != 0 else hi
    return v if leaf.count == 1 and not any(leaf.shapes) else [v] * leaf.count


def record_middle(p: ParamSpec, dtype: np.dtype, env: dict | None = None) -> dict[str, object]:
    """A by-value record whose every number field is in the middle of its range (record_scalar's form)."""
    return {leaf.label: _leaf_middle(leaf, p, env) for leaf in record_leaves(p.ctype, dtype) if leaf.const is None}


@st.composite
def cases(draw, spec: KernelSpec, budget: int, size_cap: int, dtypes: dict[str, list[str]] | None = None) -> Case:
    blocks = _literal_blocks(spec)
    sizes: dict[str, int] = {}
    for name, values in spec.axes.items():  # launch axes (block sizes the program uses) live beside the sizes
        sizes[name] = draw(st.sampled_from(values), label=name)
    steps = multiples(spec, sizes)
    bounds = lower_bounds(spec)
    for p in _draw_order(spec, bounds):
        lo, hi = _int_range(p, size_cap)
        k = steps.get(p.name, 1)
        if k == 1:
            lo = max([lo, *(sizes[s] + off for s, off in bounds.get(p.name, []) if s in sizes)])
            if lo > hi:  # no legal value after the sizes drawn so far: the `where` filter rejects the case
                lo = hi
        if k > 1 and hi >= k:
            klo, khi = max(0 if lo <= 0 else 1, -(-lo // k)), hi // k
            if klo <= khi:
                picks = sorted({klo, khi, min(khi, klo + 1), min(khi, klo + 2), *(v for v in (1, 2, 3, 4, 8) if klo <= v <= khi)})
                sizes[p.name] = k * tiered(klo, khi, picks, draw, p.name, unit=k)
                continue
        sizes[p.name] = tiered(lo, hi, interesting_sizes(lo, hi, blocks), draw, p.name)
    axes = dtypes or spec.dtype_axes
    bound = {name: draw(st.sampled_from(options), label=name) for name, options in axes.items()}
    scalars: dict[str, int | float] = {}
    probe = Case(sizes, bound, {}, {}, 0)
    for p in spec.scalars:
        dtype = ctype_dtype(p.ctype, probe, spec)
        env = {**sizes}
        if dtype.fields is not None:  # a record passed by value: each field from its own dtype and range
            scalars[p.name] = {leaf.label: _leaf_draw(leaf, p, env, draw) for leaf in record_leaves(p.ctype, dtype)  # type: ignore[assignment]
                               if leaf.const is None}  # a `const(...)` field is computed, not drawn
            continue
        if is_float(dtype):
            lo = float(expr.evaluate(p.lo, env)) if p.lo else -4.0
            hi = float(expr.evaluate(p.hi, env)) if p.hi else 4.0
            lo, hi = float_bounds(min(lo, hi), max(lo, hi), dtype)
            specials = [v for v in (0.0, 1.0, -1.0, lo, hi, 0.5) if lo <= v <= hi]
            one = st.one_of(st.sampled_from(specials), st.floats(lo, hi, allow_nan=False, allow_infinity=False,
                                                                 width=_width(dtype)))
            scalars[p.name] = float(draw(one, label=p.name)) if p.lanes <= 1 else [  # float3 by value: each lane
                float(v) for v in draw(st.lists(one, min_size=p.lanes, max_size=p.lanes), label=p.name)]
        else:
            lo = math.ceil(float(expr.evaluate(p.lo, env))) if p.lo else (0 if dtype.kind == "u" else -100)
            hi = math.floor(float(expr.evaluate(p.hi, env))) if p.hi else 100
            if dtype.kind == "u":
                lo = max(lo, 0)
            if hi < lo:  # no integer inside a decimal range: its nearest ones
                lo, hi = math.floor(float(expr.evaluate(p.lo, env))), math.ceil(float(expr.evaluate(p.hi, env)))
            scalars[p.name] = draw(st.integers(lo, hi), label=p.name) if p.lanes <= 1 else draw(
                st.lists(st.integers(lo, hi), min_size=p.lanes, max_size=p.lanes), label=p.name)
    profiles = {}
    for p in spec.buffers:
        if p.role == "out":
            continue
        dtype = ctype_dtype(p.ctype, probe, spec)
        floats = is_float(dtype) or (dtype.fields is not None and any(
            is_float(leaf.dtype) for leaf in record_leaves(p.ctype, dtype)))
        options = FLOAT_PROFILES if floats else INT_PROFILES
        if floats and spec.values == "finite":
            options = tuple(o for o in options if o != "special")
        profiles[p.name] = draw(st.sampled_from(options), label=f"{p.name} values")
    seed = draw(st.integers(0, 2**32 - 1), label="data seed")
    case = Case(sizes, bound, scalars, profiles, seed, "hypothesis")
    env = environment(spec, case)
    for w in spec.where:
        assume(bool(expr.evaluate(w, env)))
    assume(distinct_fits(spec, case, env))
    total = sum(budget_length(p, env, case, spec) for p in spec.buffers)
    assume(total <= budget)
    grid = 1
    for g in spec.grid:
        v = expr.evaluate(g, env)
        grid *= math.prod(v) if isinstance(v, tuple) else max(0, int(v))
    assume(grid <= 1 << 20)
    return case


def smallest_total(spec: KernelSpec, size_cap: int) -> int | None:
    """What the spec's smallest case costs of the per-case budget (buffers' 4-byte numbers, every size at its low
    end), or None where no such case can be built (a `where` no edge case meets)."""
    edge = explicit_cases(spec, 1 << 62, size_cap)
    if not spec.sizes:  # nothing to vary: the one case there is
        edge = [Case({n: v[0] for n, v in spec.axes.items()}, {n: o[0] for n, o in spec.dtype_axes.items()}, {}, {}, 0)]
    totals = []
    for case in edge:
        try:
            env = environment(spec, case)
            totals.append(sum(budget_length(p, env, case, spec) for p in spec.buffers))
        except Exception:  # a length that does not evaluate here: the draws will say why
            continue
    return min(totals) if totals else None


def explicit_cases(spec: KernelSpec, budget: int, size_cap: int) -> list[Case]:
    """Deterministic edge cases run before anything random: every size at its low end, at low+1 (n = 1 where 0
    is legal), and each size alone at its (capped) maximum with the others small. Bugs that live only there must
    not depend on the random draw finding them."""
    sizes = spec.sizes
    if not sizes:
        return []
    ranges = {p.name: _int_range(p, size_cap) for p in sizes}
    candidates: list[dict[str, int]] = [
        {n: lo for n, (lo, hi) in ranges.items()},
        {n: min(lo + 1, hi) for n, (lo, hi) in ranges.items()},
    ]
    for name, (lo, hi) in ranges.items():
        for big in (hi, hi - 1):
            candidates.append({n: (max(lo, min(big, h)) if n == name else min(l2 + 1, h)) for n, (l2, h) in ranges.items()})
    bound = {name: options[0] for name, options in spec.dtype_axes.items()}
    for c in candidates:
        for name, values in spec.axes.items():
            c[name] = values[0]
    if spec.axes:  # every other axis value once, at a small size
        for name, values in spec.axes.items():
            for v in values[1:]:
                c = dict(candidates[1])
                c[name] = v
                candidates.append(c)
    for c in candidates:  # multiples the `where` asks for, with this candidate's axis values
        for name, k in multiples(spec, c).items():
            lo_k, hi_k = ranges[name]
            c[name] = max(k * max(1, -(-lo_k // k)), min(hi_k // k * k, k * max(1, c[name] // k))) if hi_k >= k else c[name]
    out: list[Case] = []
    seen: set[tuple[tuple[str, int], ...]] = set()
    probe = Case({}, bound, {}, {}, 0)
    scalars: dict[str, int | float] = {}
    for p in spec.scalars:
        dtype = ctype_dtype(p.ctype, probe, spec)
        if dtype.fields is not None:
            with contextlib.suppress(SpecError):  # a field range over sizes: the random draws cover it
                scalars[p.name] = record_middle(p, dtype)  # type: ignore[assignment]
            continue
        try:
            lo = float(expr.evaluate(p.lo, {})) if p.lo else (-4.0 if is_float(dtype) else 0)
            hi = float(expr.evaluate(p.hi, {})) if p.hi else (4.0 if is_float(dtype) else 100)
        except SpecError:
            continue  # a range over sizes: the random draws cover it
        if is_float(dtype):
            lo, hi = float_bounds(min(lo, hi), max(lo, hi), dtype)
            mid = (lo + hi) / 2
            scalars[p.name] = mid if mid != 0 else hi
            if p.lanes > 1:
                scalars[p.name] = [scalars[p.name]] * p.lanes
        else:
            ilo, ihi = math.ceil(lo), math.floor(hi)
            if ihi < ilo:
                ilo, ihi = math.floor(lo), math.ceil(hi)
            mid = (ilo + ihi) // 2
            scalars[p.name] = mid if mid != 0 else ihi
            if p.lanes > 1:
                scalars[p.name] = [scalars[p.name]] * p.lanes
    profiles = {p.name: "uniform" for p in spec.buffers if p.role != "out"}
    for sizes_ in candidates:
        key = tuple(sorted(sizes_.items()))
        if key in seen:
            continue
        seen.add(key)
        case = Case(dict(sizes_), dict(bound), dict(scalars), dict(profiles), 1, "edge")
        try:  # records whose field ranges read sizes: their middle at this case's sizes
            for p in spec.scalars:
                if p.name not in case.scalars and (dtype := ctype_dtype(p.ctype, probe, spec)).fields is not None:
                    case.scalars[p.name] = record_middle(p, dtype, dict(sizes_))  # type: ignore[assignment]
        except SpecError:
            continue
        try:
            env = environment(spec, case)
            if not all(bool(expr.evaluate(w, env)) for w in spec.where) or not distinct_fits(spec, case, env):
                continue
            if sum(budget_length(p, env, case, spec) for p in spec.buffers) > budget:
                continue
        except Exception:
            continue
        out.append(case)
    return out
