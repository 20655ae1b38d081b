"""Block batching: a lifted Triton kernel rewritten to run R CUDA blocks in one program.

The lifter maps one CUDA block to one Triton program: `pid_x = tl.program_id(0)` is the block index and lane
values are [BX] tensors. Where nothing in the body needs its block to be alone in the program, the block index
can become a column of R consecutive blocks ([R, 1]) and the lanes a row ([1, BX]): every elementwise operation
then computes R blocks at once, a reduction or scan over the lanes becomes one per block (axis 1 of [R, BX]),
and the rest of the body is unchanged. Blocks past the CUDA grid are clamped onto its last block: that copy
loads, computes and stores exactly what the block itself does (same values at the same addresses, in the same
instruction), harmless for everything but atomics, which are not batched.

The rewrite reads the emitted Python (ast), not the lifter's internals, and accepts only what it knows
(xlate/data/triton/launch_configs.yaml): a body with any other call, statement or shape, or whose control flow
depends on the block index, is not batched (the reason is returned). One exception: a column loop whose bounds
depend on the block (a row of its own length, `for (j = start[row] + tid; j < end[row]; j += blockDim.x)`)
runs the longest row's count in every row of the program, each from its own start, where everything it does
is masked by its column test (rows.ragged_loop). The gate still verifies every batched
configuration before a port may keep it.
"""

from __future__ import annotations

import ast
import copy
import functools
import re
from dataclasses import dataclass

from xlate.resources import data
from xlate.translate.triton.batchast import NotBatchable, single_assign, tl_call

GRID_X = "_xl_gx"  # the batched kernel's argument: CUDA's gridDim.x (the lifter's names never start with _xl)
ROWS = "_xl_r"  # its constexpr: CUDA blocks per program


@functools.cache
def rules() -> dict:
    return data("triton/launch_configs.yaml")


@functools.cache
def elementwise() -> frozenset[str]:
    """tl functions computed element by element: the table's, and every one the math map spells."""
    names = set(rules()["elementwise"])
    for entry in data("triton/math.yaml")["functions"].values():
        for key in ("tl", "interp"):
            names.update(re.findall(r"\btl\.(\w+)\(", entry.get(key, "")))
    return frozenset(names)


def _const(node: ast.AST | None, value: object) -> bool:
    return isinstance(node, ast.Constant) and node.value == value and type(node.value) is type(value)


def _is_bx_shape(node: ast.AST) -> bool:
    return isinstance(node, ast.List | ast.Tuple) and len(node.elts) == 1 and isinstance(node.elts[0], ast.Name) \
        and node.elts[0].id == "BX"


def _rows_bx(like: ast.AST) -> ast.AST:
    elts: list[ast.expr] = [ast.Name(ROWS, ast.Load()), ast.Name("BX", ast.Load())]
    return ast.List(elts, ast.Load()) if isinstance(like, ast.List) else ast.Tuple(elts, ast.Load())


def _axis(call: ast.Call) -> ast.AST | None:
    kw = next((k.value for k in call.keywords if k.arg == "axis"), None)
    return kw if kw is not None else (call.args[1] if len(call.args) > 1 else None)


def _expand(x: ast.expr) -> ast.expr:
    """`x[:, None]`: a per-block value as a column."""
    index = ast.Tuple([ast.Slice(), ast.Constant(None)], ast.Load())
    return ast.Subscript(x, index, ast.Load())


class _Rewrite(ast.NodeTransformer):
    """Checks every expression against the known operations and rewrites shapes, reductions and gridDim."""

    def __init__(self, per_block: set[str]):
        self.per_block = per_block  # names whose values have the leading axis of R blocks (else of 1)

    def visit_Assign(self, node: ast.Assign) -> ast.AST:
        node.value = self.visit(node.value)  # its targets are names (checked by _bindings)
        return node

    def visit_If(self, node: ast.If) -> ast.AST:
        whole = _program_exit(node)
        if whole is not None:  # every block of the program done: the test reduces over all of them (no axis)
            whole.args = [self.visit(whole.args[0])]
            return node
        return self.generic_visit(node)

    def visit_For(self, node: ast.For) -> ast.AST:
        it = node.iter  # `range(...)` (checked by _bindings): its bounds are expressions like any other
        assert isinstance(it, ast.Call)
        it.args = [self.visit(a) for a in it.args]
        node.body = [self.visit(s) for s in node.body]
        return node

    def generic_visit(self, node: ast.AST) -> ast.AST:
        if isinstance(node, ast.expr) and not isinstance(node, ast.BinOp | ast.UnaryOp | ast.BoolOp | ast.Compare
                                                        | ast.Call | ast.Name | ast.Constant | ast.Attribute):
            raise NotBatchable(f"{type(node).__name__} expression")
        return super().generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if isinstance(node.value, ast.Name) and node.value.id == "tl":
            return node  # a dtype (tl.float32)
        raise NotBatchable(f"attribute '{ast.unparse(node)}'")

    def visit_Call(self, node: ast.Call) -> ast.AST:
        name = tl_call(node)
        if name is not None:
            return self._tl_call(name, node)
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr == "to":  # (x).to(tl.float32)
            f.value = self.visit(f.value)
            node.args = [self.visit(a) for a in node.args]
            return node
        if isinstance(f, ast.Name) and f.id.startswith("_xl_"):  # math wrappers and helpers: elementwise
            return self.generic_visit(node)
        if isinstance(f, ast.Name) and f.id == "float" and len(node.args) == 1 and isinstance(node.args[0], ast.Constant):
            return node  # float("nan")
        raise NotBatchable(f"call of '{ast.unparse(f)}'")

    def _tl_call(self, name: str, node: ast.Call) -> ast.AST:
        r = rules()
        if name == "program_id":
            if not node.args or not isinstance(node.args[0], ast.Constant) or node.args[0].value == 0:
                raise NotBatchable("the block index is read outside its definition")
            return node
        if name == "debug_barrier" and not node.args:
            return node  # all the program's threads meet: R blocks' threads as well as one block's (uniform flow)
        if name == "num_programs":
            if len(node.args) == 1 and _const(node.args[0], 0):
                return ast.Name(GRID_X, ast.Load())  # gridDim.x: the CUDA grid, not the batched one
            return node
        if name in r["shaped"]:
            shape = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "shape"), None)
            if shape is None or not isinstance(shape, ast.List | ast.Tuple):
                raise NotBatchable(f"tl.{name} of a computed shape")
            if _is_bx_shape(shape):
                new = _rows_bx(shape)
                if node.args:
                    node.args[0] = new
                else:
                    node.keywords = [ast.keyword("shape", new) if k.arg == "shape" else k for k in node.keywords]
            elif shape.elts:
                raise NotBatchable(f"tl.{name} of shape {ast.unparse(shape)}")
            node.args = [node.args[0], *[self.visit(a) for a in node.args[1:]]] if node.args else []
            return node
        if name == "arange":  # a constant range: a trailing axis (a vector type's components), as in the lift
            if len(node.args) != 2 or not all(isinstance(a, ast.Constant) and type(a.value) is int for a in node.args):
                raise NotBatchable("tl.arange of a computed range")
            return node
        if name in r["trailing"]:  # operations on the last axes only: the leading one passes through
            axis = _axis(node) if name == "expand_dims" else None
            if name == "expand_dims" and not (isinstance(axis, ast.UnaryOp) and isinstance(axis.op, ast.USub)):
                raise NotBatchable("tl.expand_dims other than at a trailing axis")
            return self.generic_visit(node)
        if name == "reshape":  # [BX, ...] -> [R, BX, ...] (or [1, BX, ...] for a value the same in every block)
            shape = node.args[1] if len(node.args) == 2 else None
            if not isinstance(shape, ast.List | ast.Tuple) or not shape.elts or not (
                    isinstance(shape.elts[0], ast.Name) and shape.elts[0].id == "BX") or node.keywords:
                raise NotBatchable("tl.reshape other than of the lanes' leading axis")
            lead: ast.expr = ast.Name(ROWS, ast.Load()) if _mentions(node.args[0], self.per_block) else ast.Constant(1)
            node.args = [self.visit(node.args[0]), type(shape)([lead, *shape.elts], ast.Load())]
            return node
        if name == "gather":  # along the lanes (comm.py's tile reuse): each block's row gathers from its own row
            if len(node.args) != 3 or node.keywords or ast.unparse(node.args[2]) != "-1":
                raise NotBatchable("tl.gather other than along the lanes (axis=-1)")
            rows_bx = ast.Tuple([ast.Name(ROWS, ast.Load()), ast.Name("BX", ast.Load())], ast.Load())
            node.args = [ast.Call(ast.Attribute(ast.Name("tl", ast.Load()), "broadcast_to", ast.Load()),
                                  [self.visit(a), rows_bx], []) for a in node.args[:2]] + [node.args[2]]
            return node
        if name in r["reductions"] or name in r["scans"]:
            if not _const(_axis(node), 0) or not node.args or any(k.arg != "axis" for k in node.keywords):
                raise NotBatchable(f"tl.{name} other than over the lanes (axis=0)")
            x = node.args[0]
            if tl_call(x, "broadcast_to") and len(x.args) == 2 and _is_bx_shape(x.args[1]):  # type: ignore[attr-defined]
                x = x.args[0]  # type: ignore[attr-defined]
            body = ast.Call(ast.Attribute(ast.Name("tl", ast.Load()), "broadcast_to", ast.Load()),
                            [self.visit(x), ast.Tuple([ast.Name(ROWS, ast.Load()), ast.Name("BX", ast.Load())],
                                                      ast.Load())], [])
            out = ast.Call(node.func, [body], [ast.keyword("axis", ast.Constant(1))])
            return _expand(out) if name in r["reductions"] else out
        if name in elementwise():
            return self.generic_visit(node)
        raise NotBatchable(f"tl.{name}")


def _program_exit(node: ast.stmt) -> ast.Call | None:
    """The `tl.max` call of `if tl.max(X) == 0: return`, the lifter's exit of a program none of whose threads is
    left (loops.exit_if_all_returned); None for any other statement. Its reduction has no axis: over all R
    blocks of a batched program, which may end only when every one of them is done."""
    if not (isinstance(node, ast.If) and not node.orelse and len(node.body) == 1
            and isinstance(node.body[0], ast.Return) and node.body[0].value is None):
        return None
    t = node.test
    if not (isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.Eq)
            and _const(t.comparators[0], 0)):
        return None
    call = t.left
    if tl_call(call, "max") and len(call.args) == 1 and not call.keywords:  # type: ignore[attr-defined]
        return call  # type: ignore[return-value]
    return None


def _mentions(node: ast.AST, names: set[str]) -> bool:
    r = rules()
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and n.id in names:
            return True
        t = tl_call(n)
        if t in r["reductions"] or t in r["scans"]:
            return True  # one value per block
        if t in r["shaped"] and n.args and _is_bx_shape(n.args[0]):  # type: ignore[attr-defined]
            return True  # [BX] becomes [R, BX]
    return False


@dataclass
class _Binding:
    value: ast.AST
    nested: bool  # inside a loop or a branch: its type must agree with the name's other bindings


def _bindings(body: list[ast.stmt], nested: bool, out: dict[str, list[_Binding]]) -> None:
    for s in body:
        if isinstance(s, ast.Assign):
            names = _target_names(s.targets)
            for name in names:  # `a, b = tl.split(x)`: each name bound to the call
                out.setdefault(name, []).append(_Binding(s.value, nested))
        elif isinstance(s, ast.AugAssign):
            if not isinstance(s.target, ast.Name):
                raise NotBatchable("an assignment to something other than a name")
            out.setdefault(s.target.id, []).append(_Binding(ast.BinOp(s.target, s.op, s.value), nested))
        elif isinstance(s, ast.For):
            if not isinstance(s.target, ast.Name) or s.orelse:
                raise NotBatchable("a loop other than `for name in range(...)`")
            it = s.iter
            if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"):
                raise NotBatchable(f"a loop over {ast.unparse(it)}")
            out.setdefault(s.target.id, []).append(_Binding(it, True))
            _bindings(s.body, True, out)
        elif isinstance(s, ast.While | ast.If):
            _bindings(s.body, True, out)
            _bindings(s.orelse, True, out)
        elif isinstance(s, ast.Expr):
            if not isinstance(s.value, ast.Call):
                raise NotBatchable("an expression statement that is not a call")
        elif isinstance(s, ast.Return):
            if s.value is not None:
                raise NotBatchable("a kernel that returns a value")
        elif not isinstance(s, ast.Pass):
            raise NotBatchable(f"a '{type(s).__name__}' statement")


def _target_names(targets: list[ast.expr]) -> list[str]:
    if len(targets) == 1 and isinstance(targets[0], ast.Name):
        return [targets[0].id]
    if len(targets) == 1 and isinstance(targets[0], ast.Tuple) and all(isinstance(e, ast.Name) for e in targets[0].elts):
        return [e.id for e in targets[0].elts]  # type: ignore[attr-defined]
    raise NotBatchable("an assignment to something other than names")


def _per_block(bindings: dict[str, list[_Binding]], pid: str) -> set[str]:
    """Names whose value differs between the blocks of a program (the block index flows into them)."""
    names = {pid}
    changed = True
    while changed:
        changed = False
        for name, bs in bindings.items():
            if name not in names and any(_mentions(b.value, names) for b in bs):
                names.add(name)
                changed = True
    return names


def _check_control(fn: ast.FunctionDef, body: list[ast.stmt], per_block: set[str], lane: str,
                   ragged: list[ast.For]) -> None:
    """Control flow the same in every block; column loops whose bounds differ per block (rows of their own
    lengths) are collected in `ragged` where they may run to the longest row's bound (rows.ragged_loop)."""
    from xlate.translate.triton.rows import ragged_loop

    for s in body:
        if _program_exit(s) is not None:
            continue
        tests = [s.test] if isinstance(s, ast.If | ast.While) else [s.iter] if isinstance(s, ast.For) else []
        for t in tests:
            if _mentions(t, per_block):
                why = ragged_loop(fn, s, lane) if isinstance(s, ast.For) else "not a loop"
                if isinstance(s, ast.For) and not why:
                    ragged.append(s)
                    continue
                raise NotBatchable(f"control flow depends on the block: `{ast.unparse(t)}` ({why})")
        for inner in ("body", "orelse"):
            if isinstance(s, ast.If | ast.While | ast.For):
                _check_control(fn, getattr(s, inner), per_block, lane, ragged)


def batch_kernel(fn: ast.FunctionDef, name: str) -> tuple[str | None, str]:
    """(source of `fn` batched as the @triton.jit kernel `name`, "") or (None, why it cannot be batched).

    The batched kernel takes CUDA's gridDim.x (`_xl_gx`) after the kernel's own arguments and the constexpr
    `_xl_r` (CUDA blocks per program) last, and is launched on `cdiv(gridDim.x, _xl_r)` programs along axis 0."""
    try:
        return _batch(fn, name), ""
    except NotBatchable as exc:
        return None, str(exc)


def _batch(fn: ast.FunctionDef, name: str) -> str:
    params = [a.arg for a in fn.args.args]
    if "BX" not in params or "BY" in params:
        raise NotBatchable("a two-dimensional CUDA block" if "BY" in params else "no lane axis")
    if fn.args.vararg or fn.args.kwarg or fn.args.kwonlyargs or fn.args.posonlyargs:
        raise NotBatchable("a kernel signature with *args, **kwargs or keyword-only parameters")
    if any(isinstance(n, ast.Name) and n.id in (GRID_X, ROWS) for n in ast.walk(fn)):
        raise NotBatchable(f"the kernel already uses {GRID_X} or {ROWS}")
    pid = single_assign(fn.body, lambda v: tl_call(v, "program_id") is not None and len(v.args) == 1 and _const(v.args[0], 0))
    lane = single_assign(fn.body, lambda v: tl_call(v, "arange") is not None and len(v.args) == 2 and _const(v.args[0], 0)
                 and isinstance(v.args[1], ast.Name) and v.args[1].id == "BX")
    calls = [n for n in ast.walk(fn) if tl_call(n, "program_id") and n.args and _const(n.args[0], 0)]
    ranges = [n for n in ast.walk(fn) if tl_call(n, "arange") and any(isinstance(a, ast.Name) and a.id == "BX"
                                                                 for a in n.args)]  # type: ignore[attr-defined]
    if len(calls) != 1 or len(ranges) != 1:
        raise NotBatchable("the block index or the lanes are computed more than once")
    bindings: dict[str, list[_Binding]] = {}
    _bindings(fn.body, False, bindings)
    pid_name = pid.targets[0].id  # type: ignore[attr-defined]
    per_block = _per_block(bindings, pid_name)
    ragged: list[ast.For] = []
    _check_control(fn, fn.body, per_block, lane.targets[0].id, ragged)  # type: ignore[attr-defined]
    for var, bs in bindings.items():
        kinds = {_mentions(b.value, per_block) for b in bs}
        if len(kinds) > 1 and any(b.nested for b in bs):
            raise NotBatchable(f"'{var}' is carried through a loop or branch as one value and as one per block")
    out = copy.deepcopy(fn)
    pid2, lane2 = (next(s for s in out.body if ast.dump(s) == ast.dump(x)) for x in (pid, lane))
    _Rewrite(per_block).visit(ast.Module([s for s in out.body if s is not pid2 and s is not lane2], []))
    at = {id(loop) for loop in ragged}
    for loop, twin in zip((n for n in ast.walk(fn) if isinstance(n, ast.For)),
                          (n for n in ast.walk(out) if isinstance(n, ast.For)), strict=True):
        if id(loop) in at:  # every row runs the longest row's count; a shorter row's extra columns are masked
            start, stop, step = twin.iter.args  # type: ignore[attr-defined]
            zero = _const(start, 0)
            span = ast.unparse(stop) if zero else f"{ast.unparse(stop)} - ({ast.unparse(start)})"
            twin.iter.args = [ast.Constant(0), ast.parse(f"tl.max({span})", mode="eval").body, step]  # type: ignore[attr-defined]
            first = twin.body[0]
            assert isinstance(first, ast.Assign) and isinstance(first.value, ast.BinOp)
            if not zero:
                first.value.left = ast.BinOp(copy.deepcopy(start), ast.Add(), first.value.left)
    pid2.value = ast.parse(f"tl.minimum(tl.program_id(0) * {ROWS} + tl.arange(0, {ROWS}), {GRID_X} - 1)[:, None]",
                           mode="eval").body
    lane2.value = ast.parse("tl.arange(0, BX)[None, :]", mode="eval").body
    first_constexpr = next((i for i, a in enumerate(out.args.args) if a.annotation is not None
                            and "constexpr" in ast.unparse(a.annotation)), len(out.args.args))
    out.args.args.insert(first_constexpr, ast.arg(GRID_X))
    out.args.args.append(ast.arg(ROWS, ast.parse("tl.constexpr", mode="eval").body))
    out.args.defaults = []
    out.name = name
    return ast.unparse(ast.fix_missing_locations(out))
