"""The host side of a program, read as a person would: `main` and every launcher run symbolically, statement
by statement (calls inlined, loops run once with their variable as a symbol or as the list of values it takes),
so that each kernel launch is seen with its grid, block and arguments as expressions over the program's own
values, and each pointer argument with the allocation it points into."""

from __future__ import annotations

import functools
import re
import time
from dataclasses import dataclass, field
from typing import Any

import sympy as sp
import tree_sitter as ts

from xlate.resources import data
from xlate.specs.infer.ceval import Evaluator, _first_named, _retype, is_float_type, literal, walk_tree
from xlate.specs.infer.program import FuncDef, Program, SourceFile, default_args, spell_type, text
from xlate.specs.infer.sym import concrete
from xlate.specs.infer.tensors import TensorModel, tensor_type
from xlate.specs.infer.values import Alloc, Arr, Dim3, Fill, Num, Obj, Ptr, Ref, Tensor, Value
from xlate.specs.model import Origin, normalise_ctype

MAX_CALL_DEPTH = 8
# C number types a host overload's parameter may take a number by (`min(int, int)` beside `min(uint4, uint4)`)
NUMBER_TYPES = {"char", "signed char", "unsigned char", "short", "unsigned short", "int", "unsigned int", "unsigned",
                "long", "unsigned long", "long long", "unsigned long long", "float", "double", "size_t", "int8_t",
                "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "bool"}
STATEMENT_BUDGET = 60000
MAX_LOOP_VALUES = 64
LITERAL_ARGUMENT = "a literal the call passes"  # Root.detail of `f(n, 2)`'s parameter: the program's number
PROGRAM_SECONDS = 30.0  # host code read per program at most (sympy on a huge main is slow)


@functools.cache
def api() -> dict[str, Any]:
    return data("spec_inference.yaml")


@dataclass
class Root:
    """A value the host code does not compute from others: read at run time, a parameter, a loop variable."""

    symbol: sp.Symbol
    name: str  # the variable as the program spells it
    kind: str  # runtime (argv, input), param, loop, global, choice, constant
    where: str
    value: int | float | None = None  # the value the program uses where one is known (a default)
    values: list[int] = field(default_factory=list)  # choice / loop: every value it takes
    detail: str = ""
    hi: int | None = None  # the largest value to draw where the program gives none (a tensor's dimension)
    # loop: the values it takes, inclusive, over other program values (`for (b = w - 1; b >= 1; b--)`: (1, w - 1))
    span: tuple[sp.Expr, sp.Expr] | None = None


@dataclass
class Launch:
    kernel: str
    template_args: list[str]
    grid: Value
    block: Value
    shmem: Value
    args: list[Value]
    where: str
    text: str
    chain: list[str]  # host functions from the entry to the launching one
    bound: bool  # reached from an entry point with every parameter bound
    arg_texts: list[str] = field(default_factory=list)
    fixed: set[sp.Symbol] = field(default_factory=set)  # program values given as template arguments: never fuzzed
    types: dict[str, str] = field(default_factory=dict)  # template types its scalar arguments give (deduced)
    fills: dict[int, Fill] = field(default_factory=dict)  # argument -> the constant its whole buffer holds here
    divides: list[sp.Expr] = field(default_factory=list)  # `a % b` the host's early returns keep at 0 here
    conds: list[sp.Basic] = field(default_factory=list)  # relations the branches around it hold (`C <= 128`)
    # template argument index -> its value over program choices (`k<CDIM>` in a launcher explicitly instantiated
    # for several CDIMs): a fuzzing axis, one instantiation a value
    template_choices: dict[int, sp.Expr] = field(default_factory=dict)


@dataclass
class Frame:
    fd: FuncDef | None
    env: dict[str, Any]
    chain: list[str]
    bound: bool
    types: dict[str, str] = field(default_factory=dict)  # template type parameters bound at the call
    in_branch: int = 0
    returned: Value = None
    this: Obj | None = None  # the object a method runs on
    declared: dict[str, str] = field(default_factory=dict)  # the types of scalars declared without a value
    divides: list[sp.Expr] = field(default_factory=list)  # `a % b` known 0 past `if (a % b != 0) return`
    conds: list[sp.Basic] = field(default_factory=list)  # relations of the branches being run (`C <= 32`)
    kernel_refs: dict[str, ts.Node] = field(default_factory=dict)  # `auto k = kern<int>;`: k -> `kern<int>`


class HostInterpreter(TensorModel, Evaluator):
    def __init__(self, program: Program):
        super().__init__(program)
        self.ties: dict[sp.Symbol, sp.Expr] = {}  # tensor dimensions a check made equal to another value
        self.tensor_dims: set[sp.Symbol] = set()
        self.tensors: list[Tensor] = []  # every tensor made, for the shapes a division reveals
        self.roots: dict[sp.Symbol, Root] = {}
        self._names: set[str] = set()
        self.launches: list[Launch] = []
        self.kernels = {name for name, fds in program.functions.items() if any(f.space == "kernel" for f in fds)}
        # kernels whose only launches sit in branches the program's own values rule out (`if (rank == 0)` with
        # an MPI rank nobody sets here): a last pass enters those branches and records only their launches
        self.explore: set[str] = set()
        self.budget = STATEMENT_BUDGET
        self.deadline = time.monotonic() + PROGRAM_SECONDS
        self.frames: list[Frame] = []
        self._globals_done = False
        self.const_values: dict[sp.Symbol, sp.Expr] = {}
        self._macro_where: list[str] = []
        self._macro_roots: dict[str, Value] = {}
        self._device: Obj | None = None
        self._next_suffix: dict[str, int] = {}  # fresh(): the next free suffix of each name (no quadratic search)
        self._template_roots: set[sp.Symbol] = set()
        self._template_choices: dict[int, sp.Expr] = {}
        self._elements: dict[tuple[int, Any], Value] = {}  # (allocation, byte offset) -> value stored there
        self._callee_env: dict[str, Any] = {}  # the variables of the host function run last, as it left them
        self._scopes: list[tuple[int, bool]] = []  # the branches and loops being run: (id, is a loop)
        self._scope_count = 0

    # -- roots ------------------------------------------------------------------------------------------------
    def fresh(self, name: str, kind: str, where: str, value: int | float | None = None, values: list[int] | None = None,
              flt: bool = False, detail: str = "") -> sp.Symbol:
        base = name.replace(".", "_").replace("->", "_").replace("[", "_").replace("]", "") or "v"
        unique = base
        k = self._next_suffix.get(base, 2)
        while unique in self._names:
            unique = f"{base}_{k}"
            k += 1
        self._next_suffix[base] = k
        self._names.add(unique)
        s = sp.Symbol(unique, real=True) if flt else sp.Symbol(unique, integer=True, positive=True)
        self.roots[s] = Root(s, name, kind, where, value, list(values or []), detail)
        return s

    def concrete(self, e: Any) -> int | None:
        if isinstance(e, sp.Expr) and e.free_symbols and self.const_values:
            e = e.xreplace(self.const_values)
        return concrete(e)

    def combine(self, op: str, a: Value, b: Value) -> Value:
        """`1 << lg` with `lg` a variable of the program: the power of two of that value, not the number its
        present value gives, so a size the program computes so (`domain = 1 << lg`) stays tied to the exponent the
        kernel may receive too (drawn apart, a bit-reversal over lg bits indexes past a domain drawn smaller). A
        macro or a constant stays a number: its power is the program's fixed size (`1 << BLOOM_BITS` words of a
        table the kernel hashes into)."""
        if op == "<<" and isinstance(a, Num) and isinstance(b, Num) and not a.flt and not b.flt and (
                a.e.is_Integer and int(a.e) >= 1 and isinstance(b.e, sp.Symbol) and b.e in self.roots) and (
                self.roots[b.e].kind not in ("macro", "constant")):
            c = self.concrete(b.e)
            if c is not None and 0 <= c < 63:
                return Num(a.e * sp.Pow(2, b.e))
        return super().combine(op, a, b)

    def named_constant(self, name: str, value: Num, where: str, kind: str = "constant", detail: str = "") -> Num:
        """A value the program spells by name (a macro, a `const int`, `int n = 1024;`): kept as a symbol carrying
        its value, so that the name passed to the kernel stands for the same name in an allocation size."""
        c = concrete(value.e)
        if c is None:
            if value.flt and value.e.is_number:
                s = self.fresh(name, kind, where, float(value.e), flt=True)
                self.const_values[s] = value.e
                return Num(s, True)
            return value
        s = self.fresh(name, kind, where, c, detail=detail)
        self.const_values[s] = sp.Integer(c)
        return Num(s, value.flt)

    def _name(self, name: str, node: ts.Node, env: dict[str, Any]) -> Value:
        bound = self.frames[-1].types.get(name) if self.frames and name not in env else None
        if bound is not None:  # a template value parameter of the running host function: test<4, float>(...)
            v = literal(bound)
            if v is not None:
                return v
        if name not in env and name not in self.globals and name in self.program.macros:
            if name not in self._macro_roots:
                m = self.program.macros[name]
                v = super().name(name, node, env) if m.params is None else None
                if not (isinstance(v, Num) and v.e.is_number):
                    return v
                v = self.named_constant(name, v, f"{m.path.rsplit('/', 1)[-1]}:{m.line}", "macro")
                self._macro_roots[name] = v
            return self._macro_roots[name]
        return super().name(name, node, env)

    # -- globals ----------------------------------------------------------------------------------------------
    def run_globals(self) -> None:
        if self._globals_done:
            return
        self._globals_done = True
        frame = Frame(None, self.globals, [], True)
        self.frames.append(frame)
        try:
            for _, node in self.program.globals:
                self.statement(node, frame)
        finally:
            self.frames.pop()

    # -- functions --------------------------------------------------------------------------------------------
    def run_entry(self, fd: FuncDef) -> None:
        self.run_globals()
        self.run_function(fd, None, [], bound=fd.name == "main", values=self._instantiated(fd))

    def _instantiated(self, fd: FuncDef) -> dict[str, Value]:
        """The template value parameters of a launcher nobody here calls, as the values its explicit
        instantiations give (`template void run<3>(...);`, also through a macro: `INST(3) INST(4)`): each a
        program choice the launches inside see."""
        out: dict[str, Value] = {}
        for name, values in explicit_instantiations(self.program, fd).items():
            out[name] = Num(self.fresh(name, "choice", self.where(fd.node), values[0], values,
                                       detail=f"the explicit instantiations of {fd.name}"))
        return out

    def run_function(self, fd: FuncDef, args: list[Value] | None, chain: list[str], bound: bool,
                     types: dict[str, str] | None = None, this: Obj | None = None,
                     values: dict[str, Value] | None = None) -> Value:
        if fd.name in chain or len(chain) >= MAX_CALL_DEPTH or self.budget <= 0:
            return None
        if fd.cls and this is None:  # a method run on its own: an object whose members are unknown
            this = self.new_object(fd.cls, self.where(fd.node), {})
        env: dict[str, Any] = {}
        where = self.where(fd.node)
        for i, (pname, ptype, indirect) in enumerate(fd.params):
            if not pname:
                continue
            default = default_args(fd.node)[i] if args is not None and i >= len(args) and i < len(
                default_args(fd.node)) else None
            if default is not None:  # `pad_to(w)` for `int pad_to(int n, int m = Align)`: m is Align
                args = [*args, self.ev(default, env)]  # type: ignore[list-item]
            if args is not None and i < len(args):
                v = _retype(args[i], ptype) if not indirect else args[i]
                if v is None and tensor_type(ptype, self.program.classes):  # a tensor the caller's code hides
                    v = self.tensor_param(pname, where, fd)
                if isinstance(v, Num) and v.e.is_number and not (indirect and v.e == 0):  # f(1000): the
                    # parameter's name stands for the literal; f(nullptr) for a pointer stays the null pointer
                    v = self.named_constant(pname, v, where, "local", detail=LITERAL_ARGUMENT)
                env[pname] = v
                continue
            if fd.name == "main":
                continue
            env[pname] = self._param_value(pname, ptype, indirect, where, fd)
        for tname, v in (values or {}).items():  # template values the caller does not bind (explicit instantiations)
            env.setdefault(tname, v)
        frame = Frame(fd, env, [*chain, fd.name], bound and (args is not None or fd.name == "main"),
                      self._deduced(fd, args, dict(types or {})), this=this)
        self.frames.append(frame)
        try:
            inits = next((c for c in fd.node.children if c.type == "field_initializer_list"), None)
            if inits is not None and this is not None:  # Class(h, w) : height_(h), width_(w)
                for fi in inits.named_children:
                    fname = text(next((c for c in fi.named_children if c.type == "field_identifier"), None))
                    argl = next((c for c in fi.named_children if c.type in ("argument_list", "initializer_list")), None)
                    first = _first_named(argl) if argl is not None else None
                    if fname and first is not None:
                        v = self.ev(first, env)
                        old = this.env.get(fname)
                        if isinstance(old, Ptr) and isinstance(v, Ptr):
                            v = Ptr(v.alloc, v.offset, old.elem or v.elem)
                        if v is not None:
                            this.env[fname] = v
            body = fd.node.child_by_field_name("body")
            if body is not None:
                self.block(body, frame)
        finally:
            self.frames.pop()
        self._callee_env = env
        return frame.returned

    def new_object(self, cls: str, where: str, types: dict[str, str]) -> Obj:
        """An object with its data members: pointers not yet allocated, scalars at their initialisers."""
        obj = Obj(cls, {})
        for fname, (ftype, indirect, init) in self.program.classes.get(cls, {}).items():
            t = normalise_ctype(types.get(ftype, ftype))
            if indirect:
                obj.env[fname] = Ptr(Alloc(None, t, Origin("host", where, f"member '{fname}' of {cls}")), elem=t)
            else:
                obj.env[fname] = self.ev(init, obj.env) if init is not None else None
        return obj

    def device_props(self, where: str) -> Obj:
        """What cudaGetDeviceProperties fills in: the values every NVIDIA GPU shares, and device-dependent ones
        as run-time values (a grid of `16 * multiProcessorCount` blocks is a size of its own, up to an H200's)."""
        props = api()["device_props"]
        if self._device is None:
            env: dict[str, Any] = {}
            for key, value in props["fixed"].items():
                env[key] = Arr([Num(sp.Integer(v)) for v in value], 4) if isinstance(value, list) else Num(sp.Integer(value))
            for key, value in props["varies"].items():
                env[key] = Num(self.fresh(key, "runtime", where, int(value),
                                          detail=f"the device's {key} ({value} on an H200)"))
            self._device = Obj("cudaDeviceProp", env)
        return Obj(self._device.cls, dict(self._device.env))

    def sizeof(self, ctype: str) -> sp.Expr:
        types = self.frames[-1].types if self.frames else {}
        return super().sizeof(types.get(ctype.strip(), ctype))

    def bound_type(self, name: str) -> str | None:
        return (self.frames[-1].types if self.frames else {}).get(name)

    def construct(self, cls: str, type_node: ts.Node | None, args: list[ts.Node], frame: Frame, where: str) -> Obj:
        types = dict(frame.types)
        targs = next((n for n in walk_tree(type_node) if n.type == "template_argument_list"), None) if type_node else None
        ctor = self.program.method(cls, cls, len(args))
        if targs is not None and ctor is not None:
            tparams = ctor.template_params or _class_template_params(self.program, cls)
            types.update(zip(tparams, [frame.types.get(text(c), text(c)) for c in targs.named_children]))
        elif targs is not None:
            types.update(zip(_class_template_params(self.program, cls),
                             [frame.types.get(text(c), text(c)) for c in targs.named_children]))
        obj = self.new_object(cls, where, types)
        if ctor is not None:
            vals = [self.ev(_expr_of(a), frame.env) for a in args]
            self.run_function(ctor, vals, frame.chain, frame.bound, types, this=obj)
        return obj

    def _param_value(self, pname: str, ptype: str, indirect: bool, where: str, fd: FuncDef) -> Value:
        if tensor_type(ptype, self.program.classes):
            return self.tensor_param(pname, where, fd)
        t = normalise_ctype(ptype)
        if indirect:
            if t in ("dim3",):
                return None
            return Ptr(Alloc(None, t, Origin("host", where, f"parameter '{pname}' of {fd.name}")), elem=t)
        if t == "dim3":
            return None
        cls = _plain_struct(self.program, t)
        if cls is not None:
            # a struct passed by value: its fields are unknown, but each is one value, the same in every function
            # the struct is passed on to (the launch's `grid.ldimx` and a helper's allocation of `grid.ldimx`)
            return Obj(cls, {})
        flt = is_float_type(t)
        return Num(self.fresh(pname, "param", where, flt=flt, detail=f"parameter of {fd.name}"), flt)

    # -- statements -------------------------------------------------------------------------------------------
    @property
    def frame(self) -> Frame:
        return self.frames[-1]

    def block(self, node: ts.Node, frame: Frame) -> None:
        for child in node.named_children:
            if self.budget <= 0:
                return
            self.statement(child, frame)

    def statement(self, node: ts.Node, frame: Frame) -> None:
        self.budget -= 1
        if self.budget > 0 and self.budget % 64 == 0 and time.monotonic() > self.deadline:
            self.budget = 0  # a program too big to read in time: what was seen so far stands
        t = node.type
        if t in ("compound_statement", "translation_unit", "preproc_if", "preproc_ifdef", "preproc_else",
                 "preproc_elif", "labeled_statement", "case_statement", "try_statement", "catch_clause",
                 "declaration_list", "else_clause"):
            for child in node.named_children:
                if child.type not in ("identifier", "preproc_arg", "comment") and child.is_named:
                    self.statement(child, frame)
            return
        if t == "declaration":
            self.declaration(node, frame)
        elif t in ("alias_declaration", "type_definition") and frame.fd is not None:
            # `using rng_t = kiss::Kiss<data_t>;` inside a function: a type of this frame, read through the ones
            # before it, which the template arguments of the calls and launches after it name
            ty = node.child_by_field_name("type")
            names = [node.child_by_field_name("name")] if t == "alias_declaration" else [
                d for d in node.children_by_field_name("declarator") if d.type == "type_identifier"]
            for n in names:
                if n is not None and ty is not None:
                    frame.types[text(n)] = spell_type(text(ty), frame.types)
        elif t == "expression_statement":
            e = _first_named(node)
            if e is not None:
                self.effect(e, frame)
        elif t == "if_statement":
            cond = self.ev(node.child_by_field_name("condition"), frame.env)
            c = self.concrete(cond.e) if isinstance(cond, Num) else None
            yes, no = node.child_by_field_name("consequence"), node.child_by_field_name("alternative")
            other = no if c else yes
            if c is not None and not (other is not None and self.explore and _launches_in(other, self.explore)):
                chosen = yes if c else no
                if chosen is not None:
                    self.statement(chosen, frame)
                return
            frame.in_branch += 1
            self._enter(False)
            rel = self._relation(node.child_by_field_name("condition"), frame) if c is None else None
            try:
                for part, holds in ((yes, rel), (no, sp.Not(rel) if rel is not None else None)):
                    if part is not None:
                        frame.conds.append(holds if holds is not None else sp.true)
                        try:
                            self.statement(part, frame)
                        finally:
                            frame.conds.pop()
            finally:
                frame.in_branch -= 1
                self._scopes.pop()
            if c is None and no is None and _only_returns(yes):
                frame.divides.extend(m for m in self._remainders(node.child_by_field_name("condition"), frame)
                                     if not frame.in_branch or self._set_in_block(m, node))
        elif t == "for_statement":
            self.for_loop(node, frame)
        elif t in ("while_statement", "do_statement", "switch_statement", "for_range_loop"):
            frame.in_branch += 1
            self._enter(t != "switch_statement")
            try:
                body = node.child_by_field_name("body")
                if body is not None:
                    self.statement(body, frame)
            finally:
                frame.in_branch -= 1
                self._scopes.pop()
        elif t == "return_statement":
            e = _first_named(node)
            # `return NULL;` (an error path) says nothing of what the function returns when it works
            if e is not None and frame.returned is None and frame.fd is not None and e.type != "null":
                frame.returned = self.ev(e, frame.env)
        elif t in ("condition_clause", "parenthesized_expression"):
            return

    def _relation(self, cond: ts.Node | None, frame: Frame) -> sp.Basic | None:
        """An undecided branch condition as a relation of the program's values (`C <= 32`, `n > 0 && n < 64`),
        or None."""
        while cond is not None and cond.type in ("parenthesized_expression", "condition_clause"):
            cond = _first_named(cond)
        if cond is None or cond.type != "binary_expression":
            return None
        op = text(cond.child_by_field_name("operator"))
        left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
        if op in ("&&", "||"):
            a, b = self._relation(left, frame), self._relation(right, frame)
            if a is None or b is None:
                return None
            return sp.And(a, b) if op == "&&" else sp.Or(a, b)
        rels = {"<": sp.Lt, "<=": sp.Le, ">": sp.Gt, ">=": sp.Ge, "==": sp.Eq, "!=": sp.Ne}
        if op not in rels:
            return None
        a, b = self.ev(left, frame.env), self.ev(right, frame.env)
        if not (isinstance(a, Num) and isinstance(b, Num)) or a.flt or b.flt:
            return None
        try:
            r = rels[op](a.e, b.e)
        except TypeError:
            return None
        return r if isinstance(r, sp.Basic) else None

    def _set_in_block(self, e: sp.Expr, check: ts.Node) -> bool:
        """Whether every value in `e` was set in the block that holds `check`, before it (`case 's': n =
        atoi(optarg); if (n % 16) exit(1);`): the path that gives the value is the path that checks it."""
        block = check.parent
        here = self.where(check).rsplit(":", 1)
        if block is None or len(here) != 2 or not e.free_symbols:
            return False
        first = block.start_point[0] + 1
        for x in e.free_symbols:
            root = self.roots.get(x)  # type: ignore[call-overload]
            at = root.where.rsplit(":", 1) if root is not None else []
            if len(at) != 2 or at[0] != here[0] or not at[1].isdigit() or not first <= int(at[1]) <= int(here[1]):
                return False
        return True

    def _remainders(self, cond: ts.Node | None, frame: Frame) -> list[sp.Expr]:
        """The remainders an early return refuses: `if (c % g != 0 || n < c) return false;` lets the code after it
        run only where `c % g` is 0 (the other terms of the `||` are left out: they only narrow it further)."""
        while cond is not None and cond.type in ("parenthesized_expression", "condition_clause"):
            cond = _first_named(cond)
        if cond is None or cond.type != "binary_expression":
            return []
        op = text(cond.child_by_field_name("operator"))
        left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
        if op == "||":
            return self._remainders(left, frame) + self._remainders(right, frame)
        if op == "!=" and right is not None and self.concrete(getattr(self.ev(right, frame.env), "e", None)) == 0:
            cond = left
            while cond is not None and cond.type == "parenthesized_expression":
                cond = _first_named(cond)
        if cond is None or cond.type != "binary_expression" or text(cond.child_by_field_name("operator")) != "%":
            return []
        v = self.ev(cond, frame.env)
        return [v.e] if isinstance(v, Num) and isinstance(v.e, sp.Mod) and not v.flt else []

    def declaration(self, node: ts.Node, frame: Frame) -> None:
        type_node = node.child_by_field_name("type")
        type_text = frame.types.get(text(type_node), text(type_node))
        base_type = _container_elem(type_node) or type_text
        for d in node.children_by_field_name("declarator"):
            value_node = None
            decl = d
            if d.type == "init_declarator":
                decl = d.child_by_field_name("declarator")
                value_node = d.child_by_field_name("value")
            name, indirect, arrays = _declarator(decl)
            if not name:
                continue
            where = self.where(d)
            cls = _class_of(self.program, type_text)
            if cls is not None and not indirect and not arrays:  # Tensor<float> t(h, w); Ham H; Ham H = Ham(n);
                argn = (decl.child_by_field_name("parameters") if decl is not None and decl.type == "function_declarator"
                        else value_node if value_node is not None and value_node.type in ("argument_list", "initializer_list")
                        else None)
                if value_node is not None and value_node.type == "call_expression":
                    argn = value_node.child_by_field_name("arguments")
                args = [c for c in argn.named_children if c.type != "comment"] if argn is not None else []
                frame.env[name] = self.construct(cls, type_node, args, frame, where)
                continue
            ref = self._kernel_named(value_node)
            if ref is not None:  # `auto align = align_kernel<int>;` launched as `align<<<2, t>>>(...)`
                frame.kernel_refs[name] = ref
                continue
            plain = _plain_struct(self.program, type_text) if cls is None and not indirect and not arrays else None
            if plain is not None and (value_node is None or value_node.type != "initializer_list"):
                # `struct grid_t g;` filled field by field, or `g = init_grid(n)` returning one: an object whose
                # fields are values of their own, passed on whole to the functions that read them
                value = self.ev(value_node, frame.env) if value_node is not None else None
                frame.env[name] = value if isinstance(value, Obj) else self.new_object(plain, where, {})
                continue
            if decl is not None and decl.type == "function_declarator":  # dim3 g(a, b); std::vector<T> v(n);
                self._constructed(name, type_node, base_type, decl.child_by_field_name("parameters"), frame, where, d)
                continue
            if value_node is not None and value_node.type == "argument_list":  # dim3 g{a, b}; vector<T> v(n)
                self._constructed(name, type_node, base_type, value_node, frame, where, d)
                continue
            if value_node is not None and value_node.type == "initializer_list" and _is_container(type_node):
                self._constructed(name, type_node, base_type, value_node, frame, where, d, init_list=True)
                continue
            if arrays:
                if value_node is not None and value_node.type == "initializer_list":
                    esize = self.sizeof(base_type)
                    frame.env[name] = Arr([self.ev(c, frame.env) for c in value_node.named_children],
                                          int(esize) if esize.is_Integer else None)
                else:
                    count: sp.Expr = sp.Integer(1)
                    for a in arrays:
                        v = self.ev(a, frame.env) if a is not None else None
                        if not isinstance(v, Num):
                            count = None  # type: ignore[assignment]
                            break
                        count = count * v.e
                    bytes_ = count * self.sizeof(base_type) if count is not None else None
                    frame.env[name] = Ptr(Alloc(bytes_, normalise_ctype(base_type), Origin("host", where, text(d))),
                                          elem=normalise_ctype(base_type))
                continue
            value = self.ev(value_node, frame.env) if value_node is not None else None
            if isinstance(value, Tensor):  # `auto y = torch::empty_like(x);`, `const at::Tensor& w = *bias;`
                frame.env[name] = value
                continue
            if indirect:
                elem = normalise_ctype(base_type)
                if isinstance(value, Ptr):
                    frame.env[name] = Ptr(value.alloc, value.offset, elem or value.elem)
                else:  # `float* b = nullptr;`: null until an allocation, an assignment or a call sets it
                    null = isinstance(value, Num) and value.e == 0
                    frame.env[name] = Ptr(Alloc(None, elem, Origin("host", where, text(d)), null=null), elem=elem)
                continue
            if normalise_ctype(type_text) == "dim3":
                if value_node is None:  # `dim3 grid;` is (1, 1, 1) until its fields are set
                    value = Dim3((sp.Integer(1), sp.Integer(1), sp.Integer(1)))
                elif isinstance(value, Arr) and 0 < len(value.items) <= 3 and all(
                        isinstance(x, Num) for x in value.items):  # `dim3 grid = {n, h, w};`
                    dims = [x.e for x in value.items] + [sp.Integer(1)] * 3  # type: ignore[union-attr]
                    value = Dim3((dims[0], dims[1], dims[2]))
                frame.env[name] = value if isinstance(value, Dim3) else (
                    Dim3((value.e, sp.Integer(1), sp.Integer(1))) if isinstance(value, Num) else None)
                continue
            if normalise_ctype(type_text) in api()["device_props"]["types"] and value_node is None:
                frame.env[name] = Obj(normalise_ctype(type_text), {})  # filled by cudaGetDeviceProperties
                continue
            if isinstance(value, Arr) and len(value.items) == 1 and value_node is not None and (
                    value_node.type == "initializer_list"):  # size_t n = {128}; int n{128};
                value = value.items[0]
            if value is None and value_node is not None:
                value = self.unknown_value(name, type_text, where, text(value_node), frame)
            elif value is None:
                frame.env[name] = None
                frame.declared[name] = type_text  # `float gamma;`, read later by `in >> gamma`
                continue
            value = _retype(value, type_text)
            root = self.roots.get(value.e) if isinstance(value, Num) else None
            if root is not None and root.kind == "choice" and root.detail.startswith("from "):
                root.name = name  # int block_size = block_sizes[j]: the axis is block_size
            # `unsigned size_of_float = sizeof(float)` is a type's size, not a size of the problem: a number
            if isinstance(value, Num) and value.e.is_number and not (
                    value_node is not None and re.fullmatch(r"\(?\s*sizeof\s*\([^()]*\)\s*\)?", text(value_node))):
                value = self.named_constant(name, value, where, "constant" if frame.fd is None else "local")
            frame.env[name] = value

    def _constructed(self, name: str, type_node: ts.Node | None, elem: str, args_node: ts.Node | None, frame: Frame,
                     where: str, decl: ts.Node, init_list: bool = False) -> None:
        type_text = text(type_node)
        args = [c for c in args_node.named_children if c.type != "comment"] if args_node is not None else []
        if normalise_ctype(type_text) == "dim3":
            vals = [self.ev(_expr_of(a), frame.env) for a in args]
            if all(isinstance(v, Num) for v in vals) and vals:
                dims = [v.e for v in vals] + [sp.Integer(1)] * 3  # type: ignore[union-attr]
                frame.env[name] = Dim3((dims[0], dims[1], dims[2]))
            else:
                frame.env[name] = None
            return
        if _is_container(type_node):
            count: sp.Expr | None = sp.Integer(len(args)) if init_list else None
            if not init_list and args:
                v = self.ev(_expr_of(args[0]), frame.env)
                count = v.e if isinstance(v, Num) else None
            bytes_ = count * self.sizeof(elem) if count is not None else None
            frame.env[name] = Ptr(Alloc(bytes_, normalise_ctype(elem), Origin("host", where, text(decl))),
                                  elem=normalise_ctype(elem))
            return
        frame.env[name] = None

    def unknown_value(self, name: str, type_text: str, where: str, code: str, frame: Frame,
                      keep_default: bool = True) -> Value:
        old = frame.env.get(name)
        default = self.concrete(old.e) if isinstance(old, Num) and keep_default else None
        flt = is_float_type(type_text)
        return Num(self.fresh(name, "runtime", where, default, flt=flt, detail=code[:80]), flt)

    # -- effects ----------------------------------------------------------------------------------------------
    def effect(self, e: ts.Node, frame: Frame) -> None:
        t = e.type
        if t in ("assignment_expression", "update_expression"):
            self._written_through(e.child_by_field_name("left") or e.child_by_field_name("argument"), frame)
        if t == "assignment_expression":
            self.assign(e, frame)
        elif t == "update_expression":
            target = e.child_by_field_name("argument")
            op = text(e.child_by_field_name("operator")) or ("++" if "++" in text(e) else "--")
            if target is not None and target.type == "identifier":
                v = frame.env.get(text(target))
                if isinstance(v, Ptr):  # `w5++;`: the pointer moves one element on (on one path: somewhere unknown)
                    frame.env[text(target)] = self.ptr_add(v, sp.Integer(1 if op == "++" else -1)) if not (
                        frame.in_branch) else Ptr(Alloc(None, v.elem, Origin("host", self.where(e), text(e))), elem=v.elem)
                elif isinstance(v, Num):
                    frame.env[text(target)] = Num(v.e + (1 if op == "++" else -1), v.flt) if not frame.in_branch else (
                        self.unknown_value(text(target), "int", self.where(e), text(e), frame))
        elif t == "comma_expression":
            for c in e.named_children:
                self.effect(c, frame)
        elif t == "binary_expression" and text(e.child_by_field_name("operator")) == ">>":
            self.extract(e, frame)
        else:
            self.ev(e, frame.env)

    def _written_through(self, target: ts.Node | None, frame: Frame) -> None:
        """`h[i] = v`, `*p += 1`: the buffer written no longer holds the constant a fill left in it."""
        while target is not None and target.type == "parenthesized_expression":
            target = _first_named(target)
        if target is None or target.type not in ("subscript_expression", "pointer_expression"):
            return
        if target.type == "pointer_expression" and not text(target).lstrip().startswith("*"):
            return
        base = target.child_by_field_name("argument")
        while base is not None and base.type in ("parenthesized_expression", "binary_expression"):
            base = _first_named(base) if base.type == "parenthesized_expression" else base.child_by_field_name("left")
        if base is not None and base.type in ("identifier", "field_expression"):
            v = self.ev(base, frame.env)
            if isinstance(v, Ptr):
                v.alloc.fill = None

    def extract(self, e: ts.Node, frame: Frame) -> None:
        """`in >> w >> h;` as a statement: a shift whose value nobody uses is a stream read, so each variable on
        the right is a value the program reads at run time (its declared type says integer or float)."""
        targets: list[ts.Node] = []
        cur: ts.Node | None = e
        while cur is not None and cur.type == "binary_expression" and text(cur.child_by_field_name("operator")) == ">>":
            right = cur.child_by_field_name("right")
            if right is not None:
                targets.append(right)
            cur = cur.child_by_field_name("left")
        if isinstance(self.ev(cur, frame.env), Num):
            return  # a number shifted for nothing
        for target in reversed(targets):
            if target.type != "identifier":
                continue
            name = text(target)
            env = frame.env if name in frame.env or name not in self.globals else self.globals
            old = env.get(name)
            if old is not None and not isinstance(old, Num):
                continue
            flt = (isinstance(old, Num) and old.flt) or is_float_type(frame.declared.get(name, "int"))
            env[name] = Num(self.fresh(name, "runtime", self.where(e), self.concrete(old.e) if isinstance(old, Num) else None,
                                       flt=flt, detail=" ".join(text(e).split())[:80]), flt)

    def assign(self, e: ts.Node, frame: Frame) -> None:
        left = e.child_by_field_name("left")
        op = text(e.child_by_field_name("operator")) or "="
        right = e.child_by_field_name("right")
        if left is None:
            return
        key = text(left).replace(" ", "")
        member_type: str | None = None
        env = frame.env if key in frame.env or key.split(".")[0] in frame.env or key not in self.globals else self.globals
        if frame.this is not None and key not in frame.env and key in frame.this.env:
            env = frame.this.env  # a data member assigned in a method
        if left.type == "field_expression":
            target_obj = self.ev(left.child_by_field_name("argument"), frame.env) if left.child_by_field_name(
                "argument") is not None and left.child_by_field_name("argument").type != "this" else frame.this
            if isinstance(target_obj, Obj):
                env, key = target_obj.env, text(left.child_by_field_name("field"))
                member = self.program.classes.get(target_obj.cls, {}).get(key)
                member_type = self.program.resolve_type(member[0]) if member is not None and not member[1] else None
        value = self.ev(right, frame.env)
        if member_type is not None and op == "=":  # `g.ndamp = taper * lambda / dx` into a long: truncated
            value = _retype(value, member_type)
        if left.type == "field_expression":
            obj = text(left.child_by_field_name("argument"))
            fld = text(left.child_by_field_name("field"))
            target = frame.env.get(obj, self.globals.get(obj))
            if isinstance(target, Dim3) and fld in ("x", "y", "z"):
                if not isinstance(value, Num) or op != "=":
                    env[obj] = None  # a dimension we cannot follow: the launch is unknown, not (.., 1, ..)
                    return
                dims = list(target.dims)
                dims["xyz".index(fld)] = value.e
                env[obj] = Dim3((dims[0], dims[1], dims[2]))
                return
        if left.type == "pointer_expression":  # *p = malloc(...) through an out-parameter
            inner = left.child_by_field_name("argument")
            ref = frame.env.get(text(inner)) if inner is not None else None
            if isinstance(ref, Ref) and isinstance(value, Ptr):
                ref.env[ref.name] = value
            elif isinstance(ref, Ref) and op == "=" and isinstance(value, Num) and isinstance(
                    ref.env.get(ref.name), (Num, type(None))):
                # `*count = n / parts;` through an out-parameter: the caller's number from then on. Set on one path
                # only, it is a value the program picks at run time where the caller left its variable unset; over
                # a value the caller set, that value stands (as ever: the paths that change it are not followed)
                old = ref.env.get(ref.name)
                if any(f.in_branch for f in self.frames):
                    if old is not None:
                        return
                    value = self.unknown_value(ref.name, "float" if value.flt else "int", self.where(e), text(right),
                                               frame)
                ref.env[ref.name] = value
            return
        if left.type == "subscript_expression" and op == "=":
            self.store_element(left, value, frame)
            return
        if left.type not in ("identifier", "field_expression"):
            return
        old = env.get(key)
        if isinstance(value, Obj) or isinstance(old, Obj):
            env[key] = value
            return
        if op in ("+=", "-=") and isinstance(old, Ptr) and isinstance(value, Num) and not value.flt:
            if frame.in_branch:  # moved on one path only: where it points after the branch is unknown
                env[key] = Ptr(Alloc(None, old.elem, Origin("host", self.where(e), text(e)[:120])), elem=old.elem)
            else:
                env[key] = self.ptr_add(old, value.e if op == "+=" else -value.e)
            return
        if op != "=":
            if isinstance(old, Num) and isinstance(value, Num):
                from xlate.specs.infer.ceval import arith

                value = arith(op[:-1], old, value)
            else:
                value = None
        if isinstance(old, Ptr) and isinstance(value, Ptr):
            env[key] = Ptr(value.alloc, value.offset, old.elem or value.elem)
            return
        if isinstance(old, Ptr) and (value is None or (isinstance(value, Num) and value.e == 0)):
            old.alloc.null = old.alloc.null and value is not None  # an unknown call set it: no longer null
            return  # an unknown call returned it (or `p = NULL` after its use): keep what we knew
        if value is None and right is not None:
            type_text = "float" if isinstance(old, Num) and old.flt else "int"
            value = self.unknown_value(key, type_text, self.where(e), text(right), frame)
        elif frame.in_branch and isinstance(value, Num) and isinstance(old, Num) and value.e != old.e:
            # set on one path only (`if (argc > 2) mode = APPROX;`): either value may hold after the branch
            old_root = self.roots.get(old.e) if isinstance(old.e, sp.Symbol) else None
            # a value narrowed from itself by a loop's variable (`hi = max(hi, c)`: a search over data) is one of
            # the values met on the way: the one before the loop (the search found nothing) is no default for it,
            # and a copy of another run-time value (`lo = cols;`) would tie it to that value
            searched = right is not None and _mentions(right, key) and any(
                getattr(self.roots.get(x), "kind", None) == "loop"  # type: ignore[call-overload]
                for x in getattr(value.e, "free_symbols", ()))
            if old_root is not None and old_root.kind == "runtime" and not searched:
                value = old  # already a value the program chooses at run time
            elif self.concrete(old.e) is not None or (old_root is not None and old_root.kind == "runtime"):
                value = self.unknown_value(key, "float" if old.flt else "int", self.where(e), text(right), frame,
                                           keep_default=not searched)
        if isinstance(value, Num) and isinstance(old, Num) and old.flt and not value.flt:
            value = Num(value.e, True)
        env[key] = value

    def for_loop(self, node: ts.Node, frame: Frame) -> None:
        init = node.child_by_field_name("initializer")
        cond = node.child_by_field_name("condition")
        update = node.child_by_field_name("update")
        var = None
        start: Value = None
        if init is not None and init.type == "declaration":
            d = next(iter(init.children_by_field_name("declarator")), None)
            if d is not None and d.type == "init_declarator":
                var = text(d.child_by_field_name("declarator"))
                start = self.ev(d.child_by_field_name("value"), frame.env)
        elif init is not None and init.type == "assignment_expression":
            var = text(init.child_by_field_name("left"))
            start = self.ev(init.child_by_field_name("right"), frame.env)
        if var:
            values = self._loop_values(var, start, cond, update, frame)
            where = self.where(node)
            if values is not None:
                frame.env[var] = Num(self.fresh(var, "choice", where, values[0], values, detail=text(cond)))
            else:
                frame.env[var] = Num(self.fresh(var, "loop", where, self.concrete(start.e) if isinstance(start, Num) else None,
                                                detail=text(cond)))
                self.roots[frame.env[var].e].span = _loop_span(var, start, cond, update, node.child_by_field_name(
                    "body"), self, frame.env)
        frame.in_branch += 1
        self._enter(True)
        try:
            body = node.child_by_field_name("body")
            if body is not None:
                self.statement(body, frame)
        finally:
            frame.in_branch -= 1
            self._scopes.pop()

    def _enter(self, loop: bool) -> None:
        self._scope_count += 1
        self._scopes.append((self._scope_count, loop))
    def _loop_values(self, var: str, start: Value, cond: ts.Node | None, update: ts.Node | None,
                     frame: Frame) -> list[int] | None:
        s = self.concrete(start.e) if isinstance(start, Num) else None
        if s is None or cond is None or cond.type != "binary_expression" or update is None:
            return None
        op = text(cond.child_by_field_name("operator"))
        left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
        if text(left) != var:
            return None
        bound = self.ev(right, frame.env)
        b = self.concrete(bound.e) if isinstance(bound, Num) else None
        if b is None:
            return None
        step = _step(update, var, self, frame.env)
        if step is None:
            return None
        values: list[int] = []
        v = s
        tests = {"<": lambda x: x < b, "<=": lambda x: x <= b, ">": lambda x: x > b, ">=": lambda x: x >= b,
                 "!=": lambda x: x != b}
        test = tests.get(op)
        if test is None:
            return None
        while test(v) and len(values) <= MAX_LOOP_VALUES:
            values.append(v)
            nv = step(v)
            if nv == v:
                return None
            v = nv
        if not values or len(values) > MAX_LOOP_VALUES:
            return None
        return values

    # -- calls ------------------------------------------------------------------------------------------------
    def special_call(self, name: str, node: ts.Node, args: list[ts.Node], env: dict[str, Any]) -> tuple[bool, Value]:
        tables = api()
        handled, v = self.tensor_method(node, args, env)
        if not handled:
            handled, v = self.tensor_factory(name, node, args, env)
        if not handled:
            handled, v = self.tensor_info(name, node, args, env)
        if handled or self.torch_check(name, args, env):
            return True, v
        base = name.split("::")[-1]
        cls = _class_of(self.program, name) if self.frames and self.program.function(base) is None else None
        if cls is not None and self.program.method(cls, cls, len(args)) is not None:
            # `run(PayoffPut(K))`: a temporary of a class of the program, which a template launcher deduces from
            return True, self.construct(cls, None, args, self.frame, self.where(node))
        if name in tables["alloc_out"] or base in tables["alloc_out"]:
            pos, size_spec = tables["alloc_out"].get(name) or tables["alloc_out"][base]
            if pos < len(args):
                nbytes = self._bytes(size_spec, args, env)
                target = self.ev(args[pos], env)
                self._store_alloc(target, nbytes, node)
            return True, Num(sp.Integer(0))
        if name in tables["alloc_ret"] or base in tables["alloc_ret"]:
            nbytes = self._bytes(tables["alloc_ret"].get(name) or tables["alloc_ret"][base], args, env)
            return True, Ptr(Alloc(nbytes, None, Origin("host", self.where(node), text(node)[:120])))
        if name in tables["copy"] or base in tables["copy"]:
            spec = tables["copy"].get(name, tables["copy"].get(base))
            if spec:
                dst_i, src_i, n_i = spec
                if max(i for i in spec if i is not None) < len(args):
                    dst = self.ev(args[dst_i], env)
                    nb = self.ev(args[n_i], env)
                    src = self.ev(args[src_i], env) if src_i is not None else None
                    if isinstance(dst, Ref) and (dst.env.get(dst.name) is None or isinstance(dst.env.get(dst.name), Num)):
                        # `cudaMemcpy(&r, d_r, sizeof(int), ...)` (or through a pointer parameter holding `&r`): the
                        # number now holds what a kernel computed, not what the program set before
                        old = dst.env.get(dst.name)
                        flt = isinstance(old, Num) and old.flt
                        dst.env[dst.name] = Num(self.fresh(dst.name, "runtime", self.where(node), flt=flt,
                                                           detail=f"copied into by {name}(...)"), flt)
                        return True, None
                    self._copy(dst, src, nb.e if isinstance(nb, Num) else None, node)
                    byte = self.ev(args[1], env) if src_i is None else None
                    self._filled(dst, nb.e if isinstance(nb, Num) else None, node, src=src, byte=byte)
            return True, None
        if name in tables["fill_value"] or base in tables["fill_value"]:
            last_i, value_i, counted = tables["fill_value"].get(name) or tables["fill_value"][base]
            if max(last_i, value_i) < len(args):
                dst, last = self.ev(args[0], env), self.ev(args[last_i], env)
                value = self.ev(args[value_i], env)
                nbytes = None
                if isinstance(dst, Ptr) and counted and isinstance(last, Num) and dst.elem:
                    nbytes = last.e * self.sizeof(dst.elem)
                elif isinstance(dst, Ptr) and isinstance(last, Ptr) and last.alloc is dst.alloc:
                    nbytes = last.offset - dst.offset
                elif isinstance(dst, Ptr) and text(args[last_i]).replace(" ", "").endswith((".end()", "->end()")):
                    nbytes = dst.alloc.bytes  # `v.begin(), v.end()`: the whole container
                self._filled(dst, nbytes, node, value=value)
            return True, None
        props = tables["device_props"]
        if base in props["calls"] and len(args) > props["calls"][base]:
            target = self.ev(args[props["calls"][base]], env)
            if isinstance(target, Ref):
                target.env[target.name] = self.device_props(self.where(node))
            return True, Num(sp.Integer(0))
        if base in props["attribute_calls"] and len(args) > max(props["attribute_calls"][base]):
            out_i, attr_i = props["attribute_calls"][base]
            target = self.ev(args[out_i], env)
            field_name = props["attributes"].get(text(args[attr_i]).split("::")[-1])
            if isinstance(target, Ref) and field_name is not None:
                target.env[target.name] = self.device_props(self.where(node)).env.get(field_name)
            return True, Num(sp.Integer(0))
        if name in tables["launch_apis"] or base in tables["launch_apis"]:
            self.api_launch(name, node, args, env, tables["launch_apis"].get(name) or tables["launch_apis"][base])
            return True, Num(sp.Integer(0))
        last = name.split(".")[-1].split("->")[-1]
        if ("." in name or "->" in name) and last in tables["pointer_of"]:
            fn = node.child_by_field_name("function")
            obj = fn.child_by_field_name("argument") if fn is not None else None
            v = self.ev(obj, env) if obj is not None else None
            return True, v if isinstance(v, Ptr) else None
        if ("." in name or "->" in name) and last in ("resize", "assign"):
            fn = node.child_by_field_name("function")
            obj = fn.child_by_field_name("argument") if fn is not None else None
            v = self.ev(obj, env) if obj is not None else None
            n = self.ev(args[0], env) if args else None
            if isinstance(v, Ptr) and isinstance(n, Num) and v.alloc.bytes is None:
                v.alloc.bytes = n.e * self.sizeof(v.elem or "float")
                v.alloc.origin = Origin("host", self.where(node), text(node)[:120])
            return True, None
        if base in tables["pointer_of"] and args:
            v = self.ev(args[0], env)
            return True, v if isinstance(v, Ptr) else None
        method = self._method_call(name, node, args, env)
        if method is not None:
            return True, method[0]
        fd = self.program.function(base, arity=len(args))
        if fd is not None and fd.space == "host" and "." not in name and "->" not in name:
            vals = [self._arg_value(a, env) for a in args]
            fd = self._overload(base, vals) or fd
            fn = node.child_by_field_name("function")
            types = {}
            if fn is not None and fn.type == "template_function":
                targs = fn.child_by_field_name("arguments")
                tnames = [self.frame.types.get(text(c), text(c)) for c in (targs.named_children if targs else [])]
                types = dict(zip(fd.template_params, tnames))
            single = self.inline_function(fd, vals, env) if _single_return(fd) else None
            if single is not None:
                return True, single
            frame = self.frame
            self._callee_env = {}
            result = self.run_function(fd, vals, frame.chain, frame.bound, types)
            self._write_back(fd, args, vals, self._callee_env, env)
            return True, result
        return False, None

    def _write_back(self, fd: FuncDef, args: list[ts.Node], vals: list[Value], callee: dict[str, Any],
                    env: dict[str, Any]) -> None:
        """`read_sizes(path, rows, cols)` with `void read_sizes(const char*, int &rows, int &cols)`: what the callee
        left in a reference parameter is the caller's variable's value from then on (C++ passes the variable)."""
        for i, is_ref in enumerate(_reference_params(fd)):
            if not is_ref or i >= len(args) or i >= len(vals) or args[i].type != "identifier":
                continue
            pname = fd.params[i][0]
            new = callee.get(pname)
            if pname and isinstance(new, (Num, Ptr)) and new is not vals[i]:
                ref = self.ref_of(text(args[i]), env)
                if isinstance(ref, Ref):
                    ref.env[ref.name] = new

    def _deduced(self, fd: FuncDef, args: list[Value] | None, types: dict[str, str]) -> dict[str, str]:
        """The template type parameters of a host function called without them (`stddev(d_std, d_data, D, N)` for
        `template <typename T, typename I = int> void stddev(T*, const T*, I, I)`): deduced as C++ does from the
        pointers it receives (`T*` given a `float*`), else the declaration's default. The kernels it launches with
        `k<T, I>` then get types the gate can draw, not names no one binds."""
        if not fd.template_params:
            return types
        outer = self.frames[-1].types if self.frames else {}
        for i, (_, ptype, indirect) in enumerate(fd.params):
            base = normalise_ctype(ptype).replace("*", "").replace("&", "").replace("const ", "").strip()
            if base not in fd.template_params or base in types or args is None or i >= len(args):
                continue
            arg = args[i]
            if indirect and isinstance(arg, Ptr) and arg.elem:
                elem = outer.get(arg.elem, arg.elem)
                if elem not in fd.template_params:
                    types[base] = self.program.resolve_type(elem)
            elif not indirect and isinstance(arg, Num) and not arg.flt and base not in fd.template_defaults:
                types[base] = "int"  # C++ deduces `int` from an integer value
        for t, default in fd.template_defaults.items():
            types.setdefault(t, outer.get(default, default))
        return types

    def _method_call(self, name: str, node: ts.Node, args: list[ts.Node], env: dict[str, Any]) -> tuple[Value] | None:
        """`obj.method(...)`, `obj->method(...)`, or `method(...)` inside another method of the class."""
        fn = node.child_by_field_name("function")
        this: Value = None
        mname = name
        if fn is not None and fn.type == "field_expression":
            arg = fn.child_by_field_name("argument")
            this = self._this() if arg is not None and arg.type == "this" else self.ev(arg, env)
            mname = text(fn.child_by_field_name("field"))
        elif "::" not in name:
            this = self._this()
        if not isinstance(this, Obj):
            return None
        fd = self.program.method(this.cls, mname, len(args))
        if fd is None:
            return None
        frame = self.frame
        vals = [self._arg_value(a, env) for a in args]
        return (self.run_function(fd, vals, frame.chain, frame.bound, frame.types, this=this),)

    def _arg_value(self, node: ts.Node, env: dict[str, Any]) -> Value:
        v = self.ev(node, env)
        return v

    def _bytes(self, spec: str, args: list[ts.Node], env: dict[str, Any]) -> sp.Expr | None:
        total: sp.Expr = sp.Integer(1)
        for part in str(spec).split("*"):
            i = int(part)
            if i >= len(args):
                return None
            v = self.ev(args[i], env)
            if not isinstance(v, Num):
                return None
            total = total * v.e
        return total

    def _store_alloc(self, target: Value, nbytes: sp.Expr | None, node: ts.Node) -> None:
        origin = Origin("host", self.where(node), " ".join(text(node).split())[:120])
        if isinstance(target, Ref):
            old = target.env.get(target.name)
            elem = old.elem if isinstance(old, Ptr) else None
            if isinstance(old, Ptr) and old.alloc.bytes is None:
                old.alloc.bytes, old.alloc.origin = nbytes, origin  # every alias of it sees the size
                old.alloc.null = False
                target.env[target.name] = Ptr(old.alloc, sp.Integer(0), elem)
            else:
                target.env[target.name] = Ptr(Alloc(nbytes, elem, origin), elem=elem)
        elif isinstance(target, Ptr):  # a T** parameter: the caller's variable is behind it
            target.alloc.bytes, target.alloc.origin = nbytes, origin

    def _copy(self, dst: Value, src: Value, nbytes: sp.Expr | None, node: ts.Node) -> None:
        origin = Origin("host", self.where(node), " ".join(text(node).split())[:120])
        if isinstance(dst, Ptr) and isinstance(src, Ptr) and src.alloc is not dst.alloc:
            dst.alloc.copies.append(src.alloc)
        for p in (dst, src):
            if isinstance(p, Ptr) and p.alloc.bytes is None and nbytes is not None and p.offset == 0:
                p.alloc.bytes, p.alloc.origin = nbytes, origin

    def _filled(self, dst: Value, nbytes: sp.Expr | None, node: ts.Node, src: Value = None, byte: Value = None,
                value: Value = None) -> None:
        """What a memset, a fill or a copy leaves in `dst`'s allocation: one constant over all of it (a fact the
        kernels launched next may read), or nothing known (a part written, a copy of unknown contents)."""
        if not isinstance(dst, Ptr):
            return
        alloc = dst.alloc
        alloc.fill = None
        whole = nbytes is not None and alloc.bytes is not None and dst.offset == 0 and sp.expand(nbytes - alloc.bytes) == 0
        if not whole:
            return
        scopes, where = tuple(self._scopes), self.where(node)
        if isinstance(src, Ptr):  # a host array holding one constant, copied over the whole buffer
            if src.alloc.fill is not None and src.offset == 0 and src.alloc.bytes is not None and (
                    sp.expand(src.alloc.bytes - nbytes) == 0):
                alloc.fill = Fill(src.alloc.fill.byte, src.alloc.fill.value, scopes, where)
        elif isinstance(byte, Num) and not byte.flt and self.concrete(byte.e) is not None:
            alloc.fill = Fill(self.concrete(byte.e) & 0xFF, None, scopes, where)  # memset keeps the low byte
        elif isinstance(value, Num) and self.concrete(value.e) is not None and not value.flt:
            alloc.fill = Fill(None, self.concrete(value.e), scopes, where)
        elif isinstance(value, Num) and value.flt and value.e.is_number:
            alloc.fill = Fill(None, float(value.e), scopes, where)

    def fill_seen(self, p: Ptr) -> Fill | None:
        """The constant a launch here finds in the buffer `p` points to: only where the fill ran in no loop the
        launch does not (a launch inside a loop the fill is outside of may see what its previous round wrote)."""
        f = p.alloc.fill
        if f is None or p.offset != 0:
            return None
        n = len(f.scopes)
        if tuple(self._scopes[:n]) != f.scopes or any(loop for _, loop in self._scopes[n:]):
            return None
        return f

    def _this(self) -> Obj | None:
        return self.frames[-1].this if self.frames else None

    def deref(self, v: Value, node: ts.Node, env: dict[str, Any]) -> Value:
        return v if isinstance(v, Tensor) else super().deref(v, node, env)  # `*bias` of an optional tensor

    def name(self, name: str, node: ts.Node, env: dict[str, Any]) -> Value:
        this = self._this()
        if name not in env and this is not None and name in this.env:
            return this.env[name]
        if name == "this" and this is not None:
            return this
        return self._name(name, node, env)

    def ref_of(self, name: str, env: dict[str, Any]) -> Value:
        this = self._this()
        if name not in env and this is not None and name in this.env:
            return Ref(this.env, name)
        return super().ref_of(name, env)

    def field_ref(self, node: ts.Node, env: dict[str, Any]) -> Value:
        obj = self.ev(node.child_by_field_name("argument"), env)
        if isinstance(obj, Obj):
            return Ref(obj.env, text(node.child_by_field_name("field")))
        return super().field_ref(node, env)

    def field_value(self, node: ts.Node, env: dict[str, Any]) -> Value:
        arg = node.child_by_field_name("argument")
        if arg is not None and arg.type in ("identifier", "this", "field_expression", "pointer_expression",
                                            "subscript_expression"):
            obj = self.ev(arg, env) if arg.type != "this" else self._this()
            fld = text(node.child_by_field_name("field"))
            if isinstance(obj, Obj):
                if obj.env.get(fld) is None and obj.cls != "cudaDeviceProp":
                    obj.env[fld] = self._opaque_field(node)
                return obj.env.get(fld)
            if isinstance(obj, Dim3) and fld in ("x", "y", "z"):  # block.x of a dim3 set earlier
                return Num(obj.dims["xyz".index(fld)])
        v = super().field_value(node, env)
        if v is None and arg is not None and arg.type in ("identifier", "subscript_expression", "field_expression"):
            # `tiles[m].nFibers` of a struct we do not see into: one run-time value, the same wherever it is read
            # (the grid and the argument computed from it stay tied), until the program assigns it
            key = text(node).replace(" ", "")
            v = env[key] = self._opaque_field(node)
        return v

    def _opaque_field(self, node: ts.Node) -> Num:
        return Num(self.fresh(text(node.child_by_field_name("field")) or "field", "runtime", self.where(node),
                              detail=f"{' '.join(text(node).split())}: a field the code read does not set"))

    def run_statements(self, body: ts.Node, env: dict[str, Any]) -> None:
        if self.frames and self.frames[-1].env is env:
            self.block(body, self.frames[-1])

    def where(self, node: ts.Node) -> str:
        sf = self.program.source_of(node)
        if sf is not None:
            return sf.where(node)
        return self._macro_where[-1] if self._macro_where else ""

    def call(self, node: ts.Node, env: dict[str, Any]) -> Value:
        if any(c.type == "kernel_call_syntax" for c in node.children):
            self.chevron(node, env)
            return None
        sf = self.program.source_of(node)
        self._macro_where.append(sf.where(node) if sf is not None else (self._macro_where[-1] if self._macro_where else ""))
        try:
            return Evaluator.call(self, node, env)
        finally:
            self._macro_where.pop()

    def unknown_choice(self, node: ts.Node, yes: Value, no: Value) -> Value:
        """`grad ? g.data_ptr<float>() : nullptr` on a flag the code read does not give: the buffer (the branch
        that needs a length; a kernel testing the pointer takes its non-null path on both sides)."""
        for a, b in ((yes, no), (no, yes)):
            if isinstance(a, Ptr) and not a.alloc.null and (
                    (isinstance(b, Num) and b.e == 0) or (isinstance(b, Ptr) and b.alloc.null)):
                return a
        return None

    def unknown_name(self, name: str, node: ts.Node) -> Value:
        if name in self.kernels or self.program.functions.get(name):
            return None
        if name[:1].isupper() and name.startswith(("cuda", "hip")):
            return None
        sym = self.fresh(name, "global", self.where(node), detail="defined outside the code read")
        self.globals[name] = Num(sym)
        return self.globals[name]

    def unknown_call(self, name: str, node: ts.Node, vals: list[Value], env: dict[str, Any]) -> Value:
        # `read_image(path, &w, &h)`: a function we cannot follow sets the numbers whose address it gets
        for v in vals:
            if isinstance(v, Ptr):  # and may write the buffers it gets (thrust::sort, a library call)
                v.alloc.fill = None
            if isinstance(v, Ref) and isinstance(v.env.get(v.name), Ptr):  # `make_buffer(&p)` may point p at memory
                v.env[v.name].alloc.null = False
            if isinstance(v, Ref) and (v.env.get(v.name) is None or isinstance(v.env.get(v.name), Num)):
                old = v.env.get(v.name)
                flt = isinstance(old, Num) and old.flt
                v.env[v.name] = Num(self.fresh(v.name, "runtime", self.where(node), self.concrete(old.e) if isinstance(
                    old, Num) else None, flt=flt, detail=f"set by {name}(...)"), flt)
        self._run_lambdas(name, node, env)
        return None

    def _run_lambdas(self, name: str, node: ts.Node, env: dict[str, Any]) -> None:
        """A call we cannot follow that gets a lambda of no parameters (a dispatch macro: `AT_DISPATCH_...(t,
        "f", [&] { k<scalar_t><<<g, b>>>(...); })`, `SWITCH(c, [&] {...})`) or calls one (`[&] {...}()`) runs it:
        its body runs here, once, as if by reference, so the launches in it are found. A dispatch macro's lambda
        sees the type names it binds (`scalar_t`: one type the gate draws)."""
        fn = node.child_by_field_name("function")
        args = node.child_by_field_name("arguments")
        lambdas = [fn] + (list(args.named_children) if args is not None else [])
        bound = self.dispatch_types(name) if self.frames else {}
        for lam in lambdas:
            while lam is not None and lam.type == "parenthesized_expression":  # `([&] { ... })`
                lam = _first_named(lam)
            if lam is None or lam.type != "lambda_expression":
                continue
            decl = lam.child_by_field_name("declarator")
            params = decl.child_by_field_name("parameters") if decl is not None else None
            body = lam.child_by_field_name("body")
            if body is not None and (params is None or not params.named_children):
                old = dict(self.frame.types) if bound else None
                self.frame.types.update({k: v for k, v in bound.items() if k not in self.frame.types})
                try:
                    self.run_statements(body, env)
                finally:
                    if old is not None:
                        self.frame.types.clear()
                        self.frame.types.update(old)

    def subscript_value(self, node: ts.Node, env: dict[str, Any]) -> Value:
        base = self.ev(node.child_by_field_name("argument"), env)
        idx_nodes = node.child_by_field_name("indices") or node.child_by_field_name("index")
        idx = self.ev(_first_named(idx_nodes), env) if idx_nodes is not None else None
        if isinstance(base, Arr) and isinstance(idx, Num):
            i = self.concrete(idx.e)
            if i is not None:
                return base.items[i] if 0 <= i < len(base.items) else None
            root = self.roots.get(idx.e) if isinstance(idx.e, sp.Symbol) else None
            if root is not None and root.values and all(0 <= v < len(base.items) for v in root.values):
                picked = [base.items[v] for v in root.values]
                nums = [self.concrete(p.e) if isinstance(p, Num) else None for p in picked]
                if all(isinstance(x, int) for x in nums):
                    arr_name = text(node.child_by_field_name("argument"))
                    values = list(dict.fromkeys(int(x) for x in nums if x is not None))
                    return Num(self.fresh(arr_name, "choice", self.where(node), values[0], values,
                                          detail=f"from {arr_name} = {{{', '.join(str(v) for v in values)}}}"))
        if isinstance(base, Ptr) and isinstance(idx, Num):
            i = self.concrete(idx.e)
            if i is not None:
                return self._elements.get((id(base.alloc), self._element_key(base, i)))
        return None

    def _element_key(self, p: Ptr, i: int) -> Any:
        return sp.expand(p.offset + i * (self.sizeof(p.elem) if p.elem else 1))

    def store_element(self, left: ts.Node, value: Value, frame: Frame) -> None:
        """`sizes[0] = n;` into a local array: later reads of sizes[0] see n (grids built from arrays)."""
        base = self.ev(left.child_by_field_name("argument"), frame.env)
        idx_nodes = left.child_by_field_name("indices") or left.child_by_field_name("index")
        idx = self.ev(_first_named(idx_nodes), frame.env) if idx_nodes is not None else None
        i = self.concrete(idx.e) if isinstance(idx, Num) else None
        if i is None:
            return
        if isinstance(base, Arr):
            if not 0 <= i < len(base.items):
                return
            old = base.items[i]
            slot: Any = (base.items, i)
        elif isinstance(base, Ptr):
            base.alloc.fill = None  # one element written: the buffer no longer holds one constant
            esize = self.sizeof(base.elem) if base.elem else None
            if (not frame.in_branch and isinstance(value, Num) and esize is not None and base.alloc.bytes is not None
                    and sp.expand(base.alloc.bytes - esize) == 0 and sp.expand(base.offset + i * esize) == 0):
                # `h_head[0] = 0` into a one-element allocation: the whole buffer holds that constant (a counter the
                # program resets and copies to the device before each launch)
                self._filled(Ptr(base.alloc, sp.Integer(0), base.elem), base.alloc.bytes, left, value=value)
            key = (id(base.alloc), self._element_key(base, i))
            old = self._elements.get(key)
            slot = (self._elements, key)
        else:
            return
        if frame.in_branch and isinstance(old, Num) and isinstance(value, Num) and self.concrete(old.e) is not None and (
                self.concrete(value.e) is None):
            value = self.unknown_value(text(left), "float" if old.flt else "int", self.where(left), text(left), frame)
        if not isinstance(value, (Num, Ptr, Dim3)):
            value = None
        container, k = slot
        if isinstance(container, list):
            container[k] = value
        elif value is None:
            container.pop(k, None)
        else:
            container[k] = value

    # -- launches ---------------------------------------------------------------------------------------------
    def chevron(self, node: ts.Node, env: dict[str, Any]) -> None:
        fn = node.child_by_field_name("function")
        config = next(c for c in node.children if c.type == "kernel_call_syntax")
        cfg = [c for c in config.named_children if c.type != "comment"]
        args_node = node.child_by_field_name("arguments")
        args = [c for c in args_node.named_children if c.type != "comment"] if args_node is not None else []
        name, targs = self._kernel_ref(fn)  # also through a local naming the kernel (`auto k = &kernel<T>;`)
        vals = [self.ev(c, env) for c in cfg] + [None] * 3
        self._record(name, targs, vals[0], vals[1], vals[2], [self.ev(a, env) for a in args], node, [text(a) for a in args])

    def api_launch(self, name: str, node: ts.Node, args: list[ts.Node], env: dict[str, Any], spec: list[Any]) -> None:
        if not args:
            return
        kname, targs = self._kernel_ref(args[0])
        g, b, s, first = spec
        get = lambda i: self.ev(args[i], env) if i < len(args) else None  # noqa: E731
        if first == "args":
            arr = self.ev(args[3], env) if len(args) > 3 else None
            kargs: list[Value] = []
            if isinstance(arr, Arr):
                for item in arr.items:
                    kargs.append(item.env.get(item.name) if isinstance(item, Ref) else None)
            texts: list[str] = []
        else:
            kargs = [self.ev(a, env) for a in args[first:]]
            texts = [text(a) for a in args[first:]]
        self._record(kname, targs, get(g), get(b), get(s), kargs, node, texts)

    def _kernel_named(self, node: ts.Node | None) -> ts.Node | None:
        """`kern<int>`, `&kern`, `(void*)kern`: the expression naming a kernel of the program, or None."""
        cur = _unwrapped(node)
        if cur is None or cur.type not in ("identifier", "template_function", "qualified_identifier"):
            return None
        name = text(cur.child_by_field_name("name") if cur.type == "template_function" else cur).split("::")[-1]
        return cur if name in self.kernels else None

    def _kernel_ref(self, node: ts.Node | None) -> tuple[str, list[str]]:
        cur = _unwrapped(node)
        if cur is not None and cur.type == "identifier" and self.frames and text(cur) in self.frame.kernel_refs:
            cur = self.frame.kernel_refs[text(cur)]  # a local holding a kernel: the kernel (and its template arguments)
        if cur is not None and cur.type == "call_expression" and text(cur.child_by_field_name("function")) == "HIP_KERNEL_NAME":
            cur = _first_named(cur.child_by_field_name("arguments"))
        if cur is not None and cur.type == "template_function":
            targs = cur.child_by_field_name("arguments")
            types = self.frames[-1].types if self.frames else {}
            out = []
            for i, c in enumerate(targs.named_children if targs else []):
                out.append(self._template_arg(c, types, i))
            return text(cur.child_by_field_name("name")).split("::")[-1], out
        return text(cur).split("::")[-1], []

    def _overload(self, name: str, vals: list[Value]) -> FuncDef | None:
        """Of several host functions of one name and arity (`min(int, int)`, `min(uint4, uint4)`), the one whose
        parameters take the values passed: numbers by number types, pointers by pointers; None where one or
        none is defined."""
        fds = [fd for fd in self.program.functions.get(name, []) if not fd.cls and fd.space == "host"
               and len(fd.params) == len(vals)]
        if len(fds) < 2:
            return None

        def fits(fd: FuncDef) -> int:
            score = 0
            for (_, ptype, indirect), v in zip(fd.params, vals):
                base = normalise_ctype(ptype.replace("&", " ")).replace("const ", "").strip()
                number = self.program.resolve_type(base) in NUMBER_TYPES or base in fd.template_params
                score += int(isinstance(v, Num) and not indirect and number) + int(isinstance(v, Ptr) and indirect)
            return score

        return max(fds, key=fits)

    def _template_arg(self, node: ts.Node, types: dict[str, str], index: int = -1) -> str:
        """A template argument as the kernel gets it: a type through the launcher's bindings, a value as the
        number the program gives it (`k<block_size>` with `const int block_size = 256` is `k<256>`)."""
        t = types.get(text(node), text(node))
        if node.type == "type_descriptor" and t == text(node) and self.frames and text(node) in self.frames[-1].env:
            node = _first_named(node) or node  # a name the grammar read as a type
        if node.type in ("type_descriptor", "primitive_type") or t != text(node) or not self.frames:
            return t
        env = self.frames[-1].env
        v = self.name(text(node), node, env) if node.type == "type_identifier" else self.ev(node, env)
        c = self.concrete(v.e) if isinstance(v, Num) and not v.flt else None
        if c is not None:  # the kernel is compiled with this value: where the launch uses the name, it is fixed
            self._template_roots |= {x for x in v.e.free_symbols if x in self.roots}
        elif isinstance(v, Num) and not v.flt and v.e.free_symbols and all(
                x in self.roots and self.roots[x].kind == "choice" for x in v.e.free_symbols):
            self._template_choices[index] = v.e  # one of the program's choices: an axis of instantiations
        return str(c) if c is not None else t

    def _record(self, kernel: str, targs: list[str], grid: Value, block: Value, shmem: Value, args: list[Value],
                node: ts.Node, arg_texts: list[str]) -> None:
        frame = self.frame
        if self.explore and kernel not in self.explore:  # the last pass adds only what the others missed
            self._template_roots.clear()
            self._template_choices = {}
            return
        fills = {i: f for i, a in enumerate(args) if isinstance(a, Ptr) and (f := self.fill_seen(a)) is not None}
        memo: dict[int, Alloc] = {}  # the launch sees the values the checks before it tied (one copy per allocation)
        grid, block, shmem = (self.tied_value(v, memo) for v in (grid, block, shmem))
        seen = [self.tied_value(a, memo) for a in args]
        self.launches.append(Launch(kernel, targs, grid, block, shmem, seen, self.where(node),
                                    " ".join(text(node).split())[:200], list(frame.chain), frame.bound, arg_texts,
                                    set(self._template_roots), self._kernel_types(kernel, targs, args, arg_texts), fills,
                                    [self._tied(d) for f in self.frames for d in f.divides],
                                    [self._tied(c) for f in self.frames for c in f.conds if c is not sp.true],
                                    dict(self._template_choices)))
        self._template_roots.clear()
        self._template_choices = {}
        for a in args:  # the kernel may write what it gets: the next launches do not see the constant
            if isinstance(a, Ptr):
                a.alloc.fill = None

    def _kernel_types(self, kernel: str, targs: list[str], args: list[Value], arg_texts: list[str]) -> dict[str, str]:
        """Template types of a kernel launched without them that its scalar arguments give: `k<<<g, b>>>(x, n)` for
        `template <typename T, typename I> __global__ void k(T*, I n)` inside a launcher whose own `n` is an `I`
        bound at its call (or deduced there), else `int` for an integer value (C++ deduces `int` from an int)."""
        fd = self.program.function(kernel, space="kernel", arity=len(args))
        if fd is None or len(targs) >= len(fd.template_params):
            return {}
        frame = self.frame
        host_types = {pname: normalise_ctype(ptype).replace("const ", "").strip()
                      for pname, ptype, indirect in (frame.fd.params if frame.fd is not None else []) if not indirect}
        out: dict[str, str] = {}
        body = text(fd.node.child_by_field_name("body"))
        for (pname, ptype, indirect), arg, atext in zip(fd.params, args, arg_texts):
            base = normalise_ctype(ptype).replace("const ", "").strip()
            if indirect or base not in fd.template_params[len(targs):] or base in out or not isinstance(arg, Num):
                continue
            if pname and re.search(rf"\b{re.escape(pname)}\s*\(", body):
                continue  # `f(x)`: a functor or lambda, not a number
            given = host_types.get(atext.strip())
            given = frame.types.get(given, given) if given else None
            if given is not None and given not in (frame.fd.template_params if frame.fd else []):
                out[base] = self.program.resolve_type(given)
            elif not arg.flt:
                out[base] = "int"
        return out


# -- helpers -------------------------------------------------------------------------------------------------


def _declarator(d: ts.Node | None) -> tuple[str, bool, list[ts.Node | None]]:
    """(name, is pointer/reference, array dimension nodes outer first) of a declarator."""
    indirect = False
    arrays: list[ts.Node | None] = []
    cur = d
    while cur is not None:
        if cur.type in ("pointer_declarator", "reference_declarator"):
            indirect = True
            nxt = cur.child_by_field_name("declarator")
            cur = nxt if nxt is not None else next((c for c in cur.named_children if c.type != "type_qualifier"), None)
        elif cur.type == "array_declarator":
            arrays.append(cur.child_by_field_name("size"))
            cur = cur.child_by_field_name("declarator")
        elif cur.type == "function_declarator":
            inner = cur.child_by_field_name("declarator")
            if inner is not None and inner.type == "parenthesized_declarator":  # `void (*fp)(float*) = k;`
                return _declarator(_first_named(inner))[0], True, arrays
            return text(inner), indirect, arrays
        elif cur.type == "parenthesized_declarator":  # `bool (kEven) = true;`: a macro argument, parenthesised
            cur = _first_named(cur)
        elif cur.type in ("identifier", "field_identifier"):
            return text(cur), indirect, list(reversed(arrays))
        else:
            return "", indirect, arrays
    return "", indirect, arrays


@functools.lru_cache(maxsize=4096)
def _reference_flags(node: ts.Node) -> tuple[bool, ...]:
    decl = node.child_by_field_name("declarator")
    while decl is not None and decl.type != "function_declarator":
        decl = decl.child_by_field_name("declarator")
    plist = decl.child_by_field_name("parameters") if decl is not None else None
    return tuple(
        (p.child_by_field_name("declarator") is not None and p.child_by_field_name("declarator").type == "reference_declarator")
        for p in (plist.named_children if plist is not None else [])
        if p.type in ("parameter_declaration", "optional_parameter_declaration"))


def _reference_params(fd: FuncDef) -> tuple[bool, ...]:
    """Which parameters are references (`int &n`, `float *&p`), in the order of `fd.params`."""
    return _reference_flags(fd.node)


def _class_of(program: Program, type_text: str) -> str | None:
    t = " ".join(type_text.replace("const", " ").replace("class ", " ").replace("struct ", " ").split())
    t = t.split("<")[0].strip().split("::")[-1]
    return t if t in program.classes and (program.method(t, t) is not None or any(
        ind for _, ind, _ in program.classes[t].values())) else None


def _unwrapped(node: ts.Node | None) -> ts.Node | None:
    """The expression under casts, parentheses and `&`/`*` (`(void*)&kern<int>` is `kern<int>`)."""
    cur = node
    while cur is not None and cur.type in ("cast_expression", "parenthesized_expression", "pointer_expression"):
        cur = cur.child_by_field_name("value") or cur.child_by_field_name("argument") or _first_named(cur)
    inner = cur
    while inner is not None and inner.type == "qualified_identifier":  # `dev::k<float, 16>`: the template under
        inner = inner.child_by_field_name("name")  # its namespaces, so that its arguments are read
    return inner if inner is not None and inner.type == "template_function" else cur


def _plain_struct(program: Program, type_text: str) -> str | None:
    """The program's struct of plain data members named by `type_text` (`struct grid_t`, `const Dims`), or None."""
    t = " ".join(type_text.replace("const", " ").replace("struct ", " ").split())
    return t if "<" not in t and "::" not in t and program.classes.get(t) else None


def explicit_instantiations(program: Program, fd: FuncDef) -> dict[str, list[int]]:
    """Template value parameter -> the values the program's explicit instantiations of `fd` give it, in order:
    `template void run<3>(float*);`, and such lines in the body of a macro the file invokes (`#define INS(C)
    template void run<C>(float*);` with `INS(1) INS(3)`). Only integer and bool literals count."""
    if not fd.template_params:
        return {}
    pattern = re.compile(rf"\btemplate\s+(?!<)[\w\s:*&]*?\b{re.escape(fd.name)}\s*<([^<>;{{}}]*)>\s*\(")
    lists: list[list[str]] = []
    texts = [f.data.decode("utf-8", "replace") for f in program.files]
    for code in texts:
        lists.extend(_split_args(m.group(1)) for m in pattern.finditer(code) if not _in_directive(code, m.start()))
    for m in program.macros.values():
        if not m.params or "template" not in m.body:
            continue
        bodies = [_split_args(b.group(1)) for b in pattern.finditer(m.body)]
        if not bodies:
            continue
        use = re.compile(rf"(?<![\w#])\b{re.escape(m.name)}\s*\(([^()]*)\)")
        for code in texts:
            for u in use.finditer(code):
                if _in_directive(code, u.start()):
                    continue  # the #define itself
                args = dict(zip(m.params, _split_args(u.group(1))))
                lists.extend([args.get(a, a) for a in body] for body in bodies)
    out: dict[str, list[int]] = {}
    for i, name in enumerate(fd.template_params):
        values = [_int_literal(args[i]) for args in lists if i < len(args)]
        if values and None not in values:
            out[name] = list(dict.fromkeys(v for v in values if v is not None))
    return out


def _in_directive(code: str, pos: int) -> bool:
    """Whether `pos` lies in a preprocessor line of `code` (its continuation lines included)."""
    start = code.rfind("\n", 0, pos) + 1
    while start > 1 and code[start - 2] == "\\":  # the line before ends with a backslash: one logical line
        start = code.rfind("\n", 0, start - 1) + 1
    return code[start:pos].lstrip().startswith("#")


def _split_args(text_: str) -> list[str]:
    return [a.strip() for a in text_.split(",")]


def _int_literal(arg: str) -> int | None:
    a = arg.strip()
    if a in ("true", "false"):
        return int(a == "true")
    m = re.fullmatch(r"(\d+)[uUlL]*", a)
    return int(m.group(1)) if m else None


def _class_template_params(program: Program, cls: str) -> list[str]:
    if program.class_tparams.get(cls):
        return program.class_tparams[cls]
    for fds in program.functions.values():
        for fd in fds:
            if fd.cls == cls and fd.template_params:
                return fd.template_params
    return []


def _container_elem(type_node: ts.Node | None) -> str | None:
    if type_node is None or not _is_container(type_node):
        return None
    for n in walk_tree(type_node):
        if n.type == "template_argument_list":
            first = _first_named(n)
            return text(first) if first is not None else None
    return None


def _is_container(type_node: ts.Node | None) -> bool:
    if type_node is None:
        return False
    t = text(type_node)
    base = t.split("<")[0].strip()
    return base in api()["containers"]




def _expr_of(node: ts.Node) -> ts.Node:
    """Constructor arguments parsed as parameter declarations (`dim3 g(n)`): their text as an expression."""
    if node.type in ("parameter_declaration", "optional_parameter_declaration"):
        from xlate.specs.infer.ceval import parse_expr

        _, e = parse_expr(text(node))
        return e if e is not None else node
    return node


def _single_return(fd: FuncDef) -> bool:
    body = fd.node.child_by_field_name("body")
    if body is None:
        return False
    stmts = [c for c in body.named_children if c.type != "comment"]
    return bool(stmts) and stmts[-1].type == "return_statement" and all(
        s.type in ("declaration", "return_statement") for s in stmts)


def _loop_span(var: str, start: Value, cond: ts.Node | None, update: ts.Node | None, body: ts.Node | None,
               ev: Evaluator, env: dict[str, Any]) -> tuple[sp.Expr, sp.Expr] | None:
    """The values a counted loop's variable takes, inclusive, where its start or bound is no number: `for (b = 1;
    b <= w; b++)` gives (1, w), `for (b = w - 1; b >= 1; b--)` gives (1, w - 1). Only steps of one (every value
    in between is taken) and a variable the body leaves alone; None otherwise."""
    if not isinstance(start, Num) or start.flt or cond is None or update is None or cond.type != "binary_expression":
        return None
    step = _step(update, var, ev, env)
    assigned = {text(n.child_by_field_name("left" if n.type == "assignment_expression" else "argument"))
                for n in (walk_tree(body) if body is not None else ())
                if n.type in ("assignment_expression", "update_expression")}
    named = {text(n) for n in walk_tree(cond) if n.type == "identifier"}
    if step is None or abs(step(0)) != 1 or assigned & named:  # ++, --, += 1, -= 1: no value in between skipped;
        return None  # the variable and its bound left alone by the body
    op = text(cond.child_by_field_name("operator"))
    left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
    if text(right) == var:  # `w > b`: read as `b < w`
        left, right, op = right, left, {"<": ">", "<=": ">=", ">": "<", ">=": "<="}.get(op, "")
    bound = ev.ev(right, env)
    if text(left) != var or not isinstance(bound, Num) or bound.flt:
        return None
    b, up = bound.e, step(0) > 0
    last = {("<", True): b - 1, ("<=", True): b, (">", False): b + 1, (">=", False): b}.get((op, up))
    if last is None:
        return None
    return (sp.expand(start.e), sp.expand(last)) if up else (sp.expand(last), sp.expand(start.e))


def _step(update: ts.Node, var: str, ev: Evaluator, env: dict[str, Any]):
    t = update.type
    if t == "update_expression":
        return (lambda x: x + 1) if "++" in text(update) else (lambda x: x - 1)
    if t == "assignment_expression" and text(update.child_by_field_name("left")) == var and text(
            update.child_by_field_name("operator")) == "=":  # j = j * 2
        x = sp.Symbol("__step_x", integer=True)
        r = ev.ev(update.child_by_field_name("right"), {**env, var: Num(x)})
        if not isinstance(r, Num) or r.flt or r.e.free_symbols - {x}:
            return None
        step_e = r.e
        return lambda v: int(step_e.xreplace({x: sp.Integer(v)}))
    if t == "assignment_expression" and text(update.child_by_field_name("left")) == var:
        op = text(update.child_by_field_name("operator"))
        r = ev.ev(update.child_by_field_name("right"), env)
        c = ev.concrete(r.e) if isinstance(r, Num) else None
        if c is None:
            return None
        steps = {"+=": lambda x: x + c, "-=": lambda x: x - c, "*=": lambda x: x * c, "<<=": lambda x: x << c,
                 ">>=": lambda x: x >> c, "/=": lambda x: int(x / c) if c else x}
        return steps.get(op)
    return None


def host_launches(program: Program) -> tuple[list[Launch], dict[sp.Symbol, Root], HostInterpreter]:
    """Every launch the host code makes, from `main` first, then from launchers nobody here calls."""
    interp = HostInterpreter(program)
    interp.run_globals()
    entries: list[FuncDef] = []
    mains = program.functions.get("main", [])
    entries.extend(fd for fd in mains if fd.space == "host")
    called: set[str] = set()
    for fds in program.functions.values():
        for fd in fds:
            if fd.space != "host":
                continue
            body = fd.node.child_by_field_name("body")
            for n in walk_tree(body) if body is not None else []:
                if n.type == "call_expression":
                    f = n.child_by_field_name("function")
                    if f is not None and f.type == "field_expression":
                        called.add(text(f.child_by_field_name("field")))
                        continue
                    called.add(text(f).split("::")[-1] if f is not None and f.type != "template_function" else text(
                        f.child_by_field_name("name") if f is not None else None).split("::")[-1])
    for fd in program.host_functions():
        if fd.name != "main" and fd.name not in called and _launches_something(fd, interp.kernels):
            entries.append(fd)
    for fd in entries:
        interp.budget = STATEMENT_BUDGET
        interp.run_entry(fd)
    launched = {launch.kernel for launch in interp.launches}
    for fd in program.host_functions():  # launchers only reached through code we cannot follow
        if fd.name != "main" and _launches_something(fd, interp.kernels - launched):
            interp.budget = STATEMENT_BUDGET
            interp.run_entry(fd)
    missing = interp.kernels - {launch.kernel for launch in interp.launches}
    if missing and any(_launches_something(fd, missing) for fd in program.host_functions()):
        interp.explore = missing  # launches only in branches the program's values rule out: enter them
        try:
            for fd in entries:
                interp.budget = STATEMENT_BUDGET
                interp.run_entry(fd)
        finally:
            interp.explore = set()
    return interp.launches, interp.roots, interp


def _only_returns(node: ts.Node | None) -> bool:
    """A branch that only leaves the function or the program (`return false;`, `{ printf(...); exit(1); }`)."""
    if node is None:
        return False
    if node.type == "return_statement" or _exits(node):
        return True
    stmts = [c for c in node.named_children if c.type != "comment"] if node.type == "compound_statement" else []
    return bool(stmts) and (stmts[-1].type == "return_statement" or _exits(stmts[-1])) and all(
        c.type in ("expression_statement", "return_statement") for c in stmts)


def _exits(node: ts.Node) -> bool:
    """`exit(1);`, `abort();`: a statement that ends the program."""
    call = _first_named(node) if node.type == "expression_statement" else None
    fn = call.child_by_field_name("function") if call is not None and call.type == "call_expression" else None
    return fn is not None and text(fn).split("::")[-1] in ("exit", "abort", "_exit", "quick_exit")


def _launches_in(node: ts.Node, kernels: set[str]) -> bool:
    """Whether `node`'s text may launch one of `kernels` (any launch spelling; a cheap textual test)."""
    code = text(node)
    return ("<<<" in code or "LaunchKernel" in code or "hipLaunchKernelGGL" in code) and any(k in code for k in kernels)


def _launches_something(fd: FuncDef, kernels: set[str]) -> bool:
    body = fd.node.child_by_field_name("body")
    return body is not None and bool(kernels) and _launches_in(body, kernels)


__all__ = ["Launch", "Root", "SourceFile", "host_launches"]


def _mentions(node: ts.Node, name: str) -> bool:
    """Whether the expression `node` names the variable `name` (`max(hi, c)` names `hi`)."""
    return any(n.type == "identifier" and text(n) == name for n in walk_tree(node))
