"""Launch configurations of a Triton port, as data in the module.

For each launcher whose kernel can run several CUDA blocks per program (batching.py), the module gets the
batched kernel (`<kernel>_blocks`), a launcher that launches whichever configuration it is given, and an entry
in the module's table `_XL_CONFIGS` (launcher -> list of configurations). The first configuration is the
default and launches exactly what the launcher launched before: the same kernel on the CUDA grid with the same
arguments and num_warps (one Triton thread per CUDA thread). The others come from
xlate/data/triton/launch_configs.yaml -- the same launch with the block's lanes packed into fewer warps, where it
has more; with the loops unroll.py unrolls software-pipelined, where it has any (the kernel gets the constexpr
parameter unroll.STAGES, None by default); then the batched ones -- and for a row kernel (rows.py) also from
xlate/data/triton/row_configs.yaml.
A kernel that cannot be batched still gets the table for its packed configuration. The runtime that picks one
(templates/triton/launch_runtime.py) is appended once.

Nothing here decides what a port keeps: xlate.port verifies every configuration through the gate and writes
the table restricted to those verified (xlate/verify/configs.py).
"""

from __future__ import annotations

import ast
import copy
import json
from collections.abc import Collection

from xlate.resources import templates_dir
from xlate.translate.triton.batchast import is_jit, strip_skip_guards
from xlate.translate.triton.batching import GRID_X, ROWS, batch_kernel, rules
from xlate.translate.triton.rows import free_lanes, row_configurations
from xlate.translate.triton.unroll import STAGES, jit_functions, marked_loops

TABLE = "_XL_CONFIGS"
DOC_NOTE = ("\nLaunch configurations: `_XL_CONFIGS` at the end lists each launcher's; the first is CUDA's launch, the\n"
            "others pack its lanes into fewer warps, pipeline its loops or run several CUDA blocks per program, and on\n"
            "a GPU the launcher times them at first use.")
RUN, CONFIG = "_xl_run", "_xl_c"  # the launcher's local launch function and its argument (never a parameter name)


def _launch_statement(fn: ast.FunctionDef, kernels: dict[str, ast.FunctionDef]) -> ast.Expr | None:
    """The launcher's one `kernel[grid](...)` statement (at its top level), if it has exactly one launch."""
    launches = [n for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript)
                and isinstance(n.func.value, ast.Name) and n.func.value.id in kernels]
    stmts = [s for s in fn.body if isinstance(s, ast.Expr) and any(s.value is c for c in launches)]
    if len(launches) != 1 or len(stmts) != 1 or not isinstance(launches[0].func.slice, ast.Name):  # type: ignore[attr-defined]
        return None
    return stmts[0]


def configurations(bx: int, num_warps: int, pipelined: bool = False) -> list[dict[str, int]]:
    """The default (one CUDA block per program, the lifter's num_warps), its lanes packed into fewer warps where
    it has more than the rules' `packed_warps`, the default with its unrolled loops software-pipelined where it
    has any (`pipelined`), then the batched ones for blocks of `bx` threads."""
    return [*_one_block(num_warps, pipelined), *_batched(bx)]


def _one_block(num_warps: int, pipelined: bool = False) -> list[dict[str, int]]:
    """The configurations of one CUDA block per program: the default, the packed one and, for a kernel with
    loops unroll.py marks (`pipelined`), the default with those loops pipelined (launch_configs.yaml)."""
    packed = int(rules().get("packed_warps", 0))
    out = [{"blocks": 1, "num_warps": num_warps}]
    if 0 < packed < num_warps:
        out.append({"blocks": 1, "num_warps": packed})
    if pipelined:
        out += [{"blocks": 1, "num_warps": num_warps, "stages": int(s)} for s in rules().get("pipelined_stages", [])]
    return out


def _batched(bx: int) -> list[dict[str, int]]:
    """The batched configurations for blocks of `bx` threads (several CUDA blocks per program)."""
    out: list[dict[str, int]] = []
    for c in rules()["batched"]:
        r = int(c["elements"]) // bx
        cfg = {"blocks": r, "num_warps": int(c["num_warps"])}
        if r >= 2 and r * bx == int(c["elements"]) and cfg not in out:
            out.append(cfg)
    return out


def _dispatch(stmt: ast.Expr, batched: str | None, launcher: ast.FunctionDef, name: str,
              lanes: bool = False, pipelined: bool = False) -> list[str]:
    """Lines replacing the launch statement: a local function launching one configuration, and the runtime call.
    With `lanes`, a configuration may also set the lanes per row (BX of the batched kernel, rows.py). Without a
    `batched` kernel every configuration is one CUDA block per program (only num_warps differs). With
    `pipelined` the one-block launch passes the configuration's `stages` (None where it has none) to the kernel's
    unroll.STAGES parameter."""
    call = stmt.value
    assert isinstance(call, ast.Call) and isinstance(call.func, ast.Subscript) and isinstance(call.func.slice, ast.Name)
    grid = call.func.slice.id
    pick = ast.parse(f'{CONFIG}["num_warps"]', mode="eval").body
    default = copy.deepcopy(call)
    default.keywords = [k for k in default.keywords if k.arg != "num_warps"] + [ast.keyword("num_warps", pick)]
    if pipelined:
        default.keywords.insert(-1, ast.keyword(STAGES, ast.parse(f'{CONFIG}.get("stages")', mode="eval").body))
    params = [a.arg for a in launcher.args.args + launcher.args.kwonlyargs if a.arg != "grid"]
    pad = " " * stmt.col_offset
    launch = f"{pad}_xl_launch({name!r}, {RUN}, {grid}, ({', '.join(params)}{',' if len(params) == 1 else ''}))"
    if batched is None:
        return ["", f"{pad}def {RUN}({CONFIG}):", f"{pad}    {ast.unparse(default)}", launch]
    blocks = copy.deepcopy(default)
    blocks.func = ast.parse(f'{batched}[(triton.cdiv({grid}[0], {CONFIG}["blocks"]),) + tuple({grid}[1:])]',
                            mode="eval").body
    blocks.args = [*blocks.args, ast.parse(f"{grid}[0]", mode="eval").body]
    blocks.keywords = [k for k in blocks.keywords if k.arg not in ("num_warps", STAGES)] + [
        ast.keyword(ROWS, ast.parse(f'{CONFIG}["blocks"]', mode="eval").body), ast.keyword("num_warps", pick)]
    if lanes:
        blocks.keywords = [ast.keyword("BX", ast.parse(f'{CONFIG}.get("lanes", {ast.unparse(k.value)})', mode="eval").body)
                           if k.arg == "BX" else k for k in blocks.keywords]
    # the tensors a timing restores are among the launcher's parameters: keyword-only module variables too (not
    # the launch's `grid`, translator.GRID_KEYWORD: no tensor)
    return ["", f"{pad}def {RUN}({CONFIG}):",
            f'{pad}    if {CONFIG}["blocks"] == 1' + (f' and "lanes" not in {CONFIG}:' if lanes else ":"),
            f"{pad}        {ast.unparse(default)}",
            f"{pad}    else:  # {CONFIG}['blocks'] consecutive CUDA blocks per program"
            + (f", {CONFIG}['lanes'] lanes per row if given" if lanes else ""),
            f"{pad}        {ast.unparse(blocks)}",
            launch]


def _with_stages_parameter(line: str, kernel: ast.FunctionDef) -> str:
    """The kernel's `def` line with unroll.STAGES appended to its parameters (a constexpr, None by default)."""
    last = kernel.args.args[-1]
    raw = line.encode()  # ast's column offsets count UTF-8 bytes
    cut = last.end_col_offset or 0
    return (raw[:cut] + f", {STAGES}: tl.constexpr = None".encode() + raw[cut:]).decode()


def add_launch_configs(text: str, keep_rolled: Collection[tuple[str, str]] = ()) -> str:
    """`text` (a module the lifter wrote) with launch configurations for every launcher whose kernel can be
    batched, packed into fewer warps or have its loops pipelined (launch_configs.yaml); unchanged when none can.
    `keep_rolled`: the loops unroll.py leaves rolled (they are not pipelined either)."""
    tree, jit = jit_functions(text)
    kernels = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef) and is_jit(n)}
    launchers = [n for n in tree.body if isinstance(n, ast.FunctionDef) and not n.decorator_list]
    lines = text.splitlines()
    table: dict[str, list[dict[str, int]]] = {}
    edits: list[tuple[int, int, list[str]]] = []  # (first line, last line, replacement), 1-based
    added: list[str] = []
    staged: set[str] = set()  # kernels given the STAGES parameter
    for fn in launchers:
        stmt = _launch_statement(fn, kernels)
        if stmt is None:
            continue
        call = stmt.value
        assert isinstance(call, ast.Call) and isinstance(call.func, ast.Subscript)
        kw = {k.arg: k.value for k in call.keywords}
        bx, warps = kw.get("BX"), kw.get("num_warps", ast.Constant(4))
        if not (isinstance(bx, ast.Constant) and isinstance(bx.value, int) and isinstance(warps, ast.Constant)):
            continue
        launched = kernels[call.func.value.id]  # type: ignore[attr-defined]
        pipelined = bool(rules().get("pipelined_stages")) and bool(marked_loops(launched, jit, keep_rolled)) \
            and launched.args.args[-1].lineno == launched.lineno  # the lifter writes a kernel's def on one line
        configs = configurations(bx.value, int(warps.value), pipelined)
        # a batched program runs its loops masked where no block needs them (the skip tests dropped, exact)
        kernel = strip_skip_guards(launched)
        name = f"{kernel.name}_blocks"
        if name in kernels:
            continue
        free, _why = free_lanes(kernel, bx.value)  # a row kernel: its lanes per row may vary too
        if free is not None:
            configs += row_configurations(bx.value)
        several_blocks = any(c["blocks"] > 1 or "lanes" in c for c in configs)
        source = batch_kernel(free or kernel, name)[0] if several_blocks else None
        if source is None:  # not batchable: the one-block configurations alone, if there are several
            configs = _one_block(int(warps.value), pipelined)
            if len(configs) < 2:
                continue
            edits.append((stmt.lineno, stmt.end_lineno or stmt.lineno,
                          _dispatch(stmt, None, fn, fn.name, pipelined=pipelined)))
        else:
            added.append(source)
            edits.append((stmt.lineno, stmt.end_lineno or stmt.lineno,
                          _dispatch(stmt, name, fn, fn.name, free is not None, pipelined)))
        if pipelined and launched.name not in staged:
            staged.add(launched.name)
            edits.append((launched.lineno, launched.lineno,
                          [_with_stages_parameter(lines[launched.lineno - 1], launched)]))
        table[fn.name] = configs
    if not table:
        return text
    for first, last, new in sorted(edits, reverse=True):
        lines[first - 1 : last] = new
    doc = tree.body[0] if tree.body and isinstance(tree.body[0], ast.Expr) else None
    if doc is not None and isinstance(doc.value, ast.Constant) and lines[(doc.end_lineno or 1) - 1].strip() == '"""':
        lines.insert((doc.end_lineno or 1) - 1, DOC_NOTE)  # the docstring is above every edit: its lines hold
    runtime = (templates_dir() / "triton" / "launch_runtime.py").read_text()
    out = "\n".join(lines).rstrip("\n") + "\n"
    out += "".join(f"\n\n{src}\n" for src in added)
    return out + "\n\n" + runtime.rstrip("\n") + "\n\n" + render_table(table)


def render_table(table: dict[str, list[dict[str, int]]]) -> str:
    """The `_XL_CONFIGS` assignment: one line per launcher, each configuration a JSON object (a Python literal)."""
    rows = "".join(f"    {json.dumps(k)}: [{', '.join(json.dumps(c) for c in v)}],\n" for k, v in table.items())
    return f"{TABLE} = {{\n{rows}}}\n"


__all__ = ["GRID_X", "ROWS", "TABLE", "add_launch_configs", "configurations", "render_table"]
