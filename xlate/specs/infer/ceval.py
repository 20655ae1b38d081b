"""Symbolic evaluation of C/C++ expressions (tree-sitter nodes) shared by the host and kernel interpreters:
integer and floating arithmetic with C division, casts, sizeof, dim3, min/max/ceil idioms, macros (object- and
function-like) and small helper functions inlined through their `return`."""

from __future__ import annotations

import functools
import re
from typing import Any

import sympy as sp
import tree_sitter as ts

from xlate.parse import languages
from xlate.parse.consteval import parse_int_literal
from xlate.specs.infer.program import FuncDef, Program, default_args, text
from xlate.specs.infer.sym import CeilDiv, FloorDiv, Log2, concrete, sizeof_symbol
from xlate.specs.infer.values import Arr, Dim3, Num, Ptr, Ref, Value
from xlate.specs.model import ctypes_table, normalise_ctype

FLOAT_TYPES = {"float", "double", "half", "__half", "__nv_bfloat16", "_Float16", "long double"}
LOG2_FUNCS = {"log2", "log2f", "std::log2"}
MIN_FUNCS = {"min", "std::min", "fmin", "fminf", "MIN", "umin", "llmin", "imin", "std::fmin"}
MAX_FUNCS = {"max", "std::max", "fmax", "fmaxf", "MAX", "umax", "llmax", "imax", "std::fmax"}
CEIL_FUNCS = {"ceil", "ceilf", "std::ceil"}
FLOOR_FUNCS = {"floor", "floorf", "std::floor", "trunc", "truncf"}
CAST_TEMPLATES = {"static_cast", "reinterpret_cast", "const_cast", "__builtin_assume_aligned"}
MAX_DEPTH = 24
MAX_INLINE_DEPTH = 3
EVAL_BUDGET = 400000  # expression nodes per interpreter: real headers hold deep helper libraries


@functools.lru_cache(maxsize=4096)
def parse_expr(code: str) -> tuple[ts.Tree, ts.Node | None]:
    """A standalone expression's node (macro bodies, expanded macro calls)."""
    wrapped = f"void __xlate_f() {{ __xlate_v = ({code}\n); }}".encode()
    tree = languages.parser("cuda").parse(wrapped)
    for node in walk_tree(tree.root_node):
        if node.type == "assignment_expression" and text(node.child_by_field_name("left")) == "__xlate_v":
            right = node.child_by_field_name("right")
            while right is not None and right.type == "parenthesized_expression" and right.named_child_count == 1:
                right = right.named_children[0]
            if right is None or right.has_error:
                return tree, None
            return tree, right
    return tree, None


@functools.lru_cache(maxsize=1024)
def parse_statements(code: str) -> tuple[ts.Tree, ts.Node | None]:
    wrapped = f"void __xlate_f() {{ {code}\n; }}".encode()
    tree = languages.parser("cuda").parse(wrapped)
    fn = tree.root_node.named_children[0] if tree.root_node.named_children else None
    body = fn.child_by_field_name("body") if fn is not None and fn.type == "function_definition" else None
    return tree, body


def walk_tree(node: ts.Node):
    """Every node of a tree-sitter subtree, parents first, in source order."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def ctype_size(ctype: str) -> int | None:
    info = ctypes_table().get(normalise_ctype(ctype).replace("*", "").strip())
    return int(info["size"]) if info else None


def sizeof_type(ctype: str) -> sp.Expr:
    t = normalise_ctype(ctype)
    if t.endswith("*"):
        return sp.Integer(8)
    size = ctype_size(t)
    if size is not None:
        return sp.Integer(size)
    return sizeof_symbol(t)


def is_float_type(ctype: str) -> bool:
    t = normalise_ctype(ctype).replace("unsigned ", "")
    return t in FLOAT_TYPES or t.startswith("float") or t.startswith("double")


def literal(code: str) -> Num | None:
    t = code.strip().replace("'", "")
    v = parse_int_literal(t)
    if v is not None:
        return Num(sp.Integer(v))
    f = t.rstrip("fFlL")
    try:
        return Num(sp.Float(float(f)), True)
    except ValueError:
        return None


class Evaluator:
    """Evaluate expressions to abstract values; subclasses give identifiers, calls and memory their meaning."""

    def __init__(self, program: Program):
        self.program = program
        self.globals: dict[str, Any] = {}
        self._macro_active: set[str] = set()
        self._macro_args: list[tuple[str, list[str]]] = []  # the expansions running: (macro, argument texts)
        self._depth = 0
        self._inlining = 0
        self.eval_budget = EVAL_BUDGET

    def sizeof(self, ctype: str) -> sp.Expr:
        t = self.program.resolve_type(ctype)
        lanes = self.program.struct_lanes(t) if ctype_size(t) is None else None
        if lanes is not None:
            return sp.Integer(lanes[1] * (ctype_size(lanes[0]) or 1))
        return sizeof_type(t)

    def _names_type(self, name: str, env: dict[str, Any]) -> bool:
        """Whether `name` in `sizeof(name)` is a struct or typedef of the program rather than a local variable (a
        struct defined at file scope, `struct KeyValue { ... };`, is also read as a global of that name)."""
        return env.get(name) is None and (name.split("::")[-1] in self.program.struct_nodes or name in self.program.typedefs)

    def _elem_size(self, elem: str) -> Num | None:
        """sizeof an element of a pointer whose type is known: a number, or nothing where the type is one the code
        read does not bind (a template's T: the kernel's own view of the buffer is better than sizeof(T))."""
        size = self.sizeof(elem)
        return Num(size) if size.is_number else None

    # -- hooks ----------------------------------------------------------------------------------------------
    def concrete(self, e: Any) -> int | None:
        """The integer `e` stands for, where the interpreter knows it (named constants included)."""
        return concrete(e)

    def unknown_name(self, name: str, node: ts.Node) -> Value:
        return None

    def special_call(self, name: str, node: ts.Node, args: list[ts.Node], env: dict[str, Any]) -> tuple[bool, Value]:
        """(handled, value) for calls the interpreter knows (allocation APIs, atomics...)."""
        return False, None

    def ref_of(self, name: str, env: dict[str, Any]) -> Value:
        """`&name`: the variable in the scope that holds it."""
        return Ref(env if name in env or name not in self.globals else self.globals, name)

    def field_ref(self, node: ts.Node, env: dict[str, Any]) -> Value:
        return Ref(env, text(node).replace(" ", ""))

    def field_value(self, node: ts.Node, env: dict[str, Any]) -> Value:
        return env.get(text(node).replace(" ", ""))

    def subscript_value(self, node: ts.Node, env: dict[str, Any]) -> Value:
        base = self.ev(node.child_by_field_name("argument"), env)
        idx_nodes = node.child_by_field_name("indices") or node.child_by_field_name("index")
        idx = self.ev(_first_named(idx_nodes), env) if idx_nodes is not None else None
        if isinstance(base, Arr) and isinstance(idx, Num):
            i = self.concrete(idx.e)
            if i is not None and 0 <= i < len(base.items):
                return base.items[i]
        return None

    def inline_function(self, fd: FuncDef, args: list[Value], env: dict[str, Any]) -> Value:
        """Value of a call to a helper whose body is one `return EXPR;` (after declarations)."""
        body = fd.node.child_by_field_name("body")
        if body is None or self._inlining >= MAX_INLINE_DEPTH or not _scalar_return(fd.return_type):
            return None
        self._inlining += 1
        try:
            return self._inline(fd, body, args)
        finally:
            self._inlining -= 1

    def _inline(self, fd: FuncDef, body: ts.Node, args: list[Value]) -> Value:
        frame: dict[str, Any] = {}
        defaults = default_args(fd.node)
        for i, (pname, ptype, _) in enumerate(fd.params):
            if i >= len(args) and i < len(defaults) and defaults[i] is not None:
                args = [*args, self.ev(defaults[i], frame)]  # `int m = Align` where the call leaves m out
            if pname and i < len(args):
                frame[pname] = _retype(args[i], ptype)
        ret: ts.Node | None = None
        for st in body.named_children:
            if st.type == "return_statement":
                ret = _first_named(st)
                break
            if st.type == "declaration":
                self.declare(st, frame)
            elif st.type != "comment":
                return None
        return self.ev(ret, frame) if ret is not None else None

    def declare(self, node: ts.Node, env: dict[str, Any]) -> None:
        """Bind the variables of a declaration (simple scalars: subclasses handle memory)."""
        type_text = text(node.child_by_field_name("type"))
        for d in node.children_by_field_name("declarator"):
            if d.type == "init_declarator":
                name_node = d.child_by_field_name("declarator")
                if name_node is not None and name_node.type == "identifier":
                    v = self.ev(d.child_by_field_name("value"), env)
                    env[text(name_node)] = _retype(v, type_text)

    # -- evaluation -----------------------------------------------------------------------------------------
    def ev(self, node: ts.Node | None, env: dict[str, Any]) -> Value:
        if node is None:
            return None
        self._depth += 1
        self.eval_budget -= 1
        try:
            if self._depth > MAX_DEPTH * 8 or self.eval_budget <= 0:
                return None
            return self._ev(node, env)
        except (TypeError, ValueError, ZeroDivisionError, RecursionError, AttributeError, sp.SympifyError):
            return None
        finally:
            self._depth -= 1

    def _ev(self, node: ts.Node, env: dict[str, Any]) -> Value:
        t = node.type
        if t == "number_literal":
            return literal(text(node))
        if t in ("true", "false"):
            return Num(sp.Integer(1 if t == "true" else 0))
        if t == "null":  # nullptr, NULL: the null pointer constant, 0 as C reads it (a launch's `bias: null`)
            return Num(sp.Integer(0))
        if t == "char_literal":
            s = text(node).strip("'")
            return Num(sp.Integer(ord(s[-1]))) if s else None
        if t == "identifier":
            return self.name(text(node), node, env)
        if t in ("qualified_identifier", "template_function") and "is_same" in text(node):
            same = self._is_same(node)
            if same is not None:  # `if constexpr (std::is_same_v<T, float>)`: the branch of this instantiation
                return Num(sp.Integer(int(same)))
        if t == "qualified_identifier":
            return self.name(text(node).split("::")[-1], node, env)
        if t in ("parenthesized_expression", "condition_clause"):  # `if (CHECK(cudaMalloc(...)))` runs it
            return self.ev(node.child_by_field_name("value") or _first_named(node), env)
        if t == "comma_expression":
            return self.ev(node.child_by_field_name("right"), env)
        if t == "sizeof_expression":
            ty = node.child_by_field_name("type")
            if ty is not None:
                return Num(self.sizeof(text(ty)))
            value = node.child_by_field_name("value")
            while value is not None and value.type == "parenthesized_expression":
                value = _first_named(value)
            if value is not None and value.type in ("identifier", "qualified_identifier") and (
                    (text(value) not in env and text(value) not in self.globals) or self._names_type(text(value), env)):
                return Num(self.sizeof(text(value)))  # sizeof(__half): a type the grammar took for a name
            if value is not None and value.type == "subscript_expression":
                arr = self.ev(value.child_by_field_name("argument"), env)
                if isinstance(arr, Ptr) and arr.elem:  # sizeof(d_x[0]): the pointer's element type
                    return self._elem_size(arr.elem)
                return Num(sp.Integer(arr.elem_size)) if isinstance(arr, Arr) and arr.elem_size else None
            if value is not None and value.type == "pointer_expression" and text(value.child_by_field_name(
                    "operator")) == "*":  # sizeof(*d_x)
                p = self.ev(value.child_by_field_name("argument"), env)
                return self._elem_size(p.elem) if isinstance(p, Ptr) and p.elem else None
            v = self.ev(value, env)
            if isinstance(v, Arr) and v.elem_size:
                return Num(sp.Integer(v.elem_size * len(v.items)))
            return None
        if t == "cast_expression":
            return self.cast(text(node.child_by_field_name("type")), self.ev(node.child_by_field_name("value"), env))
        if t == "unary_expression":
            v = self.ev(node.child_by_field_name("argument"), env)
            op = text(node.child_by_field_name("operator"))
            if not isinstance(v, Num):
                return None
            if op == "-":
                return Num(-v.e, v.flt)
            if op == "+":
                return v
            c = self.concrete(v.e)
            if c is None:
                return None
            return Num(sp.Integer({"!": int(not c), "~": ~c}.get(op, c)))
        if t == "pointer_expression":
            op = text(node.child_by_field_name("operator")) or text(node.children[0])
            arg = node.child_by_field_name("argument")
            if op == "&":
                if arg is not None and arg.type == "identifier":
                    return self.ref_of(text(arg), env)
                if arg is not None and arg.type == "subscript_expression":
                    return self.address_of_element(arg, env)
                if arg is not None and arg.type == "field_expression":
                    return self.field_ref(arg, env)
                return None
            return self.deref(self.ev(arg, env), node, env)
        if t == "binary_expression":
            return self.binary(node, env)
        if t == "conditional_expression":
            return self.conditional(node, env)
        if t == "call_expression":
            return self.call(node, env)
        if t == "field_expression":
            return self.field_value(node, env)
        if t == "subscript_expression":
            return self.subscript_value(node, env)
        if t == "initializer_list":
            return Arr([self.ev(c, env) for c in node.named_children])
        if t == "assignment_expression":
            return self.ev(node.child_by_field_name("right"), env)
        return None

    def name(self, name: str, node: ts.Node, env: dict[str, Any]) -> Value:
        if name in env:
            return env[name]
        if name in self.globals:
            return self.globals[name]
        m = self.program.macros.get(name)
        if m is not None and m.params is None and name not in self._macro_active and m.body:
            return self.macro_value(name, m.body, env)
        return self.unknown_name(name, node)

    def macro_value(self, name: str, body: str, env: dict[str, Any]) -> Value:
        _, expr_node = parse_expr(body)
        if expr_node is None:
            return None
        self._macro_active.add(name)
        try:
            return self.ev(expr_node, env)
        finally:
            self._macro_active.discard(name)

    def cast(self, type_text: str, v: Value) -> Value:
        ty = normalise_ctype(type_text)
        if ty.endswith("*"):
            if isinstance(v, Ptr):
                return Ptr(v.alloc, v.offset, ty.rstrip("*").strip() or v.elem)
            return v
        if isinstance(v, Num):
            if is_float_type(ty):
                return Num(v.e, True)
            if v.flt:
                return Num(_floor_of(v.e), False)
            return v
        return v

    def deref(self, v: Value, node: ts.Node, env: dict[str, Any]) -> Value:
        return None

    def address_of_element(self, node: ts.Node, env: dict[str, Any]) -> Value:
        """`&a[i]`: a pointer i elements into a."""
        base = self.ev(node.child_by_field_name("argument"), env)
        idx_nodes = node.child_by_field_name("indices") or node.child_by_field_name("index")
        idx = self.ev(_first_named(idx_nodes), env) if idx_nodes is not None else None
        if isinstance(base, Ptr) and isinstance(idx, Num):
            return self.ptr_add(base, idx.e)
        return None

    def ptr_add(self, p: Ptr, n: sp.Expr) -> Ptr:
        size = self.sizeof(p.elem) if p.elem else sp.Integer(1)
        return Ptr(p.alloc, p.offset + n * size, p.elem)

    def binary(self, node: ts.Node, env: dict[str, Any]) -> Value:
        op = text(node.child_by_field_name("operator"))
        if op in ("&&", "||"):
            a = self.ev(node.child_by_field_name("left"), env)
            b = self.ev(node.child_by_field_name("right"), env)
            ca = self.concrete(a.e) if isinstance(a, Num) else None
            cb = self.concrete(b.e) if isinstance(b, Num) else None
            if ca is not None and cb is not None:
                return Num(sp.Integer(int(bool(ca and cb) if op == "&&" else bool(ca or cb))))
            return None
        a = self.ev(node.child_by_field_name("left"), env)
        b = self.ev(node.child_by_field_name("right"), env)
        return self.combine(op, a, b)

    def combine(self, op: str, a: Value, b: Value) -> Value:
        """`a op b` over values already evaluated (each operand once: evaluating them again in an override made a
        chain of n additions cost 2^n)."""
        if isinstance(a, Ptr) and isinstance(b, Num) and op in ("+", "-"):
            return self.ptr_add(a, b.e if op == "+" else -b.e)
        if isinstance(b, Ptr) and isinstance(a, Num) and op == "+":
            return self.ptr_add(b, a.e)
        if not isinstance(a, Num) or not isinstance(b, Num):
            return None
        if (not a.e.is_number and _too_big(a.e)) or (not b.e.is_number and _too_big(b.e)):
            return None  # a long formula already (host physics code): building more of it costs, says nothing
        out = arith(op, a, b, self.concrete)
        if isinstance(out, Num) and not out.e.is_number and _too_big(out.e):
            return None  # long float formulas (a host reference implementation) say nothing about sizes
        if op == "+" and isinstance(out, Num) and (out.e.has(sp.Min) or out.e.has(FloorDiv)):
            return Num(simplify_ceil(out.e), out.flt)
        return out

    def conditional(self, node: ts.Node, env: dict[str, Any]) -> Value:
        cond_node = node.child_by_field_name("condition")
        c = self.ev(cond_node, env)
        yes = self.ev(node.child_by_field_name("consequence"), env)
        no = self.ev(node.child_by_field_name("alternative"), env)
        cv = self.concrete(c.e) if isinstance(c, Num) else None
        if cv is not None:
            return yes if cv else no
        if isinstance(yes, Num) and isinstance(no, Num):
            if sp.simplify(yes.e - no.e) == 0:
                return yes
            ceil = _ceil_ternary(self, cond_node, yes, no, env)
            if ceil is not None:
                return ceil
            flag = _mod_flag(c, cond_node, yes, no)
            if flag is not None:
                return flag
            pad = _pad_ternary(self, cond_node, yes, no, env)
            if pad is not None:
                return pad
            least = _minmax_ternary(self, cond_node, yes, no, env)
            if least is not None:
                return least
        return self.unknown_choice(node, yes, no)

    def macro_statements(self, code: str, env: dict[str, Any]) -> None:
        """A macro whose body is statements (`CHECK(cudaMalloc(...))`, `LAUNCH(k, n)`): run them where it stands."""
        _, body = parse_statements(code)
        if body is not None:
            self.run_statements(body, env)

    def run_statements(self, body: ts.Node, env: dict[str, Any]) -> None:
        for st in body.named_children:
            if st.type == "expression_statement":
                self.ev(_first_named(st), env)

    def unknown_choice(self, node: ts.Node, yes: Value, no: Value) -> Value:
        return None

    def call(self, node: ts.Node, env: dict[str, Any]) -> Value:
        fn = node.child_by_field_name("function")
        args_node = node.child_by_field_name("arguments")
        args = [c for c in args_node.named_children if c.type != "comment"] if args_node is not None else []
        if fn is None:
            return None
        if fn.type == "template_function":
            name = text(fn.child_by_field_name("name"))
            if name.split("::")[-1] in CAST_TEMPLATES and args:
                targs = fn.child_by_field_name("arguments")
                ty = text(targs.named_children[0]) if targs is not None and targs.named_children else ""
                return self.cast(ty, self.ev(args[0], env))
        else:
            name = text(fn)
        name = "".join(name.split())
        cast_to = fn  # `Index_t(8) * i`, `int(x)`: a functional cast; `(llint)(i * ld)`: a C cast to a typedef
        if fn.type == "parenthesized_expression" and fn.named_child_count == 1 and fn.named_children[0].type == "identifier":
            cast_to = fn.named_children[0]  # name, which the grammar cannot tell from a call
        if len(args) == 1 and self._number_type(text(cast_to)):
            return self.cast(self.program.resolve_type(text(cast_to)), self.ev(args[0], env))
        handled, v = self.special_call(name, node, args, env)
        if handled:
            return v
        base = name.split("::")[-1]
        if base == "dim3" or name.endswith("dim3"):
            vals = [self.ev(a, env) for a in args]
            if len(vals) == 1 and isinstance(vals[0], Dim3):  # dim3(blocks), a copy
                return vals[0]
            dims = [(x.e if isinstance(x, Num) else None) for x in vals] + [sp.Integer(1)] * 3
            if any(d is None for d in dims[: len(vals)]):
                return None
            return Dim3((dims[0], dims[1], dims[2]))  # type: ignore[arg-type]
        macro = self.program.macros.get(base)
        if macro is not None and macro.params is not None and (
                base not in self._macro_active or self._in_macro_argument(base, node)):
            return self.expand(macro.name, macro.params, macro.body, [text(a) for a in args], env)
        vals = [self.ev(a, env) for a in args]
        nums = [v.e if isinstance(v, Num) else None for v in vals]
        if name in MIN_FUNCS | MAX_FUNCS and len(nums) == 2 and all(x is not None for x in nums):
            fn_ = sp.Min if name in MIN_FUNCS else sp.Max
            return Num(fn_(*nums), any(isinstance(v, Num) and v.flt for v in vals))
        if name in CEIL_FUNCS | FLOOR_FUNCS and len(vals) == 1 and isinstance(vals[0], Num):
            e = vals[0].e
            return Num(_ceil_of(e) if name in CEIL_FUNCS else _floor_of(e), True)
        if name in ("sqrt", "sqrtf", "std::sqrt", "pow", "powf", "std::pow", "log2", "log2f", "exp2") and all(
                x is not None and x.is_number for x in nums):
            f = {"sqrt": sp.sqrt, "sqrtf": sp.sqrt, "std::sqrt": sp.sqrt, "log2": lambda x: sp.log(x, 2),
                 "log2f": lambda x: sp.log(x, 2), "exp2": lambda x: 2 ** x}.get(name, lambda x, y: x ** y)
            return Num(sp.sympify(f(*nums)).evalf(), True)
        if name in LOG2_FUNCS and len(nums) == 1 and nums[0] is not None and nums[0].is_integer and self._to_int(node):
            return Num(Log2(nums[0]))  # `int it = log2(n / 2)`: the truncated logarithm (a real one stays unknown)
        if name in ("abs", "std::abs", "fabs", "fabsf") and len(nums) == 1 and nums[0] is not None:
            return Num(sp.Abs(nums[0]), bool(vals[0] and getattr(vals[0], "flt", False)))
        fd = self.program.function(base, arity=len(args))
        if fd is not None and self._depth < MAX_DEPTH and fd.space != "kernel":
            return self.inline_function(fd, vals, env)
        return self.unknown_call(name, node, vals, env)

    def _to_int(self, node: ts.Node) -> bool:
        """Whether the value of `node` is truncated to an integer where it stands: the initialiser of an integer
        declaration (`int k = log2(n);`) or the operand of a cast to an integer type (`(int)log2(n)`)."""
        up = node.parent
        while up is not None and up.type == "parenthesized_expression":
            node, up = up, up.parent
        if up is None:
            return False
        if up.type == "cast_expression":
            ty = up.child_by_field_name("type")
        elif up.type == "init_declarator" and up.child_by_field_name("value") == node and up.parent is not None:
            ty = up.parent.child_by_field_name("type")
        else:
            return False
        t = normalise_ctype(self.program.resolve_type(text(ty))) if ty is not None else ""
        return bool(t) and not is_float_type(t) and ctype_size(t) is not None and not t.endswith("*")

    def unknown_call(self, name: str, node: ts.Node, vals: list[Value], env: dict[str, Any]) -> Value:
        return None

    def bound_type(self, name: str) -> str | None:
        """A type name as the code being run binds it (template parameters bound by the caller), None if unbound."""
        return None

    def _is_same(self, node: ts.Node) -> bool | None:
        """`std::is_same_v<A, B>` / `std::is_same<A, B>::value` when both types are known here."""
        flat = "".join(text(node).split())
        if not (flat.startswith(("std::is_same_v<", "is_same_v<")) or (
                flat.startswith(("std::is_same<", "is_same<")) and flat.endswith("::value"))):
            return None
        args = next((n for n in walk_tree(node) if n.type == "template_argument_list"), None)
        if args is None or len(args.named_children) != 2:
            return None
        known = []
        for a in args.named_children:
            name = " ".join(text(a).split())
            bound = self.bound_type(name) or name
            resolved = self.program.resolve_type(bound)
            if resolved not in ctypes_table() and normalise_ctype(resolved) not in ("__half", "half", "__nv_bfloat16",
                                                                                 "nv_bfloat16"):
                return None  # a template parameter nobody bound here, or a type we cannot name
            known.append(normalise_ctype(resolved))
        return known[0] == known[1]

    def _number_type(self, name: str) -> bool:
        """Whether `name(...)` names a number type (a C type or a typedef of one), not a function."""
        name = " ".join(name.split())
        if self.program.function(name.split("::")[-1]) is not None or name in self.program.macros:
            return False
        if name in ctypes_table():
            return True
        return name in self.program.typedefs and self.program.resolve_type(name) in ctypes_table()

    def expand(self, name: str, params: list[str], body: str, args: list[str], env: dict[str, Any],
               write: bool = False) -> Value:
        """A function-like macro's use, read as its expansion (`write`: the use is assigned to)."""
        if len(params) != len(args) and not (params and params[-1] == "..."):
            return None
        mapping = dict(zip(params, args))
        if params and params[-1] == "...":  # `f(__VA_ARGS__)`: every argument past the named ones
            mapping.pop("...", None)
            mapping["__VA_ARGS__"] = ", ".join(args[len(params) - 1:])

        def subst(m: re.Match[str]) -> str:
            word = m.group(0)
            if word not in mapping:
                return word
            before, after = body[: m.start()].rstrip(), body[m.end():].lstrip()
            if before.endswith("##") or after.startswith("##"):  # `A##_d` pastes the argument's own tokens
                return _unparenthesised(mapping[word])
            if word == "__VA_ARGS__":
                return mapping[word]  # a list of arguments, not one expression to wrap
            if re.fullmatch(r"\s*[A-Za-z_][\w:]*\s*", mapping[word]) and (after.startswith("<") or before.endswith("<")):
                return mapping[word].strip()  # a template and its type stay names: `Func<T, 1><<<...>>>`
            return f"({mapping[word]})"

        code = re.sub(r"\b[A-Za-z_]\w*\b", subst, body)
        code = re.sub(r"\s*##\s*", "", code)
        statement_like = re.match(r"\s*(\{|do\b|if\b|for\b|while\b|switch\b)", code) is not None or _statements(code)
        _, expr_node = parse_expr(code) if not statement_like else (None, None)
        nested = name in self._macro_active  # a use inside an argument of the same macro (_in_macro_argument)
        self._macro_active.add(name)
        self._macro_args.append((name, [" ".join(a.split()) for a in args]))
        try:
            if expr_node is None:
                self.macro_statements(code, env)
                return None
            return self.ev(expr_node, env, write=True) if write else self.ev(expr_node, env)  # type: ignore[call-arg]
        finally:
            self._macro_args.pop()
            if not nested:
                self._macro_active.discard(name)

    def _in_macro_argument(self, name: str, node: ts.Node) -> bool:
        """Whether this use of the function-like macro `name`, met while `name` is being expanded, was written
        in an argument of that expansion (`SWITCH(a, A, [&] { SWITCH(b, B, [&] {...}); })`): C expands arguments
        before substituting them, so it is a use of its own, not the macro's body calling itself."""
        flat = " ".join(text(node).split())
        return any(m == name and any(flat in a for a in args) for m, args in self._macro_args)


def _minmax_ternary(ev: Evaluator, cond: ts.Node | None, yes: Num, no: Num, env: dict[str, Any]) -> Num | None:
    """`a < b ? a : b` is min(a, b) and `a > b ? a : b` max(a, b) (a program's own `min` helper, run here)."""
    while cond is not None and cond.type in ("parenthesized_expression", "condition_clause"):
        cond = _first_named(cond)
    if cond is None or cond.type != "binary_expression":
        return None
    op = text(cond.child_by_field_name("operator"))
    if op not in ("<", "<=", ">", ">="):
        return None
    a, b = ev.ev(cond.child_by_field_name("left"), env), ev.ev(cond.child_by_field_name("right"), env)
    if not (isinstance(a, Num) and isinstance(b, Num)):
        return None
    flt = yes.flt or no.flt
    if sp.expand(a.e - yes.e) == 0 and sp.expand(b.e - no.e) == 0:
        return Num(sp.Min(a.e, b.e) if op in ("<", "<=") else sp.Max(a.e, b.e), flt)
    if sp.expand(a.e - no.e) == 0 and sp.expand(b.e - yes.e) == 0:
        return Num(sp.Max(a.e, b.e) if op in ("<", "<=") else sp.Min(a.e, b.e), flt)
    return None


def _statements(code: str) -> bool:
    """A macro body of several statements (`A = malloc(..); float *A##_d; cudaMalloc(..);`): a `;` outside any
    bracket before its end, which an expression never has."""
    depth = 0
    body = code.rstrip().rstrip(";")
    for ch in body:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == ";" and depth == 0:
            return True
    return False


def _unparenthesised(code: str) -> str:
    """`(pii)` as `pii`: an argument a nested macro wrapped, before it is pasted into a name."""
    code = code.strip()
    while code.startswith("(") and code.endswith(")"):
        depth = 0
        for i, ch in enumerate(code):
            depth += {"(": 1, ")": -1}.get(ch, 0)
            if depth == 0 and i < len(code) - 1:
                return code
        code = code[1:-1].strip()
    return code


def arith(op: str, a: Num, b: Num, conc: Any = concrete) -> Value:
    flt = a.flt or b.flt
    x, y = a.e, b.e
    if op == "+":
        return Num(x + y, flt)
    if op == "-":
        return Num(x - y, flt)
    if op == "*":
        return Num(x * y, flt)
    if op == "/":
        if y == 0:
            return None
        if flt:
            return Num(x / y, True)
        if x.is_number and y.is_number:
            return Num(sp.Integer(int(int(x) / int(y))))  # C truncates toward zero
        return Num(FloorDiv(x, y))
    if op == "%":
        if x.is_number and y.is_number and int(y) != 0:
            cx, cy = int(x), int(y)
            return Num(sp.Integer(cx - int(cx / cy) * cy))
        return Num(sp.Mod(x, y)) if not flt else None
    cx, cy = conc(x), conc(y)
    if op == "<<":
        if cy is not None and 0 <= cy < 64:
            return Num(x * 2**cy if y.is_number else sp.Integer(cx << cy) if cx is not None else x * 2**cy)
        return None
    if op == ">>":
        if cy is not None and 0 <= cy < 64:
            return Num(FloorDiv(x, sp.Integer(2**cy)))
        return None
    if cx is None or cy is None:
        return None
    table = {"&": lambda: cx & cy, "|": lambda: cx | cy, "^": lambda: cx ^ cy, "<": lambda: int(cx < cy),
             ">": lambda: int(cx > cy), "<=": lambda: int(cx <= cy), ">=": lambda: int(cx >= cy),
             "==": lambda: int(cx == cy), "!=": lambda: int(cx != cy)}
    f = table.get(op)
    return Num(sp.Integer(f())) if f else None


def _ratio(e: sp.Expr) -> tuple[sp.Expr, sp.Expr]:
    num, den = sp.fraction(sp.together(e))
    return num, den


def _exact(e: sp.Expr) -> sp.Expr:
    """Floats that are small binary fractions (`n / 256.0` is n * 0.00390625) as the rationals they are."""
    reps = {}
    for f in e.atoms(sp.Float):
        r = sp.Rational(float(f))
        if r.q <= 1 << 20:
            reps[f] = r
    return e.xreplace(reps) if reps else e


def _ceil_of(e: sp.Expr) -> sp.Expr:
    e = _exact(e)
    num, den = _ratio(e)
    if den != 1 and not num.has(sp.Float) and not den.has(sp.Float) and num.is_integer and den.is_integer:
        return CeilDiv(num, den)
    return sp.ceiling(e)


def _floor_of(e: sp.Expr) -> sp.Expr:
    e = _exact(e)
    num, den = _ratio(e)
    if den != 1 and not num.has(sp.Float) and not den.has(sp.Float) and num.is_integer and den.is_integer:
        return FloorDiv(num, den)
    return sp.floor(e) if not e.is_integer else e


def _ceil_ternary(ev: Evaluator, cond: ts.Node | None, yes: Num, no: Num, env: dict[str, Any]) -> Num | None:
    """`a % b ? a / b + 1 : a / b` (and its spellings): ceil-division."""
    for big, small in ((yes.e, no.e), (no.e, yes.e)):
        if isinstance(small, FloorDiv) and sp.expand(big - small) == 1:
            return Num(CeilDiv(*small.args))
    return None


MAX_EXPR_NODES = 48


def _too_big(e: sp.Expr) -> bool:
    return any(n >= MAX_EXPR_NODES for n, _ in enumerate(sp.preorder_traversal(e)))


def _scalar_return(ret: str) -> bool:
    t = normalise_ctype(ret).replace("inline", "").replace("static", "").replace("__forceinline__", "").strip()
    t = " ".join(w for w in t.split() if not w.startswith("__"))
    return t in ("auto", "") or (ctype_size(t) is not None and ctypes_table().get(t, {}).get("numpy") is not None)


def _pad_ternary(ev: Evaluator, cond: ts.Node | None, yes: Num, no: Num, env: dict[str, Any]) -> Num | None:
    """`x % b == 0 ? 0 : b - x % b` (and `x % b ? b - x % b : 0`, `... ? x : x + b - x % b`): the padding that
    rounds x up to a multiple of b, `cdiv(x, b) * b - x` added to the branch taken when b divides x."""
    while cond is not None and cond.type in ("parenthesized_expression", "condition_clause"):
        cond = _first_named(cond)
    if cond is None:
        return None
    zero_if_true = False
    if cond.type == "binary_expression" and text(cond.child_by_field_name("operator")) in ("==", "!="):
        right = ev.ev(cond.child_by_field_name("right"), env)
        if not (isinstance(right, Num) and right.e == 0):
            return None
        zero_if_true = text(cond.child_by_field_name("operator")) == "=="
        cond = cond.child_by_field_name("left")
    m = ev.ev(cond, env)
    if not (isinstance(m, Num) and isinstance(m.e, sp.Mod)) or yes.flt or no.flt:
        return None
    x, b = m.e.args
    divides, rest = (yes, no) if zero_if_true else (no, yes)
    if sp.expand(rest.e - divides.e - (b - m.e)) != 0:
        return None
    return Num(sp.expand(divides.e + CeilDiv(x, b) * b - x))


def _mod_flag(c: Value, cond: ts.Node | None, yes: Num, no: Num) -> Num | None:
    """`a % b ? 1 : 0` (or `a % b != 0 ? 1 : 0`): min(a % b, 1), which makes `a / b + (a % b ? 1 : 0)` a
    ceil-division."""
    if not (yes.e == 1 and no.e == 0) or not isinstance(c, Num):
        return None
    e = c.e
    if isinstance(e, sp.Mod):
        return Num(sp.Min(e, 1))
    while cond is not None and cond.type in ("parenthesized_expression", "condition_clause"):
        cond = _first_named(cond)
    return None


def simplify_ceil(e: sp.Expr) -> sp.Expr:
    """FloorDiv(a, b) + Min(Mod(a, b), 1) -> CeilDiv(a, b)."""
    if not isinstance(e, sp.Expr) or not e.is_Add:
        return e
    terms = list(e.args)
    for f in [t for t in terms if isinstance(t, FloorDiv)]:
        flag = sp.Min(sp.Mod(*f.args), 1)
        if flag in terms:
            terms.remove(f)
            terms.remove(flag)
            terms.append(CeilDiv(*f.args))
        elif sp.Integer(1) in terms and sp.expand(f.args[0]).as_coeff_Add()[0] == -1:  # (n - 1) / b + 1, n >= 1
            terms.remove(f)
            terms.remove(sp.Integer(1))
            terms.append(CeilDiv(sp.expand(f.args[0] + 1), f.args[1]))
    return sp.Add(*terms)


def _first_named(node: ts.Node | None) -> ts.Node | None:
    if node is None:
        return None
    return next((c for c in node.named_children if c.type != "comment"), None)


def _retype(v: Value, type_text: str) -> Value:
    t = normalise_ctype(type_text)
    if isinstance(v, Num) and t and not t.endswith("*") and t not in ("auto", "auto&", "const auto"):
        if is_float_type(t):
            return Num(v.e, True)
        if v.flt and (ctype_size(t) is not None):
            return Num(_floor_of(v.e), False)
    return v
