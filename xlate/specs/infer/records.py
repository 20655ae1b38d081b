"""Record parameters (structs of mixed number fields): which integer fields the kernel uses where a drawn value
could break a correct kernel -- an index, a loop bound, a guard compared with something other than a constant,
an argument of a function that does so -- read from the kernel's syntax tree. Such a field needs a range the
program gives (none is inferred yet), so its parameter stays a hole; fields used as data are drawn freely."""

from __future__ import annotations

import re

import tree_sitter as ts

from xlate.specs.infer.ceval import walk_tree
from xlate.specs.infer.program import FuncDef, Program, text

STATEMENT_TYPES = {"expression_statement", "declaration", "return_statement", "compound_statement", "if_statement",
                   "for_statement", "while_statement", "do_statement", "switch_statement", "case_statement",
                   "for_range_loop"}
MAX_DEPTH = 6  # variables and device functions a value is followed through (deeper: not data, conservatively)
_MEMO: dict[tuple[str, int, bool], str | None] = {}  # (name, body, float) -> _name_risk, per query
LOOP_TYPES = {"for_statement", "while_statement", "do_statement", "for_range_loop"}
MATH = {"sqrt", "sqrtf", "exp", "expf", "log", "logf", "sin", "cos", "sinf", "cosf", "fabs", "fabsf", "pow", "powf",
        "fmin", "fmax", "fminf", "fmaxf", "floor", "floorf", "ceil", "ceilf", "erf", "erff", "tanh", "tanhf", "abs",
        "__expf", "__logf", "__sinf", "__cosf", "rsqrt", "rsqrtf", "exp2f", "log2f", "float", "double", "printf"}


def _walk(node: ts.Node):
    """The named nodes of a subtree, parents first, in source order (anonymous nodes are leaves: tokens)."""
    return (n for n in walk_tree(node) if n.is_named)


def _is_literal(node: ts.Node | None, program: Program | None = None) -> bool:
    """A constant: a literal, or a name the program defines as an object-like macro or an enumerator."""
    while node is not None and node.type in ("parenthesized_expression", "unary_expression", "cast_expression"):
        node = node.named_children[-1] if node.named_children else None
    if node is not None and node.type == "identifier" and program is not None:
        m = program.macros.get(text(node))
        return m is not None and m.params is None
    # `Lens::Kind::A`, `Cfg::kMax`: an enumerator or a static constant of a scope, fixed when the kernel runs
    return node is not None and node.type in ("number_literal", "true", "false", "char_literal", "qualified_identifier")


def _within(node: ts.Node, outer: ts.Node | None) -> bool:
    return outer is not None and outer.start_byte <= node.start_byte and node.end_byte <= outer.end_byte


def _risk(node: ts.Node, body: ts.Node, program: Program, depth: int, flt: bool = False) -> str | None:
    """Why the value at `node` is not plain data (None: it is). `flt`: a float's value, which a comparison or a
    guard only uses to pick a branch; an integer compared with a computed value may be what bounds an index."""
    cur = node
    pending = None  # a comparison with a computed value: risky unless it only picks a branch by a constant
    while cur.parent is not None and cur.id != body.id:
        parent = cur.parent
        t = parent.type
        if t == "subscript_expression" and not _within(node, parent.child_by_field_name("argument")):
            return "indexes a buffer"
        if t in LOOP_TYPES and not _within(node, parent.child_by_field_name("body")):
            return "bounds a loop"
        if t in ("if_statement", "conditional_expression") and _within(node, parent.child_by_field_name("condition")):
            if flt:
                return None
            return None if _compared_with_constant(node, parent, program) and pending is None else "is compared in a guard"
        if t == "binary_expression" and text(parent.child_by_field_name("operator")) in ("<", "<=", ">", ">=", "==", "!="):
            other = parent.child_by_field_name("right") if _within(node, parent.child_by_field_name("left")) else \
                parent.child_by_field_name("left")
            if not _is_literal(other, program) and not flt:
                pending = pending or "is compared with a computed value"
        if t == "init_declarator" or (t == "assignment_expression" and _within(node, parent.child_by_field_name("right"))):
            target = parent.child_by_field_name("declarator") if t == "init_declarator" else parent.child_by_field_name("left")
            if target is not None and target.type == "identifier":
                if depth >= MAX_DEPTH:
                    return f"flows into '{text(target)}' further than xlate follows"
                why = _name_risk(text(target), body, program, depth + 1, flt)
                return f"flows into '{text(target)}', which {why}" if why else None
            if target is not None and target.type in ("subscript_expression", "field_expression"):
                return None  # stored into memory: data
            return "is stored where xlate cannot follow it" if target is not None and target.type != "identifier" else None
        if t == "argument_list":
            call = parent.parent
            callee = text(call.child_by_field_name("function")) if call is not None else ""
            fd = program.function(callee) if callee.split("::")[-1] not in MATH else None
            if fd is not None:
                if depth >= MAX_DEPTH:
                    return "is passed to a function too deep to follow"
                k = next(i for i, a in enumerate(parent.named_children) if _within(node, a))
                why = _param_risk(fd, k, program, depth + 1, flt)
                if why:
                    return f"is passed to '{callee}', where it {why}"
            if call is not None:  # the call's value depends on it (`XtoL(p.x)`): follow where that goes
                cur = call
                continue
        if t in STATEMENT_TYPES:
            return pending
        cur = parent
    return pending


def _compared_with_constant(node: ts.Node, cond_owner: ts.Node, program: Program) -> bool:
    """The field inside a guard is only compared with literals (`if (p.mode == 1)`): any value just picks a
    branch."""
    cur = node
    while cur.parent is not None and cur.parent.id != cond_owner.id:
        parent = cur.parent
        if parent.type == "binary_expression":
            op = text(parent.child_by_field_name("operator"))
            if op in ("<", "<=", ">", ">=", "==", "!="):
                other = parent.child_by_field_name("right") if _within(node, parent.child_by_field_name("left")) else \
                    parent.child_by_field_name("left")
                return _is_literal(other, program)
        cur = parent
    return True  # used as a truth value


def _name_risk(name: str, body: ts.Node, program: Program, depth: int, flt: bool = False) -> str | None:
    key = (name, body.id, flt)
    if key not in _MEMO:
        _MEMO[key] = None  # a variable that flows into itself (`v = -v`, `s += o.x`) is not followed again
        _MEMO[key] = _uses_risk(name, body, program, depth, flt)
    return _MEMO[key]


def _uses_risk(name: str, body: ts.Node, program: Program, depth: int, flt: bool) -> str | None:
    for n in _walk(body):
        if n.type == "identifier" and text(n) == name:
            parent = n.parent
            if parent is not None and parent.type == "init_declarator" and parent.child_by_field_name("declarator") == n:
                continue
            why = _risk(n, body, program, depth, flt)
            if why:
                return why
    return None


def _param_risk(fd: FuncDef, k: int, program: Program, depth: int, flt: bool = False) -> str | None:
    body = fd.node.child_by_field_name("body")
    if body is None or k >= len(fd.params):
        return None
    return _name_risk(fd.params[k][0], body, program, depth, flt)


def number_fields(record: str, kinds: str = "iuf") -> set[str]:
    """Names of a record type's fields of these dtype kinds (integers and floats: a float turned into a bin
    number indexes as well; bool fields are safe to draw anywhere)."""
    from xlate.specs.records import leaves, parse_record, record_dtype

    return {leaf.path[-1] for leaf in leaves(parse_record(record), record_dtype(record))
            if leaf.dtype.kind in kinds or (leaf.dtype.name == "bfloat16" and "f" in kinds)}


def _root_name(node: ts.Node | None) -> str:
    """The variable an access starts from: `opts` of `opts[i].T`, `o` of `(*o).T`."""
    while node is not None and node.type in ("subscript_expression", "field_expression", "parenthesized_expression",
                                             "pointer_expression", "cast_expression"):
        node = node.child_by_field_name("argument") or node.child_by_field_name("value") or (
            node.named_children[-1] if node.named_children else None)
    return text(node) if node is not None and node.type == "identifier" else ""


def _typed_names(program: Program, functions: list[FuncDef], struct: str, seeds: set[str]) -> set[str]:
    """Names of the parameters and locals declared with the struct's type (`const Option& o`, `Option o =
    opts[i]`) in these functions: the field reads that may be the record's."""
    word = re.compile(rf"\b{re.escape(struct)}\b")
    out: set[str] = set()
    for f in functions:
        out |= {name for name, ptype, _ in f.params if word.search(ptype)}
        body = f.node.child_by_field_name("body")
        for n in _walk(body) if body is not None else []:
            if n.type == "declaration":
                for d in n.children_by_field_name("declarator"):
                    value = d.child_by_field_name("value") if d.type == "init_declarator" else None
                    if not word.search(text(n.child_by_field_name("type"))) and (  # `auto o = opts[i]` too
                            value is None or _root_name(value) not in (out | seeds)):
                        continue
                    while d is not None and d.type != "identifier":
                        d = d.child_by_field_name("declarator") or next(
                            (c for c in d.named_children if c.type == "identifier"), None)
                    if d is not None:
                        out.add(text(d))
    return out


def risky_fields(program: Program, kernel: str, fields: set[str], param: str = "", struct: str = "",
                 floats: set[str] | None = None) -> dict[str, str]:
    """Integer fields (by name) the kernel uses where a wild value breaks it: field -> why ("indexes a buffer",
    "bounds a loop", ...). A field read counts when it starts from the parameter or from a parameter or local of
    the struct's type (`o.T` of a local copy `Option o = opts[i]`, of a device function's `const Option& o`);
    without `param`, any read of a field of that name does."""
    fd = program.function(kernel, "kernel")
    if fd is None:
        return {}
    _MEMO.clear()
    typed = {param, *_typed_names(program, _callees(program, fd), struct, {param})} if param else set()
    out: dict[str, str] = {}
    seen: set[str] = set()
    todo = [(fd, 0)] if fd is not None else []
    while todo:  # the kernel and the functions it calls (a struct handed to a device function is read there)
        f, level = todo.pop()
        body = f.node.child_by_field_name("body")
        if body is None or f.name in seen:
            continue
        seen.add(f.name)
        for n in _walk(body):
            if n.type == "call_expression" and level < 3:
                callee = program.function(text(n.child_by_field_name("function")))
                if callee is not None:
                    todo.append((callee, level + 1))
            if n.type != "field_expression":
                continue
            name = text(n.child_by_field_name("field"))
            if name in fields and name not in out and (not typed or _root_name(n.child_by_field_name("argument")) in typed):
                why = _risk(n, body, program, 0, name in (floats or set()))
                if why:
                    out[name] = why
    return out


def index_targets(program: Program, kernel: str, field: str, pointers: set[str], param: str = "",
                  struct: str = "") -> set[str] | None:
    """The pointer parameters a field indexes directly (`x[e[i].col]`, `x[(int)o.k]`) when those are its only
    risky uses, in the kernel's own body; None when it is used otherwise (a loop bound, arithmetic in an index, a
    device function): then no range of the field follows from the buffers' lengths."""
    fd = program.function(kernel, "kernel")
    body = fd.node.child_by_field_name("body") if fd is not None else None
    if body is None:
        return None
    _MEMO.clear()
    out: set[str] = set()
    callees = _callees(program, fd)
    typed = {param, *_typed_names(program, callees, struct, {param})} if param else set()
    for f in [fd, *(g for g in callees if g is not fd)]:
        fbody = f.node.child_by_field_name("body")
        for n in _walk(fbody) if fbody is not None else []:
            if n.type != "field_expression" or text(n.child_by_field_name("field")) != field:
                continue
            if typed and _root_name(n.child_by_field_name("argument")) not in typed:
                continue
            why = _risk(n, fbody, program, 0)
            if not why:
                continue
            if why != "indexes a buffer" or f is not fd:
                return None
            cur = n
            while cur.parent is not None and cur.parent.type in ("parenthesized_expression", "cast_expression",
                                                                 "subscript_argument_list"):
                cur = cur.parent
            sub = cur.parent
            arg = sub.child_by_field_name("argument") if sub is not None and sub.type == "subscript_expression" else None
            if arg is None or arg.type != "identifier" or text(arg) not in pointers or _within(n, arg):
                return None
            out.add(text(arg))
    return out or None


def _callees(program: Program, fd: FuncDef, limit: int = 3) -> list[FuncDef]:
    out, todo, seen = [], [(fd, 0)], set()
    while todo:
        f, level = todo.pop()
        if f.name in seen:
            continue
        seen.add(f.name)
        out.append(f)
        body = f.node.child_by_field_name("body")
        for n in _walk(body) if body is not None and level < limit else []:
            if n.type == "call_expression":
                g = program.function(text(n.child_by_field_name("function")))
                if g is not None:
                    todo.append((g, level + 1))
    return out
