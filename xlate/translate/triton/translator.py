"""The CUDA -> Triton rule translator (`xlate port k.cu --to triton`).

Per kernel: the spec gives the launch configuration (grid and block as expressions of the parameters); the
kernel and its device functions become IR (xlate.cir); the lifter (lift.py) turns one block of threads into
one Triton program; the launcher reproduces the CUDA grid, or takes it as `grid=` where the kernel's parameters
cannot give it (a host value the kernel does not receive). A kernel the rules cannot lift gets a blocking
XL2xxx diagnostic at the construct and is listed in `needs_llm`; it has no code in the output.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import dataclasses
import functools
import keyword
import math
import re
from dataclasses import dataclass
from typing import Any

from xlate.cir import ctype, ir
from xlate.cir.build import BuildError, LineIndex, build_function, parse_number
from xlate.cir.hoist import hoist_loop_atomics
from xlate.cir.privatize import privatize_shared_slots
from xlate.diagnostics import make
from xlate.errors import SpecError
from xlate.model import Function, KernelUnit
from xlate.resources import templates_dir
from xlate.specs.records import is_record
from xlate.translate.base import Diagnostic, TranslateOptions, Translation
from xlate.translate.triton import carry
from xlate.translate.triton.comm import NotTokenizable
from xlate.translate.triton.context import ProgramNames
from xlate.translate.triton.emit import eliminate_dead, math_wrappers, sanitize
from xlate.translate.triton.exprs import _split_targs
from xlate.translate.triton.intrinsics import reaches_fence, reaches_volatile
from xlate.translate.triton.launch_configs import add_launch_configs
from xlate.translate.triton.lift import BLOCK_ARG, BOXED, LIFTER_NAMES, Lifter
from xlate.translate.triton.state import KernelContext, ModuleVar
from xlate.translate.triton.structs import StructLayouts, record_dtypes, record_refusal
from xlate.translate.triton.sym import NotConcrete
from xlate.translate.triton.tables import atomic_entry, intrinsic_lowering, math_entry, vector_entry
from xlate.translate.triton.unroll import rolled_lines, unroll_loops
from xlate.translate.triton.values import ConstArray, LiftError

__all__ = ["GRID_KEYWORD", "CudaToTriton"]

GRID_KEYWORD = "grid"  # the launcher's keyword for CUDA's gridDim where its parameters cannot give it

CONSTANT_DECL = re.compile(r"__constant__\s+(?:const\s+)?([A-Za-z_][\w\s]*?)\s+(\w+)\s*\[([^\]]*)\]\s*=\s*\{([^}]*)\}\s*;")
TRAIT_PRIMARY = re.compile(r"template\s*<\s*(?:typename|class)\s+(\w+)\s*>\s*struct\s+(\w+)\s*\{\s*"
                           r"(?:typedef\s+([\w\s:]+?)\s+(\w+)|using\s+(\w+)\s*=\s*([\w\s:]+?))\s*;\s*\}\s*;")
TRAIT_SPECIAL = re.compile(r"template\s*<\s*>\s*struct\s+(\w+)\s*<\s*([\w\s:]+?)\s*>\s*\{\s*"
                           r"(?:typedef\s+([\w\s:]+?)\s+(\w+)|using\s+(\w+)\s*=\s*([\w\s:]+?))\s*;\s*\}\s*;")

VOLATILE_ALIAS = re.compile(r"(?:\btypedef\b|\busing\b|#\s*define\b)[^;\n]*\bvolatile\b")


MODULE_NAMES = {"tl", "triton", "torch", "os", "math", "libdevice", "BX", "BY"}


@dataclass
class KernelPort:
    name: str
    jit_name: str
    signature: str
    body: str
    annotation: str
    params: str
    launcher: str
    notes: list[str]
    helpers: set[str]
    source_name: str = ""  # the CUDA kernel's name, where `name` had to differ from it
    variables: tuple[str, ...] = ()  # the module variables the launcher takes as keywords
    rolled: frozenset[str] = frozenset()  # loop variables of the loops its author kept rolled (unroll.py)


class CudaToTriton:
    name = "cuda->triton rules"
    source_languages = ("cuda",)
    target = "triton"

    def translate(self, unit: KernelUnit, text: str, options: TranslateOptions) -> Translation:
        if unit.text != text:
            unit.text = text
        names = list(options.kernels) or [k.name for k in unit.kernels]
        diags: list[Diagnostic] = []
        ports: list[KernelPort] = []
        needs: list[str] = []
        lines = LineIndex(text)
        for name in names:
            fn = unit.kernel(name)
            if fn is None:
                diags.append(_diag("XL2001", f"no kernel named '{name}'", unit.path, ir.Loc(1, 1), name))
                needs.append(name)
                continue
            try:
                port, notes = self._kernel(unit, fn, lines)
            except LiftError as exc:
                loc = exc.loc or ir.Loc(fn.span.line if fn.span else 1, 1)
                diags.append(_diag(exc.code, exc.what, unit.path, loc, name))
                needs.append(name)
                continue
            except BuildError as exc:
                diags.append(_diag(exc.code, exc.what, unit.path, exc.loc, name))
                needs.append(name)
                continue
            except (NotConcrete, NotTokenizable) as exc:  # an analysis that could not decide: not lifted
                loc = ir.Loc(fn.span.line if fn.span else 1, 1)
                diags.append(_diag("XL2010", f"thread-level analysis undecided ({exc})", unit.path, loc, name))
                needs.append(name)
                continue
            except RecursionError:  # values nested past Python's stack (huge unrolled expressions)
                loc = ir.Loc(fn.span.line if fn.span else 1, 1)
                diags.append(_diag("XL2001", "expressions nested too deep to lift (unrolled past the recursion limit)",
                                   unit.path, loc, name))
                needs.append(name)
                continue
            ports.append(port)
            diags.extend(notes)
        text_out = render(unit.path, ports) if ports else ""
        if any(_launcher_named_as_source(p, text_out) for p in ports):
            text_out = render(unit.path, ports)
        stats = {"kernels": {"lifted": len(ports), "not lifted": len(needs)}}
        return Translation(unit.path, unit.language, "triton", "rules", text_out, [p.name for p in ports], diags, [],
                           stats, needs, {"lifter": "simt"})

    # -- one kernel ------------------------------------------------------------------------------------------

    def _kernel(self, unit: KernelUnit, fn: Function, lines: LineIndex) -> tuple[KernelPort, list[Diagnostic]]:
        from xlate.specs import build_spec
        from xlate.specs.infer import type_resolver

        loc0 = ir.Loc(fn.span.line if fn.span else 1, fn.span.col if fn.span else 1)
        try:
            spec = build_spec(unit, fn.name)
        except SpecError as exc:
            raise LiftError("XL2011", str(exc).split("error: ", 1)[-1], loc0) from None
        why = record_refusal(spec)
        if why:  # the gate hands a record scalar over as its bytes: no argument a Triton kernel reads fields of
            raise LiftError("XL2012", why, loc0)
        try:
            records = record_dtypes(spec)  # buffers of records: bytes the kernel reads field by field
        except (ValueError, SpecError) as exc:
            raise LiftError("XL2012", str(exc).split("error: ", 1)[-1], loc0) from None
        blk = _block(spec.block, spec.value_params, loc0)
        bx, by = blk.lanes
        names = _program_names(unit)
        built = names.build_unit()  # with the program's function-like macros this file does not define
        body_fn = _specialisation(unit, fn, spec, loc0) or fn  # the body the spec's instantiation compiles to
        fir = privatize_shared_slots(build_function(built, body_fn, lines))
        devices: dict[str, ir.FunctionIR] = {}
        overloads: dict[str, list[ir.FunctionIR]] = {}
        for dfn in _reachable(unit, body_fn):
            try:
                fir_d = build_function(built, dfn, lines)
            except BuildError:
                continue  # a call of it, if the lift reaches one, is refused as an unknown function
            devices.setdefault(dfn.name, fir_d)
            overloads.setdefault(dfn.name, []).append(fir_d)
        for dfn in unit.device_functions:  # explicit specializations (`f<3>`): a call names them by its arguments
            if "<" in dfn.name and dfn.name not in devices and dfn is not fn and dfn is not body_fn:
                try:
                    devices[dfn.name] = build_function(built, dfn, lines)
                except BuildError:
                    continue
        types = {t: sanitize(t) for t in fir.template_types}
        traits, trait_defs = _traits(unit.text, fir, devices, types)
        const_arrays = _const_arrays(unit.text)
        constants = _file_constants(unit)
        module_vars = _module_vars(unit, spec, loc0)
        kc = KernelContext(bx, by, max(1, len(spec.grid)), devices, types, traits, const_arrays, constants,
                           type_resolver(unit), _template_values(body_fn, spec), _struct_layouts(unit), names.value,
                           names.device, {k: v for k, v in overloads.items() if len(v) > 1}, blk.real,
                           names.overloads, blk.z, module_vars, frozenset(p.name for p in spec.nulls),
                           file_shared=_file_shared(unit.text), shmem=_constant_shmem(spec.shmem), records=records,
                           members=_struct_members(unit))
        variables = list(dict.fromkeys(v.name for v in module_vars.values()))  # the spec's order
        kc.fenced = reaches_fence(fir, kc)
        # volatile hidden in a type alias or a macro (`typedef volatile int vint;`) the IR's types do not show
        kc.polls = kc.fenced or reaches_volatile(fir, kc) or _volatile_alias(unit.text)
        kc.rolled_lines = rolled_lines(unit.text)
        hoisted: list[tuple[str, ir.Loc]] = []
        if not kc.fenced:  # a fence orders a kernel's atomics where they are
            fir, hoisted = hoist_loop_atomics(fir, _reaches_only_its_arguments)
        lifter = Lifter(fir, kc, unit.path)
        try:
            lifter.lift()
        except LiftError as exc:  # a shared array a run-time loop writes: lifted again, carrying it (carry.py)
            if not any(reason in exc.what for reason in carry.CARRY_REASONS):
                raise
            lifter = Lifter(fir, kc, unit.path)
            lifter.carry_shared = True
            try:
                lifter.lift()
            except LiftError as again:
                if again.code == "XL2009":
                    raise again from None  # a race explains more than the pattern
                raise _carry_failed(exc, again) from None
            except (NotConcrete, NotTokenizable):
                raise exc from None
        body = "\n".join(eliminate_dead(lifter.em.lines)) or "    pass"
        diags: list[Diagnostic] = []
        for text, loc in hoisted:
            diags.append(_diag("XL2022", text, unit.path, loc, fn.name))
        for text, loc in lifter.st.notes:
            diags.append(_diag("XL2021", text, unit.path, loc or loc0, fn.name))
        for name in sorted(lifter.st.uses_const):
            diags.append(_diag("XL2020", f"__constant__ array '{name}' baked into the port with its initialiser",
                               unit.path, loc0, fn.name))
        params_py = lifter.st.params
        constexprs = ["BX: tl.constexpr"] + (["BY: tl.constexpr"] if by > 1 else [])
        constexprs += [f"{types[t]}: tl.constexpr" for t in fir.template_types]
        trait_defs = trait_defs | {name: _limit_code(t, member) for name, (t, member) in sorted(lifter.st.limits.items())}
        constexprs += [f"{name}: tl.constexpr" for name in trait_defs]
        jit_name = f"_{sanitize(fn.name)}_kernel"
        launcher, grid_note = _launcher(spec, fir, params_py, jit_name, blk, types, trait_defs, loc0, lifter.boxed,
                                        variables, lifter.lanes)
        annotation = _annotation(fn, spec, {n: py for (n, _), py in zip(fir.params, params_py) if n != py})
        notes = [d.message for d in diags if d.code == "XL2021"] + ([grid_note] if grid_note else [])
        keywords = variables + ([GRID_KEYWORD] if grid_note else [])  # keyword-only: never taken by position
        params_sig = ", ".join(params_py + (["*", *keywords] if keywords else []))
        jit_params = _lane_args(params_py, lifter.lanes) + variables + ([BLOCK_ARG] if blk.runtime is not None else [])
        port = KernelPort(sanitize(fn.name), jit_name, ", ".join(jit_params + constexprs), body, annotation,
                          params_sig, launcher, notes, set(lifter.em.helpers), fn.name, tuple(variables),
                          frozenset(lifter.st.rolled))
        return port, diags


@functools.lru_cache(maxsize=8)  # read once per file, not once per kernel of it
def _volatile_alias(text: str) -> bool:
    return VOLATILE_ALIAS.search(text) is not None


def _carry_failed(exc: LiftError, again: LiftError) -> LiftError:
    """The refusal of a shared array a run-time loop writes, with why carrying it across the loop failed too."""
    if again.what == exc.what:
        return exc  # the array cannot be carried: the refusal says why
    where = f" (line {again.loc.line})" if again.loc is not None and again.loc != exc.loc else ""
    return LiftError(exc.code, f"{exc.what}; carried across the loop instead: {again.what}{where}", exc.loc)


def _constant_shmem(text: str) -> int | None:
    """The spec's dynamic shared memory in bytes where it is a constant (carry.py sizes an extern array by it)."""
    from xlate.specs.expr import evaluate

    try:
        v = evaluate(text, {})
    except Exception:  # a size of run-time values, or no expression the spec language reads
        return None
    return int(v) if isinstance(v, int) and v > 0 else None


_LAYOUTS: dict[int, tuple[Any, StructLayouts]] = {}
_NAMES: dict[tuple[int, int], tuple[Any, KernelUnit, ProgramNames]] = {}


def _program_of(unit: KernelUnit):
    """The program the unit belongs to (the one spec inference reads: its folder, headers, includers)."""
    from xlate.specs.infer import _program

    return _program(unit, None)[0]


def _struct_layouts(unit: KernelUnit):
    """The packed structs of the unit's program."""
    program = _program_of(unit)
    hit = _LAYOUTS.get(id(program))
    if hit is None or hit[0] is not program:
        if len(_LAYOUTS) > 16:
            _LAYOUTS.clear()
        hit = _LAYOUTS[id(program)] = (program, StructLayouts(program))
    return hit[1].layout


def _struct_members(unit: KernelUnit):
    """The struct values of the unit's program (StructLayouts.members)."""
    _struct_layouts(unit)
    return _LAYOUTS[id(_program_of(unit))][1].members


def _program_names(unit: KernelUnit) -> ProgramNames:
    """Macros, constants and device functions of the unit's program that the unit does not define."""
    program = _program_of(unit)
    key = (id(program), id(unit))
    hit = _NAMES.get(key)
    if hit is None or hit[0] is not program or hit[1] is not unit:
        if len(_NAMES) > 16:
            _NAMES.clear()
        hit = _NAMES[key] = (program, unit, ProgramNames(unit, program))
    return hit[2]


def _reachable(unit: KernelUnit, kernel: Function) -> list[Function]:
    """The device functions `kernel` calls, transitively, every overload of each name (C++ picks by arguments)."""
    seen: list[Function] = []
    names = list(kernel.calls)
    done: set[str] = set()
    while names:
        name = names.pop()
        if name in done:
            continue
        done.add(name)
        for f in unit.device_functions:
            if f.name == name and f is not kernel and f.return_type:  # constructors are not inlined
                seen.append(f)
                names.extend(f.calls)
    return seen


def _launcher_named_as_source(p: KernelPort, text: str) -> bool:
    """Name the launcher as the CUDA kernel (the gate and callers look it up by that name) where sanitize() only
    avoided a Python builtin (`sum`) that nothing in the module uses. Returns whether `p` was renamed."""
    name = p.source_name
    if not name or name == p.name or not name.isidentifier() or keyword.iskeyword(name) or name in MODULE_NAMES:
        return False
    if name.startswith("_xl") or name in _free_names(text):
        return False
    p.name = name
    return True


def _free_names(text: str) -> set[str]:
    """The names a module's code reads or binds (not attributes, strings or comments)."""
    import io
    import tokenize

    out: set[str] = set()
    prev = None
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.NAME and not (prev is not None and prev.type == tokenize.OP and prev.string == "."):
                out.add(tok.string)
            if tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
                prev = tok
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return {"*"} | out  # unreadable: rename nothing
    return out


# dtypes a spec may fix a template type to that Triton (tl.NAME) and torch (torch.NAME) both spell so
FIXED_DTYPES = ("float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8")


def _specialisation(unit: KernelUnit, fn: Function, spec, loc: ir.Loc) -> Function | None:
    """The explicit specialisation (`template <> __global__ void k<float>(...)`) of the primary template `fn`
    that the instantiation the spec fixes (`T: float32`, `N: 4`) compiles to: C++ runs its body, not the
    primary's. None where no specialisation matches (or `fn` is no primary template). A spec that leaves a
    template parameter open over several values, one of which has a specialisation of its own, is refused: one
    port generic over them would run the primary's body for that one."""
    if not fn.template_params or "<" in fn.name:
        return None
    allowed = [_template_choices(t, spec) for t in fn.template_params]
    for k in unit.kernels:
        if k is fn or not k.name.startswith(fn.name + "<") or not k.name.endswith(">"):
            continue
        args = [a.strip() for a in _split_targs(k.name[len(fn.name) + 1 : -1])]
        if len(args) != len(fn.template_params):
            continue
        given = [_template_arg(t, a) for t, a in zip(fn.template_params, args)]
        if not all(g is not None and (c is None or g in c) for g, c in zip(given, allowed)):
            continue
        if all(c is not None and len(c) == 1 for c in allowed):
            return k
        raise LiftError("XL2011", f"the spec leaves {fn.name}'s template parameters open over several values, and "
                                  f"the explicit specialisation {k.name} has a body of its own (one port per "
                                  "instantiation: fix them in the spec)", loc)
    return None


def _template_choices(t, spec) -> set[str] | None:
    """The values the spec allows a template parameter (dtype names, or a value's decimal spelling); None: open."""
    from xlate.specs import expr

    if t.kind == "type":
        dts = spec.dtype_axes.get(t.name)
        return set(dts) if dts else None
    if t.name not in spec.value_params:
        return None
    try:
        return {str(expr.evaluate(spec.value_params[t.name], {}))}
    except SpecError:
        return None


def _template_arg(t, written: str) -> str | None:
    """A specialisation's template argument in _template_choices' spelling (None where it cannot be read)."""
    from xlate.specs import expr

    if t.kind == "type":
        return ctype.numpy_name(ctype.canonical(written))
    try:
        return str(expr.evaluate(written, {}))
    except SpecError:
        return None


def _template_values(fn: Function, spec) -> dict[str, tuple[str, Any]]:
    """Template value parameters fixed at the launch (`k<256><<<...>>>`): name -> (C type, value). One the
    spec leaves open is not bound: a use of it stays an unknown name, refused."""
    from xlate.specs import expr

    out: dict[str, tuple[str, Any]] = {}
    for t in fn.template_params:
        if t.kind != "value" or t.name not in spec.value_params:
            continue
        try:
            v = expr.evaluate(spec.value_params[t.name], {})
        except SpecError:
            continue
        ct = ctype.canonical(t.type or "int")
        if ctype.row(ct) is None or isinstance(v, tuple):
            continue
        out[t.name] = (ct, float(v) if ctype.is_float(ct) else int(v))
    return out


# -- launch configuration --------------------------------------------------------------------------------------


@dataclass
class Block:
    """CUDA's block and the Triton program's lanes: `real` the threads per dimension (None: a size the launcher
    computes at run time, `runtime` its expression), `lanes` the power-of-two extents of the program's aranges
    (the threads past `real` are masked off)."""

    real: tuple[int | None, int]
    lanes: tuple[int, int]
    runtime: str | None = None
    z: int = 1  # a 3-D block's z extent: its (y, z) threads are the program's y lanes, y + Y * z (real[1] = Y * Z)


def next_pow2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def _block(block: list[str], values: dict[str, str], loc: ir.Loc) -> Block:
    from xlate.specs import expr

    env: dict[str, Any] = {}
    for k, v in values.items():
        with contextlib.suppress(SpecError):
            env[k] = expr.evaluate(v, env)
    dims: list[int | None] = []
    runtime: str | None = None
    for b in block:
        try:
            v = expr.evaluate(b, env)
        except SpecError:
            if dims or len(block) != 1:  # only a 1-D block may be sized at run time
                raise LiftError("XL2006", f"block size '{b}' is not a compile-time constant (a run-time size is "
                                          "lifted for 1-D blocks only)", loc) from None
            dims.append(None)
            runtime = b
            continue
        if isinstance(v, tuple):
            dims.extend(int(x) for x in v)
        else:
            dims.append(int(v))
    while len(dims) < 3:
        dims.append(1)
    if len(dims) > 3:
        raise LiftError("XL2006", f"block of {len(dims)} dimensions", loc)
    for d in dims:
        if d is not None and d < 1:
            raise LiftError("XL2006", f"block dimension {d}", loc)
    bz = int(dims[2] or 1)
    if dims[0] is not None and dims[0] * dims[1] * bz > 1024:
        raise LiftError("XL2006", f"block of {dims[0] * dims[1] * bz} threads (CUDA allows 1024)", loc)
    # a 3-D block is lifted as 2-D: its y and z threads, y + Y * z, are the y lanes (the linear thread index,
    # x + X * (y + Y * z), is CUDA's); threadIdx.y and .z are that lane's remainder and quotient by Y
    bx, by = dims[0], int(dims[1] or 1) * bz
    return Block((bx, by), (next_pow2(bx) if bx is not None else 0, next_pow2(by)), runtime, bz)


class _GridPython(ast.NodeTransformer):
    FUNCS = {"cdiv": "triton.cdiv", "next_pow2": "triton.next_power_of_2"}

    def __init__(self, names: dict[str, str], block: tuple[int | None, int]):
        self.names = names
        self.block = block

    def _dim(self, k: int) -> ast.expr:
        v = (*self.block, 1)[k]
        return ast.Name(BLOCK_ARG, ast.Load()) if v is None else ast.Constant(v)

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id == "block":
            return self._dim(0) if self.block[1] == 1 else ast.Tuple([self._dim(0), self._dim(1)], ast.Load())
        if node.id in self.FUNCS:
            return ast.parse(self.FUNCS[node.id], mode="eval").body
        name = node.id.removeprefix("_kw_")  # the spec's spelling of a Python keyword (`is`)
        return ast.Name(self.names.get(name, name), ast.Load())

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if isinstance(node.value, ast.Name) and node.value.id == "block" and node.attr in ("x", "y", "z"):
            return self._dim("xyz".index(node.attr))
        return self.generic_visit(node)


def grid_python(exprs: list[str], names: dict[str, str], block: tuple[int | None, int]) -> list[str]:
    from xlate.specs import expr

    out = []
    for e in exprs:
        tree = _GridPython(names, block).visit(copy.deepcopy(expr.parse(e)))  # parse() is cached: copy
        out.append(ast.unparse(ast.fix_missing_locations(tree)))
    return out


def _grid_names(exprs: list[str]) -> set[str]:
    """The identifiers the spec's grid expressions read."""
    from xlate.specs import expr

    return {n.id.removeprefix("_kw_") for e in exprs for n in ast.walk(expr.parse(e)) if isinstance(n, ast.Name)}


def _unbound_grid_names(exprs: list[str], names: dict[str, str]) -> set[str]:
    """The values the grid expressions read that the launcher has no binding for (not parameters, sizes it
    derives, `block`, or functions called)."""
    from xlate.specs import expr

    called = {n.func.id for e in exprs for n in ast.walk(expr.parse(e))
              if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    return _grid_names(exprs) - set(names) - set(_GridPython.FUNCS) - called - {"block"}


def _given_grid(spec, names: dict[str, str], loc: ir.Loc) -> tuple[list[str], str]:
    """Launcher lines for a grid the caller passes (`grid=`, CUDA's gridDim): the spec's grid reads a size the
    kernel does not receive and no buffer gives (`k<<<num_segs, 256>>>(a, n)`). Returns (lines, header note)."""
    if GRID_KEYWORD in names.values():
        raise LiftError("XL2011", f"the grid is not computable from the kernel's parameters and a parameter named "
                                  f"'{GRID_KEYWORD}' takes the launcher's keyword for it", loc)
    dims = max(1, len(spec.grid))  # the program axes the lifted kernel reads (KernelContext.grid_dims)
    cuda = spec.grid[0] if len(spec.grid) == 1 else "(" + ", ".join(spec.grid) + ")"
    missing = sorted(_unbound_grid_names(spec.grid, names))
    lines = [f"    # {GRID_KEYWORD}: CUDA's gridDim, `{cuda}` in the source; an int or a tuple of up to 3 ints",
             f"    grid = tuple({GRID_KEYWORD}) if isinstance({GRID_KEYWORD}, (tuple, list)) else ({GRID_KEYWORD},)",
             f"    if len(grid) > 3 or any(g != 1 for g in grid[{dims}:]):",
             f"        raise ValueError(f\"{GRID_KEYWORD}={{grid}}: CUDA's gridDim has up to 3 dimensions and this kernel "
             f"reads {dims} (the others must be 1)\")",
             f"    grid = tuple(int(g) for g in grid[:{dims}]) + (1,) * ({dims} - len(grid))"]
    note = (f"the grid, `{cuda}` in the source, reads {', '.join(repr(m) for m in missing)}, which the kernel does not "
            f"receive: pass CUDA's gridDim as {GRID_KEYWORD}= (an int or a tuple of up to 3 ints)")
    return lines, note


def _launcher(spec, fir: ir.FunctionIR, params_py: list[str], jit_name: str, blk: Block,
              types: dict[str, str], trait_defs: dict[str, str], loc: ir.Loc, boxed: dict[str, str],
              variables: list[str], unpack: dict[str, list[str]] | None = None) -> tuple[str, str | None]:
    """The launcher's body, and a header note when the caller must pass the grid (`grid=`). `variables`: the
    module variables it takes as keywords (tensors), passed on to the kernel after its parameters. `unpack`: the
    parameters passed by value as vectors (a sequence of their lanes), unpacked into one kernel argument per lane."""
    unpack = unpack or {}
    block = blk.real
    names = {p: py for (p, _), py in zip(fir.params, params_py)} | {v: v for v in variables}
    nulls = {p.name for p in spec.nulls}  # None at every call: no dtype, no device to read off them
    tensors = [(p, ct, py) for (p, ct), py in zip(fir.params, params_py) if ct.ptr and p not in nulls]
    used = _grid_names(spec.grid)
    given = False
    for free in (p for p in spec.params if p.position < 0 and p.name in used):  # a size the kernel does not
        size = _free_size(free.name, spec, names)  # receive (spec layer): the launcher reads it off a buffer,
        given = given or size is None  # or the caller passes the grid
        if size is not None:
            names[free.name] = size
    # a name the grid reads that is neither a parameter nor a spec size (an unresolved launch variable): the
    # caller passes the grid, as the launcher cannot compute it
    given = given or bool(_unbound_grid_names(spec.grid, names))
    note = None
    pre: list[str] = []
    if blk.runtime is not None:  # blockDim.x computed at run time: the kernel takes it, and its lanes padded
        for free in sorted(_grid_names([blk.runtime]) - set(names) - set(_GridPython.FUNCS)):
            size = _free_size(free, spec, names)
            if size is None and free not in ("min", "max"):
                raise LiftError("XL2006", f"block size '{blk.runtime}' reads '{free}', which the kernel does not receive "
                                          "(its launcher cannot compute the block)", loc)
            if size is not None:
                names[free] = size
        size = grid_python([blk.runtime], names, block)[0]
        pre = [f"    {BLOCK_ARG} = int({size})  # blockDim.x, `{blk.runtime}` in the source",
               f"    if not 0 < {BLOCK_ARG} <= 1024:",
               f"        raise ValueError(f\"a block of {{{BLOCK_ARG}}} threads: CUDA launches no kernel (1..1024)\")"]
    if given:
        lines, note = _given_grid(spec, names, loc)
    else:
        grid = grid_python(spec.grid, names, block)
        if len(grid) == 1 and isinstance(ast.parse(grid[0], mode="eval").body, ast.Tuple):  # not `(n + 255) // 256`
            lines = [f"    grid = tuple({grid[0]})"]
        else:
            lines = [f"    grid = ({', '.join(grid)}{',' if len(grid) == 1 else ''})"]
    lines = pre + lines + ["    if min(grid) <= 0:", "        return  # CUDA launches no block for an empty grid"]
    for py, names_of in unpack.items():  # before the boxed lanes below: a double3's lanes are boxed one by one
        lines.append(f"    {', '.join(names_of)}, = (v.item() if hasattr(v, 'item') else v for v in {py})  # its lanes")
    lanes_x = f"triton.next_power_of_2({BLOCK_ARG})" if blk.runtime is not None else str(blk.lanes[0])
    kwargs = [f"BX={lanes_x}"] + ([f"BY={blk.lanes[1]}"] if blk.lanes[1] > 1 else [])
    fixed: dict[str, str] = {}  # template types the spec fixes to one dtype that no buffer carries: name -> dtype
    for t, name in types.items():
        src = next((py for _, ct, py in tensors if ct.base == t), None)
        one = spec.dtype_axes.get(t) or []
        if src is None and len(one) == 1 and one[0] in FIXED_DTYPES:
            fixed[name] = one[0]  # `IdxType: int32` in the spec, only scalars of that type
            lines.append(f"    {name} = tl.{one[0]}")
        elif src is None:
            raise LiftError("XL2012", f"template type {t} is not the element type of any pointer parameter", loc)
        else:
            lines.append(f"    {name} = _TL_DTYPES[{src}.dtype]")
        kwargs.append(f"{name}={name}")
    if boxed:
        ptrs = [py for _, _, py in tensors] + variables
        if not ptrs:
            raise LiftError("XL2012", f"scalar parameter '{next(iter(boxed))}' of type {next(iter(boxed.values()))} "
                                      "in a kernel with no buffer (nothing says the device)", loc)
        for py, base in boxed.items():
            if base in BOXED:
                dtype = BOXED[base]
            elif base in fixed:
                dtype = f"torch.{fixed[base]}"
            else:
                src = next(py2 for _, ct, py2 in tensors if types.get(ct.base) == base)  # the buffer of that type
                dtype = f"{src}.dtype"
            lines.append(f"    {py} = torch.full((1,), {py}, dtype={dtype}, device={ptrs[0]}.device)")
    for name, code in trait_defs.items():
        lines.append(f"    {name} = {code}")
        kwargs.append(f"{name}={name}")
    # one Triton thread per CUDA thread (num_warps = the block's warps): packing two or more lanes into a thread
    # gives the block's 1-D tensors another layout than the [BX, k] tensors of its vector types and reductions,
    # and every conversion between them goes through shared memory behind a barrier (sm_90 code: 80 barriers in
    # fma's row kernel at 4 warps for 256 lanes, 2 at 8; bitonic 3 -> 0)
    if blk.runtime is not None:  # cuda_warps, computed by the launcher
        kwargs.append(f"num_warps=max(1, min({MAX_WARPS}, {lanes_x} // 32))")
    else:
        kwargs.append(f"num_warps={cuda_warps(blk.lanes[0] * blk.lanes[1])}")
    kwargs.append("**_xl_nvcc_options()")  # nvcc's floating point (templates/triton/module.py.j2)
    args = _lane_args(params_py, unpack) + variables + ([BLOCK_ARG] if blk.runtime is not None else [])
    lines.append(f"    {jit_name}[grid]({', '.join(args + kwargs)})")
    return "\n".join(lines), note


MAX_WARPS = 32  # CUDA's 1024 threads a block


def cuda_warps(lanes: int) -> int:
    """The warps of a CUDA block of `lanes` threads (padded to a power of two, at most 1024)."""
    return max(1, min(MAX_WARPS, lanes // 32))


def _lane_args(params_py: list[str], lanes: dict[str, list[str]]) -> list[str]:
    """The kernel's arguments for the launcher's parameters: a vector passed by value as its lanes."""
    return [a for py in params_py for a in lanes.get(py, [py])]


def _module_vars(unit: KernelUnit, spec, loc: ir.Loc) -> dict[str, ModuleVar]:
    """The module variables the spec lists (`d_cost: global inout[N * N]`), by each name the code may spell them
    with: each becomes a pointer parameter of the kernel and a keyword of the launcher, of the variable's name
    (the gate passes it by that name). Its element type and shape come from the program's declaration."""
    if not spec.module_globals:
        return {}
    from xlate.specs import normalise_ctype
    from xlate.specs.infer.globals import declarations

    decls = declarations(_program_of(unit))
    out: dict[str, ModuleVar] = {}
    for p in spec.module_globals:
        d = decls.get(p.name)
        if d is None:
            raise LiftError("XL2011", f"module variable '{p.name}' of the spec is not declared in the program", loc)
        if sanitize(p.name) != p.name or p.name in MODULE_NAMES | LIFTER_NAMES or p.name == GRID_KEYWORD:
            raise LiftError("XL2011", f"module variable '{p.name}' cannot be a keyword of the port's launcher (a name "
                                      "Python, the launcher or the kernel's body uses)", loc)
        if d.pointer or len(d.sizes) > 1:
            what = "a pointer" if d.pointer else f"an array of {len(d.sizes)} dimensions"
            raise LiftError("XL2013", f"module variable '{p.name}' is {what}", loc)
        ct = ctype.canonical(d.ctype)
        if ctype.row(ct) is None:
            raise LiftError("XL2012", f"module variable '{p.name}' of type {d.ctype}", loc)
        if ctype.numpy_name(normalise_ctype(p.ctype)) not in (None, ctype.numpy_name(ct)):
            raise LiftError("XL2011", f"module variable '{p.name}' is declared {d.ctype}, the spec says "
                                      f"{p.ctype}", loc)
        v = ModuleVar(p.name, ct, bool(d.sizes), p.role == "in" or d.space == "constant")
        for alias in (p.name, "::".join([*d.namespace, p.name])):
            out[alias] = v
    return out


def _free_size(name: str, spec, names: dict[str, str]) -> str | None:
    """Python for a size the kernel does not receive: the length of a buffer whose only dimension is it, or that
    length divided by the parameters it is multiplied with (`x: in[b * n]` with `b` a parameter)."""
    for b in spec.buffers:
        if len(b.dims) != 1 or b.lanes != 1 or b.name not in names or is_record(b.ctype):  # records: a byte tensor
            continue
        factors = [f.strip() for f in b.dims[0].split("*")]
        if name in factors and all(f.isidentifier() and (f == name or f in names) for f in factors):
            others = [names[f] for f in factors if f != name]
            return f"{names[b.name]}.numel()" + (f" // ({' * '.join(others)})" if others else "")
    return None


def _param_item(p) -> str:
    """The spec language's item (language.param_item: value orders, distinct values and permutations kept; a
    record element type, a module global), with the lanes a launcher takes for a vector element or value."""
    from xlate.specs import normalise_ctype
    from xlate.specs.language import param_item

    if p.is_buffer and p.lanes > 1:  # float2 elements: the launcher's tensor holds components
        p = dataclasses.replace(p, dims=[*p.dims, str(p.lanes)])
    if p.role == "scalar" and p.lanes > 1:  # a by-value vector: the launcher takes its lanes, and its spec says so
        return param_item(p, f"{ctype.numpy_name(normalise_ctype(p.ctype)) or 'float32'}[{p.lanes}]")
    return param_item(p)


def _numpy_name(p, template_types: set[str]) -> str | None:
    """The element (or value) dtype the port's spec must name: a Triton launcher has no C types to infer it
    from, and the spec's defaults are float32 buffers and scalars and int32 sizes."""
    from xlate.specs import normalise_ctype

    if not normalise_ctype(p.ctype) or normalise_ctype(p.ctype) in template_types or p.is_null:
        return None  # template element types: the dtype axis binds them; a null pointer has no elements
    name = ctype.numpy_name(normalise_ctype(p.ctype))
    if name is None:
        return None  # vector types (float4): fuzzed as lanes of their float32 scalar, the default
    default = "int32" if p.role in ("size", "const") else "float32"
    return name if name != default else None


def _renamed_items(items: list[str], renames: dict[str, str]) -> list[str]:
    """The spec items with each parameter under the launcher's name (`in` -> `in_`): the port's header is
    read against the launcher's signature. Role words (`in[`) and calls (`max(`) keep their spelling."""
    if not renames:
        return items
    from xlate.specs.language import SPEC_KEYS

    word = re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, renames)) + r")(?![\w(])(?!\s+\()")
    out = []
    for item in items:
        if ":" not in item:
            out.append(item)
            continue
        key, value = (x.strip() for x in item.split(":", 1))
        head = 0
        if key not in SPEC_KEYS:  # skip the role word (in, size, const, ...): only its bracketed part names values
            m = re.match(r"\s*\w+\s*", value)
            head = m.end() if m else 0
        value = value[:head] + word.sub(lambda m: renames[m.group(1)], value[head:])
        out.append(f"{renames.get(key, key)}: {value}")
    return out


def _annotation(fn: Function, spec, renames: dict[str, str] | None = None) -> str:
    """The port's `# xlate:` spec: the source's items, every parameter present, element dtypes made explicit,
    so the port can be fuzzed on its own (`xlate fuzz port.py --reference ...`)."""
    from xlate.specs import split_top

    renames = renames or {}

    def renamed(item: str) -> str:
        return _renamed_items([item], renames)[0]

    items = _renamed_items(split_top(fn.annotation) if fn.annotation else [], renames)
    named = {i.split(":", 1)[0].strip(): n for n, i in enumerate(items) if ":" in i}
    template_types = {t.name for t in fn.template_params if t.kind == "type"}
    for p in spec.params:
        name = renames.get(p.name, p.name)
        if name not in named:
            named[name] = len(items)
            items.append(renamed(_param_item(p)))
        elif p.lanes > 1 and (p.is_buffer or p.role == "scalar"):
            items[named[name]] = renamed(_param_item(p))
        dtype = _numpy_name(p, template_types)
        if p.module_global:  # a Triton module declares no variable to read the element type from
            from xlate.specs import normalise_ctype

            dtype = ctype.numpy_name(normalise_ctype(p.ctype))
        k = named[name]
        if dtype and not re.search(r"\bas\s+\w+(\[\d+\])?$", items[k]):
            items[k] += f" as {dtype}"
    for name, values in spec.axes.items():  # a launch variable the grid reads (`grid: g`, g one of the host's)
        if name not in named:
            named[name] = len(items)
            items.append(f"{name}: choice({'|'.join(str(v) for v in values)})")
    if "grid" not in named:
        items.append(renamed("grid: " + (spec.grid[0] if len(spec.grid) == 1 else "(" + ", ".join(spec.grid) + ")")))
    if "block" not in named:
        items.append(renamed("block: " + (spec.block[0] if len(spec.block) == 1 else "(" + ", ".join(spec.block) + ")")))
    if "where" not in named:  # the cases the source is defined on: without them the port's own fuzzing draws others
        items.extend(renamed(f"where: {w}") for w in spec.where)
    out, cur = [], ""
    for item in items:
        piece = item if not cur else cur + ", " + item
        if len(piece) > 100 and cur:
            out.append(cur + ",")
            cur = item
        else:
            cur = piece
    if cur:
        out.append(cur)
    return "\n".join(f"# xlate: {line}" for line in out)


# -- types and constants of the file -----------------------------------------------------------------------------


def _traits(text: str, fir: ir.FunctionIR, devices: dict[str, ir.FunctionIR], types: dict[str, str]
            ) -> tuple[dict[tuple[str, str, str], str], dict[str, str]]:
    """Trait typedefs (`typedef typename Acc<T>::type A;`) -> constexpr names, and the launcher code for each."""
    primary: dict[tuple[str, str], tuple[str, str]] = {}  # (struct, member) -> (param, type)
    special: dict[tuple[str, str], dict[str, str]] = {}
    for m in TRAIT_PRIMARY.finditer(text):
        param, struct = m.group(1), m.group(2)
        member, target = (m.group(4), m.group(3)) if m.group(4) else (m.group(5), m.group(6))
        primary[(struct, member)] = (param, " ".join(target.split()))
    for m in TRAIT_SPECIAL.finditer(text):
        struct, arg = m.group(1), ctype.canonical(" ".join(m.group(2).split()))
        member, target = (m.group(4), m.group(3)) if m.group(4) else (m.group(5), m.group(6))
        special.setdefault((struct, member), {})[arg] = ctype.canonical(" ".join(target.split()))
    traits: dict[tuple[str, str, str], str] = {}
    defs: dict[str, str] = {}
    for f in [fir, *devices.values()]:
        for s in _walk(f.body):
            if isinstance(s, ir.Typedef) and s.trait is not None:
                struct, arg, member = s.trait
                if (struct, member) not in primary or arg not in types:
                    continue
                param, default = primary[(struct, member)]
                default = types[arg] if default == param else ctype.tl(ctype.canonical(default))
                if default is None:
                    continue
                cases = {ctype.tl(k): ctype.tl(v) for k, v in special.get((struct, member), {}).items()
                         if ctype.tl(k) and ctype.tl(v)}
                name = sanitize(s.name)
                table = "{" + ", ".join(f"{k}: {v}" for k, v in cases.items()) + "}"
                defs[name] = f"{table}.get({types[arg]}, {default})"
                traits[(struct, arg, member)] = name
    return traits, defs


def _limits() -> dict[str, dict[str, float | int]]:
    """numeric_limits<T> per Triton dtype name the launchers know (_TL_DTYPES), with C++'s values."""
    import numpy as np

    out: dict[str, dict[str, float | int]] = {}
    for name in ("float16", "float32", "float64"):
        fi = np.finfo(name)
        out[name] = {"max": float(fi.max), "min": float(fi.tiny), "lowest": float(fi.min), "epsilon": float(fi.eps),
                     "infinity": math.inf, "quiet_NaN": math.nan}
    bf_max = (2 - 2**-7) * 2.0**127  # NumPy has no bfloat16: 8 exponent bits, 7 fraction bits
    out["bfloat16"] = {"max": bf_max, "min": 2.0**-126, "lowest": -bf_max, "epsilon": 2.0**-7, "infinity": math.inf,
                       "quiet_NaN": math.nan}
    for name in ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"):
        ii = np.iinfo(name)
        out[name] = {"max": int(ii.max), "min": int(ii.min), "lowest": int(ii.min), "epsilon": 0, "infinity": 0,
                     "quiet_NaN": 0}
    return out


def _limit_code(tname: str, member: str) -> str:
    """Launcher code for numeric_limits<T>::member() of the dtype held by constexpr `tname` (and for
    `is_same:tl.X`, std::is_same<T, X>::value)."""
    if member.startswith("is_same:"):
        return f"{tname} == {member.removeprefix('is_same:')}"
    def lit(v: float | int) -> str:
        return repr(v) if isinstance(v, int) or math.isfinite(v) else f'float("{v}")'

    table = ", ".join(f"tl.{dt}: {lit(vals[member])}" for dt, vals in _limits().items())
    return f"{{{table}}}[{tname}]"


def _walk(stmts):
    for s in stmts:
        yield s
        for attr in ("then", "other", "body", "init"):
            inner = getattr(s, attr, None)
            if isinstance(inner, tuple):
                yield from _walk(inner)


def _const_arrays(text: str) -> dict[str, ConstArray]:
    out: dict[str, ConstArray] = {}
    for m in CONSTANT_DECL.finditer(text):
        ct = ctype.canonical(" ".join(m.group(1).split()))
        if ctype.tl(ct) is None:
            continue
        try:
            values = [parse_number(v.strip())[0] for v in m.group(4).split(",") if v.strip()]
        except ValueError:
            continue
        out[m.group(2)] = ConstArray(m.group(2), ct, values)
    return out


# `extern __shared__ float s[];` (either order of the two words), at the start of a line
FILE_SHARED = re.compile(r"^[ \t]*(?:extern\s+__shared__|__shared__\s+extern)\s+(?:__align__\s*\(\s*\d+\s*\)\s+)?"
                         r"((?:unsigned\s+|signed\s+)?[A-Za-z_][\w:]*)\s+(?:__align__\s*\(\s*\d+\s*\)\s+)?"
                         r"([A-Za-z_]\w*)\s*\[\s*\]\s*;", re.M)


def _file_shared(text: str) -> dict[str, str]:
    """Dynamic shared arrays of the file by name -> element type, where every declaration of the name agrees (a
    kernel that uses one without declaring it uses the file-scope one). Declarations inside functions count too:
    a name a kernel declares itself is bound before this table is asked."""
    seen: dict[str, set[str]] = {}
    for m in FILE_SHARED.finditer(text):
        seen.setdefault(m.group(2), set()).add(" ".join(m.group(1).split()))
    return {name: types.pop() for name, types in seen.items() if len(types) == 1}


def _file_constants(unit: KernelUnit) -> dict[str, tuple[str, Any]]:
    out: dict[str, tuple[str, Any]] = {}
    for name, value in unit.constants.items():
        try:
            v, ct = parse_number(str(value).strip())
        except ValueError:
            continue
        out[name] = (ct, v)
    return out


# -- output ------------------------------------------------------------------------------------------------------


def render(source: str, ports: list[KernelPort]) -> str:
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(templates_dir() / "triton")),
                             keep_trailing_newline=True, trim_blocks=False, autoescape=False)
    helpers_used: set[str] = set()
    for p in ports:
        helpers_used |= p.helpers
    helper_src, wrappers = math_wrappers(helpers_used)
    notes = [f"{p.name}: {n}" for p in ports for n in p.notes]
    need_torch = any("_TL_DTYPES" in p.launcher or "torch." in p.launcher for p in ports)
    text = env.get_template("module.py.j2").render(
        source=source.rsplit("/", 1)[-1], kernels=ports, helpers=[h.rstrip() for h in helper_src],
        wrappers=wrappers, notes=notes, need_torch=need_torch, variables=any(p.variables for p in ports))
    # the default launch and batched ones, then nvcc's unrolling of loads in run-time loops
    rolled = {(p.jit_name, v) for p in ports for v in p.rolled}
    return unroll_loops(add_launch_configs(re.sub(r"\n{4,}", "\n\n\n", text), rolled), rolled)


def _diag(code: str, what: str, path: str, loc: ir.Loc, kernel: str | None) -> Diagnostic:
    return make(code, path, loc.line, loc.col, kernel=kernel, rule=f"triton:{code}", what=what)


def _reaches_only_its_arguments(fn: str) -> bool:
    """A call that reaches no memory but through its arguments: the math library, intrinsics, vector
    constructors, atomics (hoist_loop_atomics: not a device function, which could reach any buffer)."""
    return (math_entry(fn) is not None or vector_entry(fn) is not None or atomic_entry(fn) is not None
            or fn.startswith("atomic") or intrinsic_lowering(fn) in ("barrier", "none", "shuffle"))
