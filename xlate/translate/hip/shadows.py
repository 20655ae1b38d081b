"""Names the file declares itself, and where: a use of such a name inside the declaration's scope is the
file's own, never the CUDA built-in the translator would rewrite (a local `int warpSize = 32;`, a kernel
parameter or template parameter named `warpSize`, a project's own `#define __shfl(v, d) ...`, a struct member
used inside its member functions).

Scopes follow C++: a local variable from its declarator to the end of its block (a `for` header: the loop), a
parameter the function or lambda, a template parameter its template, a member its class body, an enumerator
and a file-scope variable the rest of their scope, a macro from the end of its `#define` (inside its own body
the name is not the macro: no recursive expansion) to an `#undef` of it or the end of the file.

Two kinds of definition hide only their own name, and `also_defined` tells the caller so it can warn where
the built-in is rewritten:
- a macro defined under a conditional other than the include guard (a build may or may not have it);
- a function the file defines with a built-in's name: a polyfill for older GPUs (usually under
  `#if __CUDA_ARCH__ < 700`, and `__CUDA_ARCH__` is undefined under hipcc) or an overload for the project's
  own types, beside which calls with CUDA's types still reach the built-in; without types the translator
  cannot tell the two calls apart, so uses are translated as the built-in (a call meant for the project's
  overload then fails to compile, loudly, rather than a built-in call silently keeping CUDA's name).
A prototype is not a definition (some projects re-declare the CUDA API names they use).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import tree_sitter as ts

from xlate.translate.hip import queries

_WRAPPERS = {"pointer_declarator", "array_declarator", "reference_declarator", "init_declarator",
             "parenthesized_declarator", "attributed_declarator"}
_BLOCKS = {"compound_statement", "for_statement", "for_range_loop", "if_statement", "while_statement",
           "switch_statement", "catch_clause", "lambda_expression", "translation_unit", "declaration_list",
           "field_declaration_list", "template_declaration"}
_CONDITIONALS = {"preproc_if", "preproc_ifdef", "preproc_elif", "preproc_else", "preproc_elifdef"}



@dataclass
class Shadows:
    """Lazily built from one query over the file's tree: name -> [(start, end, kind)] scopes."""

    data: bytes
    root: ts.Node
    ignore: Callable[[int, int], bool] = lambda start, end: False  # ranges a pass removes (a compat block)
    _by_name: dict[str, list[tuple[ts.Node, str]]] | None = None
    _scopes: dict[str, list[tuple[int, int, str]]] = field(default_factory=dict)
    _also: set[str] = field(default_factory=set)  # defined by the file without hiding the built-in

    def kind_at(self, name: str, offset: int) -> str | None:
        for start, end, kind in self.scopes(name):
            if start <= offset < end:
                return kind
        return None

    def also_defined(self, name: str) -> bool:
        """The file defines `name` without hiding the built-in: a function, or a macro only under a conditional
        (see the module doc)."""
        self.scopes(name)
        return name in self._also

    def scopes(self, name: str) -> list[tuple[int, int, str]]:
        if name not in self._scopes:
            self._scopes[name] = self._compute(name)
        return self._scopes[name]

    # -- building ----------------------------------------------------------------------------------------
    def _index(self) -> dict[str, list[tuple[ts.Node, str]]]:
        if self._by_name is None:
            out: dict[str, list[tuple[ts.Node, str]]] = {}
            for _, caps in queries.run(("declared",), self.root)["declared"]:
                for kind, nodes in caps.items():
                    for node in nodes:
                        text = self.data[node.start_byte : node.end_byte].decode("utf-8", "replace")
                        out.setdefault(text, []).append((node, kind))
            self._by_name = out
        return self._by_name

    def _compute(self, name: str) -> list[tuple[int, int, str]]:
        out = []
        for node, kind in self._index().get(name, []):
            if self.ignore(node.start_byte, node.end_byte):
                continue
            if kind == "macro":
                out.extend(self._macro_scope(node, name) or [])
                continue
            scope = self._scope(node, kind)
            if scope is not None:
                out.append(scope)
        return sorted(set(out))

    def _scope(self, node: ts.Node, kind: str) -> tuple[int, int, str] | None:
        if kind == "member":
            body = _ancestor(node, {"field_declaration_list"})
            return (body.start_byte, body.end_byte, "member") if body is not None else None
        cur = node
        while cur.parent is not None and cur.parent.type in _WRAPPERS and _is_declarator(cur):
            cur = cur.parent
        holder = cur.parent
        if holder is None:
            return None
        if kind == "fn":
            outer = holder
            while outer.parent is not None and outer.parent.type in _WRAPPERS | {"function_declarator"}:
                outer = outer.parent
            if outer.parent is None or outer.parent.type != "function_definition":
                return None  # a prototype: see the module doc
            self._also.add(self.data[node.start_byte : node.end_byte].decode("utf-8", "replace"))
            return (node.start_byte, node.end_byte, "function")  # its own name only: see the module doc
        if holder.type in ("parameter_declaration", "optional_parameter_declaration"):
            owner = _ancestor(holder, {"template_parameter_list", "parameter_list"})
            if owner is not None and owner.type == "template_parameter_list":
                tpl = owner.parent
                return (node.start_byte, tpl.end_byte if tpl is not None else owner.end_byte, "variable")
            fn = _ancestor(holder, {"function_definition", "lambda_expression"})
            if fn is None or (owner is not None and not _inside(owner, fn)):
                return (holder.start_byte, holder.end_byte, "variable")  # a prototype's parameter
            return (node.start_byte, fn.end_byte, "variable")
        if holder.type in ("declaration", "enumerator") or kind == "var":
            if _statement_macro_misread(node, holder):
                return None
            block = _ancestor(holder, _BLOCKS)
            return (node.start_byte, self._end_of(block), "variable")
        return None

    def _macro_scope(self, node: ts.Node, name: str) -> list[tuple[int, int, str]] | None:
        define = node.parent
        if define is not None and _conditional(define):
            self._also.add(name)
            return [(node.start_byte, node.end_byte, "macro")]  # its own name only
        undef = re.compile(rb"^[ \t]*#[ \t]*undef[ \t]+" + re.escape(name.encode()) + rb"\b", re.M)
        m = undef.search(self.data, node.end_byte)
        # From the end of the #define (inside its own body the name is not the macro: no recursive expansion)
        # through the name of the #undef that ends it
        after = define.end_byte if define is not None else node.end_byte
        return [(node.start_byte, node.end_byte, "macro"), (after, m.end() if m else len(self.data), "macro")]

    def _end_of(self, block: ts.Node | None) -> int:
        if block is None or block.type == "translation_unit":
            return len(self.data)
        return block.end_byte


def _statement_macro_misread(name: ts.Node, declaration: ts.Node) -> bool:
    """`CHECK_ERRORS cudaMemset(p, 0, n);` (a statement macro without its `;`, then a call) reads as a declaration
    of `cudaMemset` direct-initialised from `(p, 0, n)` with type `CHECK_ERRORS`. A direct-initialised
    declaration whose type is a bare name is taken for that, not as a declaration of the name."""
    init = name.parent
    if init is None or init.type != "init_declarator" or declaration.type != "declaration":
        return False
    value = init.child_by_field_name("value")
    type_node = declaration.child_by_field_name("type")
    return value is not None and value.type == "argument_list" and type_node is not None and \
        type_node.type == "type_identifier"


def _is_declarator(node: ts.Node) -> bool:
    parent = node.parent
    if parent is None:
        return False
    if parent.type in ("reference_declarator", "parenthesized_declarator"):
        return True  # their declarator child has no field name
    for i, child in enumerate(parent.children):
        if child.id == node.id:
            return parent.field_name_for_child(i) == "declarator"
    return False


def _ancestor(node: ts.Node, types: set[str]) -> ts.Node | None:
    cur = node.parent
    while cur is not None and cur.type not in types:
        cur = cur.parent
    return cur


def _inside(inner: ts.Node, outer: ts.Node) -> bool:
    return outer.start_byte <= inner.start_byte and inner.end_byte <= outer.end_byte


def _conditional(define: ts.Node) -> bool:
    """Under a #if/#ifdef/#else other than the include guard (`#ifndef X` / `#define X` around the file)."""
    cur = define.parent
    while cur is not None:
        if cur.type in _CONDITIONALS and not _include_guard(cur):
            return True
        cur = cur.parent
    return False


def _include_guard(node: ts.Node) -> bool:
    if node.type != "preproc_ifdef" or node.parent is None or node.parent.type != "translation_unit":
        return False
    name = node.child_by_field_name("name")
    if name is None:
        return False
    for child in node.named_children:
        if child.type == "comment" or child == name:
            continue
        guard = child.child_by_field_name("name") if child.type == "preproc_def" else None
        # `#ifndef N / #define N 256` gives a default value: a conditional, not a guard
        return guard is not None and guard.text == name.text and child.child_by_field_name("value") is None
    return False
