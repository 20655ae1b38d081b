"""Lower lifted per-element expressions to a sequence of AscendC vector instructions over UB tiles.

Every vector sub-expression becomes one instruction (ops.yaml maps operators and functions to APIs) writing a
tile: the output tile for a stored value, otherwise a slot of the temporary buffer. Slots are reused as soon as
their value is dead (instructions may write one of their own operands: AscendC allows full overlap), so the
number of slots -- which the tiling has to fit into the UB -- stays small. Scalar sub-expressions (parameters,
constants, row reductions) are C++ expressions evaluated by the scalar unit and passed as instruction scalars.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from xlate.translate.ascendc import ir
from xlate.translate.ascendc.lift import Store, Unsupported, pattern
from xlate.translate.ascendc.tables import ops


@dataclass(frozen=True)
class Operand:
    kind: str  # in | out | tmp
    name: str = ""  # the buffer, for in/out
    slot: int = -1  # the temporary slot, for tmp

    def is_scratch(self) -> bool:
        return self.kind in ("in", "tmp")


@dataclass
class VecOp:
    api: str
    dst: Operand
    srcs: list[Operand]
    scalar: str | None = None  # C++ scalar operand
    note: str = ""  # the CUDA expression it computes, for the generated comment


@dataclass
class ReduceOp:
    api: str  # ReduceMax | ReduceSum
    slot: int  # result slot in the reduction buffer
    src: Operand
    var: str  # the C++ scalar the result is read into
    adjust: str | None = None  # C++ expression of `var` applying the CUDA accumulator's non-identity init
    note: str = ""


@dataclass
class Lowered:
    steps: list[VecOp | ReduceOp]
    tmp_slots: int
    reduce_slots: int
    apis: list[str]
    caveats: list[tuple[str, str]]  # (api, text)
    identity_notes: list[str] = field(default_factory=list)


def _vec(node: ir.Node) -> bool:
    """A vector value: depends on the row/element, or is a scalar broadcast into a tile (`Duplicate`)."""
    if isinstance(node, ir.Call) and node.fn == "@Duplicate":
        return True
    return ir.is_vector(node)


def _match(pat: ir.Node, node: ir.Node, env: dict[str, ir.Node]) -> bool:
    if isinstance(pat, ir.Meta):
        vector = pat.name in ("X", "Y")
        if ir.is_vector(node) != vector:
            return False
        bound = env.get(pat.name)
        if bound is None:
            env[pat.name] = node
            return True
        return bound == node
    if isinstance(pat, ir.Const):
        return isinstance(node, ir.Const) and ir.float32(node.value) == ir.float32(pat.value)
    if type(pat) is not type(node):
        return False
    if isinstance(pat, ir.Bin) and pat.op != node.op:  # type: ignore[attr-defined]
        return False
    if isinstance(pat, ir.Call) and (pat.fn != node.fn or len(pat.args) != len(node.args)):  # type: ignore[attr-defined]
        return False
    return all(_match(p, n, env) for p, n in zip(pat.children(), node.children()))


def _substitute(pat: ir.Node, env: dict[str, ir.Node]) -> ir.Node:
    if isinstance(pat, ir.Meta):
        return env[pat.name]
    if isinstance(pat, ir.Bin):
        return ir.Bin(pat.op, _substitute(pat.a, env), _substitute(pat.b, env))
    if isinstance(pat, ir.Neg):
        return ir.Neg(_substitute(pat.a, env))
    if isinstance(pat, ir.Call):
        return ir.Call(pat.fn, tuple(_substitute(a, env) for a in pat.args))
    if isinstance(pat, ir.Select):
        return ir.Select(_substitute(pat.cond, env), _substitute(pat.a, env), _substitute(pat.b, env))
    return pat


def _require(text: str, env: dict[str, ir.Node]) -> bool:
    """A `require: "S <= T"` condition of ops.yaml: decidable only for constant operands."""
    left, op, right = text.split()
    a, b = env.get(left), env.get(right)
    if not isinstance(a, ir.Const) or not isinstance(b, ir.Const):
        return False
    return {"<=": a.value <= b.value, "<": a.value < b.value, ">=": a.value >= b.value, ">": a.value > b.value}[op]


class Lowerer:
    def __init__(self, scalar_names: dict[str, str], param_kinds: dict[str, str] | None = None, count: str = "count"):
        self.table = ops()
        self.scalar_names = dict(scalar_names)
        self.param_kinds = dict(param_kinds or {})  # scalar parameter -> int | float | double
        self.count = count
        self.steps: list[VecOp | ReduceOp] = []
        self.refs: Counter[ir.Node] = Counter()
        self.memo: dict[ir.Node, Operand] = {}
        self.free: list[int] = []
        self.slots = 0
        self.roots: dict[ir.Node, str] = {}
        self.apis: list[str] = []
        self.caveats: list[tuple[str, str]] = []
        self.reduce_vars: dict[ir.Node, str] = {}
        self._counted: set[ir.Node] = set()
        self.identity_notes: list[str] = []
        self.expansions = {k: pattern(v) for k, v in self.table["expansions"].items()}
        self.selects = [(pattern(p["match"]), p) for p in self.table["select_patterns"]]

    # -- normalisation: expansions and select patterns --------------------------------------------------------

    def normalize(self, node: ir.Node) -> ir.Node:
        if isinstance(node, ir.Bin):
            node = ir.Bin(node.op, self.normalize(node.a), self.normalize(node.b))
        elif isinstance(node, ir.Neg):
            node = ir.Neg(self.normalize(node.a))
        elif isinstance(node, ir.Call):
            node = ir.Call(node.fn, tuple(self.normalize(a) for a in node.args))
            if node.fn in self.expansions and _vec(node):
                metas = sorted({m.name for m in ir.walk(self.expansions[node.fn]) if isinstance(m, ir.Meta)})
                return self.normalize(_substitute(self.expansions[node.fn], dict(zip(metas, node.args))))
        elif isinstance(node, ir.Select):
            # patterns first on the select as written (nested clamps), then on its normalised form
            for candidate in (node, ir.Select(self.normalize(node.cond), self.normalize(node.a), self.normalize(node.b))):
                found = self._select(candidate)
                if found is not None:
                    return found
            return candidate
        elif isinstance(node, ir.Reduce):
            node = ir.Reduce(node.op, self.normalize(node.arg), node.init)
        return node

    def _select(self, node: ir.Select) -> ir.Node | None:
        for pat, entry in self.selects:
            env: dict[str, ir.Node] = {}
            if _match(pat, node, env) and ("require" not in entry or _require(entry["require"], env)):
                env = {k: self.normalize(v) for k, v in env.items()}
                if "caveat" in entry:
                    self._caveat(entry.get("api", "select"), entry["caveat"])
                if "rewrite" in entry:
                    return self.normalize(_substitute(pattern(entry["rewrite"]), env))
                return ir.Call(f"@{entry['api']}", tuple(env[k] for k in ("X", "S") if k in env))
        return None

    # -- reference counts -------------------------------------------------------------------------------------

    def _count(self, root: ir.Node) -> None:
        seen = self._counted  # each operand edge once, however many roots share the node
        stack = [root]
        while stack:
            n = stack.pop()
            if n in seen or not _vec(n):
                continue
            seen.add(n)
            for c in self._operands(n):
                self.refs[c] += 1
                stack.append(c)

    def _operands(self, n: ir.Node) -> list[ir.Node]:
        return [c for c in n.children() if _vec(c)]

    # -- entry ------------------------------------------------------------------------------------------------

    def lower(self, stores: list[Store], buffers: dict[str, str]) -> Lowered:
        values = [(st.buf, self.normalize(st.value)) for st in stores]
        reduces = self._reductions([v for _, v in values])
        for r in reduces:
            self._count(r.arg)
            self.refs[r.arg] += 1
        for buf, v in values:
            self._count(v)
            if _vec(v):
                self.refs[v] += 1
                self.roots.setdefault(v, buf)
        for k, r in enumerate(reduces):
            self._reduce(k, r)
        for buf, v in values:
            self._store(buf, v, buffers)
        return Lowered(self.steps, self.slots, len(reduces), self.apis, self.caveats, self.identity_notes)

    def _reductions(self, values: list[ir.Node]) -> list[ir.Reduce]:
        found: list[ir.Reduce] = []

        def visit(n: ir.Node) -> None:
            for c in n.children():
                visit(c)
            if isinstance(n, ir.Reduce) and n not in found:
                found.append(n)  # post-order: a reduction after the ones its argument uses

        for v in values:
            visit(v)
        return found

    def _reduce(self, k: int, r: ir.Reduce) -> None:
        spec = self.table["reductions"][r.op]
        if not _vec(r.arg):
            raise Unsupported(f"reduction of a value that does not depend on the row: {ir.show(r.arg)}", expr=ir.show(r))
        src = self._value(r.arg)
        var = f"r{k}"
        init = r.init
        adjust = None
        if r.op == "max":
            if not (isinstance(init, ir.Const) and init.value <= spec["identity_at_most"]):
                adjust = f"({var} > {self.scalar(init)} ? {var} : {self.scalar(init)})"
            else:
                self.identity_notes.append(
                    f"row max: CUDA starts from {ir.c_float(init.value)}, {spec['api']} from the first element; "
                    "they agree unless a whole row is -inf or NaN")
        elif not (isinstance(init, ir.Const) and init.value == spec["identity"]):
            adjust = f"({self.scalar(init)} + {var})"
        self._use(spec["api"])
        self.steps.append(ReduceOp(spec["api"], k, src, var, adjust, note=ir.show(r)))
        self._release(r.arg)
        self.reduce_vars[r] = var

    def _store(self, buf: str, v: ir.Node, buffers: dict[str, str]) -> None:
        out = Operand("out", buf)
        if not _vec(v):
            self._use("Duplicate")
            self.steps.append(VecOp("Duplicate", out, [], self.scalar(v), note=ir.show(v)))
            return
        if v in self.memo or isinstance(v, ir.Load) or self.refs[v] > 1:
            src = self._value(v)  # shared with another use: copy it (x * 1 is exact, -0 and NaN included)
            self._use("Muls")
            self.steps.append(VecOp("Muls", out, [src], "1.0f", note=ir.show(v)))
            self._release(v)
            return
        self._value(v, dst=out)
        self.refs[v] -= 1

    # -- values -----------------------------------------------------------------------------------------------

    def scalar(self, node: ir.Node) -> str:
        names = dict(self.scalar_names)
        for r, var in self.reduce_vars.items():
            names[f"reduce:{ir.id_of(r)}"] = var
        stack = [node]
        while stack:
            n = stack.pop()
            if isinstance(n, ir.Reduce):
                if f"reduce:{ir.id_of(n)}" not in names:
                    raise Unsupported("a reduction used before it is computed", expr=ir.show(node))
                continue  # its argument is a vector expression, already lowered
            stack.extend(n.children())
            if isinstance(n, ir.Call) and not all(isinstance(a, ir.Const) for a in n.args):
                raise Unsupported(f"scalar function {n.fn}() of run-time values", expr=ir.show(n))
            if isinstance(n, ir.Bin) and n.op not in ("+", "-", "*", "/"):
                raise Unsupported(f"scalar operator '{n.op}'", expr=ir.show(n))
        kind = self.kind(node)
        if kind == "double":
            self._caveat("scalar", f"'{ir.show(node)}' is double precision in CUDA (the vector operand is promoted to "
                         "double there); the AscendC port rounds it to float and computes in float")
        if isinstance(node, ir.Const):
            return ir.c_float(node.value)
        # the same C++ expression as in CUDA, over members of the same types: identical integer/float semantics
        text = ir.to_c(node, names)
        return text if kind == "float" else f"static_cast<float>({text})"

    def kind(self, node: ir.Node) -> str:
        """The C type (int, float, double) of a scalar expression."""
        if isinstance(node, ir.Const):
            return node.kind
        if isinstance(node, ir.Param):
            return self.param_kinds.get(node.name, "float")
        if isinstance(node, ir.Reduce):
            return "float"
        if isinstance(node, ir.Neg):
            return self.kind(node.a)
        if isinstance(node, ir.Bin):
            return ir.promote(self.kind(node.a), self.kind(node.b))
        if isinstance(node, ir.Select):
            return ir.promote(self.kind(node.a), self.kind(node.b))
        return "double"

    def _value(self, node: ir.Node, dst: Operand | None = None) -> Operand:
        if node in self.memo:
            return self.memo[node]
        if isinstance(node, ir.Load):
            op = Operand("in", node.buf)
            self.memo[node] = op
            return op
        api, vec_args, scalar = self._instruction(node)
        for a in set(vec_args):  # operands made up by the lowering itself (broadcasts, negations)
            if a not in self.memo and self.refs[a] == 0:
                self.refs[a] = vec_args.count(a)
        # broadcasts last: they have no operands, so computing them just before use keeps fewer tiles live
        order = sorted(range(len(vec_args)), key=lambda i: isinstance(vec_args[i], ir.Call) and vec_args[i].fn == "@Duplicate")
        computed = {i: self._value(vec_args[i]) for i in order}
        srcs = [computed[i] for i in range(len(vec_args))]
        if dst is None:
            dst = self._destination(node, vec_args, srcs)
        self._use(api)
        self.steps.append(VecOp(api, dst, srcs, scalar, note=ir.show(node)))
        for a in vec_args:
            self._release(a)
        self.memo[node] = dst
        return dst

    def _destination(self, node: ir.Node, args: list[ir.Node], srcs: list[Operand]) -> Operand:
        for a, s in zip(args, srcs):
            if s.is_scratch() and self.refs[a] == args.count(a):  # its last use is this instruction
                self.memo.pop(a, None)
                self.refs[a] = 0
                return s
        if self.free:
            return Operand("tmp", slot=self.free.pop())
        self.slots += 1
        return Operand("tmp", slot=self.slots - 1)

    def _release(self, node: ir.Node) -> None:
        if self.refs[node] <= 0:
            return
        self.refs[node] -= 1
        if self.refs[node] == 0:
            op = self.memo.pop(node, None)
            if op is not None and op.kind == "tmp" and op.slot not in self.free:
                self.free.append(op.slot)

    def _use(self, api: str) -> None:
        if api not in self.apis:
            self.apis.append(api)
            text = self.table["api_caveats"].get(api)
            if text:
                self._caveat(api, text)

    def _caveat(self, api: str, text: str) -> None:
        if (api, text) not in self.caveats:
            self.caveats.append((api, text))

    def _instruction(self, node: ir.Node) -> tuple[str, list[ir.Node], str | None]:
        """(API, vector operands, scalar operand) of one vector node, or Unsupported."""
        t = self.table
        if isinstance(node, ir.Call) and node.fn == "@Duplicate":
            return "Duplicate", [], self.scalar(node.args[0])
        if isinstance(node, ir.Neg):
            return "Muls", [node.a], "-1.0f"
        if isinstance(node, ir.Call) and node.fn.startswith("@"):  # a matched select pattern
            api = node.fn[1:]
            return api, [node.args[0]], self.scalar(node.args[1]) if len(node.args) > 1 else None
        if isinstance(node, ir.Call) and node.fn in t["unary"] and len(node.args) == 1:
            return t["unary"][node.fn], [node.args[0]], None
        if isinstance(node, ir.Call) and len(node.args) == 2 and node.fn in t["binary"]:
            return self._binary(node.fn, node.args[0], node.args[1], node)
        if isinstance(node, ir.Bin) and node.op in t["binary"]:
            return self._binary(node.op, node.a, node.b, node)
        what = {ir.Select: "a data-dependent select", ir.Call: "this function", ir.Bin: "this operator"}
        raise Unsupported(what.get(type(node), "this expression"), expr=ir.show(node))

    def _binary(self, op: str, a: ir.Node, b: ir.Node, node: ir.Node) -> tuple[str, list[ir.Node], str | None]:
        t = self.table
        va, vb = _vec(a), _vec(b)
        if va and vb:
            return t["binary"][op], [a, b], None
        vs = t["vector_scalar"].get(op)
        if va and vs is not None:
            self._vs_caveat(vs)
            s = self.scalar(b)
            return vs["api"], [a], (f"(-{s})" if vs.get("negate_scalar") else s)
        if vb and vs is not None and not vs.get("negate_scalar"):  # commutative: s op x == x op s
            self._vs_caveat(vs)
            return vs["api"], [b], self.scalar(a)
        if vb and op == "-":  # s - x == (-x) + s, exactly
            return "Adds", [ir.Neg(b)], self.scalar(a)
        if op == "/":  # a scalar on either side of a division: broadcast it, then Div
            dup = ir.Call("@Duplicate", (a if vb else b,))
            return "Div", ([dup, b] if vb else [a, dup]), None
        raise Unsupported(f"operator '{op}' with a scalar operand", expr=ir.show(node))

    def _vs_caveat(self, entry: dict) -> None:
        if entry.get("caveat"):
            self._caveat(entry["api"], entry["caveat"])
