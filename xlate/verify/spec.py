"""Kernel specs: what to feed a kernel and how to launch it.

Sources, strongest first: a sidecar `xlate.toml` beside the source (`[kernels.NAME] spec = "..."`), the
`// xlate:` annotation above the kernel, and inference from the source model (const pointers are inputs, written
pointers outputs, ints that bound an index are sizes, grid and block from the file's launch site).
"""

from __future__ import annotations

import functools
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from xlate.errors import SpecError
from xlate.model import Function, KernelUnit, LaunchSite, Param, PyFunction
from xlate.resources import data
from xlate.verify import expr

Role = Literal["in", "out", "inout", "size", "scalar", "const"]
OpClass = Literal["elementwise", "reduction", "scan", "matmul", "movement", "atomic"]
NUMERIC_DTYPES = ("float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


@functools.cache
def ctypes_table() -> dict[str, dict[str, Any]]:
    return data("ctypes.yaml")


def normalise_ctype(base: str) -> str:
    t = re.sub(r"\b(const|volatile|__restrict__|__restrict|restrict|struct|signed(?= \w))\b", " ", base)
    return " ".join(t.split())


@dataclass
class ParamSpec:
    name: str
    role: Role
    position: int
    ctype: str  # element type for buffers, value type for scalars ("T" for template-dependent)
    dims: list[str] = field(default_factory=list)  # buffers: row-major shape expressions
    lanes: int = 1  # vector element types (float4*): scalars per element
    lo: str | None = None  # value range (buffers, scalars, sizes)
    hi: str | None = None
    perm: bool = False  # buffer values: a permutation of 0..len-1
    const: str | None = None  # role const: the expression

    @property
    def is_buffer(self) -> bool:
        return self.role in ("in", "out", "inout")


@dataclass
class KernelSpec:
    kernel: str
    params: list[ParamSpec]
    grid: list[str] = field(default_factory=lambda: ["1"])
    block: list[str] = field(default_factory=lambda: ["1"])
    shmem: str = "0"
    dtype_axes: dict[str, list[str]] = field(default_factory=dict)  # template type param -> numpy dtypes
    value_params: dict[str, str] = field(default_factory=dict)  # template value param -> expression
    op: OpClass = "elementwise"
    op_length: str | None = None
    where: list[str] = field(default_factory=list)
    values: Literal["finite", "special"] = "special"
    rtol: float | None = None
    atol: float | None = None
    source: str = "annotation"  # annotation, xlate.toml, inferred (mixed: the strongest that gave anything)
    inferred: list[str] = field(default_factory=list)  # which items were inferred

    def param(self, name: str) -> ParamSpec | None:
        return next((p for p in self.params if p.name == name), None)

    @property
    def buffers(self) -> list[ParamSpec]:
        return [p for p in self.params if p.is_buffer]

    @property
    def sizes(self) -> list[ParamSpec]:
        return [p for p in self.params if p.role == "size"]

    @property
    def scalars(self) -> list[ParamSpec]:
        return [p for p in self.params if p.role == "scalar"]

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        return asdict(self)


# -- annotation text -----------------------------------------------------------------------------------------


def split_top(text: str, sep: str = ",") -> list[str]:
    """Split on `sep` outside brackets and parentheses."""
    out, depth, cur = [], 0, []
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == sep and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return [x for x in out if x]


def parse_items(text: str, where: str = "") -> dict[str, str]:
    items: dict[str, str] = {}
    for item in split_top(text):
        if ":" not in item:
            raise SpecError(f"{where}error: spec item '{item}' is not 'name: value'")
        name, value = item.split(":", 1)
        name = name.strip()
        if name == "where" and "where" in items:
            items["where"] += f" and ({value.strip()})"
        else:
            items[name] = value.strip()
    return items


RANGE = re.compile(r"^\((.*)\)$")
BUFFER = re.compile(r"^(in|out|inout)\s*\[(.*)\]\s*(\((.*)\))?\s*(as\s+(\w+))?$")
CALL = re.compile(r"^(\w+)\s*(\((.*)\))?\s*(as\s+(\w+))?$")


def _range(text: str | None, where: str) -> tuple[str | None, str | None, bool]:
    if not text:
        return None, None, False
    text = text.strip()
    if text == "perm":
        return None, None, True
    if ".." not in text:
        raise SpecError(f"{where}error: range '({text})' must be 'LO..HI' or 'perm'")
    lo, hi = text.split("..", 1)
    return lo.strip(), hi.strip(), False


def _tuple(text: str) -> list[str]:
    t = text.strip()
    if t.startswith("(") and t.endswith(")") and "," in t:
        return split_top(t[1:-1])
    return [t]


# -- building ------------------------------------------------------------------------------------------------


def _param_ctype(p: Param) -> tuple[str, int]:
    """(element ctype, lanes) of a parameter; vector types become their scalar with a lane count."""
    base = normalise_ctype(p.base_type)
    info = ctypes_table().get(base)
    if info and info.get("numpy") is None and info.get("scalar"):
        return info["scalar"], int(info.get("lanes", 1))
    return base, 1


def _where(path: str, fn_line: int | None) -> str:
    return f"{path}:{fn_line}:1: " if fn_line else (f"{path}: " if path else "")


def build_spec(unit: KernelUnit, kernel: str, overrides: str | None = None) -> KernelSpec:
    """The spec of `kernel` (a CUDA/HIP kernel, or a Triton launcher function)."""
    if unit.language == "triton":
        return _build_triton_spec(unit, kernel, overrides)
    fn = unit.kernel(kernel)
    if fn is None:
        names = ", ".join(k.name for k in unit.kernels) or "none"
        raise SpecError(f"{unit.path}: error: no kernel named '{kernel}' (kernels here: {names})")
    text = ", ".join(t for t in (fn.annotation, overrides) if t)
    return _build(unit, fn, fn.params, text, launch=_launch_for(unit, fn))


def _launch_for(unit: KernelUnit, fn: Function) -> LaunchSite | None:
    sites = unit.launches_of(fn.name)
    return sites[0] if sites else None


def _build_triton_spec(unit: KernelUnit, launcher: str, overrides: str | None) -> KernelSpec:
    fn: PyFunction | None = next((f for f in unit.py_functions if f.name == launcher), None)
    if fn is None:
        names = ", ".join(f.name for f in unit.py_functions) or "none"
        raise SpecError(f"{unit.path}: error: no launcher function '{launcher}' (functions here: {names})")
    text = ", ".join(t for t in (fn.annotation, overrides) if t)
    if not text:
        raise SpecError(
            f"{unit.path}:{fn.span.line}:1: error: cannot infer a spec for Triton launcher '{launcher}': annotate it "
            f"with '# xlate: x: in[n], y: out[n], n: size(1..4096)' (or give the CUDA source it was ported from)"
        )
    params = [Param(name=p, type="", base_type="", pointer_depth=0, is_const=False, is_restrict=False,
                    is_reference=False, is_template_dependent=False) for p in fn.params]
    spec = _build(unit, None, params, text, launch=None, triton=True)
    spec.kernel = launcher
    return spec


def _build(unit: KernelUnit, fn: Function | None, params: list[Param], text: str, launch: LaunchSite | None,
           triton: bool = False) -> KernelSpec:
    line = fn.annotation_span.line if fn is not None and fn.annotation_span else (fn.span.line if fn and fn.span else None)
    where = _where(unit.path, line)
    items = parse_items(text, where) if text else {}
    name = fn.name if fn is not None else ""
    spec = KernelSpec(kernel=name, params=[], source="annotation" if text else "inferred")
    template_types = {t.name for t in fn.template_params if t.kind == "type"} if fn else set()
    template_values = {t.name: t for t in fn.template_params if t.kind == "value"} if fn else {}

    for pos, p in enumerate(params):
        value = items.pop(p.name, None)
        ctype, lanes = _param_ctype(p) if not triton else ("", 1)
        if value is None:
            spec.params.append(_infer_param(unit, fn, p, pos, ctype, lanes, spec, where))
            continue
        m = BUFFER.match(value)
        if m:
            if not triton and not p.is_pointer:
                raise SpecError(f"{where}error: '{p.name}' is annotated as a buffer but is not a pointer ({p.type})")
            lo, hi, perm = _range(m.group(4), where)
            dims = split_top(m.group(2))
            if not dims:
                raise SpecError(f"{where}error: buffer '{p.name}' needs dimensions, e.g. {m.group(1)}[n]")
            if m.group(6):
                ctype = m.group(6)  # explicit element dtype (Triton launchers have no C types)
            spec.params.append(ParamSpec(p.name, m.group(1), pos, ctype, dims, lanes, lo, hi, perm))  # type: ignore[arg-type]
            continue
        m = CALL.match(value)
        if not m or m.group(1) not in ("size", "scalar", "const"):
            raise SpecError(f"{where}error: cannot read spec for '{p.name}': '{value}' (expected in[..], out[..], "
                            "inout[..], size(LO..HI), scalar, scalar(LO..HI) or const(EXPR))")
        kind, arg = m.group(1), m.group(3)
        if m.group(5):
            ctype = m.group(5)  # explicit value type (Triton launchers have no C types): n: scalar(0..9) as int32
        if kind == "const":
            if not arg:
                raise SpecError(f"{where}error: const needs an expression: {p.name}: const(n)")
            spec.params.append(ParamSpec(p.name, "const", pos, ctype or "int", const=arg))
        else:
            lo, hi, _ = _range(arg, where)
            if kind == "size" and (lo is None or hi is None):
                raise SpecError(f"{where}error: size '{p.name}' needs a range: {p.name}: size(1..4096)")
            spec.params.append(ParamSpec(p.name, kind, pos, ctype or ("int" if kind == "size" else "float"), lo=lo, hi=hi))  # type: ignore[arg-type]

    for key in ("grid", "block"):
        if key in items:
            setattr(spec, key, _tuple(items.pop(key)))
        elif not triton:
            inferred = _infer_launch(launch, params, key)
            if inferred is None:
                raise SpecError(f"{where}error: cannot infer the {key} of '{name}': no launch site in this file; "
                                f"annotate it, e.g. '// xlate: grid: cdiv(n, 256), block: 256'")
            setattr(spec, key, inferred)
            spec.inferred.append(key)
    if "shmem" in items:
        spec.shmem = items.pop("shmem")
    elif launch is not None and launch.shmem and not triton:
        spec.shmem = _rename_host_vars(launch.shmem, launch, params)
        spec.inferred.append("shmem")
    if "op" in items:
        op = items.pop("op")
        m = CALL.match(op)
        if not m or m.group(1) not in ("elementwise", "reduction", "scan", "matmul", "movement", "atomic"):
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
            setattr(spec, key, float(items.pop(key)))
    for tname in list(items):
        is_dtype_item = all(d.strip() in NUMERIC_DTYPES for d in items[tname].split("|"))
        if tname in template_types or (triton and is_dtype_item):
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
    for t in template_types - set(spec.dtype_axes):
        spec.dtype_axes[t] = ["float32"]
        spec.inferred.append(f"{t}=float32")
    for t, tp in template_values.items():
        if t not in spec.value_params:
            if tp.default is None:
                raise SpecError(f"{where}error: template value parameter '{t}' has no default: annotate it, e.g. '{t}: 256'")
            spec.value_params[t] = tp.default
    _check_names(spec, where)
    return spec


def _check_names(spec: KernelSpec, where: str) -> None:
    known = {p.name for p in spec.params} | set(spec.value_params) | {"block"}
    exprs = [e for p in spec.params for e in (*p.dims, p.lo, p.hi, p.const) if e]
    exprs += spec.grid + spec.block + [spec.shmem, *spec.where] + ([spec.op_length] if spec.op_length else [])
    for e in exprs:
        missing = expr.names(e) - known
        if missing:
            raise SpecError(f"{where}error: spec expression '{e}' names {', '.join(sorted(missing))}, not a parameter of '{spec.kernel}'")


# -- inference -----------------------------------------------------------------------------------------------


def _infer_param(unit: KernelUnit, fn: Function | None, p: Param, pos: int, ctype: str, lanes: int,
                 spec: KernelSpec, where: str) -> ParamSpec:
    if fn is None:
        raise SpecError(f"{where}error: no spec for '{p.name}': annotate it")
    if p.is_pointer:
        if p.writes and p.reads:
            role = "inout"
        elif p.writes:
            role = "out"
        elif p.reads or p.is_const:
            role = "in"
        else:
            role = "in"
        sizes = [q for q in fn.params if not q.is_pointer and _is_int(q) and _bounds_index(unit, fn, q)]
        if len(sizes) != 1:
            raise SpecError(
                f"{where}error: cannot infer the length of '{p.name}' in '{fn.name}': annotate it, e.g. "
                f"'// xlate: {p.name}: {role}[n]'"
            )
        spec.inferred.append(p.name)
        return ParamSpec(p.name, role, pos, ctype, [sizes[0].name], lanes)  # type: ignore[arg-type]
    if _is_int(p) and _bounds_index(unit, fn, p):
        spec.inferred.append(p.name)
        return ParamSpec(p.name, "size", pos, ctype, lo="0", hi="4096")
    if _is_int(p) or ctype in ctypes_table() or p.is_template_dependent:
        spec.inferred.append(p.name)
        return ParamSpec(p.name, "scalar", pos, ctype)
    raise SpecError(f"{where}error: cannot fuzz parameter '{p.name}' of type '{p.type}': annotate it (size, scalar or const)")


def _is_int(p: Param) -> bool:
    info = ctypes_table().get(normalise_ctype(p.base_type))
    return bool(info and info.get("numpy") and str(info["numpy"]).startswith(("int", "uint")))


def _bounds_index(unit: KernelUnit, fn: Function, p: Param) -> bool:
    """Heuristic: an int parameter compared (<, <=, >, >=) with something in the body bounds an index."""
    if fn.body_span is None:
        return False
    text = unit.text.encode("utf-8")[fn.body_span.start_byte : fn.body_span.end_byte].decode("utf-8", "replace")
    name = re.escape(p.name)
    return re.search(rf"(<|<=|>|>=)\s*\(?\s*{name}\b|\b{name}\s*\)?\s*(<|<=|>|>=)", text) is not None


def _rename_host_vars(text: str, launch: LaunchSite, params: list[Param]) -> str:
    """Launch expressions use the caller's names: map identifiers passed as arguments to parameter names."""
    mapping = {}
    for arg, p in zip(launch.args, params):
        a = arg.strip()
        if re.fullmatch(r"[A-Za-z_]\w*", a) and a != p.name:
            mapping[a] = p.name
    if not mapping:
        return text
    return re.sub(r"\b[A-Za-z_]\w*\b", lambda m: mapping.get(m.group(0), m.group(0)), text)


def _infer_launch(launch: LaunchSite | None, params: list[Param], key: str) -> list[str] | None:
    if launch is None:
        return None
    text = launch.grid if key == "grid" else launch.block
    if not text:
        return None
    text = _rename_host_vars(text, launch, params)
    m = re.fullmatch(r"\s*dim3\s*\((.*)\)\s*", text)
    return split_top(m.group(1)) if m else [text]


# -- sidecar -------------------------------------------------------------------------------------------------


def sidecar(source_path: str) -> dict[str, Any]:
    """The `xlate.toml` beside a source (or in a parent folder up to the filesystem root), parsed; {} if none."""
    folder = Path(os.path.abspath(source_path)).parent
    for d in (folder, *folder.parents):
        f = d / "xlate.toml"
        if f.exists():
            try:
                doc = tomllib.loads(f.read_text(encoding="utf-8"))
            except tomllib.TOMLDecodeError as exc:
                raise SpecError(f"{f}: error: {exc}") from None
            doc["__dir__"] = str(d)
            return doc
    return {}


def sidecar_overrides(source_path: str, kernel: str) -> str | None:
    doc = sidecar(source_path)
    entry = doc.get("kernels", {}).get(kernel, {})
    return entry.get("spec") if isinstance(entry, dict) else None


def sidecar_reference(source_path: str, kernel: str) -> str | None:
    """A reference oracle for `kernel`: `[kernels.K] reference = "mod.py:fn"`, or `[references] dir = ".."`
    meaning `<dir>/<source stem>.py:<kernel>` when that file defines it."""
    doc = sidecar(source_path)
    if not doc:
        return None
    base = Path(doc["__dir__"])
    entry = doc.get("kernels", {}).get(kernel, {})
    if isinstance(entry, dict) and entry.get("reference"):
        ref = entry["reference"]
        mod, _, fn = ref.partition(":")
        return f"{(base / mod).resolve()}:{fn or kernel}"
    ref_dir = doc.get("references", {}).get("dir")
    if ref_dir:
        candidate = (base / ref_dir / (Path(source_path).stem + ".py")).resolve()
        if candidate.exists() and re.search(rf"^def {re.escape(kernel)}\b", candidate.read_text(), re.M):
            return f"{candidate}:{kernel}"
    return None
