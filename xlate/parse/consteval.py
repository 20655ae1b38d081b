"""Integer constant evaluation of C expressions (array sizes) through macros and file-scope constants."""

from __future__ import annotations

import functools

import tree_sitter as ts

from xlate.model import Macro
from xlate.parse import languages
from xlate.parse.nodes import Source
from xlate.resources import data


@functools.cache
def ctype_sizes() -> dict[str, int]:
    return {name: info["size"] for name, info in data("ctypes.yaml").items()}


def parse_int_literal(text: str) -> int | None:
    t = text.strip().rstrip("uUlL")
    try:
        if t.lower().startswith("0x"):
            return int(t, 16)
        if t.lower().startswith("0b"):
            return int(t, 2)
        if len(t) > 1 and t.startswith("0") and t.isdigit():
            return int(t, 8)
        return int(t)
    except ValueError:
        return None


class ConstEvaluator:
    def __init__(self, src: Source, grammar: str, macros: list[Macro], constants: dict[str, str],
                 outer: dict[str, str] | None = None):
        """`outer`: values of names the file defines only in `#if` branches not taken, which a header or the
        build defines (xlate.parse.cfamily._macros)."""
        self.src = src
        self.grammar = grammar
        self.macros = {**(outer or {}), **{m.name: m.value for m in macros if m.params is None}}
        self.constants = constants
        self._cache: dict[str, int | None] = {}
        self._active: set[str] = set()

    def sizeof(self, type_text: str) -> int | None:
        t = " ".join(type_text.replace("const", " ").replace("volatile", " ").split())
        return ctype_sizes().get(t)

    def eval_text(self, text: str) -> int | None:
        wrapped = f"int __xlate_v = ({text});".encode()
        tree = languages.parser(self.grammar).parse(wrapped)
        inner = Source("<expr>", wrapped)
        decl = tree.root_node.named_children[0] if tree.root_node.named_children else None
        if decl is None or tree.root_node.has_error:
            return None
        init = decl.child_by_field_name("declarator")
        value = init.child_by_field_name("value") if init is not None else None
        return ConstEvaluator._eval(self, value, inner)

    def eval_name(self, name: str) -> int | None:
        if name in self._cache:
            return self._cache[name]
        if name in self._active:
            return None
        text = self.macros.get(name, self.constants.get(name))
        if text is None:
            return None
        self._active.add(name)
        try:
            value = self.eval_text(text)
        finally:
            self._active.discard(name)
        self._cache[name] = value
        return value

    def eval_node(self, node: ts.Node | None) -> int | None:
        return self._eval(node, self.src)

    def _eval(self, node: ts.Node | None, src: Source) -> int | None:
        if node is None:
            return None
        t = node.type
        if t == "number_literal":
            return parse_int_literal(src.text(node))
        if t == "identifier":
            return self.eval_name(src.text(node))
        if t == "parenthesized_expression":
            return self._eval(node.named_children[0] if node.named_children else None, src)
        if t == "sizeof_expression":
            type_node = node.child_by_field_name("type")
            return self.sizeof(src.text(type_node)) if type_node is not None else None
        if t == "unary_expression":
            v = self._eval(node.child_by_field_name("argument"), src)
            op = src.text(node.child_by_field_name("operator"))
            if v is None:
                return None
            return {"-": -v, "+": v, "~": ~v, "!": int(not v)}.get(op)
        if t == "cast_expression":
            return self._eval(node.child_by_field_name("value"), src)
        if t == "binary_expression":
            a = self._eval(node.child_by_field_name("left"), src)
            b = self._eval(node.child_by_field_name("right"), src)
            op = src.text(node.child_by_field_name("operator"))
            if a is None or b is None:
                return None
            return _binary(op, a, b)
        if t == "conditional_expression":
            c = self._eval(node.child_by_field_name("condition"), src)
            if c is None:
                return None
            return self._eval(node.child_by_field_name("consequence" if c else "alternative"), src)
        return None


def _binary(op: str, a: int, b: int) -> int | None:
    if op in ("/", "%") and b == 0:
        return None
    ops = {
        "+": lambda: a + b,
        "-": lambda: a - b,
        "*": lambda: a * b,
        "/": lambda: int(a / b),  # C truncates toward zero
        "%": lambda: a - int(a / b) * b,
        "<<": lambda: a << b,
        ">>": lambda: a >> b,
        "&": lambda: a & b,
        "|": lambda: a | b,
        "^": lambda: a ^ b,
        "<": lambda: int(a < b),
        ">": lambda: int(a > b),
        "<=": lambda: int(a <= b),
        ">=": lambda: int(a >= b),
        "==": lambda: int(a == b),
        "!=": lambda: int(a != b),
        "&&": lambda: int(bool(a and b)),
        "||": lambda: int(bool(a or b)),
    }
    fn = ops.get(op)
    return fn() if fn else None


