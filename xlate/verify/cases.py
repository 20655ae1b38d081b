"""Fuzz cases: what Hypothesis draws (sizes, dtypes, scalars, value profiles, a data seed) and how a case
becomes concrete inputs. Inputs are a pure function of the case, so a case replays exactly."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from xlate.cir.ctype import numpy_name
from xlate.errors import SpecError
from xlate.specs import KernelSpec, ParamSpec, expr, normalise_ctype
from xlate.specs.records import Leaf, is_record, leaves, parse_record, record_dtype

FLOAT_PROFILES = ("normal", "uniform", "integers", "wide", "edges", "tiny", "special")
INT_PROFILES = ("uniform", "edges")


@dataclass
class Case:
    sizes: dict[str, int]
    dtypes: dict[str, str]
    scalars: dict[str, int | float]
    profiles: dict[str, str]
    seed: int
    label: str = ""  # where the case came from (hypothesis, golden, explicit)
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Case:
        return cls(d["sizes"], d["dtypes"], d["scalars"], d["profiles"], int(d["seed"]), d.get("label", ""), d.get("extra", {}))

    def shape_key(self) -> tuple[Any, ...]:
        return tuple(sorted(self.sizes.items()))


def np_dtype(name: str) -> np.dtype:
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def is_float(dtype: np.dtype) -> bool:
    return dtype.kind == "f" or dtype.name == "bfloat16"


def ctype_dtype(ctype: str, case: Case, spec: KernelSpec) -> np.dtype:
    """NumPy dtype of a C element type under this case's template bindings; a record type (`{a: float32, n:
    int32}`) is a structured dtype with C's layout."""
    if is_record(ctype):
        return record_dtype(ctype, lambda t: np_dtype(case.dtypes.get(t, t)))
    c = normalise_ctype(ctype)
    if c in case.dtypes:
        return np_dtype(case.dtypes[c])
    if c == "" or c == "auto":  # Triton launchers: the first dtype axis, else float32
        return np_dtype(next(iter(case.dtypes.values()), "float32"))
    name = numpy_name(c)
    if name:
        return np_dtype(name)
    raise SpecError(f"xlate: error: cannot fuzz values of C type '{ctype}' in '{spec.kernel}'")


def sizeof_table(case: Case, spec: KernelSpec) -> dict[str, int]:
    table = {t: np_dtype(d).itemsize for t, d in case.dtypes.items()}
    return table


def environment(spec: KernelSpec, case: Case) -> dict[str, Any]:
    """Values of every name a spec expression may use."""
    env: dict[str, Any] = dict(case.sizes)
    env.update(case.scalars)
    sizeof = sizeof_table(case, spec)
    for name, e in spec.value_params.items():
        env[name] = expr.evaluate(e, env, sizeof)
    for p in spec.params:
        if p.role == "const":
            env[p.name] = expr.evaluate(p.const or "0", env, sizeof)
    block = tuple(int(expr.evaluate(b, env, sizeof)) for b in spec.block)
    env["block"] = math.prod(block)
    return env


def launch_dims(spec: KernelSpec, env: dict[str, Any], case: Case) -> tuple[tuple[int, int, int], tuple[int, int, int], int]:
    sizeof = sizeof_table(case, spec)

    def dims(items: list[str]) -> tuple[int, int, int]:
        vals: list[int] = []
        for e in items:
            v = expr.evaluate(e, env, sizeof)
            vals.extend(int(x) for x in (v if isinstance(v, tuple) else (v,)))
        vals = [*vals, 1, 1, 1][:3]
        return (vals[0], vals[1], vals[2])

    return dims(spec.grid), dims(spec.block), int(expr.evaluate(spec.shmem, env, sizeof))


def buffer_shape(p: ParamSpec, env: dict[str, Any], case: Case, spec: KernelSpec) -> tuple[int, ...]:
    sizeof = sizeof_table(case, spec)
    shape = tuple(max(0, int(expr.evaluate(d, env, sizeof))) for d in p.dims)
    return (*shape, p.lanes) if p.lanes > 1 else shape


def buffer_length(p: ParamSpec, env: dict[str, Any], case: Case, spec: KernelSpec) -> int:
    return math.prod(buffer_shape(p, env, case, spec))


def budget_length(p: ParamSpec, env: dict[str, Any], case: Case, spec: KernelSpec) -> int:
    """What a buffer costs of the gate's per-case budget, in 4-byte numbers' worth: its elements, a record
    counted by its size (`{s0: uint32[4096], ...}` is not one number)."""
    n = buffer_length(p, env, case, spec)
    return n * max(1, ctype_dtype(p.ctype, case, spec).itemsize // 4) if is_record(p.ctype) else n


def _float_values(rng: np.random.Generator, n: int, profile: str, lo: float | None, hi: float | None,
                  dtype: np.dtype, special_ok: bool) -> np.ndarray:
    bounded = lo is not None and hi is not None
    a, b = (lo, hi) if bounded else (-1.0, 1.0)
    if profile == "normal":
        v = rng.standard_normal(n)
    elif profile == "integers":
        v = rng.integers(-8, 9, n).astype(np.float64)
    elif profile == "wide":
        v = np.where(rng.random(n) < 0.5, -1.0, 1.0) * 10.0 ** rng.uniform(-3, 3, n)
    elif profile == "edges":
        picks = np.array([a, b, 0.0, -0.0, 1.0, -1.0, (a + b) / 2])
        v = np.where(rng.random(n) < 0.5, picks[rng.integers(0, len(picks), n)], rng.uniform(a, b, n))
    elif profile == "tiny":
        tiny = float(np.finfo(np.float32).tiny) if dtype.itemsize >= 4 else 6.1e-5
        v = rng.uniform(-4, 4, n) * tiny
    elif profile == "special":
        v = rng.uniform(a, b, n)
        if special_ok and n:
            k = max(1, n // 20)
            idx = rng.integers(0, n, k)
            v[idx] = np.array([np.inf, -np.inf, np.nan, -0.0])[rng.integers(0, 4, k)]
    else:  # uniform
        v = rng.uniform(a, b, n)
    if bounded:  # every profile honours a stated range ("tiny" gave 3.7e-38 to an in[1](0..0) buffer); the
        finite = np.isfinite(v)  # specials (`values: special`, the default) stay: `values: finite` removes them
        v = np.where(finite, np.clip(v, a, b), v)
    return v


def _int_values(rng: np.random.Generator, n: int, profile: str, lo: int | None, hi: int | None, dtype: np.dtype) -> np.ndarray:
    info = np.iinfo(dtype)
    if lo is None or hi is None:
        lo, hi = (int(info.min), int(info.max)) if dtype.itemsize == 1 or dtype.kind == "u" else (-1000, 1000)
    lo, hi = max(lo, int(info.min)), min(hi, int(info.max))
    if hi < lo:
        return np.zeros(n, dtype=np.int64)
    wide = np.uint64 if hi > np.iinfo(np.int64).max else np.int64  # uint64's upper half does not fit int64
    drawn = rng.integers(lo, hi, n, dtype=wide, endpoint=True)
    if profile == "edges":
        picks = np.array([lo, hi, (lo + hi) // 2, min(max(0, lo), hi)], dtype=wide)
        return np.where(rng.random(n) < 0.5, picks[rng.integers(0, len(picks), n)], drawn)
    return drawn


def distinct_room(p: ParamSpec, env: dict[str, Any], case: Case, spec: KernelSpec) -> tuple[int, int, int]:
    """(lo, hi, count) of a `(LO..HI distinct)` buffer: the integers it draws from, clipped to its dtype."""
    sizeof = sizeof_table(case, spec)
    lo = math.ceil(float(expr.evaluate(p.lo or "0", env, sizeof)))
    hi = math.floor(float(expr.evaluate(p.hi or "0", env, sizeof)))
    dtype = ctype_dtype(p.ctype, case, spec)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi = max(lo, int(info.min)), min(hi, int(info.max))
    return lo, hi, max(0, hi - lo + 1)


def distinct_fits(spec: KernelSpec, case: Case, env: dict[str, Any]) -> bool:
    """The constraint every `distinct` buffer brings: no more elements than values in its range (the spec's
    `where` should say it so the sizes are drawn to fit; this catches a spec that does not)."""
    return all(buffer_length(p, env, case, spec) <= distinct_room(p, env, case, spec)[2]
               for p in spec.buffers if p.distinct and p.role != "out")


def _distinct_values(rng: np.random.Generator, n: int, lo: int, count: int, profile: str) -> np.ndarray:
    """n pairwise distinct integers of lo..lo+count-1, in random order; `edges` puts both ends in when n >= 2."""
    picks = rng.choice(count, size=n, replace=False).astype(np.int64)
    if profile == "edges" and n >= 2 and count > 2:
        ends = {0, count - 1}
        rest = [v for v in picks.tolist() if v not in ends][: n - 2]
        picks = rng.permutation(np.array([0, count - 1, *rest], dtype=np.int64))
    return picks + lo


def _ascending_values(rng: np.random.Generator, n: int, lo: float, hi: float, profile: str,
                      integer: bool) -> np.ndarray:
    """n non-decreasing values of lo..hi (segment offsets: equal neighbours are empty segments). `edges` pins the
    first at lo and the last at hi and picks one of three shapes: one segment holds everything, every segment is
    empty, or a mix of the range's ends and middle with many empty segments."""
    if hi < lo or n == 0:
        return np.full(n, lo)
    draw = (lambda k: rng.integers(int(lo), int(hi), k, endpoint=True)) if integer else (lambda k: rng.uniform(lo, hi, k))
    if profile != "edges":
        return np.sort(draw(n))
    shape = int(rng.integers(0, 3))
    if shape == 0:  # one segment holding all: lo up to a cut, hi from it on
        v = np.where(np.arange(n) < int(rng.integers(1, max(2, n))), lo, hi)
    elif shape == 1:  # every segment empty
        v = np.full(n, lo)
    else:
        mid = (lo + hi) // 2 if integer else (lo + hi) / 2
        v = np.sort(np.where(rng.random(n) < 0.6, np.array([lo, hi, mid])[rng.integers(0, 3, n)], draw(n)))
    if n >= 2 and shape != 1:
        v[0], v[-1] = lo, hi
    return v


def _least_step(p: ParamSpec, spec: KernelSpec, env: dict[str, Any], sizeof: dict[str, int]) -> int:
    """The least length of the segments of `x: (.. ascending by L)`: L's own lowest value (a kernel may read the
    last element of every segment), so offsets step at least that far and the lengths keep their range."""
    q = spec.param(p.ascending_by) if p.ascending_by else None
    if q is None or q.lo is None:
        return 0
    return max(0, math.ceil(float(expr.evaluate(q.lo, env, sizeof))))


def _fit_segments(values: dict[str, np.ndarray], spec: KernelSpec, case: Case, env: dict[str, Any]) -> None:
    """`x: (LO..HI ascending by L)`: L[k] is cut to x[k + 1] - x[k] (the last to HI - x[k]), so segment k,
    x[k] .. x[k] + L[k] - 1, ends before the next one starts and inside the range."""
    sizeof = sizeof_table(case, spec)
    for p in spec.buffers:
        if not p.ascending_by or p.name not in values or p.ascending_by not in values:
            continue
        x = values[p.name].astype(np.int64)
        hi = math.floor(float(expr.evaluate(p.hi or "0", env, sizeof)))
        room = np.diff(np.append(x, max(hi, int(x[-1]) if x.size else hi)))
        lengths = values[p.ascending_by]
        k = min(lengths.size, room.size)
        cut = np.minimum(lengths[:k].astype(np.int64), np.maximum(room[:k], 0))
        lengths[:k] = cut.astype(lengths.dtype)


def make_inputs(spec: KernelSpec, case: Case, env: dict[str, Any]) -> dict[str, np.ndarray]:
    """Flat input arrays (buffer dtype) for every in/inout buffer."""
    out: dict[str, np.ndarray] = {}
    sizeof = sizeof_table(case, spec)
    for index, p in enumerate(spec.buffers):
        if p.role == "out":
            continue
        dtype = ctype_dtype(p.ctype, case, spec)
        n = buffer_length(p, env, case, spec)
        rng = np.random.default_rng([case.seed, index])
        profile = case.profiles.get(p.name, "uniform")
        lo = float(expr.evaluate(p.lo, env, sizeof)) if p.lo is not None else None
        hi = float(expr.evaluate(p.hi, env, sizeof)) if p.hi is not None else None
        if dtype.fields is not None:  # a buffer of records: each field from its own dtype and range
            out[p.name] = record_values(p.ctype, dtype, n, case, env, profile, spec, [case.seed, index])
            continue
        if p.perm:
            values = rng.permutation(n).astype(np.int64)
        elif p.distinct:
            dlo, _, count = distinct_room(p, env, case, spec)
            if n > count:
                raise SpecError(f"xlate: error: '{p.name}' of '{spec.kernel}' must hold {n} distinct values of "
                                f"{p.lo}..{p.hi}, which has {count} in this case: bound its length with a 'where'")
            values = _distinct_values(rng, n, dlo, count, profile)
        elif p.ascending:
            flt = is_float(dtype)
            a = lo if lo is not None else 0.0
            b = hi if hi is not None else a + 1000.0
            if not flt and dtype.kind in "iu":  # inside the element type, like every integer draw
                a, b = max(math.ceil(a), int(np.iinfo(dtype).min)), min(math.floor(b), int(np.iinfo(dtype).max))
            step = _least_step(p, spec, env, sizeof)
            if b - a < step * n:  # no room for n segments of the least length: they are cut (a `where` says so)
                step = 0
            values = _ascending_values(rng, n, a, b - step * n, profile, not flt) + step * np.arange(n)
        elif is_float(dtype):
            values = _float_values(rng, n, profile, lo, hi, dtype, spec.values == "special")
        elif dtype.kind == "b":
            values = rng.random(n) < 0.5
        else:
            values = _int_values(rng, n, profile, math.ceil(lo) if lo is not None else None,
                                 math.floor(hi) if hi is not None else None, dtype)
        with np.errstate(over="ignore", invalid="ignore"):
            out[p.name] = np.asarray(values).astype(dtype)
    _fit_segments(out, spec, case, env)
    return out


def record_leaves(ctype: str, dtype: np.dtype) -> list[Leaf]:
    return leaves(parse_record(ctype), dtype)


def record_values(ctype: str, dtype: np.dtype, n: int, case: Case, env: dict[str, Any], profile: str,
                  spec: KernelSpec, seed: list[int], lo: str | None = None, hi: str | None = None) -> np.ndarray:
    """n records: every number field drawn from its own dtype, in its own range (else `lo..hi`, the range the
    whole parameter has), under the buffer's profile (integer fields take `edges` or `uniform`); a bool field
    is 0 or 1; padding bytes are zero."""
    sizeof = sizeof_table(case, spec)
    out = np.zeros(n, dtype=dtype)
    for k, leaf in enumerate(record_leaves(ctype, dtype)):
        rng = np.random.default_rng([*seed, 1000 + k])
        count = n * leaf.count
        flo, fhi = (leaf.lo, leaf.hi) if leaf.lo is not None else (lo, hi)
        a = float(expr.evaluate(flo, env, sizeof)) if flo is not None else None
        b = float(expr.evaluate(fhi, env, sizeof)) if fhi is not None else None
        ldt = leaf.dtype
        if ldt.kind == "b":
            v = rng.random(count) < 0.5
        elif is_float(ldt):
            v = _float_values(rng, count, profile, a, b, ldt, spec.values == "special")
        else:
            v = _int_values(rng, count, "edges" if profile == "edges" else "uniform",
                            math.ceil(a) if a is not None else None, math.floor(b) if b is not None else None, ldt)
        leaf.assign(out, v)
    return out


def record_scalar(ctype: str, value: dict[str, Any], dtype: np.dtype, env: dict[str, Any] | None = None,
                  sizeof: dict[str, int] | None = None) -> np.ndarray:
    """A by-value record's drawn fields ({"dt": 0.5, "m": [1, 2, 3], "inner.a": [1, 2]}: each number field by
    its dotted path, its numbers in C order) as one record of `dtype`; fields not given are zero. A `const(...)`
    field takes its values from `env` (the rest of its array zero); pointer fields stay zero (the runtime writes
    the buffers' addresses there)."""
    out = np.zeros(1, dtype=dtype)
    for leaf in record_leaves(ctype, dtype):
        if leaf.const is not None:
            given = [expr.evaluate(e, env or {}, sizeof or {}) for e in leaf.const]
            leaf.assign(out, [*given, *([0] * (leaf.count - len(given)))])
        elif leaf.label in value:
            leaf.assign(out, value[leaf.label])
    return out


def computed_fields(p: ParamSpec | None, case: Case, env: dict[str, Any], spec: KernelSpec) -> dict[str, Any]:
    """A by-value record's `const(...)` fields in this case, by dotted path (a NumPy reference's view of them)."""
    if p is None or not is_record(p.ctype):
        return {}
    dtype = ctype_dtype(p.ctype, case, spec)
    rec = record_scalar(p.ctype, {}, dtype, env, sizeof_table(case, spec))
    return {leaf.label: (v.tolist() if (v := leaf.values(rec)[0]).size > 1 or any(leaf.shapes) else v[0].item())
            for leaf in record_leaves(p.ctype, dtype) if leaf.const is not None}


def scalar_arg_value(p: ParamSpec, value: Any, dtype: np.dtype, case: Case,
                     env: dict[str, Any] | None = None, spec: KernelSpec | None = None) -> tuple[Any, str]:
    """(value, dtype name) of a by-value argument as the backends take it: a number, the lanes of a vector or
    struct of one type (a list), or a record's bytes (a list of uint8, dtype `recordN` with N its C alignment)."""
    if dtype.fields is not None:
        from xlate.specs.records import layout

        sizeof = sizeof_table(case, spec) if spec is not None else {}
        rec = record_scalar(p.ctype, value or {}, dtype, env, sizeof)
        align = layout(parse_record(p.ctype), lambda t: np_dtype(case.dtypes.get(t, t)))[1]
        return rec.view(np.uint8).tolist(), f"record{align}"
    if isinstance(value, list):  # a vector or struct of numbers passed by value: its lanes
        return np.asarray(value, dtype=dtype).astype(np.float64 if is_float(dtype) else np.int64).tolist(), dtype.name
    if is_float(dtype):
        return float(np.asarray(value, dtype=dtype).astype(np.float64)), dtype.name
    return int(value), dtype.name


def buffer_arg(name: str, data: np.ndarray, offset: int, n: int, slot: tuple[str, int] | None = None) -> Any:
    """A buffer argument as every backend takes it: `n` elements of `data` from `offset`; records as their bytes.
    `slot` (record argument, byte offset): a record's pointer field, passed as its address inside that record."""
    from xlate.backends.base import BufferArg

    if data.dtype.fields is not None:
        size = data.dtype.itemsize
        return BufferArg(name, data.view(np.uint8), offset * size, n * size, slot=slot)
    return BufferArg(name, data, offset, n, slot=slot)


def member_slots(spec: KernelSpec, case: Case) -> dict[str, tuple[str, int]]:
    """Each record pointer field's buffer (`info.data`) -> (the record parameter, the field's byte offset in the
    record's layout under this case's dtypes)."""
    from xlate.specs.records import has_pointers, pointer_slots

    out: dict[str, tuple[str, int]] = {}
    for p in spec.params:
        if p.role == "scalar" and is_record(p.ctype) and has_pointers(rec := parse_record(p.ctype)):
            for slot in pointer_slots(rec, ctype_dtype(p.ctype, case, spec)):
                out[f"{p.name}.{slot.label}"] = (p.name, slot.offset)
    return out


def scalar_arg(p: ParamSpec, case: Case, env: dict[str, Any], spec: KernelSpec) -> Any:
    """The by-value argument of `p` in this case (a size, a drawn scalar or a value the spec computes)."""
    from xlate.backends.base import NULL_POINTER, ScalarArg

    if p.is_null:  # `bias: null`: the null pointer, as the program passes it
        return ScalarArg(p.name, 0, NULL_POINTER)
    value = case.sizes.get(p.name, case.scalars.get(p.name, env.get(p.name)))
    dtype = ctype_dtype(p.ctype, case, spec) if p.ctype else np.dtype("int64" if isinstance(value, int) else "float32")
    return ScalarArg(p.name, *scalar_arg_value(p, value, dtype, case, env, spec))


def summarize(a: np.ndarray, limit: int = 4) -> str:
    if a.size == 0:
        return "empty"
    if a.dtype.fields is not None:  # records: the first one, field by field
        first = ", ".join(f"{name}={_fmt(a.reshape(-1)[0][name]) if a.dtype.fields[name][0].shape == () else a.reshape(-1)[0][name].tolist()}"
                          for name in a.dtype.names or ())
        return f"{a.size} records of {a.dtype.itemsize} bytes; first: {{{first}}}"
    flat = a.reshape(-1)
    head = ", ".join(_fmt(x) for x in flat[:limit])
    if np.issubdtype(a.dtype, np.number) or a.dtype.name == "bfloat16":
        f = flat.astype(np.float64)
        finite = f[np.isfinite(f)]
        rng = f"[{_fmt(finite.min())}, {_fmt(finite.max())}]" if finite.size else "[no finite values]"
        nonfinite = int(f.size - finite.size)
        extra = f", {nonfinite} non-finite" if nonfinite else ""
        return f"{a.size} x {a.dtype.name} in {rng}{extra}; first: {head}{', ...' if a.size > limit else ''}"
    return f"{a.size} x {a.dtype.name}; first: {head}"


def _fmt(x: Any) -> str:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return str(x)
    if math.isnan(v) or math.isinf(v):
        return str(v)
    if v == int(v) and abs(v) < 1e15:
        return str(int(v)) if not (v == 0 and math.copysign(1, v) < 0) else "-0.0"
    return f"{v:.7g}"
