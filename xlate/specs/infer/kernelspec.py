"""One kernel's inferred items: the best launch the host code makes of it, rewritten over the kernel's
parameters (xlate.specs.infer.assemble), completed from the kernel's own code (xlate.specs.infer.kernel) and
defaults; every item with its origin."""

from __future__ import annotations

import math
import re
from dataclasses import replace
from typing import Any

import sympy as sp

from xlate.model import Function, KernelUnit, Param
from xlate.specs.infer import Inference, tvalues
from xlate.specs.infer.assemble import DEFAULT_SIZE_HI, Mapper, numpy_of, param_symbol
from xlate.specs.infer.globals import infer_globals
from xlate.specs.infer.host import Launch, Root
from xlate.specs.infer.kernel import KernelFacts, _dominant, _never_negative, aggregate_of, kernel_facts
from xlate.specs.infer.pointer_records import pointer_record
from xlate.specs.infer.program import Program
from xlate.specs.infer.sym import CeilDiv, FloorDiv, concrete, to_text
from xlate.specs.infer.values import Dim3, Num, Obj, Ptr
from xlate.specs.language import split_top
from xlate.specs.model import LARGEST_CASE, Origin, ctypes_table, normalise_ctype, param_ctype
from xlate.specs.records import record_dtype

DEFAULT_BLOCK = 256
DEFAULT_BLOCK_2D = (16, 16)
GRID_SYMBOLS = {"gridDim.x": 0, "gridDim.y": 1, "gridDim.z": 2}


def resolved(fn: Function, program: Program) -> Function:
    """`fn` with its parameters' types read through the program's typedefs (`Real_t*` is a `double*`)."""
    params = []
    for p in fn.params:
        base = normalise_ctype(p.base_type)
        if base in ctypes_table() or p.is_template_dependent:
            params.append(p)
            continue
        params.append(replace(p, base_type=program.resolve_type(base)))
    return replace(fn, params=params)


def infer_from_program(unit: KernelUnit, fn: Function, program: Program, facts: Any) -> Inference:
    launches, roots, _ = facts
    fn = resolved(fn, program)
    inf = Inference()
    launch = _best_launch(fn, launches)
    value_axes = tvalues.value_axes(fn, launch, _launches_of(fn, launches))
    bindings = template_bindings(fn, launch, program.resolve_type)
    for ax in value_axes:  # the kernel is read with the parameter open: every instantiation's accesses count
        bindings.pop(ax.name, None)
    kf = kernel_facts(program, fn, unit, bindings)
    elem_size = _elem_sizer(program)
    mapper = Mapper(fn, launch, roots, kf.names_used, elem_size) if launch is not None else None
    opened = _open_values(fn, launch, value_axes, mapper)
    if opened:  # read again with them as sizes: `c + g * CDIM` bounds g instead of losing the access
        kf = kernel_facts(program, fn, unit, bindings, frozenset(opened))
        for name in opened:
            mapper.open_value(name)  # type: ignore[union-attr]
    if launch is not None:
        inf.notes.append(f"launch followed: {launch.where}: {launch.text}" + (
            f" (through {' -> '.join(launch.chain)})" if len(launch.chain) > 1 else ""))
    launch_origin = Origin("host", launch.where, launch.text) if launch is not None else None
    grid_exprs: list[sp.Expr] | None = None
    block_exprs: list[sp.Expr] | None = None

    # -- launch dimensions ------------------------------------------------------------------------------------
    if mapper is not None and launch is not None:
        block_exprs, _ = mapper.launch_dims(launch.block, allow_free=False)
        # a launch of no block at all is what the program did before setting the value we did not follow
        if block_exprs is not None and any(concrete(b) is not None and concrete(b) <= 0 for b in block_exprs):
            block_exprs = None
        block_origin = launch_origin
        if block_exprs is None:
            block_exprs = _guessed_block(launch, mapper, kf)
            block_origin = Origin("kernel", kf.where, "a block the kernel allows; the launch's is set at run time, "
                                  "and the grid and shared memory follow it")
        grid_exprs, _ = mapper.launch_dims(launch.grid)
        if grid_exprs is not None and any(concrete(g) is not None and concrete(g) <= 0 for g in grid_exprs):
            grid_exprs = None
        if block_exprs is not None:
            inf.items["block"] = (f"block: {_tuple(mapper, block_exprs)}", block_origin)  # type: ignore[arg-type]
        if grid_exprs is not None:
            inf.items["grid"] = (f"grid: {_tuple(mapper, grid_exprs)}", launch_origin)  # type: ignore[arg-type]
            where = _exact_division(grid_exprs, mapper)
            if where:
                inf.items["where"] = (f"where: {where}", launch_origin)  # type: ignore[arg-type]
        if launch.shmem is not None:
            sh = launch.shmem
            if isinstance(sh, Num):
                e, _ = mapper.rewrite(sh.e)
                if e is not None and e != 0:
                    inf.items["shmem"] = (f"shmem: {mapper.text(e)}", launch_origin)  # type: ignore[arg-type]
                elif e is None:
                    inf.holes["shmem"] = f"cannot infer the dynamic shared memory of '{fn.name}': annotate it, e.g. 'shmem: 256 * sizeof(float)'"
    if "block" not in inf.items or "grid" not in inf.items:
        _launch_from_kernel(fn, kf, inf, have_launch=launch is not None)

    _aligned_views(fn, kf, inf, mapper, grid_exprs, block_exprs, launch, program.resolve_type)

    # -- buffers --------------------------------------------------------------------------------------------------
    dim_exprs: list[sp.Expr] = [*(grid_exprs or []), *(block_exprs or [])]
    lengths: dict[str, sp.Expr] = {}
    buffer_lanes: dict[str, int] = {}
    pending_records: dict[str, tuple[str | None, dict[str, set[str]]]] = {}
    for index, p in enumerate(fn.params):
        if not p.is_pointer:
            continue
        null = _null_origin(fn, launches, index)
        if null is not None:  # the program never hands it a buffer: the gate passes nullptr as well
            inf.items[p.name] = (f"{p.name}: null", null)
            continue
        # the front end's reading of the body, and the accesses inference follows (through macros it expands)
        writes = p.writes or (not p.is_const and any(a.write for a in kf.accesses if a.param == p.name))
        reads = p.reads or (not p.writes and any(not a.write for a in kf.accesses if a.param == p.name))
        role = "inout" if reads and writes else "out" if writes else "in"
        if role == "in" and not p.is_const and _method_called(p.name, kf.body_text):
            role = "inout"  # pObj[i].setRange(...): a method may write the element; compared, never assumed unchanged
        ctype, _ = param_ctype(p)
        elem = _elem_type(p, fn, launch, program.resolve_type)
        struct = program.struct_lanes(ctype) if normalise_ctype(ctype) not in ctypes_table() else None
        record, why_not = (None, "")
        if struct is None and p.pointer_depth == 1 and normalise_ctype(ctype) not in ctypes_table() and not p.is_template_dependent:
            record, why_not, targets = _record(program, fn, p, ctype, role != "out")
            if targets:
                pending_records[p.name] = (record, targets)  # fields indexing buffers: bounded once lengths are known
        if p.pointer_depth > 1 or (normalise_ctype(ctype) not in ctypes_table() and struct is None and record is None and not (
                p.is_template_dependent and _template_type_generable(p, fn, launch, program.resolve_type, _is_struct(program)))):
            inf.holes[p.name] = (f"cannot fuzz '{p.name}' of type '{p.type}' in '{fn.name}': " + (why_not or (
                "only buffers of numbers (or of structs of numbers) can be generated")) + "; annotate the kernel by "
                "hand or test it through a wrapper")
            continue
        if p.name in kf.moved:  # the host's allocation fits the program's sizes, not necessarily a drawn one
            inf.holes[p.name] = (f"cannot infer the length of '{p.name}' in '{fn.name}': it is accessed through a "
                                 f"pointer moved by '{kf.moved[p.name]}', which xlate cannot evaluate; annotate it, "
                                 f"e.g. '// xlate: {p.name}: {role}[n]'")
            continue
        length = None
        origin = None
        why = "no launch of it was found"
        if mapper is not None:
            length, origin, why = mapper.buffer_length(p, elem)
            if length is not None and concrete(length) == 0:
                length, why = None, "its allocation is empty"
        if length is None:
            ext = kf.extent(p.name, mapper, grid_exprs, block_exprs)
            if ext is None:
                ext = _load_bound_extent(p.name, fn, kf, mapper, grid_exprs, block_exprs, inf)
            if ext is not None:
                length, origin = ext
        if length is None and kf.body_text and p.name not in kf.names_used:
            # a buffer the kernel's code never names (nor any macro it uses): no element of it is touched, so one
            # element stands for whatever the program allocates
            length, origin = sp.Integer(1), Origin("kernel", kf.where, "the kernel never uses it: any length will do")
        tparams = {t.name for t in fn.template_params}
        unknown = [str(x) for x in (length.free_symbols if length is not None else ()) if str(x).startswith("sizeof(")
                   and str(x)[7:-1] not in tparams]
        if unknown:  # the host sizes it with a type the kernel does not name (a template of the launcher)
            length, why = None, f"its size uses {', '.join(unknown)}"
        if length is None:
            inf.holes[p.name] = (f"cannot infer the length of '{p.name}' in '{fn.name}' ({why}): annotate it, e.g. "
                                 f"'// xlate: {p.name}: {role}[n]'")
            continue
        dim_exprs.append(length)
        lengths[p.name] = length
        rng = kf.value_range(p.name)
        dims = _text(mapper, length)
        if struct is not None:  # struct { float re, im; }*: n elements of 2 floats each, laid out alike
            dims += f", {struct[1]}"
            buffer_lanes[p.name] = int(struct[1])
        if record is not None:  # the gate's budget counts numbers: a record holds several
            buffer_lanes[p.name] = max(1, record_dtype(record).itemsize // 4)
        text = f"{p.name}: {role}[{dims}]" + (f"({rng[0]}..{rng[1]})" if rng and record is None else "") + (
            f" as {numpy_of(struct[0])}" if struct is not None else f" as {record}" if record is not None else "")
        inf.items[p.name] = (text, origin or Origin("kernel"))

    for name, (record, targets) in pending_records.items():
        if name not in inf.items or record is None:
            continue
        bounded = _bounded_record(record, targets, lengths, inf, mapper)
        text, origin = inf.items[name]
        if bounded is None:
            del inf.items[name]
            inf.holes[name] = (f"cannot fuzz '{name}' in '{fn.name}': its fields "
                               f"{', '.join(f'{name}.{f}' for f in sorted(targets))} index buffers whose lengths are not "
                               "known or that the kernel writes; give them a range by hand, e.g. "
                               f"'{name}: ... as {{..., {min(targets)}: int32(0..9)}}'")
            continue
        inf.items[name] = (text.replace(f" as {record}", f" as {bounded}"), origin)
    _index_ranges(fn, kf, inf, lengths, grid_exprs, block_exprs, mapper)
    _positive_lengths(inf, {**lengths, **{f"grid {i}": g for i, g in enumerate(grid_exprs or [])}}, mapper)

    # -- scalars --------------------------------------------------------------------------------------------------
    used = set().union(*(e.free_symbols for e in dim_exprs)) if dim_exprs else set()
    shm = inf.items.get("shmem")
    where_item = inf.items.get("where")
    for p in fn.params:
        if p.is_pointer:
            continue
        agg = aggregate_of(program, p.base_type) if numpy_of(normalise_ctype(p.base_type)) is None and (
            not p.is_template_dependent) else None
        if agg is not None:
            fields = sorted(n for n in kf.index_params | kf.guards if n.startswith(f"{p.name}."))
            if agg[1] > MAX_LANES:
                inf.holes[p.name] = (f"cannot fuzz parameter '{p.name}' of type '{p.type}' in '{fn.name}': it holds "
                                     f"{agg[1]} numbers, more than the gate draws for one argument ({MAX_LANES}); "
                                     "annotate the kernel by hand")
            elif fields:
                inf.holes[p.name] = (f"cannot fuzz parameter '{p.name}' of type '{p.type}' in '{fn.name}': its fields "
                                     f"{', '.join(fields)} index buffers or bound loops; annotate the kernel by hand")
            else:
                inf.items[p.name] = (f"{p.name}: scalar", Origin(
                    "kernel", kf.where, f"{agg[1]} x {agg[0]}, passed by value; the kernel uses them as data only"))
            continue
        if numpy_of(normalise_ctype(p.base_type)) is None and not p.is_template_dependent and agg is None and (
                normalise_ctype(p.base_type) not in ctypes_table()):
            record, why_not, targets = _record(program, fn, p, p.base_type, True)
            if record is None and "holds a pointer" in why_not:  # a tensor-info struct: pointer fields as buffers
                ptext, pwhy, porigin = pointer_record(program, fn, p, launch, mapper, facts[2] if len(facts) > 2 else None)
                if ptext is not None:
                    inf.items[p.name] = (f"{p.name}: scalar as {ptext}", porigin or Origin("kernel"))
                    continue
                why_not = pwhy or why_not
            if record is not None and targets:
                record = _bounded_record(record, targets, lengths, inf, mapper)
                why_not = why_not or ("" if record is not None else (
                    f"its fields {', '.join(f'{p.name}.{f}' for f in sorted(targets))} index buffers whose lengths "
                    "are not known or that the kernel writes"))
            if record is not None:
                inf.items[p.name] = (f"{p.name}: scalar as {record}", Origin(
                    "kernel", kf.where, "a struct of numbers passed by value; the kernel uses its integer fields as "
                    "data only"))
                continue
            if why_not:
                inf.holes[p.name] = (f"cannot fuzz parameter '{p.name}' of type '{p.type}' in '{fn.name}': {why_not}; "
                                     "annotate the kernel by hand")
                continue
        bound_class = _bound_class(p, fn, launch, program)
        if bound_class is not None:  # `Payoff payoff` with Payoff bound to the program's PayoffPut: its members
            record, why_not, targets = _record(program, fn, p, bound_class, True)
            if record is not None and not targets:
                inf.items[p.name] = (f"{p.name}: scalar as {record}", Origin(
                    "kernel", kf.where, f"an object of the program's class {bound_class} passed by value; the "
                    "kernel uses its members as data only"))
                continue
            inf.holes[p.name] = (f"cannot fuzz parameter '{p.name}' of type '{p.type}' ({bound_class}) in "
                                 f"'{fn.name}': {why_not or 'its members index buffers'}; annotate the kernel by hand")
            continue
        enumerators = program.enum_values(p.type) if not p.is_template_dependent else None
        if enumerators:  # the values the program can pass, each a case of its own (a camera model, a mode)
            values = sorted(set(enumerators))
            origin = Origin("kernel", kf.where, f"the enumerators of {normalise_ctype(p.type).replace('const ', '')}")
            if values[0] >= 0 and len(values) <= 64:  # an axis of its own that the parameter takes
                axis = f"{p.name}_enum"
                inf.items[axis] = (f"{axis}: choice({'|'.join(map(str, values))})", origin)
                inf.items[p.name] = (f"{p.name}: const({axis})", origin)
            else:
                inf.items[p.name] = (f"{p.name}: scalar({values[0]}..{values[-1]})", origin)
            continue
        callable_ = p.is_template_dependent and re.search(rf"\b{re.escape(p.name)}\s*\(", kf.body_text)
        item = _loop_size(p, mapper, used, kf, inf) or _scalar_item(p, fn, mapper, launch, roots, used, kf, unit, program.resolve_type) if not callable_ and (
            not p.is_template_dependent or _template_type_generable(p, fn, launch, program.resolve_type, _is_struct(program))) else None
        if item is None:
            inf.holes[p.name] = (f"cannot fuzz parameter '{p.name}' of type '{p.type}' in '{fn.name}': annotate it "
                                 "(size, scalar or const)")
        else:
            inf.items[p.name] = item
    _ = (shm, where_item)
    _positive_divisors(fn, inf, dim_exprs, kf.body_text)
    if mapper is not None and launch is not None:
        _host_divides(launch, mapper, inf)
        _host_multiples(mapper, inf)
    _raise_floors(inf)

    # -- sizes the kernel does not receive, launch axes, template arguments ----------------------------------------
    template_axes = _choice_template_items(fn, launch, inf, mapper)
    if mapper is not None:
        widths = {a.align for a in kf.accesses if a.align > 1}
        for name, root in mapper.m.free.items():
            if _launch_constant(inf, name, root):
                continue
            v = root.value if root.value is not None and float(root.value) >= 1 else None
            hi = int(v) if v is not None and float(v) == int(v) else root.hi or DEFAULT_SIZE_HI
            if v is not None and root.kind in ("local", "constant", "macro") and hi in widths and root.name in kf.names_used:
                # `pack = 16 / sizeof(T)` the program fixes, and the kernel computes for itself: the vector width
                # the kernel reads with, not a size to draw smaller
                inf.items[name] = (f"{name}: size({hi}..{hi})", Origin("host", root.where, (
                    f"{root.name} = {hi}, the width of the kernel's vector accesses, which it computes itself")))
                continue
            detail = root.detail if root.detail.startswith("the device's") else (
                f"{root.name} = {int(v)}" if v is not None else f"{root.name}: {root.detail or 'set at run time'}")
            inf.items[name] = (f"{name}: size(1..{hi})", Origin("host" if v is not None or root.hi else "default", root.where,
                                                                 detail + "; the kernel does not receive it"))
        for name, values in mapper.m.axes.items():
            allowed = values if name in template_axes else [v for v in values if kf.block_ok(v)] or values
            inf.items[name] = (f"{name}: choice({'|'.join(str(v) for v in allowed)})",
                               Origin("host", _root_where(roots, name), f"the values the program uses for {name}"))
    _template_items(fn, launch, inf, mapper, program.resolve_type, kf.body_text, program.class_named)
    _value_axis_items(value_axes, launch, inf, mapper)
    drawn = _multiple_ranges(_ranges(inf), inf)
    for name, length in lengths.items():
        if name not in inf.items:
            continue  # turned into a hole (values no range keeps inside)
        text, origin = inf.items[name]
        if origin.kind != "host":
            continue
        covered, origin = _covering(length, origin, kf.extent(name, mapper, grid_exprs, block_exprs, known_only=True),
                                     drawn)
        if covered is not length:
            head, _, rest = text.partition("[")
            dims, _, tail = rest.partition("]")
            lanes = dims[len(_text(mapper, length)):]  # `, 2` of a struct of two numbers
            inf.items[name] = (f"{head}[{_text(mapper, covered)}{lanes}]{tail}", origin)
    _within_budget(fn, inf, lengths, buffer_lanes)
    _nonnegative_indices(kf, inf, mapper, grid_exprs, block_exprs)
    if block_exprs is not None and "block" in inf.items:
        shmem_e = None
        if launch is not None and isinstance(launch.shmem, Num) and mapper is not None and "shmem" in inf.items:
            shmem_e, _ = mapper.rewrite(launch.shmem.e)
        _clamp_launch_sizes(inf, block_exprs, shmem_e, kf.launch_bounds, grid_exprs)
    elif "grid" in inf.items:  # a launch read from the kernel's guards: its grid as written
        text = inf.items["grid"][0].split(":", 1)[1].strip()
        parts = [t.strip() for t in (split_top(text[1:-1]) if text.startswith("(") else [text])]
        simple = [sp.sympify(t, locals={n: sp.Symbol(n, positive=True, integer=True) for n in re.findall(r"[A-Za-z_]\w*", t)})
                  if re.fullmatch(r"[\w\s*]+", t) else sp.Integer(1) for t in parts]
        _clamp_launch_sizes(inf, [], None, None, simple)
    # the `__device__`/`__constant__` variables it reads and writes (xlate/specs/infer/globals.py)
    infer_globals(fn, program, facts[2] if len(facts) > 2 else None, inf)
    return inf


def _launch_constant(inf: Inference, name: str, root: Any) -> bool:
    """A program constant that only the dynamic shared memory reads (`size_t shmem = 0;` or `= 128` before
    `k<<<g, b, shmem>>>`) is that many bytes, not a size to draw: the kernel's `extern __shared__` arrays are
    exactly as large as the program makes them. Written into the `shmem` item; True where it was."""
    shm = inf.items.get("shmem")
    value = root.value
    if shm is None or value is None or root.kind not in ("local", "constant", "macro"):
        return False
    if float(value) != int(value) or int(value) < 0:
        return False
    word = re.compile(rf"\b{re.escape(name)}\b")
    if any(word.search(text) for key, (text, _) in inf.items.items() if key != "shmem"):
        return False
    text, origin = shm
    inf.items["shmem"] = (word.sub(str(int(value)), text), replace(origin, detail=(
        f"{origin.detail}; {root.name} = {int(value)}" if origin.detail else f"{root.name} = {int(value)}")))
    return True


MAX_BLOCK_THREADS = 1024
MAX_DYNAMIC_SHARED = 48 * 1024  # without an opt-in attribute


MAX_GRID_YZ = 65535


def _clamp_launch_sizes(inf: Inference, block: list[sp.Expr], shmem: sp.Expr | None, bound: int | None,
                        grid: list[sp.Expr] | None = None) -> None:
    """Sizes that shape the block (or the dynamic shared memory) cannot go past what a launch allows: the
    program's own guards around the launch (`if (w <= 256)`) are not followed, the device limit is."""
    limits: dict[str, int] = {}

    def clamp(e: sp.Expr, cap: int) -> None:
        syms = [x for x in e.free_symbols if not str(x).startswith("sizeof(")]
        if not syms or not e.is_polynomial(*syms):
            return
        coeff = sp.Poly(e, *syms).coeffs()
        if len(coeff) != 1 or not coeff[0].is_Integer or int(coeff[0]) <= 0:
            return  # a monomial c * a * b ...: each factor at most (cap / c) ** (1 / k)
        per = int((cap // int(coeff[0])) ** (1.0 / sum(sp.degree(e, x) for x in syms)) + 1e-9)
        for x in syms:
            name = x.name[3:] if x.name.startswith("_P_") else x.name
            limits[name] = min(limits.get(name, per), max(1, per))

    threads = sp.Integer(1)
    for b in block:
        threads = threads * b
    clamp(sp.expand(threads), min(MAX_BLOCK_THREADS, bound or MAX_BLOCK_THREADS))
    if shmem is not None:
        clamp(sp.expand(shmem), MAX_DYNAMIC_SHARED)
    for g in (grid or [])[1:3]:  # gridDim.y and .z stop at 65535 (`(w / 16, h / 16, B * C)` failed to launch)
        clamp(sp.expand(g), MAX_GRID_YZ)
    for name, cap in limits.items():
        item = inf.items.get(name)
        if item is None:
            continue
        m = re.fullmatch(r"(.*: size\()(-?\d+)\.\.(-?\d+)(\).*)", item[0])
        if m is None or int(m.group(3)) <= cap:
            continue
        lo = min(int(m.group(2)), cap)
        inf.items[name] = (f"{m.group(1)}{lo}..{cap}{m.group(4)}", Origin(
            item[1].kind, item[1].where, (item[1].detail + "; " if item[1].detail else "") +
            "at most what one launch allows"))


def _ranges(inf: Inference) -> dict[str, list[float]]:
    """The values each size, scalar and axis of the items so far may take (a few, for sampling)."""
    out: dict[str, list[float]] = {}
    for key, (text, _) in inf.items.items():
        m = re.fullmatch(r"[^:]+: (?:size|scalar)\((-?[\d.e+-]+)\.\.(-?[\d.e+-]+)\)", text)
        if m:
            lo, hi = float(m.group(1)), float(m.group(2))
            mid = [v for v in (1, 2, 3, 7, 16, 31, 64, 100, 257, 1000) if lo <= v <= hi]
            out[key] = [lo, hi, *mid]
            continue
        m = re.fullmatch(r"[^:]+: choice\(([\d|]+)\)", text)
        if m:
            values = [float(v) for v in m.group(1).split("|")]
            out[key] = values if len(values) > 1 else values * 2  # lowest and highest first, one value or more
    return out


def _multiple_ranges(ranges: dict[str, list[float]], inf: Inference) -> dict[str, list[float]]:
    """`ranges` with the sizes a `where` draws as multiples (`k % 2 == 0`) sampled at multiples only: k = 1 is
    never drawn, and a reach like `k * n - k + 2` stays within `k * n` for every k the spec allows."""
    where = inf.items.get("where", ("", None))[0]
    out = dict(ranges)
    for name, k in re.findall(r"\b([A-Za-z_]\w*) % (\d+) == 0", where):
        vals = out.get(name)
        if not vals or vals[1] < int(k):
            continue
        step = int(k)
        lo, hi = max(step, -(-int(vals[0]) // step) * step), int(vals[1]) // step * step
        out[name] = [float(lo), float(hi), *(float(v) for v in vals[2:] if v % step == 0 and lo <= v <= hi)]
    return out


def _covering(length: sp.Expr, origin: Origin, ext: tuple[sp.Expr, Origin] | None,
              ranges: dict[str, list[float]]) -> tuple[sp.Expr, Origin]:
    """The allocation's length, unless the kernel's own accesses can reach past it for sizes the spec allows
    (values the program ties together that the spec fuzzes apart: a buffer of `n` elements indexed up to
    `count`): then at least what the accesses reach, so a correct source never faults under its spec."""
    if ext is None:
        return length, origin
    reach = ext[0]
    if any(str(x).startswith(("U_", "D_")) for x in reach.free_symbols):
        return length, origin
    slack = sp.expand(length - reach)
    if slack == 0 or (not isinstance(reach, sp.Max) and all(_term_nonneg(t) for t in sp.Add.make_args(slack))):
        return length, origin
    if not _may_exceed(reach, length, ranges):
        return length, origin
    args = _dominant([length, *(reach.args if isinstance(reach, sp.Max) else (reach,))])
    covered = args[0] if len(args) == 1 else sp.Max(*args, evaluate=False)
    if covered == length:
        return length, origin
    return covered, Origin(origin.kind, origin.where, (origin.detail + "; " if origin.detail else "") +
                           f"at least what the kernel's accesses reach ({ext[1].where})")


def _may_exceed(reach: sp.Expr, length: sp.Expr, ranges: dict[str, list[float]], samples: int = 40) -> bool:
    """Whether `reach > length` for some values the spec allows (sampled: each symbol's ends and a few values
    inside; a length below one is left to `where`)."""
    import random

    syms = sorted(reach.free_symbols | length.free_symbols, key=str)
    default = [1.0, 2.0, 3.0, 7.0, 16.0, 64.0, 257.0, 4096.0]

    def values(x: sp.Symbol) -> list[float]:
        if str(x).startswith("sizeof("):
            return [4.0]
        name = x.name[3:] if x.name.startswith("_P_") else x.name
        return ranges.get(name) or default

    rng = random.Random(0)
    points = [{x: values(x)[0] for x in syms}, {x: values(x)[1 if len(values(x)) > 1 else 0] for x in syms}]
    # the corner that breaks a kernel: the buffer at its smallest, what only the accesses use at its largest
    # (`g[idx]` with idx up to 16 into a buffer of nx * ny * nz elements that may be 1)
    points.append({x: values(x)[0] if x in length.free_symbols or len(values(x)) < 2 else values(x)[1] for x in syms})
    points += [{x: rng.choice(values(x)) for x in syms} for _ in range(samples)]
    for point in points:
        env = {x: sp.Integer(int(v)) if float(v) == int(v) else sp.Float(v) for x, v in point.items()}
        try:
            r, n = sp.sympify(reach.xreplace(env)), sp.sympify(length.xreplace(env))
            if r.is_number and n.is_number and n >= 1 and bool(r > n):
                return True
        except (TypeError, ZeroDivisionError):
            continue
    return False


MAX_LANES = 1024  # numbers in one by-value argument: the gate draws each, and Hypothesis' buffer is finite


def _within_budget(fn: Function, inf: Inference, lengths: dict[str, sp.Expr], lanes: dict[str, int]) -> None:
    """Buffers that hold more than the gate fuzzes even with every size at its smallest (a kernel compiled for
    `#define N 10000000` elements): no case could ever be drawn, so the spec is not one the gate can use. The
    largest such buffer is a hole whose hint says to annotate smaller sizes."""
    ranges = _ranges(inf)
    where = inf.items.get("where", ("", None))[0]
    for name, k in re.findall(r"\b([A-Za-z_]\w*) % (\d+) == 0", where):  # drawn as multiples: k at the least
        if name in ranges:
            ranges[name] = [max(ranges[name][0], float(k)), *ranges[name][1:]]
    import itertools

    def name_of(x: sp.Symbol) -> str:
        return x.name[3:] if x.name.startswith("_P_") else x.name

    live = {n: e for n, e in lengths.items() if n in inf.items}
    syms = sorted({x for e in live.values() for x in e.free_symbols if name_of(x) in ranges}, key=str)
    if len(syms) > 8:
        return
    # the smallest total over the corners of the sizes' ranges (a length may shrink as a size grows: `N / step`)
    total, largest = -1, (0, "")
    for corner in itertools.product(*[(ranges[name_of(x)][0], ranges[name_of(x)][1]) for x in syms]):
        env = {x: sp.Integer(max(1, int(v))) for x, v in zip(syms, corner)}
        t, big = 0, (0, "")
        for name, e in live.items():
            v = concrete(sp.sympify(e.xreplace(env)))
            if v is None:
                continue
            v *= lanes.get(name, 1)
            t += v
            big = max(big, (v, name))
        if total < 0 or t < total:
            total, largest = t, big
    if total > LARGEST_CASE and largest[1]:
        name = largest[1]
        del inf.items[name]
        inf.holes[name] = (f"cannot fuzz '{name}' in '{fn.name}': its buffers hold {total} elements even with every "
                           f"size at its smallest, more than the gate fuzzes in one case ({LARGEST_CASE}); test it "
                           "through a version built for smaller sizes, annotated with them")


def _positive_divisors(fn: Function, inf: Inference, exprs: list[sp.Expr], body: str) -> None:
    """An integer scalar the kernel divides by (`i / G`, `i % G`) or that divides in a buffer length or the grid
    (`(C - 1) / G`) is at least 1: drawn from a range with 0 or negatives it makes a correct source divide by
    zero (or index backwards), and the gate's own length expression fails before anything runs."""
    names = {p.name for p in fn.params if not p.is_pointer and _is_int_type(normalise_ctype(p.base_type))}
    divisors: set[str] = set()
    for e in exprs:
        for d in e.atoms(FloorDiv, CeilDiv, sp.Mod):
            divisors |= {x.name[3:] if x.name.startswith("_P_") else x.name for x in d.args[1].free_symbols}
    texts = [t.split(":", 1)[1] for t, _ in inf.items.values()]  # value ranges (`(0..(m - n) / step)`) too
    for name in names:
        pattern = rf"[/%]\s*\(?\s*{re.escape(name)}\b(?!\s*[\[.(])"
        if re.search(r"[^/%]\s*" + pattern, body) or any(re.search(pattern, t) for t in texts):
            divisors.add(name)
    for name in divisors & names:
        item = inf.items.get(name)
        if item is None:
            continue
        text, origin = item
        m = re.fullmatch(r"(.*: scalar)(?:\((-?\d+)\.\.(-?\d+)\))?", text)
        if m is None or (m.group(2) is not None and int(m.group(2)) >= 1):
            continue
        hi = max(1, int(m.group(3))) if m.group(3) is not None else 100
        inf.items[name] = (f"{m.group(1)}(1..{hi})", Origin(origin.kind, origin.where, (
            origin.detail + "; " if origin.detail else "") + "a divisor: at least 1"))


def _method_called(name: str, body: str) -> bool:
    """Whether the kernel calls a method on an element of the buffer `name` (`p[i].set(...)`, `p->update()`)."""
    return bool(re.search(rf"\b{re.escape(name)}\s*(\[[^\]]*\])?\s*(\.|->)\s*\w+\s*\(", body))


def _positive_lengths(inf: Inference, lengths: dict[str, sp.Expr], mapper: Mapper | None) -> None:
    """A length that subtracts (`total - offset` for a pointer `d + offset` into `total` elements) or divides
    (`bytes / 4`) holds an element only for some sizes: say so (`where: total - offset >= 1`), or the fuzzer
    draws empty buffers."""
    conds = []
    for key, e in lengths.items():
        e = sp.expand(e)
        # a buffer length that divides (`result_bytes / 4`) is zero below its divisor even with no subtraction
        # (a grid that divides gets its `where` from the exact division it needs)
        divides = e.has(FloorDiv) and (not key.startswith("grid ") or (
            isinstance(e, FloorDiv) and e.args[0].as_coeff_Add()[0] != 0))  # `(n + 13) / 16` is 0 for n < 3
        if e.is_number or (all(_term_nonneg(t) for t in sp.Add.make_args(e)) and not divides):
            continue
        conds.append(f"{_text(mapper, e)} >= 1")
    if not conds:
        return
    inf.add_where(conds, Origin("kernel", "", "buffers the program offsets into must hold an element"))


def _nonnegative_indices(kf: KernelFacts, inf: Inference, mapper: Mapper | None, grid: list[sp.Expr] | None,
                         block: list[sp.Expr] | None) -> None:
    """Sizes too small for the kernel's fixed offsets (`x[n * (m - 2) + i]`, the last step of a backward sweep,
    needs m >= 2) make a correct source read or write before its buffer; the program never uses them, so the
    spec says `where: m - 2 >= 0`. Only a bound some sizes the spec draws meet: one no size meets (`x[i - n]`
    under a lower guard inference does not track) says nothing."""
    if mapper is None:
        return
    ranges = _ranges(inf)
    bounds: list[sp.Expr] = []
    for low, _access in kf.lowest_indices(grid, block):
        if all(_term_nonneg(t) for t in sp.Add.make_args(low)):
            continue
        # positive size factors do not change the sign: `n * (m - 2)` needs `m - 2 >= 0`
        coeff, factors = sp.factor_terms(low).as_coeff_mul()
        kept = [f for f in factors if not (f.is_Symbol and f.name.startswith("_P_"))]
        bound = sp.expand(sp.Mul(*kept)) if coeff > 0 and kept else low
        if bound.is_number or any((x.name[3:] if x.name.startswith("_P_") else x.name) not in ranges
                                  for x in bound.free_symbols):
            continue  # a size the spec derives (`half: const(cdiv(n, 2))`) may keep it whatever is drawn
        const, rest = bound.as_coeff_Add()
        if const >= 0 or not all(_term_nonneg(t) for t in sp.Add.make_args(rest)):
            # only "sizes at least so large": a lowest index that falls as a size grows (`n - 1 - i` with i's
            # bound not tight, a lower guard not tracked) is inference's slack, not the program's need
            continue
        if not _sometimes_nonnegative(bound, ranges) or not _sometimes_nonnegative(-bound - 1, ranges):
            continue
        bounds.append(bound)
    # of `m - 1 >= 0` and `m - 2 >= 0` the second says both
    strongest = [b for b in dict.fromkeys(bounds)
                 if not any(c is not b and (d := sp.expand(b - c)).is_number and d > 0 for c in bounds)]
    conds = []
    for b in strongest:
        const, rest = b.as_coeff_Add()
        conds.append(f"{_text(mapper, rest)} >= {-const}" if const < 0 else f"{_text(mapper, b)} >= 0")
    if conds:
        inf.add_where(conds, Origin("kernel", kf.where, "sizes the kernel's fixed offsets need so that no index "
                                    "falls below 0"))


def _sometimes_nonnegative(e: sp.Expr, ranges: dict[str, list[float]]) -> bool:
    """Whether `e >= 0` at some point of the sizes' sampled ranges (both ends and a few values inside)."""
    import itertools

    syms = sorted(e.free_symbols, key=str)
    if len(syms) > 6:
        return True

    def values(x: sp.Symbol) -> list[float]:
        return ranges[x.name[3:] if x.name.startswith("_P_") else x.name]

    for point in itertools.product(*[values(x)[:6] for x in syms]):
        v = e.xreplace({x: sp.Integer(int(p)) if float(p) == int(p) else sp.Float(p) for x, p in zip(syms, point)})
        if v.is_number and v >= 0:
            return True
    return False


def _term_nonneg(t: sp.Expr) -> bool:
    coeff, _ = t.as_coeff_Mul()
    return bool(coeff >= 0) and all(f.is_number or f.is_nonnegative or (
        isinstance(f, (CeilDiv, FloorDiv)) and all(_term_nonneg(u) for u in sp.Add.make_args(sp.expand(f.args[0])))) or (
        isinstance(f, sp.Mod)) or (f.is_Pow and f.base.is_nonnegative) for f in sp.Mul.make_args(t))


def _load_bound_extent(pname: str, fn: Function, kf: KernelFacts, mapper: Mapper | None, grid: list[sp.Expr] | None,
                       block: list[sp.Expr] | None, inf: Inference) -> tuple[sp.Expr, Origin] | None:
    """A buffer reached only through the values of other buffers (`val[j]` for j up to `rowptr[r + 1]`, `x[col[j]]`)
    when nothing in the program sizes it: the largest value of each such index buffer becomes a size of its own
    (`rowptr_max`), the buffer is as long as the accesses then reach, and the index buffer's values are kept
    within it (_index_ranges). Only read-only integer index buffers: values the kernel writes are its own."""
    ext = kf.extent(pname, mapper, grid, block, loads=True)
    if ext is None:
        return None
    length, origin = ext
    us = [s for s in length.free_symbols if s.name.startswith("U_")]
    if not us:
        return None
    params = {p.name: p for p in fn.params}
    for u in us:
        q = params.get(u.name[2:])
        if q is None or not q.is_pointer or q.writes or not _is_int_type(normalise_ctype(q.base_type)):
            return None
    through = ", ".join(sorted(str(u)[2:] for u in us))
    if len(us) > 1:  # off[i] + len[i]: the buffer's own length is the size, the index values share it
        name = _fresh_name(f"{pname}_len", fn, inf)
        inf.items.setdefault(name, (f"{name}: size(1..{DEFAULT_SIZE_HI})", Origin(
            "kernel", origin.where, f"the length of {pname}: nothing in the program sizes it; {through} index it")))
        return sp.Symbol(name, integer=True, positive=True), Origin(
            "kernel", origin.where, f"reached through {through}: a size of its own")
    q = us[0].name[2:]
    name = _fresh_name(f"{q}_max", fn, inf)
    inf.items.setdefault(name, (f"{name}: size(1..{DEFAULT_SIZE_HI})", Origin(
        "kernel", origin.where, f"the largest value in {q}: nothing in the program sizes what it indexes")))
    size = sp.Symbol(name, integer=True, positive=True)
    return sp.expand(length.xreplace({us[0]: size})), Origin(
        "kernel", origin.where, f"largest index of {pname} reached through {through}")


def _fresh_name(base: str, fn: Function, inf: Inference) -> str:
    """`base`, or `base` made distinct from the kernel's parameters and other items (a `<q>_max` already made
    for the same index buffer is reused)."""
    name = base
    params = {p.name for p in fn.params}
    while name in params or (name in inf.holes):
        name += "_"
    return name


# -- launches ------------------------------------------------------------------------------------------------


def _record(program: Program, fn: Function, p: Param, ctype: str,
            drawn: bool) -> tuple[str | None, str, dict[str, set[str]]]:
    """The record type of a struct parameter or buffer element (`{S: float32, T: int32}`), "" and the integer
    fields that need a range from the buffers they index directly (field -> buffers: `x[e[i].col]`); or None and
    why not: a struct holding pointers, one with more numbers than the gate draws for one argument, or one whose
    integer fields the kernel uses otherwise as indices, loop bounds or guards (`drawn`: its values are drawn;
    an `out` buffer's are not)."""
    from xlate.specs.infer.records import index_targets, number_fields, risky_fields
    from xlate.specs.records import leaves, parse_record, record_dtype

    record, why = program.record_of(ctype)
    if record is None:
        return None, why if why and not why.startswith("no definition") else "", {}
    numbers = sum(leaf.count for leaf in leaves(parse_record(record), record_dtype(record)))
    if not p.is_pointer and numbers > MAX_LANES:
        return None, f"it holds {numbers} numbers, more than the gate draws for one argument ({MAX_LANES})", {}
    struct = program.resolve_type(normalise_ctype(ctype)).split("<")[0].split("::")[-1].strip()
    risky = risky_fields(program, fn.name, number_fields(record), p.name, struct, number_fields(record, "f")) if drawn else {}
    if not risky:
        return record, "", {}
    pointers = {q.name for q in fn.params if q.is_pointer and q.name != p.name}
    ints = number_fields(record, "iu")
    targets = {f: index_targets(program, fn.name, f, pointers, p.name, struct) if f in ints else None for f in risky}
    if all(targets.values()):
        return record, "", {f: t for f, t in targets.items() if t}
    name, reason = next(iter(sorted(risky.items())))
    return None, (f"its fields {', '.join(f'{p.name}.{f}' for f in sorted(risky))} index buffers or bound loops "
                  f"(the field {name} {reason}): give {'it' if len(risky) == 1 else 'them'} a range, e.g. "
                  f"'{p.name}: ... as {{..., {name}: int32(0..9)}}'"), {}


def _bounded_record(record: str, targets: dict[str, set[str]], lengths: dict[str, sp.Expr], inf: Inference,
                    mapper: Mapper | None) -> str | None:
    """The record with each index field's range `0..L - 1`, L the shortest length of the read-only buffers it
    indexes (`x[e[i].col]` with `x: in[m]` gives `col: int32(0..m - 1)`); None when a length is unknown or a
    buffer is written through it (repeated values would race, as for index buffers)."""
    from dataclasses import replace as dc_replace

    from xlate.specs.records import Record, parse_record, record_text

    bounds: dict[str, str] = {}
    for field, buffers in targets.items():
        if any(b not in lengths or not inf.items.get(b, ("", None))[0].startswith(f"{b}: in[") for b in buffers):
            return None
        texts = sorted({_text(mapper, lengths[b]) for b in buffers})
        length = texts[0] if len(texts) == 1 else f"min({', '.join(texts)})"
        bounds[field] = f"{length} - 1" if re.fullmatch(r"[\w.]+", length) else f"({length}) - 1"

    def bound(rec: Record) -> Record:
        fields = tuple(dc_replace(f, type=bound(f.type)) if isinstance(f.type, Record) else
                       dc_replace(f, lo="0", hi=bounds[f.name]) if f.name in bounds else f for f in rec.fields)
        return dc_replace(rec, fields=fields)

    return record_text(bound(parse_record(record)))


def _elem_sizer(program: Program):
    from xlate.specs.infer.ceval import ctype_size, sizeof_type

    def size(ctype: str) -> sp.Expr:
        t = program.resolve_type(ctype)
        lanes = program.struct_lanes(t) if ctype_size(t) is None else None
        if lanes is not None:
            return sp.Integer(lanes[1] * (ctype_size(lanes[0]) or 1))
        return sizeof_type(t)

    return size


def _launch_name(launch: Launch) -> str:
    return launch.kernel + (f"<{', '.join(launch.template_args)}>" if launch.template_args else "")


def _launches_of(fn: Function, launches: list[Launch]) -> list[Launch]:
    # an explicit specialisation (`k<float>`) is launched as k<float>; the primary template as k<...> or k
    return [launch for launch in launches if (launch.kernel == fn.name or "".join(_launch_name(launch).split()) == "".join(
        fn.name.split())) and len(launch.args) == len(fn.params)]


def _best_launch(fn: Function, launches: list[Launch]) -> Launch | None:
    mine = _launches_of(fn, launches)
    if not mine:
        return None

    def score(launch: Launch) -> tuple[int, int, int]:
        # a null pointer says nothing of the buffer: a launch that passes one instead is preferred
        known = sum(1 for a, p in zip(launch.args, fn.params) if (isinstance(a, Ptr) and a.alloc.bytes is not None) or (
            isinstance(a, Num) and not p.is_pointer))
        return (0 if launch.bound else 1, -known, 0 if launch.block is not None and launch.grid is not None else 1)

    return min(mine, key=score)


def _null_origin(fn: Function, launches: list[Launch], index: int) -> Origin | None:
    """Where every launch of `fn` passes the null pointer (`nullptr`, `NULL`, `0`, `(float*)0`, a local set to one
    and never pointed elsewhere) for its pointer parameter `index`: the origin of its `null` item. A parameter
    some launch gives a buffer is that buffer (None here): the spec describes the launch that exercises more."""
    mine = _launches_of(fn, launches)
    if not mine or not all(_is_null(launch.args[index]) for launch in mine):
        return None
    first = mine[0]
    said = first.arg_texts[index] if index < len(first.arg_texts) else "nullptr"
    more = f" (and {len(mine) - 1} other launch{'es' if len(mine) > 2 else ''})" if len(mine) > 1 else ""
    return Origin("host", first.where, f"{said}: a null pointer at every launch{more}")


def _is_null(arg: object) -> bool:
    """`nullptr`, `NULL`, `0` (a number 0 where a pointer goes), or a pointer declared null and never set since."""
    if isinstance(arg, Num):
        return arg.e == 0
    return isinstance(arg, Ptr) and arg.alloc.null and arg.alloc.bytes is None and arg.offset == 0


def _guessed_block(launch: Launch, mapper: Mapper, kf: KernelFacts) -> list[sp.Expr] | None:
    """A launch whose block is a value of the program we cannot see (`threads` read at run time, a launcher's
    parameter nobody calls with a value): the block the kernel allows (kf's guess) stands for that value, so the
    grid (`cdiv(n, threads)`) and the shared memory (`threads * sizeof(float)`) computed from it stay consistent.
    A dimension the program gives as a number (`dim3(32, rows)`) keeps it: only the value read at run time is
    guessed, and the block as a whole stays within the launch limit."""
    dims = list(launch.block.dims) if isinstance(launch.block, Dim3) else [launch.block.e] if isinstance(
        launch.block, Num) else None
    if dims is None:
        return None
    guess = kf._block_guess()
    if len(guess) < len([d for d in dims if d != 1]):
        return None
    out: list[sp.Expr] = []
    for i, d in enumerate(dims):
        g = sp.Integer(guess[i]) if i < len(guess) else sp.Integer(1)
        if d.is_number and d > 0:  # `dim3(32, rows)`: the program's own 32 stands; only the value it reads is guessed
            out.append(sp.Integer(d))
            continue
        root = mapper.roots.get(d) if isinstance(d, sp.Symbol) else None
        if root is None or root.kind == "choice" or d in mapper.m.subs:
            return None
        mapper.m.subs[d] = g  # the program's value for the block is the one guessed, everywhere it is used
        out.append(g)
    while len(out) > 1 and out[-1] == 1:
        out.pop()
    if sp.prod(out) > (kf.launch_bounds or 1024):
        return None
    return out


def _tuple(mapper: Mapper, exprs: list[sp.Expr]) -> str:
    texts = [mapper.text(e) for e in exprs]
    return texts[0] if len(texts) == 1 else f"({', '.join(texts)})"


def _index_ranges(fn: Function, kf: KernelFacts, inf: Inference, lengths: dict[str, sp.Expr],
                  grid: list[sp.Expr] | None, block: list[sp.Expr] | None, mapper: Mapper | None) -> None:
    """Give index buffers the value range that keeps the accesses they drive in bounds."""
    distinct = kf.distinct_indexes(grid, block)
    ascending = {p: q for p, q in kf.ascending_indexes().items() if p not in distinct and _unranged(inf, p)}
    # offsets drawn `ascending by` their lengths: the ranges are solved for that drawing
    segments = {p: q for p, q in ascending.items() if q is not None and _input_buffer(inf, q)}
    ranges, bad = kf.index_ranges(lengths, grid, block, segments)
    fits: list[str] = []
    for q, (lo, hi) in ranges.items():
        if q not in inf.items or "]" not in inf.items[q][0] or "(" in inf.items[q][0].split("]", 1)[-1]:
            continue  # not a buffer (`q: null`), or one with its range already
        text, origin = inf.items[q]
        head, _, tail = text.partition("]")
        # a buffer longer than its range whatever the sizes (nObjs + extra values of 0..nObjs - 1) cannot be
        # distinct: the program does not use it as a one-to-one map
        apart = q in distinct and q in lengths and not _always_negative(sp.expand(hi - lo + 1 - lengths[q]))
        order = "" if apart or q not in ascending else f" ascending{f' by {segments[q]}' if q in segments else ''}"
        inf.items[q] = (f"{head}]({_text(mapper, lo)}..{_text(mapper, hi)}{' distinct' if apart else order}){tail}",
                        Origin(origin.kind, origin.where, (origin.detail + "; " if origin.detail else "") +
                               "values kept inside the buffers they index" + (
                                   ", each once: threads write through them" if apart else "") + (
                                   f", non-decreasing: the kernel walks the segments between them{_by(segments, q)}"
                                   if order else "")))
        fits += _clauses(mapper, [(hi, lo)])  # a range whose ends cross at small sizes has no value to draw
        if apart:  # n distinct values need n values in the range: the sizes are drawn to allow it
            fits += _clauses(mapper, [(sp.expand(hi - lo + 1), lengths[q]), *distinct[q]])
    for p, q in segments.items():  # offsets step at least the lengths' lowest value: room for all of them
        if p in ranges and q in ranges and p in lengths and ranges[q][0] != 0:
            fits += _clauses(mapper, [(sp.expand(ranges[p][1] - ranges[p][0]), sp.expand(ranges[q][0] * lengths[p]))])
    fits += _clauses(mapper, kf.stride_clauses(grid, block))
    floors = _clauses(mapper, kf.field_clauses())
    inf.floors.update(floors)
    fits += floors
    if fits:
        inf.add_where(fits, Origin(
            "kernel", kf.where, "index values fit their ranges: no range is empty, index buffers written through hold "
            "distinct values (no more of them than their range has), and rows are at least as far apart as the "
            "widest row written"))
    for q, why in bad.items():
        if q in inf.items and "]" in inf.items[q][0]:  # a null pointer's values are never read
            del inf.items[q]
            inf.holes[q] = (f"cannot fuzz the values of '{q}' in '{fn.name}': {why}; annotate their range, e.g. "
                            f"'// xlate: {q}: in[n](0..m-1)' or '(perm)'")


def _raise_floors(inf: Inference) -> None:
    """`where: ch >= 3` of a size drawn `size(1..4)` (the fields of an element: Inference.floors): its range
    starts there (`size(3..4)`) rather than a filter that throws draws away. The other clauses stay."""
    where = inf.items.get("where")
    if where is None or not inf.floors:
        return
    kept = []
    for c in where[0].split(":", 1)[1].strip().split(" and "):
        m = re.fullmatch(r"([A-Za-z_]\w*) >= (\d+)", c)
        item = inf.items.get(m.group(1)) if m else None
        r = re.fullmatch(rf"{re.escape(m.group(1))}: size\((\d+)\.\.(\d+)\)", item[0]) if m and item else None
        if c not in inf.floors or m is None or item is None or r is None or not int(r.group(1)) < int(
                m.group(2)) <= int(r.group(2)):
            kept.append(c)
            continue
        inf.items[m.group(1)] = (f"{m.group(1)}: size({m.group(2)}..{r.group(2)})", Origin(
            item[1].kind, item[1].where, (item[1].detail + "; " if item[1].detail else "") + f"at least {m.group(2)}"))
    if kept:
        inf.items["where"] = (f"where: {' and '.join(kept)}", where[1])
    else:
        del inf.items["where"]


def _input_buffer(inf: Inference, name: str) -> bool:
    """`name` is an input buffer item (`in[...]`/`inout[...]`), the only kind `ascending by` may name."""
    text = inf.items.get(name, ("", None))[0]
    return bool(re.match(r"\w+:\s*(in|inout)\s*\[", text))


def _unranged(inf: Inference, name: str) -> bool:
    text = inf.items.get(name, ("", None))[0]
    return "]" in text and "(" not in text.split("]", 1)[-1]


def _by(segments: dict[str, str], q: str) -> str:
    return f", segment k holding {segments[q]}[k] elements" if q in segments else ""


def _aligned_views(fn: Function, kf: KernelFacts, inf: Inference, mapper: Mapper | None, grid: list[sp.Expr] | None,
                   block: list[sp.Expr] | None, launch: Launch | None = None, resolve: Any = None) -> None:
    """Buffers read or written through a wider type (`reinterpret_cast<float4*>(&x[row * C + j])`) fault on a
    misaligned address unless the sizes in the offset keep it a multiple of the width: `where: C % 4 == 0`, drawn
    as multiples. Each access's needs (KernelFacts.alignment_needs) are met by as few sizes as can be, preferring
    the size most terms share; the program's literal arguments count as their values, and a parameter the launch
    computes from others (`C / G`) or a launch axis is never the one chosen. The sizes chosen go to the kernel's
    facts, so the extents of the accesses they align end at the last whole vector."""
    values = {param_symbol(n): v for n, v in (mapper.m.fixed.items() if mapper is not None else ()) if v.is_Integer}
    needs = kf.alignment_needs(grid, block, values)
    if not needs:
        return
    bound = template_bindings(fn, launch, resolve)  # `IndexType n` launched as k<float, unsigned>: an integer
    ints = {param_symbol(p.name) for p in fn.params if not p.is_pointer and _is_int_type(normalise_ctype(
        bound.get(normalise_ctype(p.base_type), p.base_type) if p.is_template_dependent else p.base_type))}
    derived = {param_symbol(n) for n in (mapper.m.derived if mapper is not None else ())}
    axes = set(mapper.m.axes) if mapper is not None else set()
    free = set(mapper.m.free) if mapper is not None else set()

    def eligible(x: sp.Symbol) -> bool:
        if x.name.startswith("_P_"):
            return x in ints and x not in derived and x not in values
        return x.name in free and x.name not in axes

    reqs = {(k, frozenset(x for x in sizes if eligible(x))) for ns in needs.values() for k, sizes in ns}
    # multiples the spec already draws (`N % 256 == 0` of a grid that divides exactly) meet what they can
    said = dict(re.findall(r"\b([A-Za-z_]\w*) % (\d+) == 0", inf.items.get("where", ("", None))[0]))
    before = {x: int(said[_text(mapper, x)]) for _, sizes in reqs for x in sizes if _text(mapper, x) in said}
    chosen: dict[sp.Symbol, int] = {}
    todo = [r for r in reqs if r[1] and not any(before.get(x, 1) % r[0] == 0 for x in r[1])]
    while todo:
        counts: dict[sp.Symbol, int] = {}
        for _, sizes in todo:
            for x in sizes:
                counts[x] = counts.get(x, 0) + 1
        best = max(sorted(counts, key=str), key=lambda x: counts[x])
        for k, sizes in todo:
            if best in sizes:
                chosen[best] = math.lcm(chosen.get(best, 1), k)
        todo = [r for r in todo if best not in r[1]]
    every = {x: math.lcm(chosen.get(x, 1), before.get(x, 1)) for x in {*chosen, *before}}
    kf.multiples = every
    kf.aligned = {i for i, ns in needs.items() if all(any(every.get(x, 1) % k == 0 for x in sizes) for k, sizes in ns)}
    kf._extents_cache.clear()
    if not chosen:
        return
    conds = [f"{_text(mapper, x)} % {k} == 0" for x, k in sorted(chosen.items(), key=lambda c: str(c[0]))]
    inf.add_where(conds, Origin(
        "kernel", kf.where, "the kernel reads or writes buffers through wider types (float4, __half2, aligned "
        "structs): the sizes in their offsets keep them aligned"))


def _always_negative(e: sp.Expr) -> bool:
    return bool(e < 0) if e.is_number else _never_negative(sp.expand(-e - 1))


def _clauses(mapper: Mapper | None, pairs: list[tuple[sp.Expr, sp.Expr]]) -> list[str]:
    """`big >= small` for each pair, as spec text; a pair the spec cannot write is left out (the gate still
    refuses a case that breaks a `distinct` buffer's room)."""
    out = []
    for big, small in pairs:
        if _never_negative(sp.expand(big - small)):  # holds for every size (`num_cols >= num_cols`)
            continue
        try:
            out.append(f"{_text(mapper, big)} >= {_text(mapper, small)}")
        except ValueError:
            continue
    return out


def _text(mapper: Mapper | None, e: sp.Expr) -> str:
    if mapper is not None:
        return mapper.text(e)
    names = {param_symbol(s.name[3:]).name: s.name[3:] for s in e.free_symbols if s.name.startswith("_P_")}
    return to_text(e, names)


def _host_divides(launch: Launch, mapper: Mapper, inf: Inference) -> None:
    """`if (C % G != 0) return false;` before the launch: the program launches only where G divides C (and
    computes `K = C / G` for the kernel on that promise). Said over the spec's names (`where: C % G == 0`); a
    remainder of values the spec does not draw (or that would need sizes of their own) says nothing."""
    conds = []
    for m in launch.divides:
        free, axes = dict(mapper.m.free), dict(mapper.m.axes)
        a, _ = mapper.rewrite(m.args[0])
        b, _ = mapper.rewrite(m.args[1])
        if set(mapper.m.free) - set(free) or set(mapper.m.axes) - set(axes):
            mapper.m.free, mapper.m.axes = free, axes
            continue
        if a is None or b is None or not (a.free_symbols | b.free_symbols) or sp.Mod(a, b) == 0:
            continue
        try:
            ta, tb = mapper.text(a), mapper.text(b)
        except ValueError:
            continue
        conds.append(f"{ta if a.is_Symbol else '(' + ta + ')'} % {tb if b.is_Symbol or b.is_Integer else '(' + tb + ')'} == 0")
    if not conds:
        return
    inf.add_where(conds, Origin(
        "host", launch.where, "the program returns before the launch unless these divide"))


def _host_multiples(mapper: Mapper, inf: Inference) -> None:
    """`upper = tiles * TILE` passed for a size, with TILE a constant the kernel also names: the program only
    launches with multiples of the kernel's own tile, and a kernel working in such tiles with no tail handling
    relies on it. Said as `where: upper % 64 == 0` (drawn as multiples directly) rather than drawing sizes the
    program never passes. Only the kernel's constants count: a literal factor (`rows * 3` passed for a guarded
    `n`) says nothing of what the kernel needs, and a block or a value drawn apart is no constant at all."""
    conds = []
    for _, ps in mapper.m.composite:
        name = mapper.m.names.get(ps.name)
        item = inf.items.get(name or "")
        if name is None or name in mapper.m.derived or item is None or not item[0].startswith(f"{name}: size("):
            continue
        i = next(j for j, q in enumerate(mapper.fn.params) if q.name == name)
        arg = mapper.launch.args[i] if i < len(mapper.launch.args) else None
        if not isinstance(arg, Num):
            continue
        raw = sp.sympify(arg.e)  # as the program spells it: `tiles * TILE`, its constants by name
        own, _ = sp.factor_terms(sp.expand(raw)).as_coeff_Mul()
        coeff, _ = sp.factor_terms(sp.expand(raw.xreplace(mapper.constants))).as_coeff_Mul()
        if not (own.is_Integer and coeff.is_Integer) or int(coeff) % int(own):
            continue
        k = int(coeff) // int(own)  # the part of the factor the kernel's constants give
        hi = re.match(rf"{re.escape(name)}: size\(\d+\.\.(\d+)\)$", item[0])
        if k > 1 and (hi is None or int(hi.group(1)) >= k):
            conds.append(f"{name} % {k} == 0")  # (a range with no multiple in it is left as it is)
    if conds:
        inf.add_where(conds, Origin("host", mapper.launch.where,
                                    "the program computes these sizes as multiples of its constants"))


def _exact_division(grid: list[sp.Expr], mapper: Mapper) -> str:
    """`grid = n / 256` (no rounding up) only covers n when 256 divides it: say so, or the cases it cannot
    cover leave outputs unwritten and prove nothing."""
    conds = []
    for g in grid:
        if isinstance(g, FloorDiv):  # the whole dimension: a rounded-down division
            a, b = g.args
            # `(n + 13) / 16` rounds up what it covers (the interior n - 2, say): no exactness to require, and
            # `(n + 13) % 16 == 0` is a filter that 15 draws in 16 fail, per size (the gate draws only `n % k`)
            if a.as_coeff_Add()[0] != 0:
                continue
            if a.free_symbols and not b.free_symbols and int(b) > 1:
                text = mapper.text(a)
                conds.append(f"{text if a.is_Symbol else '(' + text + ')'} % {int(b)} == 0")
    return " and ".join(dict.fromkeys(conds))


def _launch_from_kernel(fn: Function, kf: KernelFacts, inf: Inference, have_launch: bool) -> None:
    grid, block, origin = kf.guess_launch()
    if have_launch and "no launch site found" in origin.detail:
        origin = Origin(origin.kind, origin.where, origin.detail.replace(
            "no launch site found", "the launch site's values are not shown"))
    if "block" not in inf.items and block is not None:
        inf.items["block"] = (f"block: {block}", origin)
    if "grid" not in inf.items and grid is not None:
        inf.items["grid"] = (f"grid: {grid}", origin)
    for key in ("grid", "block"):
        if key not in inf.items:
            why = "the launch site passes values this code does not show" if have_launch else "no launch site found"
            inf.holes[key] = (f"cannot infer the {key} of '{fn.name}' ({why}); annotate it, e.g. "
                              f"'// xlate: grid: cdiv(n, 256), block: 256'")


def template_bindings(fn: Function, launch: Launch | None, resolve: Any = None) -> dict[str, str]:
    """Template arguments of the launch: explicit (`k<float, 64><<<...>>>`), else deduced from the element types
    of the pointers it passes (`T* x` given a `double*`, or an `offset_t*` with `using offset_t = int`), else the
    template's defaults. Types are read through the program's typedefs (`resolve`)."""
    if launch is None:
        return {}
    resolve = resolve or (lambda t: t)
    types = {t.name for t in fn.template_params if t.kind == "type"}
    bound = {name: (resolve(arg) if name in types and numpy_of(resolve(arg)) is not None else arg)
             for name, arg in zip([t.name for t in fn.template_params], launch.template_args)}
    for p, arg in zip(fn.params, launch.args):
        base = normalise_ctype(p.base_type)
        if p.is_pointer and base in types and base not in bound and isinstance(arg, Ptr) and arg.elem and (
                numpy_of(resolve(arg.elem)) is not None):
            bound[base] = resolve(arg.elem)
        elif not p.is_pointer and base in types and base not in bound and isinstance(arg, Obj):
            bound[base] = arg.cls  # `Pred pred` given an object of the program's class Above: Pred is Above
    for t in fn.template_params:
        if t.kind == "type" and t.name not in bound and t.default and numpy_of(resolve(t.default)) is not None:
            bound[t.name] = resolve(t.default)
        elif t.kind == "type" and t.name not in bound and numpy_of(resolve(launch.types.get(t.name, ""))) is not None:
            bound[t.name] = resolve(launch.types[t.name])
    return bound


def _template_type_generable(p: Param, fn: Function, launch: Launch | None, resolve: Any,
                             program_struct: Any = None) -> bool:
    """Whether the gate can draw values of a parameter whose type depends on the kernel's template: a template
    type parameter itself (`T*`, `T`) bound to a number type, or bound to nothing (the gate's float32 axis). A type
    built from one (`typename V::ScalarType`, `Accessor<T, 4>`, `Dims<I>`) or one bound to a struct is not, and
    calling such a spec complete only moves the failure to the fuzzer."""
    base = normalise_ctype(p.base_type).replace("*", " ").replace("&", " ").strip()
    base = normalise_ctype(base)
    if base not in {t.name for t in fn.template_params if t.kind == "type"}:
        return False
    arg = template_bindings(fn, launch, resolve).get(base)
    if arg is None or numpy_of(normalise_ctype(arg)) is not None:
        return True
    # bound to a type the code read cannot resolve (`typename V::Scalar` of a launcher, a name it never
    # binds): no better guess than the float32 axis; bound to a struct the program defines: not a number
    return program_struct is not None and not program_struct(normalise_ctype(arg))


def _bound_class(p: Param, fn: Function, launch: Launch | None, program: Program) -> str | None:
    """The program's class a by-value parameter of a template type is an object of (`Payoff payoff` launched
    with a PayoffPut), as the program spells it; None for any other parameter."""
    if p.is_pointer or not p.is_template_dependent or launch is None:
        return None
    base = normalise_ctype(p.base_type).replace("&", "").strip()
    if base not in {t.name for t in fn.template_params if t.kind == "type"}:
        return None
    arg = template_bindings(fn, launch, program.resolve_type).get(base)
    return program.class_named(arg) if arg and numpy_of(arg) is None else None


def _is_struct(program: Program) -> Any:
    """Whether a type name is a struct, class or union the program defines (through its typedefs)."""
    def check(t: str) -> bool:
        r = program.resolve_type(t)
        return r in program.structs or t in program.structs or r.split("<")[0] in program.class_tparams
    return check


def _elem_type(p: Param, fn: Function, launch: Launch | None, resolve: Any = None) -> str:
    base = normalise_ctype(p.base_type)
    if p.is_template_dependent and launch is not None:
        bound = template_bindings(fn, launch, resolve)
        if base in bound:
            return normalise_ctype(bound[base])
    return base


# -- scalars -------------------------------------------------------------------------------------------------


def _is_int_type(ctype: str) -> bool:
    n = numpy_of(ctype)
    return bool(n and n.startswith(("int", "uint")))


def _scalar_item(p: Param, fn: Function, mapper: Mapper | None, launch: Launch | None, roots: dict[sp.Symbol, Root],
                 used: set[sp.Symbol], kf: KernelFacts, unit: KernelUnit, resolve: Any = None) -> tuple[str, Origin] | None:
    ctype = normalise_ctype(p.base_type)
    if p.is_template_dependent:  # `IdxType n` launched as k<float, int>: an int, a size if it shapes anything
        ctype = normalise_ctype(template_bindings(fn, launch, resolve).get(ctype, ctype))
    np_name = numpy_of(ctype)
    if np_name is None and not p.is_template_dependent:
        return None
    lorigin = Origin("host", launch.where, launch.text) if launch is not None else Origin("kernel")
    ps = param_symbol(p.name)
    root = mapper.m.roots_used.get(p.name) if mapper is not None else None
    if mapper is not None and p.name in mapper.m.derived:
        return f"{p.name}: const({mapper.text(mapper.m.derived[p.name])})", lorigin
    placeholder = mapper is not None and mapper.m.fixed.get(p.name) == 0 and _is_int_type(ctype) and (
        ps in used or p.name in kf.guards)  # `n = 0` set later by code not followed: a size, not the constant 0
    if mapper is not None and p.name in mapper.m.fixed and not placeholder:
        v = mapper.m.fixed[p.name]
        text = str(int(v)) if v == int(v) else repr(float(v))
        if _is_int_type(ctype) or np_name == "bool":
            return f"{p.name}: const({text})", lorigin
        if p.name in kf.index_params:
            return f"{p.name}: scalar({text}..{text})", lorigin
        f = float(v)  # a float literal: fuzzed around the value the program passes
        lo, hi = sorted((f / 2, f * 2)) if f != 0 else (-1.0, 1.0)
        return f"{p.name}: scalar({_num(lo)}..{_num(hi)})", Origin("host", launch.where if launch else "",
                                                                   f"the launch passes {text}")
    if np_name == "bool":
        return f"{p.name}: scalar(0..1)", Origin("default")
    known = mapper.m.values.get(p.name) if mapper is not None else None
    choices = root.values if root is not None and root.values else None
    if _is_int_type(ctype):
        is_size = ps in used or p.name in kf.guards
        if is_size:
            if root is not None and _pinned(root, kf):
                v = int(root.value)  # type: ignore[arg-type]
                return f"{p.name}: size({v}..{v})", Origin("host", root.where, f"{root.name} = {v}, also used by name in the kernel")
            if choices:
                return f"{p.name}: size({max(1, min(choices))}..{max(choices)})", Origin(
                    "host", root.where, f"{root.name} takes {choices}")  # type: ignore[union-attr]
            if known is not None and known[0] >= 1:
                v = int(known[0])
                return f"{p.name}: size(1..{v})", Origin("host", known[1], f"{known[2]} = {v}")
            if root is not None and root.hi is not None:  # a tensor's dimension: bounded by the tensor's rank
                return f"{p.name}: size(1..{root.hi})", Origin("host", root.where, root.detail)
            detail = "a size the program reads at run time" if root is not None or known is None else ""
            return f"{p.name}: size(1..{DEFAULT_SIZE_HI})", Origin("default", "", detail)
        if choices or known is not None:
            values = choices or [int(known[0])]  # type: ignore[index]
            where = root.where if root is not None else known[1]  # type: ignore[index]
            if p.name not in kf.index_params and not kf.unknown:
                lo, hi = min(0, min(values)), max(values) * 2 if max(values) > 0 else 1
                limits = _int_limits(ctype)
                if limits is not None:  # twice the program's value may not fit the type (an unsigned digest)
                    lo, hi = max(lo, limits[0]), min(hi, limits[1])
                return f"{p.name}: scalar({lo}..{hi})", Origin("host", where, f"the program passes {values[0]}")
            return f"{p.name}: scalar({min(values)}..{max(values)})", Origin(
                "host", where, f"the program passes {values[0]}; the kernel indexes with it")
        if p.name in kf.index_params or kf.unknown:
            lo, hi = kf.int_range(p.name)
            return f"{p.name}: scalar({lo}..{hi})", Origin("kernel", "", "used in indexing: kept small and non-negative")
        return f"{p.name}: scalar(-100..100)", Origin("default")
    # floating point (or a template type)
    if known is not None:
        v = known[0]
        if p.name in kf.index_params:
            return f"{p.name}: scalar({_num(v)}..{_num(v)})", Origin("host", known[1], f"{known[2]} = {_num(v)}; the kernel indexes with it")
        lo, hi = sorted((v / 2, v * 2)) if v != 0 else (-1.0, 1.0)
        return f"{p.name}: scalar({_num(lo)}..{_num(hi)})", Origin("host", known[1], f"{known[2]} = {_num(v)}")
    if p.name in kf.index_params:
        return f"{p.name}: scalar(0..1)", Origin("kernel", "", "used in indexing: kept in [0, 1]")
    return f"{p.name}: scalar", Origin("default")


def _loop_size(p: Param, mapper: Mapper | None, used: set[sp.Symbol], kf: KernelFacts, inf: Inference
               ) -> tuple[str, Origin] | None:
    """A size the host passes from a counted loop's variable whose ends are other values of the program
    (`for (b = w - 1; b >= 1; b--) k<<<b, 16>>>(.., w, b)`): the values the loop gives it, its numeric ends as its
    range and the others as `where` clauses over the spec's items (`b <= w - 1`). Drawn past the loop's bound, a
    kernel that relies on it indexes outside its buffers; drawn as the loop's first value only, it is tested on
    one launch of many. None where the ends are not the spec's to write."""
    root = mapper.m.roots_used.get(p.name) if mapper is not None else None
    ps = param_symbol(p.name)
    if mapper is None or root is None or root.kind != "loop" or root.span is None or p.name in mapper.m.derived or (
            not _is_int_type(normalise_ctype(p.base_type))) or (ps not in used and p.name not in kf.guards):
        return None
    free, axes = dict(mapper.m.free), dict(mapper.m.axes)
    ends = [mapper.rewrite(e)[0] for e in root.span]
    lo, hi = ends
    if lo is None or hi is None or ps in lo.free_symbols | hi.free_symbols:
        mapper.m.free, mapper.m.axes = free, axes  # no sizes of its own left behind
        return None
    clo, chi = concrete(lo), concrete(hi)
    first, last = max(1, clo) if clo is not None else 1, chi if chi is not None else DEFAULT_SIZE_HI
    if last < first:
        mapper.m.free, mapper.m.axes = free, axes
        return None
    clauses = ([f"{p.name} >= {mapper.text(lo)}"] if clo is None else []) + (
        [f"{p.name} <= {mapper.text(hi)}"] if chi is None else [])
    origin = Origin("host", root.where, f"{root.name} runs from {root.span[0]} to {root.span[1]} ({root.detail})")
    if clauses:
        inf.add_where(clauses, origin)
    return f"{p.name}: size({first}..{last})", origin


def _int_limits(ctype: str) -> tuple[int, int] | None:
    import numpy as np

    n = numpy_of(ctype)
    if not n or not n.startswith(("int", "uint")):
        return None
    info = np.iinfo(np.dtype(n))
    return int(info.min), int(info.max)


def _num(v: float) -> str:
    return str(int(v)) if v == int(v) and abs(v) < 1e15 else f"{v:.6g}"


def _pinned(root: Root, kf: KernelFacts) -> bool:
    return root.kind in ("macro", "constant") and root.value is not None and root.name in kf.names_used


def _root_where(roots: dict[sp.Symbol, Root], name: str) -> str:
    for r in roots.values():
        if r.name == name or name.startswith(r.name):
            return r.where
    return ""


def _not_a_number(tname: str, fn: Function, launch: Launch | None) -> str | None:
    """What the launch passes for a by-value parameter of template type `tname` when it is no number (a pointer,
    an object, a value the code read cannot give), as words; None where every such argument is a number."""
    if launch is None:
        return None
    for i, p in enumerate(fn.params):
        if p.is_pointer or normalise_ctype(p.base_type).replace("const ", "").strip() != tname or i >= len(launch.args):
            continue
        arg = launch.args[i]
        given = launch.arg_texts[i] if i < len(launch.arg_texts) else ""
        functor = re.fullmatch(r"\s*(?:\[.*|[\w:]+\s*(?:<[^()]*>)?\s*(?:\(\s*\)|\{\s*\}))\s*", given, re.S)
        if isinstance(arg, Num) or (arg is None and not functor):
            continue  # a number, or a value the code read does not give (not said to be no number)
        what = "a pointer" if isinstance(arg, Ptr) else "an object" if isinstance(arg, Obj) else "a function object"
        return f"{what} the launch passes for '{p.name}'" + (f" ({' '.join(given.split())[:60]})" if given else "")
    return None


def _used_as_class(tname: str, fn: Function, body: str) -> bool:
    """Whether the kernel uses its template type `tname` as a class: a name inside it (`Rng::state_t`), or a
    member of a value of that type, a parameter or a local (`payoff.is_in_the_money(s)`, `rng.template next<T>()`,
    `p->x`)."""
    t = re.escape(tname)
    if re.search(rf"\b{t}\s*::\s*[A-Za-z_]", body):
        return True
    values = [p.name for p in fn.params if normalise_ctype(p.base_type).replace("const ", "").strip() == tname]
    values += re.findall(rf"\b{t}\s*[&*]?\s+([A-Za-z_]\w*)\s*[{{(=;]", body)
    return any(re.search(rf"\b{re.escape(v)}\s*(?:\.|->)\s*(?:template\s+)?[A-Za-z_]", body) for v in values)


def _open_values(fn: Function, launch: Launch | None, axes: list[tvalues.ValueAxis], mapper: Mapper | None) -> set[str]:
    """Template value parameters the spec draws as items of their own name: a program choice named like the
    parameter (`k<CDIM>` in a launcher instantiated for several CDIMs, `CDIM: choice(1|3)`) or an axis of launches
    that differ only in it (tvalues). Their values are the spec's, so the kernel may be read over them; only
    positive ones (a size, a width), as the parameters are: a flag that may be 0 stays unknown, both branches of
    `if (kFlag)` read."""
    if launch is None or mapper is None:
        return set()
    out = {ax.name for ax in axes if len(ax.when) > 1 and min(ax.when) >= 1}
    for i, t in enumerate(fn.template_params):
        e = launch.template_choices.get(i)
        if t.kind != "value" or e is None:
            continue
        r, _ = mapper.rewrite(e)
        if r is not None and mapper.text(r) == t.name and min(mapper.m.axes.get(t.name) or [0]) >= 1:
            out.add(t.name)
    return out


def _choice_template_items(fn: Function, launch: Launch | None, inf: Inference, mapper: Mapper | None) -> set[str]:
    """Template value arguments that are program choices (`k<CDIM>` inside a launcher explicitly instantiated for
    several CDIMs): the axis itself where it is named like the parameter (`CDIM: choice(1|2|3)`, one instantiation
    a value), else the parameter as an expression of the axis (`kDim: CDIM`). Returns the axes named so."""
    named: set[str] = set()
    if launch is None or mapper is None:
        return named
    for i, t in enumerate(fn.template_params):
        e = launch.template_choices.get(i)
        if t.kind != "value" or e is None:
            continue
        r, _ = mapper.rewrite(e)
        if r is None:
            continue
        text = mapper.text(r)
        if text == t.name and t.name in mapper.m.axes:
            named.add(t.name)  # the axes loop writes its choice item
        else:
            inf.items[t.name] = (f"{t.name}: {text}", Origin("host", launch.where, launch.text))
    return named


def _value_axis_items(axes: list[tvalues.ValueAxis], launch: Launch | None, inf: Inference,
                      mapper: Mapper | None) -> None:
    """Template value parameters the host picks among several values (tvalues): `NAME: choice(...)`, with the
    branch conditions of each value as `where` clauses."""
    if launch is None or mapper is None:
        return

    def rewrite(e: sp.Expr) -> str | None:
        r, _ = mapper.rewrite(e)
        return mapper.text(r) if r is not None else None

    origin = Origin("host", launch.where, f"{launch.text}: the program launches each of these instantiations")
    for ax in axes:
        values, clauses = tvalues.axis_items(ax, rewrite)
        if len(values) < 2:
            continue  # the value of the launch followed stands (_template_items)
        inf.items[ax.name] = (f"{ax.name}: choice({'|'.join(str(v) for v in values)})", origin)
        inf.holes.pop(ax.name, None)
        if clauses:
            inf.add_where(clauses, origin)


def _template_items(fn: Function, launch: Launch | None, inf: Inference, mapper: Mapper | None,
                    resolve: Any = None, body: str = "", class_named: Any = None) -> None:
    bound = template_bindings(fn, launch, resolve)
    origin = Origin("host", launch.where, launch.text) if launch is not None else Origin("default")
    for t in fn.template_params:
        arg = bound.get(t.name)
        if t.kind == "value" and (t.name in inf.items or (mapper is not None and t.name in mapper.m.axes)):
            continue  # a program choice: an axis of instantiations (_choice_template_items)
        if t.kind == "type":
            dtype = numpy_of(arg) if arg else None
            cls = class_named(arg) if arg and dtype is None and class_named is not None else None
            if dtype is not None:
                inf.items[t.name] = (f"{t.name}: {dtype}", origin)
            elif cls is not None:  # `kernel<T, rng_t>` with `using rng_t = kiss::Kiss<data_t>`: that class, as is
                inf.items[t.name] = (f"{t.name}: type({cls})", Origin(origin.kind, origin.where, (
                    f"{origin.detail}; {arg} is the program's class {cls}" if arg != cls else origin.detail)))
            elif _used_as_class(t.name, fn, body):
                # the gate would instantiate it with float32, which has no members: the source would not compile
                inf.holes[t.name] = (f"template type parameter '{t.name}' of '{fn.name}' is used as a class (members "
                                     f"of its values are read), and the launch binds it to "
                                     f"{repr(arg) if arg else 'nothing the code read resolves'}: the gate draws number "
                                     "types only; annotate the kernel by hand or test it through a wrapper")
            elif (given := _not_a_number(t.name, fn, launch)) is not None:
                # `DataT x` given `p.data_ptr<float>()` or a functor `std::plus<float>()`: C++ deduces a pointer or
                # a class, the gate's float32 would not compile (or would compute something else)
                inf.holes[t.name] = (f"template type parameter '{t.name}' of '{fn.name}' is deduced from {given}, "
                                     "not a number: the gate draws number types only; annotate the kernel by hand "
                                     "or test it through a wrapper")
        elif arg is not None and re.fullmatch(r"[A-Za-z_]\w*", arg) and arg not in ("true", "false"):
            # a name the host code gives no number for (`k<n><<<...>>>` with `n` the launcher's own template
            # parameter, unbound): `n: n` would name nothing the gate knows
            inf.holes[t.name] = (f"template value parameter '{t.name}' of '{fn.name}' is given as '{arg}', a value of "
                                 f"the program the code read does not show: annotate it, e.g. '{t.name}: 256'")
        elif arg is not None:
            inf.items[t.name] = (f"{t.name}: {arg}", origin)
        elif t.default is None:
            inf.holes[t.name] = (f"template value parameter '{t.name}' of '{fn.name}' has no default and no launch "
                                 f"gives it: annotate it, e.g. '{t.name}: 256'")
    _ = (mapper, CeilDiv)
