"""Unrolling hints for the loops of a Triton port, where nvcc would unroll the CUDA loop (issue #16).

A `for it in range(a, b, c)` of a port whose trip count is known only at run time and whose body only loads and
computes (no store, atomic, barrier or cross-lane operation; xlate/data/triton/unroll.yaml) becomes
`for it in tl.range(a, b, c, loop_unroll_factor=F)`. Why: in sm_90 machine code nvcc keeps 16 of aop's strided
loads in flight in `sum += sums[item]`, Triton's LLVM 4 (16 with the hint). Timed on an H100 against the same
ports rolled (stop 38): accuracy `kernel2` 1.16x -> 1.00x CUDA, aop's one-block sum 2.00x -> 1.91x, layernorm
`kernel1` 1.09x -> 1.13x (worse: its loads stay 8 a block either way), others within 4 %. Unrolling changes no
result: Triton's unroller keeps the iterations in order and
runs the remainder, so the same port runs on the interpreter and on every backend.

A kernel launch_configs.py gives the `_xl_stages` parameter (its pipelined configuration) has those loops also
`num_stages=_xl_stages`: None at the default launch (the same code as without it), 3 in the pipelined one, where
Triton issues the next iterations' loads ahead through shared memory (aop's one-block sum 1.914x -> 1.141x CUDA on
an H100, stop 40; 4 stages 2.519x, so the launcher's timing chooses).

Applied to the module text after the launch configurations are added (batching.py and rows.py read the
lifter's `range` loops), to every jit function of the module, batched kernels included. A loop its author kept
rolled (`#pragma unroll 1`, `#pragma nounroll` before it) stays rolled, as nvcc keeps it: the lifter names those
loops' variables (`rolled_lines` gives it the lines).
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Collection
from typing import Any

from xlate.resources import data
from xlate.translate.triton.batchast import is_jit, tl_call

NESTED = (ast.For, ast.While, ast.If, ast.With, ast.Return, ast.Break, ast.Continue, ast.Try)
# a pragma that keeps the next loop rolled: `#pragma unroll 1`, `#pragma unroll (1)`, `#pragma nounroll`
# the constexpr parameter of a kernel whose marked loops a launch configuration may software-pipeline (None: not)
STAGES = "_xl_stages"
KEEP_ROLLED = re.compile(r"^\s*#\s*pragma\s+(?:unroll\s*\(?\s*1\s*\)?|nounroll)\s*(?://.*)?$")


@functools.cache
def rules() -> dict[str, Any]:
    return data("triton/unroll.yaml")


@functools.lru_cache(maxsize=8)  # read once per file, not once per kernel of it
def rolled_lines(source: str) -> frozenset[int]:
    """The lines (1-based) of `source` whose statement follows a pragma that keeps a loop rolled, blank lines and
    comment lines between."""
    out = set()
    pending = False
    for n, line in enumerate(source.splitlines(), 1):
        text = line.strip()
        if KEEP_ROLLED.match(line):
            pending = True
        elif pending and text and not text.startswith("//"):
            out.add(n)
            pending = False
    return frozenset(out)


def _jit_functions(tree: ast.Module) -> dict[str, list[ast.FunctionDef]]:
    """The module's jit functions by name, with those defined in a top-level `if` (a math wrapper defined one
    way for the interpreter and another for the GPU): every definition of the name."""
    out: dict[str, list[ast.FunctionDef]] = {}
    stmts = list(tree.body)
    while stmts:
        s = stmts.pop(0)
        if isinstance(s, ast.If):
            stmts[:0] = [*s.body, *s.orelse]
        elif isinstance(s, ast.FunctionDef) and is_jit(s):
            out.setdefault(s.name, []).append(s)
    return out


def _constexprs(fn: ast.FunctionDef) -> set[str]:
    return {a.arg for a in fn.args.args if a.annotation is not None and "constexpr" in ast.unparse(a.annotation)}


def _thread_private(nodes: list[ast.stmt], jit: dict[str, list[ast.FunctionDef]], seen: frozenset[str]) -> bool:
    """Whether these statements only compute on each thread's own values: no tl operation of unroll.yaml's
    `keeps_rolled`, no volatile load, and calls of nothing but tl and the module's jit functions that are
    themselves thread-private (a helper may branch and return: it is inlined)."""
    denied = set(rules()["keeps_rolled"])
    for node in (n for stmt in nodes for n in ast.walk(stmt)):
        if not isinstance(node, ast.Call):
            continue
        op = tl_call(node)
        if op is not None:
            if op in denied or (op == "load" and any(k.arg == "volatile" and not (
                    isinstance(k.value, ast.Constant) and k.value.value is False) for k in node.keywords)):
                return False
        elif isinstance(node.func, ast.Attribute) and (node.func.attr == "to" or (
                isinstance(node.func.value, ast.Name) and node.func.value.id == "libdevice")):
            continue  # x.to(dtype), libdevice's math
        elif isinstance(node.func, ast.Name) and node.func.id in jit:
            name = node.func.id
            if name not in seen and not all(_thread_private(d.body, jit, seen | {name}) for d in jit[name]):
                return False
        else:
            return False
    return True


def _reads_memory(nodes: list[ast.stmt]) -> bool:
    return any(tl_call(n, "load") for s in nodes for n in ast.walk(s))


def _size(nodes: list[ast.stmt]) -> int:
    return sum(1 for s in nodes for n in ast.walk(s) if isinstance(n, ast.stmt))


def unrollable(loop: ast.For, constexprs: set[str], jit: dict[str, list[ast.FunctionDef]]) -> bool:
    """`for name in range(...)` with a run-time trip count whose small body loads and computes only."""
    it = loop.iter
    if not (isinstance(loop.target, ast.Name) and isinstance(it, ast.Call) and isinstance(it.func, ast.Name)
            and it.func.id == "range" and 1 <= len(it.args) <= 3 and not it.keywords) or loop.orelse:
        return False
    if all(isinstance(a, ast.Constant) or (isinstance(a, ast.Name) and a.id in constexprs) for a in it.args):
        return False  # a trip count known when the kernel compiles: LLVM unrolls it as it sees fit
    if _size(loop.body) > int(rules()["max_statements"]) or not _reads_memory(loop.body):
        return False
    if any(isinstance(n, NESTED) for stmt in loop.body for n in ast.walk(stmt)):
        return False  # branches and inner loops: the copies would multiply them, and their barriers
    return _thread_private(loop.body, jit, frozenset())


def marked_loops(fn: ast.FunctionDef, jit: dict[str, list[ast.FunctionDef]],
                 keep_rolled: Collection[tuple[str, str]] = ()) -> list[ast.For]:
    """The loops of jit function `fn` that `unroll_loops` marks: unrollable, written on one line, and not among
    `keep_rolled` (a batched copy `<function>_blocks` answers for its function's loops)."""
    constexprs = _constexprs(fn)
    own = fn.name.removesuffix("_blocks")
    keep = set(keep_rolled)
    out = []
    for loop in ast.walk(fn):
        if not isinstance(loop, ast.For) or not isinstance(loop.target, ast.Name):
            continue
        if {(fn.name, loop.target.id), (own, loop.target.id)} & keep:
            continue
        if unrollable(loop, constexprs, jit) and loop.iter.lineno == loop.iter.end_lineno:
            out.append(loop)  # the lifter writes a loop's header on one line
    return out


def jit_functions(text: str) -> tuple[ast.Module, dict[str, list[ast.FunctionDef]]]:
    """`text` parsed, and its jit functions by name (every definition of each)."""
    tree = ast.parse(text)
    return tree, _jit_functions(tree)


def unroll_loops(text: str, keep_rolled: Collection[tuple[str, str]] = ()) -> str:
    """`text` (a port module) with every unrollable loop of its jit functions marked for Triton's unroller, but
    those of `keep_rolled`: (jit function, loop variable), a batched copy (`<function>_blocks`) included. In a
    kernel with the `STAGES` parameter (a pipelined launch configuration, launch_configs.py) the marked loops are
    also software-pipelined by that many stages when the launch gives it (None, the default, leaves them as they
    are)."""
    tree, jit = jit_functions(text)
    lines = text.splitlines(keepends=True)
    edits: list[tuple[int, int, int, str]] = []  # (line, first col, end col, replacement), 1-based lines
    factor = int(rules()["factor"])
    kernels = [n for n in tree.body if isinstance(n, ast.FunctionDef) and is_jit(n)]
    for fn in kernels:
        stages = f", num_stages={STAGES}" if STAGES in _constexprs(fn) else ""
        for loop in marked_loops(fn, jit, keep_rolled):
            it = loop.iter
            args = ", ".join(ast.get_source_segment(text, a) or ast.unparse(a) for a in it.args)  # type: ignore[attr-defined]
            edits.append((it.lineno, it.col_offset, it.end_col_offset or it.col_offset,
                          f"tl.range({args}, loop_unroll_factor={factor}{stages})"))
    for line, col, end, new in sorted(edits, reverse=True):
        raw = lines[line - 1].encode()  # ast's column offsets count UTF-8 bytes
        lines[line - 1] = (raw[:col] + new.encode() + raw[end:]).decode()
    return "".join(lines)
