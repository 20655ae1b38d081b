"""Row kernels: a lifted kernel whose lane count is free, so a program can run several short rows.

A row kernel (softmax, layernorm, a row sum) runs one CUDA block per row, its threads striding over the row's
columns: `for (c = tid; c < cols; c += blockDim.x) acc = op(acc, f(c));` then a block reduction of `acc`. The
lifter writes this as `for base in range(a, cols, BLOCK)` over lanes `base + lane_x` (BLOCK the block size),
lane accumulators and a `tl.sum/max/min` over the lanes. How the columns are dealt to lanes changes nothing
but the order of a sum: each column is computed alone, and the lanes' accumulators are only ever combined by
the same operation. So the lanes of a row may be fewer than CUDA's block (a short row then fills a program
with several rows, through block batching) or more (a long row takes fewer iterations).

`free_lanes` proves this on the emitted Python (ast) and returns the kernel with the loop step `BLOCK` spelled
`BX`, so that BX may be launched with another value. It accepts only this shape (anything else keeps CUDA's
lane count, with the reason):

* every use of the lanes is `base + lane_x` inside a column loop (`range(a, e, BLOCK)`, straight-line body)
  whose base that is, and the base is used nowhere else;
* a lane value that lives across iterations (an accumulator) starts as `tl.full([BX], c)` (c = 0 for a sum),
  is updated in its loops as `acc = op(acc, x)` or `acc = tl.where(m, op(acc, x), acc)` with x free of
  accumulators, and is read elsewhere only by `tl.<op>` over its lanes, outside the loops that update it;
* every other lane value lives within one iteration, and `BX` appears only in the lanes' shapes.

The gate still verifies each configuration that uses it (xlate/verify/configs.py).
"""

from __future__ import annotations

import ast
import copy
import functools

from xlate.resources import data
from xlate.translate.triton.batchast import NotBatchable, single_assign, tl_call

REDUCE = {"sum": "add", "max": "max", "min": "min"}  # tl reduction over the lanes -> the accumulator's operation


@functools.cache
def row_rules() -> dict:
    return data("triton/row_configs.yaml")


def row_configurations(bx: int) -> list[dict[str, int]]:
    """The configurations offered to a row kernel of `bx`-thread blocks besides the batched ones: `lanes`
    lanes per row (other than bx), `blocks` rows per program."""
    out = []
    for c in row_rules()["rows"]:
        lanes, rows = int(c["lanes"]), int(c["rows"])
        if lanes != bx:
            out.append({"blocks": rows, "lanes": lanes, "num_warps": int(c["num_warps"])})
    return out


def _name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _is_column(node: ast.AST, base: str, lane: str) -> bool:
    """`base + lane` or `lane + base`."""
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and (
        (_name(node.left, base) and _name(node.right, lane)) or (_name(node.left, lane) and _name(node.right, base)))


def _shape_uses(fn: ast.FunctionDef, lane_def: ast.Assign) -> None:
    """BX only as the lanes' extent: `tl.arange(0, BX)` of the lanes, `[BX]` of tl.full/zeros, `(BX,)` of
    tl.broadcast_to."""
    allowed: set[int] = set()
    for n in ast.walk(fn):
        if n is lane_def.value:
            allowed.add(id(n.args[1]))  # type: ignore[attr-defined]
        elif tl_call(n, "full", "zeros") and n.args and isinstance(n.args[0], ast.List | ast.Tuple):  # type: ignore[attr-defined]
            allowed.update(id(e) for e in n.args[0].elts if _name(e, "BX"))  # type: ignore[attr-defined]
        elif tl_call(n, "broadcast_to") and len(n.args) == 2 and isinstance(n.args[1], ast.List | ast.Tuple):  # type: ignore[attr-defined]
            allowed.update(id(e) for e in n.args[1].elts if _name(e, "BX"))  # type: ignore[attr-defined]
    for n in ast.walk(fn):
        if _name(n, "BX") and isinstance(n.ctx, ast.Load) and id(n) not in allowed:  # type: ignore[attr-defined]
            raise NotBatchable("BX is used other than as the lanes' extent")


def _column_loop(s: ast.stmt, bx: int) -> str | None:
    """The base's name of `for it in range(a, e, bx): base = it + tl.zeros([], tl.int32); ...`."""
    if not (isinstance(s, ast.For) and isinstance(s.target, ast.Name) and isinstance(s.iter, ast.Call)
            and _name(s.iter.func, "range") and len(s.iter.args) == 3 and not s.iter.keywords):
        return None
    step = s.iter.args[2]
    if not (isinstance(step, ast.Constant) and type(step.value) is int and step.value == bx) or not s.body:
        return None
    first = s.body[0]
    if not (isinstance(first, ast.Assign) and len(first.targets) == 1 and isinstance(first.targets[0], ast.Name)
            and isinstance(first.value, ast.BinOp) and isinstance(first.value.op, ast.Add)
            and _name(first.value.left, s.target.id) and tl_call(first.value.right, "zeros")):
        return None
    return first.targets[0].id


def _update(value: ast.expr, acc: str, accs: set[str]) -> str | None:
    """The operation of `acc`'s update `value` (already expanded), '' for no change, None if not one."""
    if _name(value, acc):
        return ""
    if tl_call(value, "where") and len(value.args) == 3 and not value.keywords:  # type: ignore[attr-defined]
        cond, a, b = value.args  # type: ignore[attr-defined]
        if _raw(cond, accs):
            return None
        if _name(b, acc):
            return _update(a, acc, accs) or None
        if _name(a, acc):
            return _update(b, acc, accs) or None
        return None
    pair: tuple[ast.expr, ast.expr] | None = None
    op = None
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        op, pair = "add", (value.left, value.right)
    elif (name := tl_call(value, "maximum", "minimum")) and len(value.args) == 2 and not value.keywords:  # type: ignore[attr-defined]
        op, pair = name[:3], (value.args[0], value.args[1])  # type: ignore[attr-defined]
    if pair is None:
        return None
    x = pair[1] if _name(pair[0], acc) else pair[0] if _name(pair[1], acc) else None
    if x is None or _raw(x, accs):
        return None
    return op


def _raw(node: ast.AST, accs: set[str]) -> bool:
    """Some accumulator read lane by lane (outside a reduction over its lanes) under `node`."""
    return any(_Check.reads_raw(node, a) for a in accs)


def _reduced(node: ast.AST) -> tuple[str, ast.AST] | None:
    """(operation, argument) of `tl.sum/max/min(x or tl.broadcast_to(x, ...), axis=0)`."""
    name = tl_call(node, *REDUCE)
    if name is None or not node.args or len(node.args) > 2:  # type: ignore[attr-defined]
        return None
    axis = node.args[1] if len(node.args) == 2 else next((k.value for k in node.keywords if k.arg == "axis"), None)  # type: ignore[attr-defined]
    if not (isinstance(axis, ast.Constant) and axis.value == 0) or any(k.arg != "axis" for k in node.keywords):  # type: ignore[attr-defined]
        return None
    x = node.args[0]  # type: ignore[attr-defined]
    if tl_call(x, "broadcast_to") and len(x.args) == 2:  # type: ignore[attr-defined]
        x = x.args[0]  # type: ignore[attr-defined]
    return REDUCE[name], x


class _Check:
    def __init__(self, fn: ast.FunctionDef, bx: int):
        self.fn, self.bx = fn, bx
        lane_def = single_assign(fn.body, lambda v: tl_call(v, "arange") is not None and len(v.args) == 2
                         and isinstance(v.args[0], ast.Constant) and v.args[0].value == 0 and _name(v.args[1], "BX"))
        self.lane = lane_def.targets[0].id  # type: ignore[attr-defined]
        self.lane_def = lane_def
        _shape_uses(fn, lane_def)
        self.loops: list[tuple[ast.For, str]] = []
        self.accs: dict[str, ast.Call] = {}  # accumulator -> its initial tl.full
        self.ops: dict[str, str] = {}  # accumulator -> its operation
        self.reduced_by: dict[str, set[str]] = {}  # accumulator -> the reductions that read it

    def run(self) -> None:
        self.top(self.fn.body, outer=True)
        if not self.loops:
            raise NotBatchable("no column loop over the lanes")
        lane_vals = self.lane_valued()
        for loop, base in self.loops:
            self.loop(loop, base, lane_vals)
        self.reads_outside(self.fn.body, lane_vals, updating=set())

    def top(self, body: list[ast.stmt], outer: bool) -> None:
        """Find the column loops and the accumulators' initial values (statements outside column loops)."""
        for s in body:
            base = _column_loop(s, self.bx)
            if base is not None:
                self.loops.append((s, base))  # type: ignore[arg-type]
                continue
            if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) \
                    and tl_call(s.value, "full", "zeros") and s.value.args and isinstance(s.value.args[0], ast.List) \
                    and [ast.unparse(e) for e in s.value.args[0].elts] == ["BX"]:  # type: ignore[attr-defined]
                if not outer or s.targets[0].id in self.accs:
                    raise NotBatchable(f"lane value '{s.targets[0].id}' bound more than once outside the loops")
                self.accs[s.targets[0].id] = s.value  # type: ignore[assignment]
            elif isinstance(s, ast.If | ast.While | ast.For):
                self.top(s.body + s.orelse, outer=False)

    def lane_valued(self) -> set[str]:
        """Names bound to values with a lane axis (reductions over the lanes end it)."""
        binds: dict[str, list[ast.AST]] = {}
        for n in ast.walk(self.fn):
            if isinstance(n, ast.Assign):
                for t in n.targets:
                    for name in _names(t):
                        binds.setdefault(name, []).append(n.value)
            elif isinstance(n, ast.AugAssign):
                raise NotBatchable("an augmented assignment")
        names = {self.lane, *self.accs}
        changed = True
        while changed:
            changed = False
            for name, values in binds.items():
                if name not in names and any(self.has_lanes(v, names) for v in values):
                    names.add(name)
                    changed = True
        return names

    @staticmethod
    def has_lanes(node: ast.AST, names: set[str]) -> bool:
        if _reduced(node) is not None:
            return False
        if isinstance(node, ast.Name):
            return node.id in names
        if tl_call(node, "full", "zeros", "broadcast_to") and any(_name(n, "BX") for n in ast.walk(node)):
            return True  # a value of the lanes' shape
        return any(_Check.has_lanes(c, names) for c in ast.iter_child_nodes(node))

    def loop(self, loop: ast.For, base: str, lane_vals: set[str]) -> None:
        """One column loop: lanes only as `base + lane`, temporaries inside one iteration, updates of the form."""
        body = loop.body[1:]
        accs = set(self.accs)
        env: dict[str, ast.expr] = {}  # this iteration's bindings, expanded
        temps: set[str] = set()
        assigned = self.assigned(body)
        for s in body:
            call = isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
            if not (call or (isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name))):
                raise NotBatchable(f"a column loop with a '{type(s).__name__}' statement")
            value = s.value  # type: ignore[attr-defined]
            self.columns(value, base)
            self.reductions(value, env, updating=assigned)
            read = _names(value)
            if loop.target.id in read:  # type: ignore[attr-defined]
                raise NotBatchable("the loop's counter used other than through the column")
            for name in read & (assigned - accs) - set(env):  # the iteration count decides its value
                raise NotBatchable(f"'{name}' carried across iterations without being an accumulator")
            for name in read & lane_vals - accs - {self.lane}:
                if name not in temps:
                    raise NotBatchable(f"lane value '{name}' carried across iterations without being an accumulator")
            if isinstance(s, ast.Expr):
                if _raw(_expand(value, env), accs):
                    raise NotBatchable("an accumulator's lanes reach a store or call")
                continue
            target = s.targets[0].id  # type: ignore[union-attr]
            env[target] = _expand(value, env)
            if target in lane_vals and target not in accs:
                temps.add(target)
        for acc in self.assigned(body) & accs:
            op = _update(env[acc], acc, accs)
            if op is None:
                raise NotBatchable(f"accumulator '{acc}' is updated other than by one associative operation")
            if op and self.ops.setdefault(acc, op) != op:
                raise NotBatchable(f"accumulator '{acc}' is updated by two operations")
        self.escapes(loop, temps)

    @staticmethod
    def assigned(body: list[ast.stmt]) -> set[str]:
        return {t.id for s in body if isinstance(s, ast.Assign) for t in s.targets if isinstance(t, ast.Name)}

    def columns(self, node: ast.AST, base: str) -> None:
        """Every lane and base under `node` is `base + lane`."""
        ok = {id(n.left) for n in ast.walk(node) if _is_column(n, base, self.lane)}  # type: ignore[attr-defined]
        ok |= {id(n.right) for n in ast.walk(node) if _is_column(n, base, self.lane)}  # type: ignore[attr-defined]
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and n.id in (base, self.lane) and id(n) not in ok:
                raise NotBatchable(f"'{n.id}' used other than as the column `{base} + {self.lane}`")

    @staticmethod
    def reads_raw(node: ast.AST, acc: str) -> bool:
        """`acc` read outside a reduction of it."""
        if _reduced(node) is not None:
            return False
        if _name(node, acc):
            return True
        return any(_Check.reads_raw(c, acc) for c in ast.iter_child_nodes(node))

    def reductions(self, node: ast.AST, env: dict[str, ast.expr], updating: set[str]) -> None:
        """Each reduction over the lanes is of a finished accumulator, by its own operation (a max or min of a
        lane-uniform value is the value: any lane count)."""
        for n in ast.walk(node):
            r = _reduced(n)
            if r is None:
                if tl_call(n, *REDUCE) or tl_call(n, "cumsum", "cumprod", "argmax", "argmin", "xor_sum", "reduce"):
                    raise NotBatchable(f"a reduction other than of an accumulator: `{ast.unparse(n)}`")
                continue
            op, x = r
            if isinstance(x, ast.Name) and x.id in self.accs:
                if x.id in updating:
                    raise NotBatchable(f"accumulator '{x.id}' reduced in a loop that updates it")
                self.reduced_by.setdefault(x.id, set()).add(op)
            elif op == "add" or _Check.has_lanes(x, {self.lane, *self.accs, *env}):
                raise NotBatchable(f"a reduction other than of an accumulator: `{ast.unparse(n)}`")

    def escapes(self, loop: ast.For, temps: set[str]) -> None:
        """An iteration's lane values are not read after the loop (their last iteration's lanes)."""
        inside = {id(n) for n in ast.walk(loop)}
        for n in ast.walk(self.fn):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in temps and id(n) not in inside:
                raise NotBatchable(f"lane value '{n.id}' read after its loop")

    def reads_outside(self, body: list[ast.stmt], lane_vals: set[str], updating: set[str]) -> None:
        """Outside column loops, no lane value but an accumulator's initial value, and accumulators only in
        reductions."""
        loops = {id(loop) for loop, _ in self.loops}
        for s in body:
            if id(s) in loops or s is self.lane_def:
                continue
            if isinstance(s, ast.If | ast.While | ast.For):
                tests = [s.test] if isinstance(s, ast.If | ast.While) else [s.iter]
                for t in tests:
                    self.outside_expr(t, lane_vals)
                self.reads_outside(s.body + s.orelse, lane_vals, updating)
                continue
            if isinstance(s, ast.Assign) and isinstance(s.targets[0], ast.Name) and s.targets[0].id in self.accs \
                    and s.value is self.accs[s.targets[0].id]:
                continue
            for n in ast.walk(s):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id in lane_vals:
                    raise NotBatchable(f"lane value '{n.id}' bound outside the column loops")
            self.outside_expr(s, lane_vals)

    def outside_expr(self, node: ast.AST, lane_vals: set[str]) -> None:
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in lane_vals \
                    and (n.id not in self.accs or self.reads_raw_at(node, n)):
                raise NotBatchable(f"lane value '{n.id}' used outside the column loops")
        self.reductions(node, {}, updating=set())

    def reads_raw_at(self, root: ast.AST, name: ast.Name) -> bool:
        """`name` (a node under `root`) is not the argument of a reduction."""
        for n in ast.walk(root):
            r = _reduced(n)
            if r is not None and r[1] is name:
                return False
        return True


EXPAND_LIMIT = 20000  # nodes of an expanded value: temporaries reused twice at each step would double it


def _expand(value: ast.expr, env: dict[str, ast.expr]) -> ast.expr:
    """`value` with the names bound earlier in this iteration replaced by their expanded values."""
    size = 0
    for n in ast.walk(value):
        size += sum(1 for _ in ast.walk(env[n.id])) if isinstance(n, ast.Name) and n.id in env else 1
        if size > EXPAND_LIMIT:
            raise NotBatchable("a loop body too large to analyse")

    class Sub(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            return copy.deepcopy(env[node.id]) if node.id in env and isinstance(node.ctx, ast.Load) else node
    return Sub().visit(copy.deepcopy(value))


def free_lanes(fn: ast.FunctionDef, bx: int) -> tuple[ast.FunctionDef | None, str]:
    """(a copy of the lifted kernel `fn`, launched with BX = `bx`, whose column loops step by BX, "") when its
    lanes may be any number (module docstring); else (None, why)."""
    try:
        check = _Check(fn, bx)
        check.run()
    except NotBatchable as exc:
        return None, str(exc)
    for acc, init in check.accs.items():
        op = check.ops.get(acc)
        by = check.reduced_by.get(acc, set())
        if op is None and by - {"max", "min"}:
            return None, f"lane value '{acc}' is summed without being accumulated"
        if op is not None and by - {op}:
            return None, f"accumulator '{acc}' is reduced by another operation than its own"
        value = init.args[1] if tl_call(init, "full") and len(init.args) > 1 else ast.Constant(0)
        if "add" in by | {op} and not (isinstance(value, ast.Constant) and value.value == 0):
            return None, f"sum accumulator '{acc}' does not start at 0"
    out = copy.deepcopy(fn)
    steps = {id(loop) for loop, _ in check.loops}
    for loop, twin in zip((n for n in ast.walk(fn) if isinstance(n, ast.For)),
                          (n for n in ast.walk(out) if isinstance(n, ast.For)), strict=True):
        if id(loop) in steps:  # the copy's walk visits the same nodes in the same order
            twin.iter.args[2] = ast.Name("BX", ast.Load())  # type: ignore[attr-defined]
    return ast.fix_missing_locations(out), ""


def _implies(cond: ast.AST, column: str) -> bool:
    """`cond` (expanded) is false wherever the column test `column` (its ast.dump) is: a conjunction of it."""
    if ast.dump(cond) == column:
        return True
    if isinstance(cond, ast.BinOp) and isinstance(cond.op, ast.BitAnd):
        return _implies(cond.left, column) or _implies(cond.right, column)
    if tl_call(cond, "where") and len(cond.args) == 3 and isinstance(cond.args[2], ast.Constant) \
            and cond.args[2].value is False:  # type: ignore[attr-defined]
        return _implies(cond.args[0], column) or _implies(cond.args[1], column)  # type: ignore[attr-defined]
    return False


def _mask(call: ast.Call) -> ast.expr | None:
    kw = next((k.value for k in call.keywords if k.arg == "mask"), None)
    return kw if kw is not None else (call.args[2] if len(call.args) > 2 else None)


def ragged_loop(fn: ast.FunctionDef, loop: ast.For, lane: str) -> str:
    """Why the column loop `loop` may not run past its own bound (iterations a longer row of the same program
    needs), or "" when it may: it is `for it in range(a, e, STEP or BX): base = it + tl.zeros(...)`, its lanes the
    columns `base + lane`, and every load, store and value it leaves behind (for a later iteration or after
    the loop) is masked by the lifter's column test `base + lane < e`."""
    it = loop.iter
    if not (isinstance(loop.target, ast.Name) and isinstance(it, ast.Call) and _name(it.func, "range")
            and len(it.args) == 3 and (_name(it.args[2], "BX") or (isinstance(it.args[2], ast.Constant)
                                                                    and type(it.args[2].value) is int
                                                                    and it.args[2].value > 0))
            and not loop.orelse and loop.body):  # a step of BX: the lanes (free_lanes' rewrite), positive
        return "a loop other than a column loop of a constant step"
    first = loop.body[0]
    if not (isinstance(first, ast.Assign) and len(first.targets) == 1 and isinstance(first.targets[0], ast.Name)
            and isinstance(first.value, ast.BinOp) and isinstance(first.value.op, ast.Add)
            and _name(first.value.left, loop.target.id) and tl_call(first.value.right, "zeros")):
        return "a loop other than a column loop"
    base = first.targets[0].id
    column = ast.dump(ast.Compare(ast.BinOp(ast.Name(base, ast.Load()), ast.Add(), ast.Name(lane, ast.Load())),
                                  [ast.Lt()], [it.args[1]]))
    body = loop.body[1:]
    assigned = {t.id for s in body if isinstance(s, ast.Assign) for t in s.targets if isinstance(t, ast.Name)}
    inside = {id(n) for n in ast.walk(loop)}
    after = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
             and id(n) not in inside}
    env: dict[str, ast.expr] = {}
    kept: set[str] = set(assigned & after)  # values the loop leaves behind
    checker = _Check.__new__(_Check)
    checker.lane = lane
    for s in body:
        if not (isinstance(s, ast.Assign | ast.Expr) and isinstance(s.value, ast.AST)):
            return f"a column loop with a '{type(s).__name__}' statement"
        if isinstance(s, ast.Assign) and not (len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)):
            return "an assignment to something other than a name"
        try:
            checker.columns(s.value, base)
        except NotBatchable as exc:
            return str(exc)
        read = _names(s.value)
        if loop.target.id in read:
            return "the loop's counter used other than through the column"
        kept |= read & assigned - set(env)  # carried from the previous iteration
        try:
            value = _expand(s.value, env)
        except NotBatchable as exc:
            return str(exc)
        for n in ast.walk(value):
            name = tl_call(n)
            if name == "load" or name == "store" or (name or "").startswith("atomic"):
                mask = _mask(n)  # type: ignore[arg-type]
                if mask is None or not _implies(mask, column):
                    return f"a tl.{name} in the loop not masked by its column test"
            elif isinstance(n, ast.Call) and name is None and not (isinstance(n.func, ast.Name)
                                                                   and n.func.id.startswith("_xl_")):
                return f"a call of '{ast.unparse(n.func)}' in the loop"
        if isinstance(s, ast.Assign):
            env[s.targets[0].id] = value  # type: ignore[union-attr]
    for name in kept:
        v = env.get(name)
        if v is None or _name(v, name):
            continue
        if not (tl_call(v, "where") and len(v.args) == 3 and _name(v.args[2], name)  # type: ignore[attr-defined]
                and _implies(v.args[0], column)):  # type: ignore[attr-defined]
            return f"'{name}' is left behind by the loop without its column test"
    return ""


__all__ = ["free_lanes", "ragged_loop", "row_configurations", "row_rules"]
