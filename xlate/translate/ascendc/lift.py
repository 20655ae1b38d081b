"""Lift a CUDA kernel body into per-element value expressions (ir.py) by symbolic execution of its statements.

Two kernel shapes are recognised, the ones the AscendC templates map:
  * elementwise: `i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) { ... out[i] = f(in[i], scalars); }`,
    or the grid-stride loop `for (i = gid; i < n; i += blockDim.x * gridDim.x)`;
  * rows: one block per row (`row = blockIdx.x`), column loops `for (c = threadIdx.x; c < cols; c += blockDim.x)`
    that accumulate (`m = fmaxf(m, xr[c])`, `s += e`), shared-memory tree reductions of those partials
    (`red[tid] = m; for (s = blockDim.x/2; s > 0; s >>= 1) if (tid < s) red[tid] = op(red[tid], red[tid+s]);`)
    read back as `red[0]`, and a final column loop that stores `yr[c] = f(xr[c], reductions)`.
Anything else raises Unsupported with the source location: the rules do not guess.

The kernel is read as the Triton lifter reads it (xlate.cir): macro-expanded by the shared preprocessor, parsed
by the one C front end, its numbers and C types by C's rules; a diagnostic inside a macro's expansion points at
the macro's use.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import tree_sitter as ts

from xlate.cir import ctype
from xlate.cir.build import BuildError, FunctionSource, function_source, parse_number
from xlate.model import Function, KernelUnit
from xlate.parse.frontend import parse_c
from xlate.parse.nodes import Source
from xlate.translate.ascendc import ir
from xlate.translate.ascendc.tables import ops


class Unsupported(Exception):
    def __init__(self, message: str, node: ts.Node | None = None, *, expr: str | None = None,
                 at: tuple[int, int] | None = None):
        super().__init__(message)
        self.message = message
        self.node = node
        self.expr = expr
        self.at = at  # (line, col) in the file, when known without the node


@dataclass(frozen=True)
class PtrParam:
    name: str


@dataclass(frozen=True)
class RowPtr:
    buf: str  # buf + row * cols


@dataclass(frozen=True)
class Shared:
    name: str


@dataclass(frozen=True)
class Partial:
    """A per-thread accumulation over the columns it visits, not yet combined across the block."""

    op: str
    arg: ir.Node
    init: ir.Node


@dataclass
class Store:
    buf: str
    value: ir.Node
    node: ts.Node


@dataclass
class Lifted:
    kind: str  # elementwise | rows
    stores: list[Store]
    domain: str | None  # elementwise: the size bounding the index; rows: the row count (None: no guard)
    row_len: str | None = None  # rows: the row length
    grid_stride: bool = False
    tree_block: list[str] = field(default_factory=list)  # rows: block-size expressions the trees start from
    guarded: bool = False  # rows: `if (row >= rows) return;` present


GEOMETRY = {("blockIdx", "x"): "bid", ("threadIdx", "x"): "tid", ("blockDim", "x"): "bdim", ("gridDim", "x"): "gdim"}
ASSIGN_OPS = {"+=": "+", "-=": "-", "*=": "*", "/=": "/", "%=": "%", "^=": "^", "&=": "&", "|=": "|", "<<=": "<<", ">>=": ">>"}
IGNORED_CALLS = ("__syncthreads",)


def _f32(v: float) -> float:
    return ir.float32(v)


def _fold(op: str, a: ir.Const, b: ir.Const) -> ir.Const | None:
    """`a op b` of two literals with C's semantics: integer arithmetic for two ints, else float or double."""
    kind = ir.promote(a.kind, b.kind)
    x, y = a.value, b.value
    if kind == "int":
        x, y = int(x), int(y)
        if op in ("/", "%") and y == 0:
            return None
        r = {"+": x + y, "-": x - y, "*": x * y, "/": int(x / y) if op == "/" else 0,
             "%": x - int(x / y) * y if op == "%" else 0}.get(op)
        return None if r is None or not -(2**31) <= r < 2**31 else ir.Const(float(r), "int")
    if op not in ("+", "-", "*", "/"):
        return None
    if kind == "float":
        x, y = _f32(x), _f32(y)
    try:
        if op == "/":
            r = x / y if y != 0 else (math.copysign(math.inf, x) * math.copysign(1.0, y) if x != 0 else math.nan)
        else:
            r = {"+": x + y, "-": x - y, "*": x * y}[op]
    except OverflowError:
        return None
    return ir.Const(_f32(r) if kind == "float" else r, kind)


class Lifter:
    def __init__(self, unit: KernelUnit, fn: Function, sizes: set[str], scalars: set[str], block: int | None):
        self.unit = unit
        self.fn = fn
        try:
            self.fs: FunctionSource | None = function_source(unit, fn)
        except BuildError as exc:
            self.fs = None
            self.error = Unsupported(exc.what, at=(exc.loc.line, exc.loc.col))
        self.src = Source(unit.path, self.fs.src if self.fs else b"")
        self.sizes = sizes
        self.scalars = scalars
        self.pointers = {p.name for p in fn.params if p.is_pointer}
        self.block = block
        self.env: dict[str, object] = {}
        self.shared: dict[str, object] = {}
        self.stores: list[Store] = []
        self.stored: dict[str, ir.Node] = {}
        self.mode: str | None = None  # None | elem | rowloop
        self.index_var: str | None = None  # elementwise: the variable holding the global index
        self.col_var: str | None = None
        self.domain: str | None = None
        self.row_len: str | None = None
        self.kind: str | None = None
        self.grid_stride = False
        self.tree_block: list[str] = []
        self.guarded = False
        self.returned = False

    # -- entry ------------------------------------------------------------------------------------------------

    def lift(self) -> Lifted:
        body = self._function_body()
        self._block(body)
        if not self.stores:
            raise Unsupported("no store to an output element was recognised", body)
        seen: set[str] = set()
        for st in self.stores:
            if st.buf in seen:
                raise Unsupported(f"'{st.buf}' is stored more than once per element", st.node)
            seen.add(st.buf)
        assert self.kind is not None
        return Lifted(self.kind, self.stores, self.domain, self.row_len, self.grid_stride, self.tree_block, self.guarded)

    def _function_body(self) -> ts.Node:
        if self.fs is None:
            raise self.error
        fdef = self.fs.definition()
        body = fdef.child_by_field_name("body") if fdef is not None else None
        if body is None or body.type != "compound_statement":
            raise Unsupported("kernel body not found in the syntax tree")
        return body

    def where(self, exc: Unsupported) -> tuple[int, int] | None:
        """(line, col) in the file of what `exc` is about."""
        if exc.at is not None or exc.node is None or self.fs is None:
            return exc.at
        loc = self.fs.loc(exc.node)
        return loc.line, loc.col

    def text(self, node: ts.Node | None) -> str:
        return self.src.text(node)

    # -- statements -------------------------------------------------------------------------------------------

    def _block(self, node: ts.Node) -> None:
        for child in node.named_children:
            if self.returned:
                raise Unsupported("statements after an unconditional return", child)
            self._stmt(child)

    def _stmt(self, node: ts.Node) -> None:
        t = node.type
        if t in ("comment", "empty_statement"):
            return
        if t == "compound_statement":
            self._block(node)
        elif t == "declaration":
            self._declaration(node)
        elif t == "expression_statement":
            if node.named_children:
                self._expr_stmt(node.named_children[0])
        elif t == "if_statement":
            self._if(node)
        elif t == "for_statement":
            self._for(node)
        elif t == "return_statement":
            if node.named_children:
                raise Unsupported("a kernel cannot return a value", node)
            self.returned = True
        else:
            raise Unsupported(f"statement '{t.replace('_', ' ')}' has no AscendC template", node)

    def _declaration(self, node: ts.Node) -> None:
        type_text = self.text(node.child_by_field_name("type"))
        qualifiers = self.text(node)
        if type_text.startswith("__xl_"):  # a cooperative-groups handle, as the preprocessor names its type
            raise Unsupported("cooperative groups have no AscendC template", node)
        for decl in node.children_by_field_name("declarator"):
            if decl.type == "init_declarator":
                target = decl.child_by_field_name("declarator")
                value_node = decl.child_by_field_name("value")
                name = self._declared_name(target)
                value = self._value(value_node)
                if target is not None and target.type == "pointer_declarator" and not isinstance(value, RowPtr):
                    raise Unsupported("only row pointers `x + row * cols` can be declared", decl)
                self._check_type(type_text, value, decl)
                self.env[name] = value
            elif decl.type == "array_declarator" and "__shared__" in qualifiers:
                name = self._declared_name(decl)
                self.env[name] = Shared(name)
                self.shared[name] = None
            elif decl.type == "identifier":
                self.env[self.text(decl)] = None  # declared, not yet assigned
            else:
                raise Unsupported(f"declaration '{self.text(decl)}' has no AscendC template", decl)

    def _check_type(self, type_text: str, value: object, node: ts.Node) -> None:
        base = " ".join(type_text.replace("const", " ").split())
        if isinstance(value, ir.Node) and ir.is_vector(value) and not ctype.is_float(ctype.canonical(base)):
            raise Unsupported(f"per-element value held in a '{base}' variable", node)

    def _declared_name(self, node: ts.Node | None) -> str:
        while node is not None and node.type != "identifier":
            node = node.child_by_field_name("declarator") or (node.named_children[0] if node.named_children else None)
        if node is None:
            raise Unsupported("unnamed declaration")
        return self.text(node)

    def _expr_stmt(self, node: ts.Node) -> None:
        if node.type == "assignment_expression":
            self._assign(node)
        elif node.type == "call_expression" and self.text(node.child_by_field_name("function")) in IGNORED_CALLS:
            return  # barriers: the AscendC stages synchronise through their queues
        else:
            raise Unsupported(f"expression statement '{self.text(node)}' has no AscendC template", node)

    def _assign(self, node: ts.Node) -> None:
        left = node.child_by_field_name("left")
        right = node.child_by_field_name("right")
        op = self.text(node.child_by_field_name("operator"))
        if left is None or right is None:
            raise Unsupported("incomplete assignment", node)
        if left.type == "identifier":
            name = self.text(left)
            if name not in self.env:
                raise Unsupported(f"assignment to '{name}', which is not a local variable", node)
            value = self._value(right)
            if op != "=":
                old = self.env[name]
                if not isinstance(old, ir.Node) or not isinstance(value, ir.Node):
                    raise Unsupported(f"compound assignment to '{name}'", node)
                value = self._bin(ASSIGN_OPS[op], old, value, node)
            self.env[name] = value
            return
        if left.type == "subscript_expression":
            base = self._value(left.child_by_field_name("argument"))
            index = self._index(left)
            if isinstance(base, Shared):
                self._shared_store(base.name, index, right, op, node)
                return
            buf = self._element_buffer(base, index, left)
            value = self._value(right)
            if op != "=":
                value = self._bin(ASSIGN_OPS[op], ir.Load(buf), value, node)
            if not isinstance(value, ir.Node):
                raise Unsupported("store of a non-value", node)
            if any(isinstance(n, ir.Meta) for n in ir.walk(value)):
                raise Unsupported("store of a running accumulation (a partial value inside a column loop)", node)
            self._mark_kind("elementwise" if self.mode == "elem" else "rows", node)
            self.stores.append(Store(buf, value, node))
            self.stored[buf] = value  # a later read of this element in the same thread sees the stored value
            return
        raise Unsupported(f"assignment to '{self.text(left)}' has no AscendC template", node)

    # -- control flow -----------------------------------------------------------------------------------------

    def _if(self, node: ts.Node) -> None:
        cond = node.child_by_field_name("condition")
        cond = cond.named_children[0] if cond is not None and cond.type == "condition_clause" else cond
        then = node.child_by_field_name("consequence")
        other = node.child_by_field_name("alternative")
        if cond is None or then is None:
            raise Unsupported("incomplete if statement", node)
        if other is None and cond.type == "binary_expression":
            left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
            op = self.text(cond.child_by_field_name("operator"))
            lv, rv = self._value(left), self._value(right)
            # if (i < n) { body }: the elementwise bound
            if op == "<" and lv == ir.Builtin("gid") and isinstance(rv, ir.Param) and rv.name in self.sizes and self.mode is None:
                self.mode, self.domain = "elem", rv.name
                self._stmt(then)
                self.mode = None
                if self.returned:
                    raise Unsupported("return inside the bounds check", then)
                return
            # if (i >= n) return; / if (row >= rows) return;
            if op == ">=" and isinstance(rv, ir.Param) and rv.name in self.sizes and self._is_return(then):
                if lv == ir.Builtin("gid") and self.mode is None:
                    self.mode, self.domain = "elem", rv.name
                    return
                if lv == ir.Builtin("bid") and self.mode is None:
                    self.domain, self.guarded = rv.name, True
                    return
        raise Unsupported(f"data-dependent branch 'if ({self.text(cond)})' has no AscendC template", node)

    def _is_return(self, node: ts.Node) -> bool:
        if node.type == "return_statement":
            return not node.named_children
        if node.type == "compound_statement":
            kids = [c for c in node.named_children if c.type != "comment"]
            return len(kids) == 1 and self._is_return(kids[0])
        return False

    def _for(self, node: ts.Node) -> None:
        init = node.child_by_field_name("initializer")
        cond = node.child_by_field_name("condition")
        update = node.child_by_field_name("update")
        body = node.child_by_field_name("body")
        if init is None or cond is None or update is None or body is None:
            raise Unsupported("for loop without initializer, condition or update", node)
        var, start = self._loop_init(init)
        if cond.type != "binary_expression":
            raise Unsupported(f"loop condition '{self.text(cond)}'", cond)
        cop = self.text(cond.child_by_field_name("operator"))
        cleft = self.text(cond.child_by_field_name("left"))
        bound = self._value(cond.child_by_field_name("right"))
        step_op, step = self._loop_update(update, var)
        # grid-stride elementwise loop
        if (start == ir.Builtin("gid") and cop == "<" and cleft == var and isinstance(bound, ir.Param)
                and bound.name in self.sizes and step_op == "+" and step == ir.Builtin("stride") and self.mode is None):
            self.mode, self.domain, self.grid_stride = "elem", bound.name, True
            self.env[var] = ir.Builtin("gid")
            self._stmt(body)
            self.mode = None
            return
        # column loop of a row kernel
        if (start == ir.Builtin("tid") and cop == "<" and cleft == var and isinstance(bound, ir.Param)
                and bound.name in self.sizes and step_op == "+" and step == ir.Builtin("bdim") and self.mode is None):
            if self.row_len not in (None, bound.name):
                raise Unsupported("column loops over different lengths", node)
            self.row_len = bound.name
            self._mark_kind("rows", node)
            self._column_loop(var, body)
            return
        # shared-memory tree reduction
        if cop == ">" and cleft == var and ir.is_number(bound, 0) and step_op in (">>", "/") and self.mode is None:
            self._tree(var, start, step_op, step, body, node)
            return
        raise Unsupported(f"loop 'for ({self.text(init).rstrip(';')}; {self.text(cond)}; {self.text(update)})' "
                          "has no AscendC template", node)

    def _loop_init(self, init: ts.Node) -> tuple[str, object]:
        if init.type == "declaration":
            decls = init.children_by_field_name("declarator")
            if len(decls) == 1 and decls[0].type == "init_declarator":
                name = self._declared_name(decls[0].child_by_field_name("declarator"))
                return name, self._value(decls[0].child_by_field_name("value"))
        if init.type == "assignment_expression" and self.text(init.child_by_field_name("operator")) == "=":
            left = init.child_by_field_name("left")
            if left is not None and left.type == "identifier":
                return self.text(left), self._value(init.child_by_field_name("right"))
        raise Unsupported(f"loop initializer '{self.text(init)}'", init)

    def _loop_update(self, update: ts.Node, var: str) -> tuple[str, object]:
        if update.type == "assignment_expression" and self.text(update.child_by_field_name("left")) == var:
            op = self.text(update.child_by_field_name("operator"))
            if op in ("+=", ">>=", "/="):
                return ASSIGN_OPS[op], self._value(update.child_by_field_name("right"))
        raise Unsupported(f"loop update '{self.text(update)}'", update)

    def _column_loop(self, var: str, body: ts.Node) -> None:
        outer = dict(self.env)
        assigned = self._assigned_names(body)
        acc_names = [n for n in assigned if n in outer]
        for n in acc_names:
            if not isinstance(outer[n], ir.Node):
                raise Unsupported(f"'{n}' is assigned in a column loop but has no value before it", body)
        for n in acc_names:
            self.env[n] = ir.Meta(f"acc:{n}")
        self.env[var] = ir.Builtin("col")
        self.mode, self.col_var = "rowloop", var
        self._stmt(body)
        self.mode, self.col_var = None, None
        after = self.env
        self.env = outer
        for n in acc_names:
            new = after.get(n)
            if new == ir.Meta(f"acc:{n}"):
                continue  # not touched in the loop
            if not isinstance(new, ir.Node):
                raise Unsupported(f"'{n}' changes type in a column loop", body)
            self.env[n] = self._partial(n, new, outer[n], body)

    def _assigned_names(self, body: ts.Node) -> list[str]:
        names: list[str] = []
        stack = [body]
        while stack:
            n = stack.pop()
            if n.type == "assignment_expression":
                left = n.child_by_field_name("left")
                if left is not None and left.type == "identifier" and self.text(left) not in names:
                    names.append(self.text(left))
            stack.extend(n.named_children)
        return names

    def _partial(self, name: str, new: ir.Node, init: object, where: ts.Node) -> Partial:
        acc = ir.Meta(f"acc:{name}")
        for op, spec in ops()["reductions"].items():
            for comb in spec["combine"]:
                if comb == "+" and isinstance(new, ir.Bin) and new.op == "+":
                    pair = (new.a, new.b)
                elif isinstance(new, ir.Call) and new.fn == comb and len(new.args) == 2:
                    pair = new.args
                else:
                    continue
                arg = pair[1] if pair[0] == acc else pair[0] if pair[1] == acc else None
                if arg is not None and acc not in ir.walk(arg):
                    if not isinstance(init, ir.Node) or ir.is_vector(init):
                        raise Unsupported(f"accumulator '{name}' has no uniform initial value", where)
                    return Partial(op, arg, init)
        raise Unsupported(f"'{name}' is updated in a column loop in a way that is not a max or sum accumulation", where)

    def _tree(self, var: str, start: object, step_op: str, step: object, body: ts.Node, node: ts.Node) -> None:
        if not ir.is_number(step, 2 if step_op == "/" else 1):
            raise Unsupported("tree reduction that does not halve its stride", node)
        if isinstance(start, ir.Bin) and start.op == "/" and start.a == ir.Builtin("bdim") and ir.is_number(start.b, 2):
            self.tree_block.append("blockDim.x")
        elif isinstance(start, ir.Const) and self.block is not None and start.value * 2 == self.block:
            self.tree_block.append(str(self.block))
        else:
            raise Unsupported("tree reduction that does not start at half the block size", node)
        stmts = [c for c in (body.named_children if body.type == "compound_statement" else [body]) if c.type != "comment"]
        combine = [s for s in stmts if not self._is_barrier(s)]
        if len(combine) != 1 or combine[0].type != "if_statement":
            raise Unsupported("tree reduction body is not `if (tid < s) red[tid] = op(red[tid], red[tid + s]);`", body)
        branch = combine[0]
        cond = branch.child_by_field_name("condition")
        cond = cond.named_children[0] if cond is not None and cond.named_children else cond
        if self.text(cond).replace(" ", "") != f"{self._tid_name()}<{var}":
            raise Unsupported(f"tree reduction guard '{self.text(cond)}'", cond)
        then = branch.child_by_field_name("consequence")
        if then is not None and then.type == "compound_statement" and len(then.named_children) == 1:
            then = then.named_children[0]
        if then is None or then.type != "expression_statement" or not then.named_children:
            raise Unsupported("tree reduction step is not a single assignment", branch)
        step_expr = then.named_children[0]
        name, op = self._tree_step(step_expr, var)
        partial = self.shared.get(name)
        if not isinstance(partial, Partial):
            raise Unsupported(f"tree reduction over '{name}' before a per-thread partial was stored in it", node)
        if partial.op != op:
            raise Unsupported(f"the tree combines with {op} values accumulated with {partial.op}", node)
        self.shared[name] = ir.Reduce(partial.op, partial.arg, partial.init)

    def _is_barrier(self, node: ts.Node) -> bool:
        return node.type == "expression_statement" and self.text(node).replace(" ", "") in ("__syncthreads();",)

    def _tid_name(self) -> str:
        names = [n for n, v in self.env.items() if v == ir.Builtin("tid")]
        return names[0] if names else "threadIdx.x"

    def _tree_step(self, node: ts.Node, var: str) -> tuple[str, str]:
        tid = self._tid_name()
        txt = re.sub(r"\s+", "", self.text(node))
        m = re.fullmatch(rf"(\w+)\[{re.escape(tid)}\]\+=(\w+)\[{re.escape(tid)}\+{var}\]", txt)
        if m and m.group(1) == m.group(2):
            return m.group(1), "sum"
        m = re.fullmatch(rf"(\w+)\[{re.escape(tid)}\]=(\w+)\((\w+)\[{re.escape(tid)}\],(\w+)\[{re.escape(tid)}\+{var}\]\)", txt)
        if m and len({m.group(1), m.group(3), m.group(4)}) == 1:
            for op, spec in ops()["reductions"].items():
                if m.group(2) in spec["combine"]:
                    return m.group(1), op
        m = re.fullmatch(rf"(\w+)\[{re.escape(tid)}\]=(\w+)\[{re.escape(tid)}\]\+(\w+)\[{re.escape(tid)}\+{var}\]", txt)
        if m and m.group(1) == m.group(2) == m.group(3):
            return m.group(1), "sum"
        raise Unsupported(f"tree reduction step '{self.text(node)}'", node)

    def _shared_store(self, name: str, index: object, right: ts.Node, op: str, node: ts.Node) -> None:
        if op != "=" or index != ir.Builtin("tid"):
            raise Unsupported(f"shared-memory store '{self.text(node)}' is not `{name}[tid] = partial`", node)
        value = self._value(right)
        if not isinstance(value, Partial):
            raise Unsupported(f"'{self.text(right)}' stored to shared memory is not a column-loop accumulation", node)
        self.shared[name] = value

    # -- expressions ------------------------------------------------------------------------------------------

    def _mark_kind(self, kind: str, node: ts.Node) -> None:
        if self.kind not in (None, kind):
            raise Unsupported("a kernel that mixes elementwise and row-wise structure", node)
        self.kind = kind

    def _index(self, subscript: ts.Node) -> object:
        args = subscript.child_by_field_name("indices") or subscript.child_by_field_name("index")
        if args is None:
            kids = [c for c in subscript.named_children if c.type == "subscript_argument_list"]
            args = kids[0] if kids else None
        if args is None:
            raise Unsupported("subscript without an index", subscript)
        inner = args.named_children[0] if args.type == "subscript_argument_list" and args.named_children else args
        return self._value(inner)

    def _element_buffer(self, base: object, index: object, node: ts.Node) -> str:
        if isinstance(base, PtrParam):
            if self.mode == "elem" and index == ir.Builtin("gid"):
                return base.name
            if self.mode == "rowloop" and index == ir.Bin("+", ir.Bin("*", ir.Builtin("bid"), ir.Param(self.row_len or "")), ir.Builtin("col")):
                return base.name
        if isinstance(base, RowPtr) and self.mode == "rowloop" and index == ir.Builtin("col"):
            return base.buf
        if self.mode is None:
            raise Unsupported(f"access '{self.text(node)}' outside a bounds check `if (i < n)` or a column loop", node)
        where = {"elem": "the thread's element", "rowloop": "the row's column"}[self.mode]
        raise Unsupported(f"access '{self.text(node)}' is not {where} (gathers, strides and neighbours have no template)", node)

    def _value(self, node: ts.Node | None) -> object:
        if node is None:
            raise Unsupported("missing expression")
        t = node.type
        if t == "number_literal":
            return _number(self.text(node), node)
        if t in ("true", "false"):
            return ir.Const(1.0 if t == "true" else 0.0, "int")
        if t == "identifier":
            return self._name(self.text(node), node)
        if t == "parenthesized_expression":
            return self._value(node.named_children[0])
        if t == "field_expression":
            key = (self.text(node.child_by_field_name("argument")), self.text(node.child_by_field_name("field")))
            if key in GEOMETRY:
                return ir.Builtin(GEOMETRY[key])
            raise Unsupported(f"'{self.text(node)}' (only the x dimension of the launch maps to AscendC cores)", node)
        if t == "binary_expression":
            a = self._value(node.child_by_field_name("left"))
            b = self._value(node.child_by_field_name("right"))
            return self._bin(self.text(node.child_by_field_name("operator")), a, b, node)
        if t == "unary_expression":
            op = self.text(node.child_by_field_name("operator"))
            v = self._value(node.child_by_field_name("argument"))
            if op == "+" and isinstance(v, ir.Node):
                return v
            if op == "-" and isinstance(v, ir.Node):
                if isinstance(v, ir.Const):
                    return ir.Const(-v.value, v.kind)
                return v.a if isinstance(v, ir.Neg) else ir.Neg(v)
            raise Unsupported(f"operator '{op}'", node, expr=self.text(node))
        if t == "conditional_expression":
            c = self._value(node.child_by_field_name("condition"))
            a = self._value(node.child_by_field_name("consequence"))
            b = self._value(node.child_by_field_name("alternative"))
            if not all(isinstance(v, ir.Node) for v in (c, a, b)):
                raise Unsupported("conditional over non-values", node)
            return ir.Select(c, a, b)  # type: ignore[arg-type]
        if t == "call_expression":
            return self._call(node)
        if t == "subscript_expression":
            base = self._value(node.child_by_field_name("argument"))
            index = self._index(node)
            if isinstance(base, Shared):
                value = self.shared.get(base.name)
                if ir.is_number(index, 0) and isinstance(value, ir.Reduce):
                    return value
                raise Unsupported(f"read of shared '{self.text(node)}' other than a completed tree reduction's [0]", node)
            buf = self._element_buffer(base, index, node)
            return self.stored.get(buf, ir.Load(buf))
        if t == "cast_expression":
            type_text = " ".join(self.text(node.child_by_field_name("type")).replace("const", " ").split())
            v = self._value(node.child_by_field_name("value"))
            if type_text in ("float",) and isinstance(v, ir.Node):
                return v
            raise Unsupported(f"cast to '{type_text}'", node, expr=self.text(node))
        raise Unsupported(f"expression '{self.text(node)}' ({t.replace('_', ' ')})", node, expr=self.text(node))

    def _name(self, name: str, node: ts.Node) -> object:
        if name in self.env:
            v = self.env[name]
            if v is None:
                raise Unsupported(f"'{name}' is read before it is assigned", node)
            return v
        if name in self.pointers:
            return PtrParam(name)
        if name in self.scalars or name in self.sizes:
            return ir.Param(name)
        if name in self.unit.constants:
            return self._expr_text(self.unit.constants[name], node)
        raise Unsupported(f"'{name}' is not a parameter, local or numeric macro", node, expr=name)

    def _expr_text(self, text: str, node: ts.Node) -> object:
        """The value of a file-scope constant's initialiser, used at `node`."""
        value = parse_expression(text)
        sub = Lifter.__new__(Lifter)
        sub.__dict__.update(self.__dict__)
        sub.src = Source("<constant>", value[1])
        try:
            return sub._value(value[0])
        except Unsupported as exc:
            exc.node = node  # the constant's use, not a node of its initialiser
            raise

    def _call(self, node: ts.Node) -> object:
        fn_node = node.child_by_field_name("function")
        name = self.text(fn_node)
        args_node = node.child_by_field_name("arguments")
        args = [self._value(a) for a in (args_node.named_children if args_node is not None else []) if a.type != "comment"]
        if not all(isinstance(a, ir.Node) for a in args):
            raise Unsupported(f"call '{self.text(node)}' with pointer arguments", node)
        if self.unit.function(name) is not None:
            raise Unsupported(f"call of device function '{name}' (not inlined by the AscendC rules)", node, expr=self.text(node))
        folds = ops()["fold_functions"]
        if name in folds and all(isinstance(a, ir.Const) for a in args):
            try:
                value = getattr(math, folds[name])(*(a.value for a in args))  # type: ignore[union-attr]
                single = name.endswith("f") and name not in ("__expf",)  # expf, sqrtf...: float; exp, sqrt: double
                return ir.Const(_f32(value) if single else value, "float" if single else "double")
            except (ValueError, OverflowError):
                pass
        return ir.Call(name, tuple(args))  # type: ignore[arg-type]

    def _bin(self, op: str, a: object, b: object, node: ts.Node) -> object:
        # geometry: blockIdx.x * blockDim.x + threadIdx.x, blockDim.x * gridDim.x
        if op == "*" and {a, b} == {ir.Builtin("bid"), ir.Builtin("bdim")}:
            return ir.Builtin("bid*bdim")
        if op == "+" and {a, b} == {ir.Builtin("bid*bdim"), ir.Builtin("tid")}:
            return ir.Builtin("gid")
        if op == "*" and {a, b} == {ir.Builtin("bdim"), ir.Builtin("gdim")}:
            return ir.Builtin("stride")
        if isinstance(a, PtrParam) and op == "+" and isinstance(b, ir.Node):
            if self._is_row_offset(b):
                return RowPtr(a.name)
            raise Unsupported(f"pointer arithmetic '{self.text(node)}' other than a row start `x + row * cols`", node)
        if not isinstance(a, ir.Node) or not isinstance(b, ir.Node):
            raise Unsupported(f"operator '{op}' on a pointer or shared array", node)
        if isinstance(a, ir.Builtin) and isinstance(b, ir.Param) and op == "*" and a.name == "bid":
            return ir.Bin("*", a, b)  # row * cols (an index, checked where it is used)
        if isinstance(a, ir.Const) and isinstance(b, ir.Const):
            folded = _fold(op, a, b)
            if folded is not None:
                return folded
        if op == "+" and isinstance(a, ir.Bin) and a.op == "*" and a.a == ir.Builtin("bid") and b == ir.Builtin("col"):
            return ir.Bin("+", a, b)
        return ir.Bin(op, a, b)

    def _is_row_offset(self, b: ir.Node) -> bool:
        return (isinstance(b, ir.Bin) and b.op == "*" and ir.Builtin("bid") in (b.a, b.b)
                and any(isinstance(x, ir.Param) and x.name in self.sizes for x in (b.a, b.b)))


def _number(text: str, node: ts.Node | None = None) -> ir.Const:
    """A C literal as the value IR's constant: integers of any width are `int`, floats keep float or double."""
    try:
        v, ct = parse_number(text.strip())
    except ValueError:
        raise Unsupported(f"number '{text}'", node) from None
    if ct == "float":
        return ir.Const(_f32(v), "float")
    return ir.Const(float(v), "double" if ctype.is_float(ct) else "int")


def parse_expression(text: str) -> tuple[ts.Node, bytes]:
    """The expression node of `text` parsed by the CUDA grammar (for macro bodies and data-file patterns)."""
    data = f"void __xlate_f() {{ __xlate_v = ({text}); }}".encode()
    parsed = parse_c(data, "<expression>")
    if parsed.gaps or parsed.repairs or parsed.masked:
        raise Unsupported(f"cannot parse expression '{text}'")
    data = parsed.view
    stack = [parsed.root]
    while stack:
        n = stack.pop()
        if n.type == "assignment_expression":
            right = n.child_by_field_name("right")
            assert right is not None
            return right, data
        stack.extend(n.named_children)
    raise Unsupported(f"cannot parse expression '{text}'")


def pattern(text: str, metavars: tuple[str, ...] = ("X", "Y", "S", "T")) -> ir.Node:
    """An ops.yaml pattern or expansion as IR; its upper-case metavariables become ir.Meta leaves."""
    node, data = parse_expression(text)
    src = Source("<pattern>", data)

    def conv(n: ts.Node) -> ir.Node:
        t = n.type
        if t == "identifier":
            name = src.text(n)
            if name in metavars:
                return ir.Meta(name)
            raise Unsupported(f"unknown name '{name}' in pattern '{text}'")
        if t == "number_literal":
            return _number(src.text(n))
        if t == "parenthesized_expression":
            return conv(n.named_children[0])
        if t == "binary_expression":
            a, b = conv(n.child_by_field_name("left")), conv(n.child_by_field_name("right"))  # type: ignore[arg-type]
            op = src.text(n.child_by_field_name("operator"))
            if isinstance(a, ir.Const) and isinstance(b, ir.Const):
                folded = _fold(op, a, b)
                if folded is not None:
                    return folded
            return ir.Bin(op, a, b)
        if t == "unary_expression" and src.text(n.child_by_field_name("operator")) == "-":
            v = conv(n.child_by_field_name("argument"))  # type: ignore[arg-type]
            return ir.Const(-v.value, v.kind) if isinstance(v, ir.Const) else ir.Neg(v)
        if t == "conditional_expression":
            return ir.Select(*(conv(n.child_by_field_name(f)) for f in ("condition", "consequence", "alternative")))  # type: ignore[arg-type]
        if t == "call_expression":
            args = n.child_by_field_name("arguments")
            return ir.Call(src.text(n.child_by_field_name("function")), tuple(conv(a) for a in (args.named_children if args else [])))
        raise Unsupported(f"pattern construct '{src.text(n)}' in '{text}'")

    return conv(node)
