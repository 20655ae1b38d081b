"""The front end's tree of CUDA device code -> the IR (ir.py), one function at a time.

The function's text is macro-expanded first (cpre.py) and parsed on its own by the one C front end
(xlate.parse.frontend); anything outside the subset becomes an `Unsupported` statement (or raises `BuildError`
inside an expression) that names the construct.
"""

from __future__ import annotations

import bisect
import dataclasses
import re
from dataclasses import dataclass

import tree_sitter as ts

from xlate.cir import cond, cpre, ir
from xlate.cir.ctype import canonical, row
from xlate.model import Function, KernelUnit, Macro
from xlate.parse.frontend import parse_c
from xlate.parse.source import to_bytes, to_text

BUILTIN_VARS = {"threadIdx", "blockIdx", "blockDim", "gridDim"}
ASSIGN_OPS = {"=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^="}
TYPE_NODES = {"primitive_type", "sized_type_specifier", "type_identifier", "template_type", "qualified_identifier",
              "dependent_type", "auto"}
# operands a shift takes without parentheses (build.split_shift): single terms, and the operators above it
SHIFT_OPERANDS = {"identifier", "number_literal", "field_expression", "call_expression", "subscript_expression",
                  "parenthesized_expression"}
TIGHTER_THAN_SHIFT = {"+", "-", "*", "/", "%"}


class BuildError(Exception):
    def __init__(self, what: str, loc: ir.Loc, code: str = "XL2001"):
        super().__init__(what)
        self.what = what
        self.loc = loc
        self.code = code


class LineIndex:
    def __init__(self, text: str):
        self.data = to_bytes(text)
        self.starts = [0, *(m.end() for m in re.finditer(b"\n", self.data))]

    def loc(self, byte: int) -> ir.Loc:
        row = bisect.bisect_right(self.starts, byte) - 1
        col = len(self.data[self.starts[row] : byte].decode("utf-8", "replace")) + 1
        return ir.Loc(row + 1, col)


def parse_number(text: str) -> tuple[int | float, str]:
    """A C numeric literal -> (value, C type) following the C rules for suffixes and sizes (LP64)."""
    t = text.replace("'", "")
    low = t.lower()
    is_hex = low.startswith("0x")
    if not is_hex and (("." in t) or ("e" in low) or low.endswith("f")) and not low.startswith("0b"):
        if low.endswith("f"):
            return float(t[:-1]), "float"
        if low.endswith("l"):
            return float(t[:-1]), "double"
        return float(t), "double"
    if is_hex and "p" in low:
        core = t.rstrip("fFlL")
        return float.fromhex(core), ("float" if low.endswith("f") else "double")
    m = re.match(r"^(0[xX][0-9a-fA-F]+|0[bB][01]+|\d+)([uUlL]*)$", t)
    if not m:
        raise ValueError(text)
    digits, suffix = m.group(1), m.group(2).lower()
    if digits.lower().startswith("0x"):
        v = int(digits, 16)
    elif digits.lower().startswith("0b"):
        v = int(digits, 2)
    elif len(digits) > 1 and digits.startswith("0"):
        v = int(digits, 8)
    else:
        v = int(digits)
    unsigned = "u" in suffix
    longs = suffix.count("l")
    decimal = not (is_hex or (digits.startswith("0") and len(digits) > 1))
    order = ["int", "unsigned int", "long", "unsigned long"] if not decimal else ["int", "long"]
    if unsigned:
        order = ["unsigned int", "unsigned long"]
    if longs:
        order = [o for o in order if "long" in o] or ["long"]
    limits = {"int": 2**31, "unsigned int": 2**32, "long": 2**63, "unsigned long": 2**64}
    for o in order:
        if v < limits[o]:
            return v, o
    return v, "unsigned long"


@dataclass
class FunctionSource:
    """One function as the lifters read it: its text macro-expanded (cpre.py) and parsed by the front end, with
    the way back from a node of that text to the file."""

    text: str  # the expanded text
    root: ts.Node  # the front end's tree of `text`
    expanded: cpre.Expanded
    fn_text: str  # the function's original (unexpanded) text
    base: int  # byte offset of the function in the file
    lines: LineIndex

    @property
    def src(self) -> bytes:
        return to_bytes(self.text)

    def loc(self, node: ts.Node) -> ir.Loc:
        """Where `node` (of the expanded text) came from in the file: a macro's expansion is where it is used."""
        char_off = len(self.src[: node.start_byte].decode("utf-8", "replace"))
        orig = self.expanded.original(char_off)
        return self.lines.loc(self.base + len(to_bytes(self.fn_text[:orig])))

    def definition(self) -> ts.Node | None:
        """The function_definition node."""
        stack = [self.root]
        while stack:
            n = stack.pop()
            if n.type == "function_definition":
                return n
            stack.extend(reversed(n.named_children))
        return None


_ACTIVE: list[tuple[KernelUnit, list[Macro]]] = []  # the last few units' answers (one per function otherwise)


def active_macros(unit: KernelUnit) -> list[Macro]:
    """The unit's macros whose #define the preprocessor reaches: of a name defined in #if branches
    (`#ifdef DOUBLE #define Real double #else #define Real float #endif`), the branch the file's own macros select,
    as cond.select decides it (an undecidable conditional keeps every definition, the last one winning)."""
    for u, found in _ACTIVE:
        if u is unit:
            return found
    found = list(unit.macros)
    if "#" in unit.text and len({m.name for m in found}) < len(found):  # only a name defined twice can change
        table = {m.name: m.value if m.params is None else None for m in found}
        kept = cond.select(unit.text, table).split("\n")
        found = [m for m in found if m.span is None or m.span.path != unit.path or not 0 < m.span.line <= len(kept)
                 or kept[m.span.line - 1].strip()]
    _ACTIVE[:] = [*_ACTIVE[-7:], (unit, found)]
    return found


def function_source(unit: KernelUnit, fn: Function, lines: LineIndex | None = None) -> FunctionSource:
    """Function `fn` of `unit`, preprocessed and parsed. Raises BuildError (a macro that cannot be expanded)."""
    if fn.span is None:
        raise BuildError(f"no source span for '{fn.name}'", ir.Loc(1, 1))
    data = to_bytes(unit.text)  # bytes that were not UTF-8 pass through (the front end's rule)
    fn_text = to_text(data[fn.span.start_byte : fn.span.end_byte])
    lines = lines or LineIndex(unit.text)
    try:
        macros = active_macros(unit)
        chosen = cond.select(fn_text, {m.name: m.value if m.params is None else None for m in macros})
        chosen, local = cond.local_macros(chosen)  # #define in the body: holds from there on, over the file's
        if local:
            names = {name for name, _, _ in local}
            macros = [m for m in macros if m.name not in names]
            macros += [Macro(name, params, body, fn.span) for name, params, body in local]
        expanded = _typeof_copies(cpre.expand(cpre.normalise(chosen, unit.text), macros))
    except cpre.ExpansionError as exc:
        raise BuildError(str(exc), lines.loc(fn.span.start_byte + len(to_bytes(fn_text[: exc.offset])))) from None
    root = parse_c(to_bytes(expanded.text), unit.path).root
    for _ in range(256):  # one misparse undone per round
        bad = _array_cast(root) or _variable_cast(root)
        if bad is None:
            break
        expanded = _parenthesised(expanded, bad.children[0].start_byte, bad.children[2].end_byte)
        root = parse_c(to_bytes(expanded.text), unit.path).root
    return FunctionSource(expanded.text, root, expanded, fn_text, fn.span.start_byte, lines)


# `__typeof__ (a) _a = (a)` of a GNU statement expression (a max/min macro): a copy of `a`, which tree-sitter cannot
# parse; `auto _a = (a)` declares the same copy
TYPEOF_COPY = re.compile(r"\b__typeof(?:__)?\s*\(([^()]*(?:\([^()]*\)[^()]*)*)\)(\s*\w+\s*=\s*)\(([^()]*(?:\([^()]*\)[^()]*)*)\)")


def _typeof_copies(expanded: cpre.Expanded) -> cpre.Expanded:
    """`expanded` with each `__typeof__ (x) v = (x)` spelled `auto v = (x)`, padded to the same length (the origin
    map stays valid)."""
    if "typeof" not in expanded.text:
        return expanded

    def auto(m: re.Match[str]) -> str:
        if m.group(1).strip() != m.group(3).strip():
            return m.group(0)
        head = m.group(0)[: m.start(2) - m.start(0)]
        return "auto" + " " * (len(head) - 4) + m.group(0)[len(head):]

    text = TYPEOF_COPY.sub(auto, expanded.text)
    return cpre.Expanded(text, expanded.origin, expanded.starts) if text != expanded.text else expanded


def _array_cast(root: ts.Node) -> ts.Node | None:
    """A cast to an array type, which C has not: the front end's reading of `(a[i]) + b` (a parenthesised
    subscript, then a binary operator) as the cast of `+b` to the type `a[i]`."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "cast_expression" and len(node.children) >= 4 and node.children[0].type == "(":
            tdesc = node.child_by_field_name("type")
            decl = tdesc.child_by_field_name("declarator") if tdesc is not None else None
            if decl is not None and decl.type == "abstract_array_declarator":
                return node
        stack.extend(reversed(node.children))
    return None


def _variable_cast(root: ts.Node) -> ts.Node | None:
    """A cast to a type named as a variable of the function, which C cannot cast to: the front end's reading of
    `(a) - (c)` (a parenthesised name, then a binary operator) as the cast of `-(c)` to the type `a`."""
    names: set[str] = set()
    casts: list[ts.Node] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in ("parameter_declaration", "optional_parameter_declaration", "declaration"):
            for d in node.children_by_field_name("declarator"):
                while d is not None and d.type != "identifier":
                    d = d.child_by_field_name("declarator") or next(
                        (c for c in d.named_children if c.type in ("identifier", "reference_declarator")), None)
                if d is not None:
                    names.add(d.text.decode("utf-8", "replace"))
        elif node.type == "cast_expression" and len(node.children) >= 4 and node.children[0].type == "(":
            casts.append(node)
        stack.extend(reversed(node.children))
    for node in casts:
        tdesc = node.child_by_field_name("type")
        if tdesc is not None and tdesc.named_child_count == 1 and tdesc.named_children[0].type == "type_identifier" \
                and tdesc.text.decode("utf-8", "replace").strip() in names:
            return node
    return None


def _parenthesised(expanded: cpre.Expanded, start: int, end: int) -> cpre.Expanded:
    """`expanded` with bytes start..end wrapped in one more pair of parentheses (`((a[i])) + b` is no cast);
    the origin map shifted so locations still point into the file."""
    data = to_bytes(expanded.text)
    a, b = len(to_text(data[:start])), len(to_text(data[:end]))
    text = expanded.text[:a] + "(" + expanded.text[a:b] + ")" + expanded.text[b:]
    starts = [st if st <= a else st + 1 if st <= b else st + 2 for st in expanded.starts]
    return cpre.Expanded(text, list(expanded.origin), starts)


class Builder:
    def __init__(self, unit: KernelUnit, fs: FunctionSource):
        self.unit = unit
        self.fs = fs
        self.src = fs.src

    # -- helpers ---------------------------------------------------------------------------------------------

    def text(self, node: ts.Node) -> str:
        return self.src[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def loc(self, node: ts.Node) -> ir.Loc:
        return self.fs.loc(node)

    def fail(self, what: str, node: ts.Node, code: str = "XL2001") -> BuildError:
        return BuildError(what, self.loc(node), code)

    # -- types -----------------------------------------------------------------------------------------------

    def ctype(self, node: ts.Node, declarator: ts.Node | None = None) -> ir.CType:
        """The type of a declaration/parameter/type_descriptor node, with the pointer depth of `declarator`."""
        const = volatile = False
        base: str | None = None
        for c in node.children:
            if c.type == "type_qualifier" and self.text(c) == "const":
                const = True
            elif c.type == "type_qualifier" and self.text(c) == "volatile":
                volatile = True
            elif c.type in TYPE_NODES and base is None and c != declarator:
                base = self._type_name(c)
        tnode = node.child_by_field_name("type")
        if tnode is not None:
            base = self._type_name(tnode)
        if base is None:
            raise self.fail(f"type '{self.text(node)}'", node, "XL2012")
        ptr = 0
        d = declarator if declarator is not None else node.child_by_field_name("declarator")
        while d is not None and d.type in ("pointer_declarator", "abstract_pointer_declarator", "reference_declarator"):
            if d.type != "reference_declarator":
                ptr += 1
            volatile = volatile or any(c.type == "type_qualifier" and self.text(c) == "volatile" for c in d.children)
            d = d.child_by_field_name("declarator") or next((c for c in d.named_children if c.type.endswith("declarator")), None)
        return ir.CType(base, ptr, const, volatile)

    def _type_name(self, node: ts.Node) -> str:
        t = " ".join(self.text(node).split())
        return canonical(t)

    def declarator_name(self, d: ts.Node) -> tuple[str, list[ts.Node | None], int]:
        """(name, array dims (outer first), pointer depth) of a declarator."""
        dims: list[ts.Node | None] = []
        ptr = 0
        while d.type != "identifier":
            outer = d
            if d.type == "array_declarator":
                dims.insert(0, d.child_by_field_name("size"))
                d = d.child_by_field_name("declarator")
            elif d.type == "pointer_declarator":
                ptr += 1
                d = d.child_by_field_name("declarator")
            elif d.type == "reference_declarator":  # its declarator is not a field in the grammar
                d = next((c for c in d.named_children if c.type != "comment"), None)
            elif d.type == "init_declarator":
                d = d.child_by_field_name("declarator")
            elif d.type in ("field_identifier", "type_identifier"):
                break
            else:
                raise self.fail(f"declarator '{self.text(d)}'", d)
            if d is None:
                raise self.fail(f"declarator '{self.text(outer)}'", outer)
        return self.text(d), dims, ptr

    @staticmethod
    def is_reference(d: ts.Node) -> bool:
        """Whether a declarator declares a reference (`T& x`, `T& x = y`), not a pointer to one."""
        while d is not None:
            if d.type == "reference_declarator":
                return True
            if d.type not in ("init_declarator",):
                return False
            d = d.child_by_field_name("declarator")
        return False

    # -- statements ------------------------------------------------------------------------------------------

    def body(self, node: ts.Node) -> tuple[ir.Stmt, ...]:
        if node.type == "compound_statement":
            out: list[ir.Stmt] = []
            for c in node.named_children:
                out.extend(self.stmt(c))
            return tuple(out)
        return tuple(self.stmt(node))

    def stmt(self, node: ts.Node) -> list[ir.Stmt]:
        t = node.type
        loc = self.loc(node)
        try:
            if t == "comment":
                return []
            if t == "compound_statement":
                return [ir.BlockStmt(loc, self.body(node))]
            if t == "declaration":
                return self.declaration(node)
            if t == "expression_statement":
                e = node.named_children[0] if node.named_children else None
                if e is None:
                    return []
                parts = []
                while e.type == "comma_expression":  # `a = x, b = y;`: each operand in turn, as statements
                    parts.append(e.child_by_field_name("left"))
                    e = e.child_by_field_name("right")
                return [ir.ExprStmt(self.loc(x), self.expr(x)) for x in [*parts, e]]
            if t == "if_statement":
                cond = node.child_by_field_name("condition")
                test = self.expr(cond.named_children[0] if cond.type == "condition_clause" else cond)
                then = self.body(node.child_by_field_name("consequence"))
                alt = node.child_by_field_name("alternative")
                other: tuple[ir.Stmt, ...] = ()
                if alt is not None:
                    inner = alt.named_children[0] if alt.type == "else_clause" else alt
                    other = self.body(inner)
                return [ir.If(loc, test, then, other)]
            if t == "for_statement":
                init_node = node.child_by_field_name("initializer")
                init: tuple[ir.Stmt, ...] = ()
                if init_node is not None:
                    init = tuple(self.declaration(init_node)) if init_node.type == "declaration" else (
                        ir.ExprStmt(self.loc(init_node), self.expr(init_node)),)
                cnode = node.child_by_field_name("condition")
                test = self.expr(cnode) if cnode is not None else None
                unode = node.child_by_field_name("update")
                step: tuple[ir.Expr, ...] = ()
                if unode is not None:
                    step = tuple(self.expr(x) for x in unode.named_children) if unode.type == "comma_expression" else (self.expr(unode),)
                return [ir.For(loc, init, test, step, self.body(node.child_by_field_name("body")))]
            if t == "while_statement":
                cond = node.child_by_field_name("condition")
                test = self.expr(cond.named_children[0] if cond.type == "condition_clause" else cond)
                return [ir.While(loc, test, self.body(node.child_by_field_name("body")))]
            if t == "do_statement":
                cond = node.child_by_field_name("condition")
                test = self.expr(cond.named_children[0] if cond.type == "parenthesized_expression" else cond)
                return [ir.While(loc, test, self.body(node.child_by_field_name("body")), do=True)]
            if t == "return_statement":
                e = node.named_children[0] if node.named_children else None
                return [ir.Return(loc, self.expr(e) if e is not None else None)]
            if t == "switch_statement":
                return self.switch(node)
            if t == "break_statement":
                return [ir.Break(loc)]
            if t == "continue_statement":
                return [ir.Continue(loc)]
            if t == "type_definition":
                return [self.typedef(node)]
            if t == "alias_declaration":  # `using T = ...;` is a typedef
                return [self.typedef(node, node.child_by_field_name("name"))]
            if t in ("gnu_asm_expression", "asm_statement"):
                return [ir.Unsupported(loc, "inline assembly (asm)", "XL2002")]
            if t == "empty_statement" or t == ";":
                return []
            return [ir.Unsupported(loc, f"statement '{self.text(node).splitlines()[0][:60]}' ({t})")]
        except BuildError as exc:
            return [ir.Unsupported(exc.loc, exc.what, exc.code)]

    def switch(self, node: ts.Node) -> list[ir.Stmt]:
        """`switch` as an if / else-if chain on the subject (re-read per test: it must have no effects; only one
        body runs, so no body runs before a later test). A group of labels runs its own statements and those of
        the groups it falls through to, up to the `break` that ends it; `default` is the final else."""
        loc = self.loc(node)
        cond = node.child_by_field_name("condition")
        subject = self.expr(cond.named_children[0] if cond.type in ("condition_clause", "parenthesized_expression") else cond)
        if ir.has_effects(subject, calls=True):
            raise BuildError("switch on an expression with side effects", loc)
        groups: list[tuple[list[ir.Expr | None], list[ir.Stmt]]] = []  # (labels, None for default), statements
        body = node.child_by_field_name("body")
        for case in body.named_children if body is not None else []:
            if case.type == "comment":
                continue
            if case.type != "case_statement":
                raise BuildError("statement before the first case label of a switch", self.loc(case))
            value = case.child_by_field_name("value")
            label = self.expr(value) if value is not None else None
            stmts = [st for c in case.named_children if c != value for st in self.stmt(c)]
            if groups and not groups[-1][1]:  # `case 1: case 2: ...` share the statements that follow
                groups[-1][0].append(label)
                groups[-1][1].extend(stmts)
            else:
                groups.append(([label], stmts))
        branches: list[tuple[list[ir.Expr | None], tuple[ir.Stmt, ...]]] = []
        for i, (labels, _) in enumerate(groups):
            run: list[ir.Stmt] = []
            for _, stmts in groups[i:]:  # fall through until a break (or return/continue) ends the run
                kept, ends = _end_of_case(stmts)
                run.extend(kept)
                if ends:
                    break
            run = _breaks_as_branches(run)
            if ir.contains(tuple(run), (ir.Break,)) is not None:
                raise BuildError("break inside a switch case before its end", loc)
            branches.append((labels, tuple(run)))
        chain: tuple[ir.Stmt, ...] = next((b for labels, b in branches if None in labels), ())
        for labels, run in reversed(branches):
            if None in labels:
                continue
            test: ir.Expr | None = None
            for lab in labels:
                eq = ir.Binary(loc, "==", subject, lab)  # type: ignore[arg-type]
                test = eq if test is None else ir.Binary(loc, "||", test, eq)
            chain = (ir.If(loc, test, run, chain),)  # type: ignore[arg-type]
        return [ir.BlockStmt(loc, chain)]

    def typedef(self, node: ts.Node, name_node: ts.Node | None = None) -> ir.Stmt:
        loc = self.loc(node)
        name_node = name_node or node.child_by_field_name("declarator")
        tnode = node.child_by_field_name("type")
        if name_node is None or tnode is None:
            return ir.Unsupported(loc, f"typedef '{self.text(node)}'")
        name = self.text(name_node)
        txt = " ".join(self.text(tnode).split())
        m = re.fullmatch(r"(?:typename\s+)?(\w+)\s*<\s*(\w+)\s*>\s*::\s*(\w+)", txt)
        if m:
            return ir.Typedef(loc, name, ir.CType(name), trait=(m.group(1), m.group(2), m.group(3)))
        return ir.Typedef(loc, name, ir.CType(canonical(txt)))

    def declaration(self, node: ts.Node) -> list[ir.Stmt]:
        loc = self.loc(node)
        shared = any(c.type == "type_qualifier" and self.text(c) == "__shared__" for c in node.children)
        extern = any(c.type == "storage_class_specifier" and self.text(c) == "extern" for c in node.children)
        if any(c.type == "type_qualifier" and self.text(c) == "__constant__" for c in node.children):
            return [ir.Unsupported(loc, "__constant__ declaration inside a function")]
        out: list[ir.Stmt] = []
        for d in node.children_by_field_name("declarator"):
            init = None
            init_list = None
            target = d
            if d.type == "init_declarator":
                value = d.child_by_field_name("value")
                target = d.child_by_field_name("declarator")
                if value is not None and value.type == "initializer_list":
                    init_list = tuple(self.expr(x) for x in value.named_children)
                elif value is not None and value.type != "argument_list":
                    init = self.expr(value)
            name, dims, _ = self.declarator_name(target)
            ct = self.ctype(node, target)
            if d.type == "init_declarator" and value is not None and value.type == "argument_list" and not dims:
                init = self.direct_init(ct, value, loc)
            out.append(ir.Decl(loc, ct, name, init, tuple(self.expr(x) if x is not None else None for x in dims),
                               shared, extern, init_list, self.is_reference(target)))
        return out

    def direct_init(self, ct: ir.CType, value: ts.Node, loc: ir.Loc) -> ir.Expr:
        """`T v(a, b);`: v = T(a, b), a constructor's call; `T v(a);` of a number or pointer type is v = (T)a."""
        args = tuple(self.expr(x) for x in value.named_children if x.type != "comment")
        if len(args) == 1 and (ct.ptr or row(ct.base) is not None):
            return ir.Cast(loc, ct, args[0], "functional")
        if ct.ptr or not args:
            raise self.fail(f"declarator with the initialiser '{self.text(value)}'", value)
        return ir.Call(loc, ct.base, args)

    # -- expressions -----------------------------------------------------------------------------------------

    def expr(self, node: ts.Node) -> ir.Expr:
        t = node.type
        loc = self.loc(node)
        if t == "parenthesized_expression":
            inner = [c for c in node.named_children if c.type != "comment"]
            if len(inner) == 1 and inner[0].type == "compound_statement":
                return self.statement_expression(inner[0])
            if len(inner) != 1:
                raise self.fail(f"expression '{self.text(node)}'", node)
            return self.expr(inner[0])
        if t == "number_literal":
            txt = self.text(node)
            if txt[:1] in "+-":  # the grammar folds a sign into the literal: C reads it as a unary operator
                inner = txt[1:].lstrip()
                try:
                    v, ct = parse_number(inner)
                except ValueError:
                    raise self.fail(f"number '{txt}'", node) from None
                return ir.Unary(loc, txt[0], ir.Num(loc, v, ct))
            try:
                v, ct = parse_number(txt)
            except ValueError:
                raise self.fail(f"number '{self.text(node)}'", node) from None
            return ir.Num(loc, v, ct)
        if t == "null":  # nullptr, NULL: the null pointer constant, which C also spells 0
            return ir.Num(loc, 0, "int")
        if t in ("true", "false"):
            return ir.Num(loc, 1 if t == "true" else 0, "bool")
        if t == "char_literal":
            body = self.text(node)[1:-1]
            val = ord(body.encode().decode("unicode_escape")) if body else 0
            return ir.Num(loc, val, "char")
        if t == "identifier":
            return ir.Name(loc, self.text(node))
        if t == "qualified_identifier":
            return ir.Name(loc, " ".join(self.text(node).split()).replace(" ", ""))
        if t == "field_expression":
            arg = node.child_by_field_name("argument")
            fld = self.text(node.child_by_field_name("field"))
            op = node.child_by_field_name("operator")
            if arg.type == "identifier" and self.text(arg) in BUILTIN_VARS:
                return ir.Builtin(loc, self.text(arg), fld)
            base = self.expr(arg)
            if op is not None and self.text(op) == "->":
                base = ir.Unary(loc, "*", base)
            return ir.Member(loc, base, fld)
        if t == "binary_expression":
            op = self.text(node.child_by_field_name("operator"))
            split = self.split_shift(node)
            if split is not None:
                return split
            return ir.Binary(loc, op, self.expr(node.child_by_field_name("left")), self.expr(node.child_by_field_name("right")))
        if t in ("unary_expression", "pointer_expression"):
            op = self.text(node.child_by_field_name("operator"))
            return ir.Unary(loc, op, self.expr(node.child_by_field_name("argument")))
        if t == "conditional_expression":
            return ir.Cond(loc, self.expr(node.child_by_field_name("condition")),
                           self.expr(node.child_by_field_name("consequence")),
                           self.expr(node.child_by_field_name("alternative")))
        if t == "assignment_expression":
            op = self.text(node.child_by_field_name("operator"))
            if op not in ASSIGN_OPS:
                raise self.fail(f"assignment operator '{op}'", node)
            return ir.Assign(loc, self.expr(node.child_by_field_name("left")), op, self.expr(node.child_by_field_name("right")))
        if t == "update_expression":
            op = self.text(node.child_by_field_name("operator"))
            arg = node.child_by_field_name("argument")
            return ir.IncDec(loc, self.expr(arg), op, prefix=node.children[0].type in ("++", "--"))
        if t == "subscript_expression":
            base = self.expr(node.child_by_field_name("argument"))
            idx = node.child_by_field_name("indices") or node.child_by_field_name("index")
            items = [c for c in idx.named_children if c.type != "comment"] if idx is not None and idx.type == "subscript_argument_list" else [idx]
            if len(items) != 1 or items[0] is None:
                raise self.fail(f"subscript '{self.text(node)}'", node)
            return ir.Index(loc, base, self.expr(items[0]))
        if t == "cast_expression":
            tdesc = node.child_by_field_name("type")
            return ir.Cast(loc, self.ctype(tdesc), self.expr(node.child_by_field_name("value")))
        if t == "sizeof_expression":
            tnode = node.child_by_field_name("type")
            if tnode is not None:
                return ir.Sizeof(loc, self.ctype(tnode))
            value = node.child_by_field_name("value")
            while value is not None and value.type == "parenthesized_expression" and value.named_child_count == 1:
                value = value.named_children[0]
            if value is not None and value.type in ("identifier", "type_identifier"):
                return ir.Sizeof(loc, ir.CType(self.text(value)), of_name=True)
            raise self.fail("sizeof of an expression", node)
        if t == "call_expression":
            return self.call(node)
        if t == "compound_literal_expression":
            return self.compound_literal(node)
        if t == "initializer_list":
            return ir.Call(loc, ir.BRACED, tuple(self.expr(x) for x in node.named_children if x.type != "comment"))
        if t == "comma_expression":
            raise self.fail("comma expression", node)
        if t == "gnu_asm_expression":
            first = self.text(node).split(":")[0].strip()
            raise self.fail(f"inline assembly {first}", node, "XL2002")
        if t in ("string_literal", "concatenated_string"):
            return ir.Str(loc, self.text(node))
        if t == "template_function":  # a template's name with arguments, not called: C++14's variable template
            raise self.fail(f"variable template '{self.text(node)[:60]}' (its value is a template's instantiation)", node)
        raise self.fail(f"expression '{self.text(node)[:60]}' ({t})", node)

    def statement_expression(self, node: ts.Node) -> ir.Expr:
        """GNU's `({ auto _a = (a); auto _b = (b); _a > _b ? _a : _b; })` (a max/min macro): the last expression with
        each copy replaced by what it copies (converted to its declared type). Evaluating a copied expression
        more than once is the same only where it assigns and calls nothing, so anything else is refused."""
        stmts = [c for c in node.named_children if c.type != "comment"]
        if not stmts or stmts[-1].type != "expression_statement" or stmts[-1].named_child_count != 1:
            raise self.fail("statement expression not ending in an expression", node)
        bound: dict[str, ir.Expr] = {}
        for st in stmts[:-1]:
            decls = self.declaration(st) if st.type == "declaration" else []
            if not decls:
                raise self.fail("statement expression with a statement other than a declaration", st)
            for d in decls:
                if not isinstance(d, ir.Decl) or d.init is None or d.dims or d.ref or d.shared:
                    raise self.fail("statement expression declaring other than a copy", st)
                init = _substitute(d.init, bound)
                if ir.has_effects(init, calls=True):
                    raise self.fail("statement expression copying an expression with effects or calls", st)
                bound[d.name] = init if d.ctype.base == "auto" else ir.Cast(d.loc, d.ctype, init)
        value = self.expr(stmts[-1].named_children[0])
        if any(isinstance(x, ir.Sizeof) and x.of_name and x.ctype.base in bound for x in ir.walk(value)):
            raise self.fail("sizeof of a statement expression's copy", node)
        return _substitute(value, bound)

    def split_shift(self, node: ts.Node) -> ir.Expr | None:
        """`i < n >> 3`, which tree-sitter reads as the template `i<n>` compared `> 3` (the `>>` split in two):
        C's `i < (n >> 3)`, the shift's further operands folded left (`n >> 3 >> 1` is `(n >> 3) >> 1`). Only where
        the template's `>` and the operator's `>` are adjacent (the source's `>>`) and the argument binds tighter
        than a shift. None where
        `node` is no such misreading."""
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        op = node.child_by_field_name("operator")
        if left is None or left.type != "template_function" or self.text(op) != ">":
            return None
        targs = left.child_by_field_name("arguments")
        name = left.child_by_field_name("name")
        if targs is None or name is None or name.type != "identifier" or targs.end_byte != op.start_byte:
            return None
        items = [c for c in targs.named_children if c.type != "comment"]
        if len(items) != 1:
            return None
        arg = items[0]
        if arg.type == "type_descriptor" and arg.named_child_count == 1 and arg.named_children[0].type == "type_identifier":
            operand: ir.Expr = ir.Name(self.loc(arg), self.text(arg.named_children[0]))
        elif arg.type in SHIFT_OPERANDS or (arg.type == "binary_expression" and
                                            self.text(arg.child_by_field_name("operator")) in TIGHTER_THAN_SHIFT):
            operand = self.expr(arg)
        else:
            return None
        loc = self.loc(node)
        return ir.Binary(loc, "<", ir.Name(self.loc(name), self.text(name)), self.fold_shift(operand, right))

    def fold_shift(self, first: ir.Expr, right: ts.Node) -> ir.Expr:
        """`first >> right`, where `right` was parsed as its own shift chain (`3 >> 1` of `n >> 3 >> 1`): shifts
        associate to the left, so `first` joins the chain's leftmost operand."""
        if right.type == "binary_expression" and self.text(right.child_by_field_name("operator")) in ("<<", ">>"):
            inner = self.fold_shift(first, right.child_by_field_name("left"))
            return ir.Binary(self.loc(right), self.text(right.child_by_field_name("operator")), inner,
                             self.expr(right.child_by_field_name("right")))
        return ir.Binary(self.loc(right), ">>", first, self.expr(right))

    def call(self, node: ts.Node) -> ir.Expr:
        loc = self.loc(node)
        fn = node.child_by_field_name("function")
        args_node = node.child_by_field_name("arguments")
        args = tuple(self.expr(a) for a in args_node.named_children if a.type != "comment") if args_node is not None else ()
        if fn.type == "template_function":
            name = self.text(fn.child_by_field_name("name"))
            targ_node = fn.child_by_field_name("arguments")
            tdescs = [c for c in targ_node.named_children] if targ_node is not None else []
            if name in ("static_cast", "reinterpret_cast", "const_cast"):
                if len(args) != 1 or len(tdescs) != 1:
                    raise self.fail(f"{name} form", node)
                kind = {"static_cast": "static", "reinterpret_cast": "reinterpret", "const_cast": "static"}[name]
                return ir.Cast(loc, self.ctype(tdescs[0]), args[0], kind)
            return ir.Call(loc, name, args, tuple(" ".join(self.text(c).split()) for c in tdescs))
        if fn.type == "qualified_identifier":
            txt = "".join(self.text(fn).split())
            m = re.fullmatch(r"([\w:]+?)(?:<(.*)>)?", txt)
            name = m.group(1) if m else txt
            targs = tuple(x.strip() for x in m.group(2).split(",")) if m and m.group(2) else ()
            return ir.Call(loc, name, args, targs)
        if fn.type == "field_expression":
            obj = fn.child_by_field_name("argument")
            method = self.text(fn.child_by_field_name("field"))
            return ir.MethodCall(loc, self.expr(obj), method, args)
        if fn.type == "identifier":
            if self.text(fn) in ("short", "long", "signed", "unsigned") and len(args) == 1:  # short(x): a cast
                return ir.Cast(loc, ir.CType(canonical(self.text(fn))), args[0], "functional")
            return ir.Call(loc, self.text(fn), args)
        if fn.type in ("primitive_type", "type_identifier", "sized_type_specifier"):
            if len(args) != 1:
                raise self.fail(f"constructor call '{self.text(node)[:40]}'", node)
            return ir.Cast(loc, ir.CType(canonical(" ".join(self.text(fn).split()))), args[0], "functional")
        if fn.type == "parenthesized_expression" and fn.named_child_count == 1 and \
                fn.named_children[0].type in ("identifier", "type_identifier"):
            # `(uint32)(x)`: a cast to a type the grammar does not know parses as a call of `(uint32)`; the lifter
            # tells a type (a cast) from a function (a call) by the name
            return ir.Call(loc, self.text(fn.named_children[0]), args)
        raise self.fail(f"call of '{self.text(fn)[:40]}'", node)

    def compound_literal(self, node: ts.Node) -> ir.Expr:
        """`T{}` (a value-initialised object, e.g. the functor `cg::plus<float>{}`): the call `T()` reads the same;
        `T{x}` of a scalar type: the functional cast `T(x)`. Anything longer is a constructor the IR has not."""
        loc = self.loc(node)
        tnode = node.child_by_field_name("type")
        vnode = node.child_by_field_name("value")
        items = [c for c in vnode.named_children if c.type != "comment"] if vnode is not None else []
        txt = "".join(self.text(tnode).split()) if tnode is not None else ""
        if not items and tnode is not None and tnode.type in ("qualified_identifier", "type_identifier", "template_type"):
            m = re.fullmatch(r"([\w:]+?)(?:<(.*)>)?", txt)
            if m:
                targs = tuple(x.strip() for x in m.group(2).split(",")) if m.group(2) else ()
                return ir.Call(loc, m.group(1), (), targs)
        if len(items) == 1 and tnode is not None and tnode.type in ("primitive_type", "sized_type_specifier"):
            return ir.Cast(loc, ir.CType(canonical(" ".join(self.text(tnode).split()))), self.expr(items[0]), "functional")
        raise self.fail(f"expression '{self.text(node)[:60]}' (compound_literal_expression)", node)

    # -- functions -------------------------------------------------------------------------------------------

    def default_argument(self, p: ts.Node) -> ir.Expr | None:
        """A parameter's default argument (`int off = 0`); None where it has none or one outside the subset (a
        call that leaves it out is then refused)."""
        node = p.child_by_field_name("default_value")
        try:
            return self.expr(node) if node is not None else None
        except BuildError:
            return None

    def function(self, fn: Function) -> ir.FunctionIR:
        fdef = self.fs.definition()
        if fdef is None:
            raise BuildError(f"cannot re-read function '{fn.name}'", ir.Loc(fn.span.line if fn.span else 1, 1))
        decl = fdef.child_by_field_name("declarator")
        while decl is not None and decl.type != "function_declarator":
            decl = decl.child_by_field_name("declarator")
        params: list[tuple[str, ir.CType]] = []
        defaults: list[ir.Expr | None] = []
        refs: set[str] = set()
        plist = decl.child_by_field_name("parameters") if decl is not None else None
        for p in plist.named_children if plist is not None else []:
            if p.type not in ("parameter_declaration", "optional_parameter_declaration"):
                continue
            d = p.child_by_field_name("declarator")
            if d is None:
                continue
            defaults.append(self.default_argument(p))
            name, dims, _ = self.declarator_name(d)
            ct = self.ctype(p, d)
            if self.is_reference(d):
                refs.add(name)
            if dims:
                ct = ir.CType(ct.base, ct.ptr + len(dims), ct.const)
            params.append((name, ct))
        ret = ir.CType(canonical(" ".join(self.text(fdef.child_by_field_name("type")).split())))
        body = self.body(fdef.child_by_field_name("body"))
        return ir.FunctionIR(fn.name, fn.kind, params, ret, body, [t.name for t in fn.template_params if t.kind == "type"],
                             self.loc(fdef), frozenset(refs),
                             tuple((t.name, t.kind, t.type or "") for t in fn.template_params), tuple(defaults))


def build_function(unit: KernelUnit, fn: Function, lines: LineIndex | None = None) -> ir.FunctionIR:
    """The IR of kernel or device function `fn` of `unit` (macros expanded). Raises BuildError."""
    return Builder(unit, function_source(unit, fn, lines)).function(fn)



def _substitute(e: ir.Expr, names: dict[str, ir.Expr]) -> ir.Expr:
    """`e` with each Name in `names` replaced by its expression."""
    if not names:
        return e
    if isinstance(e, ir.Name):
        return names.get(e.id, e)
    changes = {}
    for f in dataclasses.fields(e):
        v = getattr(e, f.name)
        if isinstance(v, ir.Expr):
            changes[f.name] = _substitute(v, names)
        elif isinstance(v, tuple) and any(isinstance(x, ir.Expr) for x in v):
            changes[f.name] = tuple(_substitute(x, names) if isinstance(x, ir.Expr) else x for x in v)
    return dataclasses.replace(e, **changes) if changes else e


def _breaks_as_branches(stmts: list[ir.Stmt]) -> list[ir.Stmt]:
    """A case's run with each `if (c) { A; break; } B` as `if (c) { A } else { B }` (an else of the if runs
    before B), so that no break is left before the run's end; a break anywhere else stays (and is refused)."""
    for i, st in enumerate(stmts):
        if not isinstance(st, ir.If):
            continue
        then, ends = _end_of_case(list(st.then))
        if not ends or _ends_otherwise(st.then):
            continue
        rest = _breaks_as_branches([*st.other, *stmts[i + 1 :]])
        return [*stmts[:i], ir.If(st.loc, st.test, tuple(_breaks_as_branches(then)), tuple(rest))]
    return stmts


def _ends_otherwise(stmts: tuple[ir.Stmt, ...]) -> bool:
    """Whether a body ends in return or continue (not a break), however deep in trailing blocks."""
    last = stmts[-1] if stmts else None
    while isinstance(last, ir.BlockStmt) and last.body:
        last = last.body[-1]
    return isinstance(last, ir.Return | ir.Continue)


def _end_of_case(stmts: list[ir.Stmt]) -> tuple[list[ir.Stmt], bool]:
    """A case's statements without the `break` that ends them (also at the end of a trailing `{ ... }`), and
    whether they end the switch's run (break, return or continue) instead of falling through."""
    if not stmts:
        return stmts, False
    last = stmts[-1]
    if isinstance(last, ir.Break):
        return stmts[:-1], True
    if isinstance(last, ir.Return | ir.Continue):
        return stmts, True
    if isinstance(last, ir.BlockStmt):
        inner, ends = _end_of_case(list(last.body))
        if ends:
            return [*stmts[:-1], ir.BlockStmt(last.loc, tuple(inner))], True
    return stmts, False
