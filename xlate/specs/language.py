"""The annotation language: reading `name: value` items and writing a spec back as items.

    // xlate: x: in[n], y: out[n], n: size(1..1<<20), a: scalar(-2..2), grid: cdiv(n, 256), block: 256

A pointer parameter the program always passes as a null pointer (`nullptr`, `NULL`, `0`) is `bias: null`.

A module-scope variable the kernel works on is a buffer item with `global` before its role:
`d_cost: global inout[1024]`, `coeffs: global in[16](-1..1)`, `d_count: global inout[1]` (a scalar variable).
"""

from __future__ import annotations

import re

from xlate.errors import SpecError
from xlate.specs.model import KernelSpec, ParamSpec
from xlate.specs.text import split_top

RANGE = re.compile(r"^\((.*)\)$")
BUFFER = re.compile(r"^(in|out|inout)\s*\[(.*)\]\s*(\((.*)\))?\s*(as\s+(\w+))?$")
# `as DTYPE[LANES]`: a scalar of several lanes (a by-value float3 of a Triton launcher, which has no C types)
CALL = re.compile(r"^(\w+)\s*(\((.*)\))?\s*(as\s+(\w+)(?:\s*\[\s*(\d+)\s*\])?)?$")
CHOICE = re.compile(r"^choice\s*\((.*)\)$")
GLOBAL = re.compile(r"^global\s+(?=(?:in|out|inout)\s*\[)")
SPEC_KEYS = ("grid", "block", "shmem", "op", "where", "values", "rtol", "atol")


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


def parse_range(text: str | None, where: str) -> tuple[str | None, str | None, bool]:
    if not text:
        return None, None, False
    text = text.strip()
    if text == "perm":
        return None, None, True
    if ".." not in text:
        raise SpecError(f"{where}error: range '({text})' must be 'LO..HI' or 'perm'")
    lo, hi = text.split("..", 1)
    return lo.strip(), hi.strip(), False


ORDER = re.compile(r"\s+ascending(?:\s+by\s+([A-Za-z_]\w*))?$")


def value_order(text: str | None) -> tuple[bool, str | None]:
    """`(LO..HI ascending)` / `(LO..HI ascending by L)`: (ascending, L). Non-decreasing values (segment offsets,
    CSR row pointers); with `by L`, L[k] <= x[k + 1] - x[k] (L's segment k fits before the next offset)."""
    m = ORDER.search((text or "").strip())
    return (True, m.group(1)) if m else (False, None)


def parse_values(text: str | None, where: str) -> tuple[str | None, str | None, bool, bool]:
    """A buffer's value range: `(LO..HI)`, `(perm)`, `(LO..HI distinct)` (pairwise distinct values inside the
    range: an index buffer through which threads write, which the program keeps free of repeats), or
    `(LO..HI ascending [by L])` (see value_order). Returns (lo, hi, perm, distinct)."""
    body = (text or "").strip()
    order = ORDER.search(body)
    if order:
        body = body[: order.start()].strip()
        if ".." not in body or re.search(r"\s+distinct$", body):
            raise SpecError(f"{where}error: '({text})' must be '(LO..HI ascending)' or '(LO..HI ascending by L)', "
                            "e.g. (0..nnz ascending)")
    distinct = re.search(r"\s+distinct$", body) is not None
    if distinct:
        body = body[: -len("distinct")].strip()
        if ".." not in body:
            raise SpecError(f"{where}error: '({text})' must be '(LO..HI distinct)', e.g. (0..m - 1 distinct)")
    lo, hi, perm = parse_range(body or None, where)
    return lo, hi, perm, distinct


def split_record(value: str) -> tuple[str, str | None]:
    """`in[n](0..9) as {a: float32, b: int32}` -> ("in[n](0..9)", "{a: float32, b: int32}"): a record element
    type after `as` (xlate/specs/records.py), kept apart so the brackets inside it do not read as dimensions."""
    depth = 0
    for i, ch in enumerate(value):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0 and i > 0 and value[i - 1].isspace() and re.match(r"as\s+\{", value[i:]):
            return value[:i].rstrip(), value[i + 2 :].strip()
    return value, None


def global_buffer(value: str) -> str | None:
    """`global inout[N](0..9)` -> `inout[N](0..9)`: the buffer item of a module global; None for anything else."""
    m = GLOBAL.match(value.strip())
    return value.strip()[m.end():] if m else None


def parse_tuple(text: str) -> list[str]:
    t = text.strip()
    if t.startswith("(") and t.endswith(")") and "," in t:
        return split_top(t[1:-1])
    return [t]


def parse_choice(text: str, name: str, where: str) -> list[int] | None:
    """`choice(32|64|128)`: a launch axis; None when `text` is not a choice."""
    m = CHOICE.match(text.strip())
    if not m:
        return None
    from xlate.specs import expr

    try:
        values = [int(expr.evaluate(v.strip(), {})) for v in m.group(1).split("|") if v.strip()]
    except (SpecError, TypeError, ValueError):
        values = []
    if not values:
        raise SpecError(f"{where}error: '{name}: {text}' must list integer values, e.g. {name}: choice(64|128|256)")
    return values


def leading_annotation(text: str) -> str | None:
    """The `// xlate:` lines in the comments that open a C/C++ file, before its first code (preprocessor lines
    and blank lines may come between): a file with one kernel may give its spec there."""
    items: list[str] = []
    in_block = False
    for raw in text.splitlines():
        line = raw.strip()
        if in_block:
            body = line.lstrip("*").strip()
            if "*/" in line:
                in_block = False
                body = body.split("*/", 1)[0].strip()
        elif not line or line.startswith("#"):
            continue
        elif line.startswith("//"):
            body = line[2:].strip()
        elif line.startswith("/*"):
            body = line[2:].strip()
            if "*/" in body:
                body = body.split("*/", 1)[0].strip()
            else:
                in_block = True
        else:
            break
        if body.startswith("xlate:"):
            items.append(body.split("xlate:", 1)[1].strip().rstrip(",").strip())
    return ", ".join(i for i in items if i) or None


# -- writing -------------------------------------------------------------------------------------------------


def _rng(lo: str | None, hi: str | None) -> str:
    return f"({lo}..{hi})" if lo is not None and hi is not None else ""


def param_item(p: ParamSpec, dtype: str | None = None) -> str:
    """One parameter as an annotation item (`dtype`: an explicit element type, for launchers without C types)."""
    from xlate.specs.records import is_record

    if dtype is None and is_record(p.ctype):
        dtype = p.ctype  # a record element type: `opts: in[n] as {S: float32, T: int32}`
    suffix = f" as {dtype}" if dtype else ""
    if p.is_buffer:
        rng = "(perm)" if p.perm else _rng(p.lo, p.hi)
        if p.distinct and rng:
            rng = f"{rng[:-1]} distinct)"
        elif p.ascending and rng:
            rng = f"{rng[:-1]} ascending{f' by {p.ascending_by}' if p.ascending_by else ''})"
        scope = "global " if p.module_global else ""
        return f"{p.name}: {scope}{p.role}[{', '.join(p.dims)}]{rng}{suffix}"
    if p.role == "size":
        return f"{p.name}: size({p.lo}..{p.hi}){suffix}"
    if p.role == "scalar":
        return f"{p.name}: scalar{_rng(p.lo, p.hi)}{suffix}"
    if p.role == "null":
        return f"{p.name}: null"
    return f"{p.name}: const({p.const}){suffix}"


def _launch(values: list[str]) -> str:
    return values[0] if len(values) == 1 else f"({', '.join(values)})"


def spec_items(spec: KernelSpec) -> list[tuple[str, str]]:
    """The spec as (key, item text) pairs, parameters first, in an order a person would write them."""
    out = [(p.name, param_item(p)) for p in sorted(spec.params, key=lambda q: (q.position < 0, q.position))]
    for name, values in spec.axes.items():
        out.append((name, f"{name}: choice({'|'.join(str(v) for v in values)})"))
    for name, dtypes in spec.dtype_axes.items():
        out.append((name, f"{name}: {'|'.join(dtypes)}"))
    for name, value in spec.value_params.items():
        out.append((name, f"{name}: {value}"))
    for name, cls in spec.type_params.items():
        out.append((name, f"{name}: type({cls})"))
    out.append(("grid", f"grid: {_launch(spec.grid)}"))
    out.append(("block", f"block: {_launch(spec.block)}"))
    if spec.shmem not in ("0", ""):
        out.append(("shmem", f"shmem: {spec.shmem}"))
    if spec.op != "elementwise" and spec.op != "atomic":
        out.append(("op", f"op: {spec.op}" + (f"({spec.op_length})" if spec.op_length else "")))
    for w in spec.where:
        out.append(("where", f"where: {w}"))
    return out
