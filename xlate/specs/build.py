"""Building a kernel's spec from its sources, strongest first: the sidecar `xlate.toml`, the `// xlate:`
annotation, and inference from the program (host code: launch sites, allocations, the values `main` sets; the
kernel's own guards and index expressions; defaults). Every item keeps its origin; what nothing could fill is a
hole, and a spec with holes is refused with a message naming what to annotate."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from xlate.errors import SpecError
from xlate.model import Function, KernelUnit, Param, PyFunction
from xlate.specs import expr
from xlate.specs.language import (
    BUFFER,
    CALL,
    global_buffer,
    leading_annotation,
    parse_choice,
    parse_items,
    parse_range,
    parse_tuple,
    parse_values,
    split_record,
    split_top,
    value_order,
)
from xlate.specs.model import (
    NUMERIC_DTYPES,
    KernelSpec,
    Origin,
    ParamSpec,
    ctypes_table,
    normalise_ctype,
    param_ctype,
)
from xlate.specs.records import has_pointers, parse_record

OP_CLASSES = ("elementwise", "reduction", "scan", "matmul", "movement", "atomic")

CLASS_TYPE = re.compile(r"^\s*type\s*\((.*)\)\s*$")  # a template type bound to a class of the program


@dataclass
class Resolution:
    """Every item of one kernel's spec with its origin, and the holes nothing could fill."""

    kernel: str
    path: str
    line: int | None
    items: dict[str, tuple[str, Origin]] = field(default_factory=dict)  # key -> (item text, origin)
    holes: dict[str, str] = field(default_factory=dict)  # key -> what is missing, with a suggestion
    notes: list[str] = field(default_factory=list)
    spec: KernelSpec | None = None
    error: str | None = None  # the items do not build (a malformed annotation...)

    @property
    def complete(self) -> bool:
        return self.spec is not None and not self.holes

    def annotation(self) -> str:
        return ", ".join(text for text, _ in self.items.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel, "path": self.path, "line": self.line, "complete": self.complete,
            "annotation": self.annotation(),
            "items": [{"key": k, "item": t, "origin": o.kind, "where": o.where, "detail": o.detail}
                      for k, (t, o) in self.items.items()],
            "holes": [{"key": k, "hint": h} for k, h in self.holes.items()],
            "notes": list(self.notes), "error": self.error,
        }


def _where(path: str, line: int | None) -> str:
    return f"{path}:{line}:1: " if line else (f"{path}: " if path else "")


def build_spec(unit: KernelUnit, kernel: str, overrides: str | None = None, *,
               context: list[KernelUnit] | None = None) -> KernelSpec:
    """The spec of `kernel` (a CUDA/HIP kernel, or a Triton launcher function); SpecError when it has holes."""
    res = resolve_spec(unit, kernel, overrides, context=context)
    if res.error:
        raise SpecError(res.error)
    if res.holes:
        where = _where(res.path, res.line)
        lines = [f"{where}error: {hint}" for hint in res.holes.values()]
        raise SpecError("\n".join(lines))
    assert res.spec is not None
    return res.spec


def resolve_spec(unit: KernelUnit, kernel: str, overrides: str | None = None, *,
                 context: list[KernelUnit] | None = None) -> Resolution:
    """Like build_spec, but never raises for holes: `xlate spec` shows them."""
    if unit.language == "triton":
        return _resolve_triton(unit, kernel, overrides)
    fn = unit.kernel(kernel)
    if fn is None:
        names = ", ".join(k.name for k in unit.kernels) or "none"
        raise SpecError(f"{unit.path}: error: no kernel named '{kernel}' (kernels here: {names})")
    line = fn.annotation_span.line if fn.annotation_span else (fn.span.line if fn.span else None)
    res = Resolution(kernel, unit.path, line)
    where = _where(unit.path, line)
    annotation = fn.annotation
    if annotation is None and len(unit.kernels) == 1:
        annotation = leading_annotation(unit.text)  # a one-kernel file may give its spec at the top
        if annotation:
            res.line = 1
            where = _where(unit.path, 1)
    given = _user_items(unit, annotation, overrides, where)
    res.items.update(given)
    wanted = [p.name for p in fn.params] + ["grid", "block"]
    wanted += [t.name for t in fn.template_params if t.kind == "value" and t.default is None]
    if any(k not in given for k in wanted) or any(t.name not in given for t in fn.template_params):
        from xlate.specs.infer import infer_kernel

        inferred = infer_kernel(unit, fn, context)
        res.notes.extend(inferred.notes)
        for key, (text, origin) in inferred.items.items():
            if key not in res.items and not (key in ("where", "shmem") and _covers_launch(given)):
                res.items[key] = (text, origin)
        for key, hint in inferred.holes.items():
            if key not in res.items:
                res.holes[key] = hint
    for key in wanted:
        if key not in res.items and key not in res.holes:
            res.holes[key] = f"cannot infer '{key}' of '{fn.name}': annotate it"
    res.items = _ordered(res.items, [p.name for p in fn.params], [t.name for t in fn.template_params])
    if res.holes:
        return res
    resolve = None
    if any(normalise_ctype(p.base_type) not in ctypes_table() and not p.is_template_dependent for p in fn.params):
        from xlate.specs.infer import type_resolver

        resolve = type_resolver(unit, context)
    try:
        res.spec = _build(unit, fn, fn.params, res.items, where, resolve=resolve, context=context)
    except SpecError as exc:
        res.error = str(exc)
    return res


def _ordered(items: dict[str, tuple[str, Origin]], params: list[str], templates: list[str]) -> dict[str, tuple[str, Origin]]:
    """Parameters in signature order, then other sizes and axes, template arguments, the launch, the rest."""
    tail = ["grid", "block", "shmem", "where", "op", "values", "rtol", "atol"]
    rank = {k: i for i, k in enumerate(params)}
    rank.update({k: 2000 + i for i, k in enumerate(templates)})
    rank.update({k: 3000 + i for i, k in enumerate(tail)})
    keys = sorted(items, key=lambda k: rank.get(k, 1000))
    return {k: items[k] for k in keys}


def _covers_launch(given: dict[str, tuple[str, Origin]]) -> bool:
    """The user wrote the launch: inferred launch-derived constraints (where, shmem) no longer apply."""
    return "grid" in given or "block" in given


def _user_items(unit: KernelUnit, annotation: str | None, overrides: str | None, where: str) -> dict[str, tuple[str, Origin]]:
    out: dict[str, tuple[str, Origin]] = {}
    sidecar_text = _sidecar_text(unit)
    for text, kind in ((annotation, "annotation"), (overrides, "sidecar")):
        if not text:
            continue
        for key, value in parse_items(text, where).items():
            origin_kind = kind
            if kind == "sidecar" and (sidecar_text is None or f"{key}: {value}" not in sidecar_text):
                origin_kind = "annotation"  # given by the caller (assert_equivalent's keywords, --spec)
            prev = out.get(key)
            if key == "where" and prev is not None:
                value = f"{prev[0].split(':', 1)[1].strip()} and ({value})"
            out[key] = (f"{key}: {value}", Origin(origin_kind, _location(where)))  # type: ignore[arg-type]
    return out


def _location(where: str) -> str:
    """'path:12:1: ' -> 'path:12'."""
    text = where.strip().rstrip(":")
    return text[:-2] if text.endswith(":1") else text


def _sidecar_text(unit: KernelUnit) -> str | None:
    import os

    if not os.path.exists(unit.path):
        return None
    from xlate.specs.sidecar import sidecar

    try:
        doc = sidecar(unit.path)
    except SpecError:
        return None
    kernels = doc.get("kernels", {})
    return " ".join(str(e.get("spec", "")) for e in kernels.values() if isinstance(e, dict)) or None


def _resolve_triton(unit: KernelUnit, launcher: str, overrides: str | None) -> Resolution:
    fn: PyFunction | None = next((f for f in unit.py_functions if f.name == launcher), None)
    if fn is None:
        names = ", ".join(f.name for f in unit.py_functions) or "none"
        raise SpecError(f"{unit.path}: error: no launcher function '{launcher}' (functions here: {names})")
    res = Resolution(launcher, unit.path, fn.span.line)
    where = _where(unit.path, fn.span.line)
    res.items.update(_user_items(unit, fn.annotation, overrides, where))
    if not res.items:
        res.holes["*"] = (f"cannot infer a spec for Triton launcher '{launcher}': annotate it with "
                          f"'# xlate: x: in[n], y: out[n], n: size(1..4096)' (or give the CUDA source it was ported from)")
        return res
    params = [Param(name=p, type="", base_type="", pointer_depth=0, is_const=False, is_restrict=False,
                    is_reference=False, is_template_dependent=False) for p in fn.params]
    try:
        spec = _build(unit, None, params, res.items, where, triton=True)
        spec.kernel = launcher
        res.spec = spec
    except SpecError as exc:
        res.error = str(exc)
    return res


# -- items -> spec -------------------------------------------------------------------------------------------


def _build(unit: KernelUnit, fn: Function | None, params: list[Param], given: dict[str, tuple[str, Origin]],
           where: str, triton: bool = False, resolve: Any = None, context: list[KernelUnit] | None = None) -> KernelSpec:
    items = {key: text.split(":", 1)[1].strip() for key, (text, _) in given.items()}
    origins = {key: origin for key, (_, origin) in given.items()}
    name = fn.name if fn is not None else ""
    spec = KernelSpec(kernel=name, params=[], origins=origins)
    kinds = {o.kind for o in origins.values()}
    user = kinds & {"annotation", "sidecar"}
    spec.source = ("xlate.toml" if kinds == {"sidecar"} else "annotation") if kinds <= {"annotation", "sidecar"} else (
        "inferred" if not user else "mixed")
    spec.inferred = [k for k, o in origins.items() if o.kind not in ("annotation", "sidecar")]
    template_types = {t.name for t in fn.template_params if t.kind == "type"} if fn else set()
    template_values = {t.name: t for t in fn.template_params if t.kind == "value"} if fn else {}

    for pos, p in enumerate(params):
        value = items.pop(p.name, None)
        ctype, lanes = param_ctype(p, resolve) if not triton else ("", 1)
        if value is None:
            raise SpecError(f"{where}error: no spec for '{p.name}': annotate it")
        value, record = split_record(value)
        if record is not None:  # a struct of mixed number types: `as {S: float32, T: int32}`
            ctype, lanes = _record_ctype(record, p.name, template_types, where), 1
        if value.strip() == "null":  # a pointer the program always passes as nullptr: nothing to allocate
            if record is not None or (not triton and not p.is_pointer):
                raise SpecError(f"{where}error: '{p.name}' is annotated as null but is not a pointer ({p.type})")
            spec.params.append(ParamSpec(p.name, "null", pos, ctype))
            continue
        m = BUFFER.match(value)
        if m and record is not None and has_pointers(parse_record(ctype)):
            raise SpecError(f"{where}error: '{p.name}' is a buffer of structs holding pointers: the gate fills pointer "
                            "fields only of a struct passed by value ('scalar as {...}')")
        if m:
            if not triton and not p.is_pointer:
                raise SpecError(f"{where}error: '{p.name}' is annotated as a buffer but is not a pointer ({p.type})")
            lo, hi, perm, distinct = parse_values(m.group(4), where)
            dims = split_top(m.group(2))
            if not dims:
                raise SpecError(f"{where}error: buffer '{p.name}' needs dimensions, e.g. {m.group(1)}[n]")
            if m.group(6):
                ctype = m.group(6)  # explicit element dtype (Triton launchers have no C types)
            ascending, by = value_order(m.group(4))
            spec.params.append(ParamSpec(p.name, m.group(1), pos, ctype, dims, lanes, lo, hi, perm,  # type: ignore[arg-type]
                                         distinct=distinct, ascending=ascending, ascending_by=by))
            continue
        m = CALL.match(value)
        if not m or m.group(1) not in ("size", "scalar", "const"):
            raise SpecError(f"{where}error: cannot read spec for '{p.name}': '{value}' (expected in[..], out[..], "
                            "inout[..], size(LO..HI), scalar, scalar(LO..HI), const(EXPR) or null)")
        kind, arg = m.group(1), m.group(3)
        if m.group(5):
            ctype = m.group(5)  # explicit value type (Triton launchers have no C types): n: scalar(0..9) as int32
        if m.group(6):
            if kind != "scalar":
                raise SpecError(f"{where}error: '{p.name}': only a scalar holds several lanes ({value})")
            lanes = int(m.group(6))  # `w: scalar as float32[3]`: a by-value vector, passed as its lanes
        if record is not None and kind != "scalar":
            raise SpecError(f"{where}error: '{p.name}' has a record type: it can be a buffer or a scalar, not a {kind}")
        if record is not None and triton and has_pointers(parse_record(ctype)):
            raise SpecError(f"{where}error: '{p.name}' is a struct holding pointers: a Triton launcher has no struct "
                            "arguments (port the kernel to CUDA or HIP, or pass the fields as parameters of their own)")
        if kind == "const":
            if not arg:
                raise SpecError(f"{where}error: const needs an expression: {p.name}: const(n)")
            spec.params.append(ParamSpec(p.name, "const", pos, ctype or "int", const=arg))
        else:
            lo, hi, _ = parse_range(arg, where)
            if kind == "size" and (lo is None or hi is None):
                raise SpecError(f"{where}error: size '{p.name}' needs a range: {p.name}: size(1..4096)")
            if kind == "size" and lanes > 1:
                raise SpecError(f"{where}error: '{p.name}' of type '{p.type}' holds {lanes} numbers: it can be a "
                                "scalar, not a size")
            spec.params.append(ParamSpec(p.name, kind, pos, ctype or ("int" if kind == "size" else "float"), lo=lo, hi=hi,  # type: ignore[arg-type]
                                         lanes=lanes))

    for key in ("grid", "block"):
        if key in items:
            setattr(spec, key, parse_tuple(items.pop(key)))
        elif not triton:
            raise SpecError(f"{where}error: cannot infer the {key} of '{name}': no launch site found; "
                            f"annotate it, e.g. '// xlate: grid: cdiv(n, 256), block: 256'")
    if "shmem" in items:
        spec.shmem = items.pop("shmem")
    if "op" in items:
        op = items.pop("op")
        m = CALL.match(op)
        if not m or m.group(1) not in OP_CLASSES:
            raise SpecError(f"{where}error: unknown op class '{op}' (elementwise, reduction(L), scan(L), matmul(K), movement, atomic)")
        spec.op = m.group(1)  # type: ignore[assignment]
        spec.op_length = m.group(3)
    elif fn is not None and fn.atomics:
        spec.op = "atomic"
    if "where" in items:
        spec.where.append(items.pop("where"))
    if "values" in items:
        v = items.pop("values")
        if v not in ("finite", "special"):
            raise SpecError(f"{where}error: values must be 'finite' or 'special', not '{v}'")
        spec.values = v  # type: ignore[assignment]
    elif spec.op in ("reduction", "scan", "matmul", "atomic"):
        spec.values = "finite"  # inf - inf order dependence would make agreement meaningless
    for key in ("rtol", "atol"):
        if key in items:
            try:
                setattr(spec, key, float(items.pop(key)))
            except ValueError:
                raise SpecError(f"{where}error: {key} must be a number") from None
    for tname in list(items):
        if global_buffer(items[tname]) is not None:  # a module-scope variable: `d_cost: global inout[N]`
            if any(tname == p.name for p in params):
                raise SpecError(f"{where}error: '{tname}' is a parameter of '{name}': 'global' names a module variable")
            from xlate.specs.infer.globals import global_param

            spec.params.append(global_param(unit, context, tname, items.pop(tname), where, triton))
            continue
        free = CALL.match(items[tname])
        if free and free.group(1) == "size" and tname not in template_values and tname not in template_types:
            lo, hi, _ = parse_range(free.group(3), where)
            if lo is None or hi is None:
                raise SpecError(f"{where}error: size '{tname}' needs a range: {tname}: size(1..4096)")
            # a size that is not a parameter: it shapes buffers and the launch only (n in `k<<<n / 256, 256>>>(x)`)
            spec.params.append(ParamSpec(tname, "size", -1, "int", lo=lo, hi=hi))
            items.pop(tname)
            continue
        choice = parse_choice(items[tname], tname, where)
        if choice is not None:
            if any(tname == p.name for p in params):
                raise SpecError(f"{where}error: '{tname}' is a parameter: choice(...) names a launch axis that is not one")
            spec.axes[tname] = choice
            items.pop(tname)
            continue
        is_dtype_item = all(d.strip() in NUMERIC_DTYPES for d in items[tname].split("|"))
        cls = CLASS_TYPE.match(items[tname])
        if tname in template_types and cls:  # `Rng: type(kiss::Kiss<std::uint64_t>)`: a class, instantiated as is
            if not cls.group(1).strip():
                raise SpecError(f"{where}error: type() of {tname} needs a C++ type, e.g. {tname}: type(MyOp)")
            items.pop(tname)
            spec.type_params[tname] = " ".join(cls.group(1).split())
        elif tname in template_types or (triton and is_dtype_item):
            dtypes = [d.strip() for d in items.pop(tname).split("|")]
            bad = [d for d in dtypes if d not in NUMERIC_DTYPES]
            if bad:
                raise SpecError(f"{where}error: unknown dtype {bad[0]} for {tname} (use numpy names: {', '.join(NUMERIC_DTYPES)})")
            spec.dtype_axes[tname] = dtypes
        elif tname in template_values:
            spec.value_params[tname] = items.pop(tname)
    if items:
        unknown = ", ".join(items)
        raise SpecError(f"{where}error: spec names {unknown}, which {'is' if len(items) == 1 else 'are'} not a parameter of '{name}' nor a spec key")
    for t in template_types - set(spec.dtype_axes) - set(spec.type_params):
        spec.dtype_axes[t] = ["float32"]
        spec.inferred.append(f"{t}=float32")
        spec.origins.setdefault(t, Origin("default", "", "float32"))
    _fold_sizeof(spec, where)
    for t, tp in template_values.items():
        if t not in spec.value_params and t not in spec.axes:  # `kEven: choice(1|0)`: one instantiation a value
            if tp.default is None:
                raise SpecError(f"{where}error: template value parameter '{t}' has no default: annotate it, e.g. '{t}: 256'")
            spec.value_params[t] = tp.default
            spec.origins.setdefault(t, Origin("default", "", f"the template default {tp.default}"))
    check_names(spec, where)
    check_ascending(spec, where)
    return spec


def _record_ctype(text: str, name: str, template_types: set[str], where: str) -> str:
    """The canonical text of a record element type, checked: it parses, its field types are dtypes or template
    types of the kernel, and it has a C layout."""
    from xlate.specs.records import layout, parse_record, record_text, type_names

    try:
        rec = parse_record(text)
        unknown = type_names(rec) - template_types
        if unknown:
            raise SpecError(f"xlate: error: field type {', '.join(sorted(unknown))} is neither a dtype nor a template "
                            "type of the kernel")
        layout(rec, lambda t: np_dtype("float32") if t in template_types else np_dtype(t))
    except SpecError as exc:
        raise SpecError(f"{where}error: the record type of '{name}': {str(exc).removeprefix('xlate: error: ')}") from None
    return record_text(rec)


def np_dtype(name: str) -> Any:
    """A NumPy dtype by name (bfloat16 through ml_dtypes)."""
    from xlate.specs.records import _base_dtype

    return _base_dtype(name, None)


def _fold_sizeof(spec: KernelSpec, where: str) -> None:
    """`sizeof(T)` of a template type, where the gate evaluates an expression without the case's dtypes (the
    `where` filter, the grid's size check, size and scalar ranges, constants), becomes a number: T's size when T
    has one dtype, else its largest (a `bytes / sizeof(T) >= 1` clause then holds for every dtype of the axis).
    Buffer dimensions keep it: they are evaluated per case. A sizeof of a type that is neither a C type nor a
    template type of the kernel is an error here, not a crash of the fuzzer later."""
    from xlate.parse.consteval import ctype_sizes

    def itemsize(dtype: str) -> int:
        import numpy as np

        return 2 if dtype == "bfloat16" else int(np.dtype(dtype).itemsize)

    sizes = {t: max(itemsize(d) for d in ds) for t, ds in spec.dtype_axes.items() if ds}

    def fold(e: str | None) -> str | None:
        if not e or "sizeof" not in e:
            return e

        def one(m: re.Match[str]) -> str:
            t = " ".join(m.group(1).split())
            if t in sizes:
                return str(sizes[t])
            if t in ctype_sizes():
                return m.group(0)
            raise SpecError(f"{where}error: spec expression '{e}' uses sizeof({t}), and '{t}' is neither a C type "
                            f"nor a template type of '{spec.kernel}'")

        return expr.SIZEOF.sub(one, e)

    for p in spec.params:
        if p.role in ("size", "scalar"):
            p.lo, p.hi = fold(p.lo), fold(p.hi)
        elif p.role == "const":
            p.const = fold(p.const)
        else:
            for d in p.dims:
                if "sizeof" in d:
                    for m in expr.SIZEOF.finditer(d):
                        t = " ".join(m.group(1).split())
                        if t not in sizes and t not in ctype_sizes():
                            raise SpecError(f"{where}error: the length of '{p.name}' uses sizeof({t}), and '{t}' is "
                                            f"neither a C type nor a template type of '{spec.kernel}'")
            p.lo, p.hi = fold(p.lo), fold(p.hi)
    spec.where = [fold(w) or w for w in spec.where]
    spec.grid = [fold(g) or g for g in spec.grid]
    spec.block = [fold(b) or b for b in spec.block]
    spec.shmem = fold(spec.shmem) or spec.shmem
    spec.value_params = {k: fold(v) or v for k, v in spec.value_params.items()}


def check_ascending(spec: KernelSpec, where: str) -> None:
    """`x: in[..](LO..HI ascending by L)`: L must be another integer input buffer of the kernel (its values are
    drawn, then kept inside x's steps)."""
    for p in spec.buffers:
        if not p.ascending_by:
            continue
        q = spec.param(p.ascending_by)
        if q is None or not q.is_buffer or q.role == "out" or q is p or q.ascending_by:
            raise SpecError(f"{where}error: '{p.name}: ... ascending by {p.ascending_by}' must name another input "
                            f"buffer of '{spec.kernel}' holding the segments' lengths")


def check_names(spec: KernelSpec, where: str) -> None:
    known = {p.name for p in spec.params} | set(spec.value_params) | set(spec.axes) | {"block"}
    exprs = [e for p in spec.params for e in (*p.dims, p.lo, p.hi, p.const) if e]
    from xlate.specs.records import is_record, names_of, parse_record

    for p in spec.params:
        if is_record(p.ctype):
            missing = names_of(parse_record(p.ctype)) - known
            if missing:
                raise SpecError(f"{where}error: a field range of '{p.name}' names {', '.join(sorted(missing))}, not a "
                                f"parameter of '{spec.kernel}'")
    exprs += spec.grid + spec.block + [spec.shmem, *spec.where] + ([spec.op_length] if spec.op_length else [])
    for e in exprs:
        missing = expr.names(e) - known
        if missing:
            raise SpecError(f"{where}error: spec expression '{e}' names {', '.join(sorted(missing))}, not a parameter of '{spec.kernel}'")
