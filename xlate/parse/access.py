"""Which pointer parameters a function reads and writes through.

Intraprocedural pass over the body (through pointer arithmetic, casts, local aliases, address-of, atomics and
load/store intrinsics) plus edges for pointers passed to other device functions, resolved to a fixpoint by
`resolve_interprocedural`.
"""

from __future__ import annotations

import heapq
import re
from dataclasses import dataclass, field

import tree_sitter as ts

from xlate.parse.nodes import Source, walk

CAST_FUNCTIONS = {"reinterpret_cast", "static_cast", "const_cast", "__builtin_assume_aligned"}
# memcpy-like calls: argument index -> effect
KNOWN_CALLS: dict[str, dict[int, str]] = {
    "memcpy": {0: "w", 1: "r"},
    "memset": {0: "w"},
    "memmove": {0: "w", 1: "r"},
}


@dataclass
class Effects:
    reads: set[str] = field(default_factory=set)
    writes: set[str] = field(default_factory=set)
    # (param, callee, argument index): the callee's effect on that argument applies to param
    edges: list[tuple[str, str, int]] = field(default_factory=list)
    unknown_calls: list[tuple[str, str]] = field(default_factory=list)  # (param, callee) judged conservatively


class AccessAnalyzer:
    def __init__(self, src: Source, device_functions: set[str], atomics: set[str], loads: set[str], stores: set[str]):
        self.src = src
        self.device_functions = device_functions
        self.atomics = atomics
        self.loads = loads
        self.stores = stores

    def analyse(self, body: ts.Node, pointers: list[str]) -> Effects:
        """Visit each use of a pointer parameter (or of a local alias of one) in source order.

        Uses are found by searching the body's text for the names and asking tree-sitter for the node at each
        hit, which is much cheaper than walking every node; hits inside comments or strings are not
        identifiers and are skipped.
        """
        effects = Effects()
        aliases: dict[str, str] = {p: p for p in pointers}
        data = self.src.data
        base = body.start_byte
        text = data[base : body.end_byte]
        heap: list[tuple[int, int, str]] = []
        for name in pointers:
            for m in re.finditer(rb"\b%s\b" % re.escape(name.encode()), text):
                heapq.heappush(heap, (base + m.start(), base + m.end(), name))
        seen: set[int] = set()
        while heap:
            start, end, name = heapq.heappop(heap)
            if start in seen:
                continue
            seen.add(start)
            node = body.descendant_for_byte_range(start, end)
            if node is None or node.type != "identifier" or node.start_byte != start or node.end_byte != end:
                continue
            root = aliases.get(name)
            if root is None:
                continue
            parent = node.parent
            if parent is not None and parent.type in ("init_declarator", "pointer_declarator") and (
                parent.child_by_field_name("declarator") == node
            ):
                continue  # the declaration of an alias, not a use
            before = set(aliases)
            self._classify(node, root, effects, aliases)
            for alias in set(aliases) - before:
                for m in re.finditer(rb"\b%s\b" % re.escape(alias.encode()), data[end : body.end_byte]):
                    heapq.heappush(heap, (end + m.start(), end + m.end(), alias))
        return effects

    # -- helpers -------------------------------------------------------------------------------------------
    def _op(self, node: ts.Node) -> str:
        op = node.child_by_field_name("operator")
        return self.src.text(op) if op is not None else ""

    def _callee_name(self, call: ts.Node) -> str:
        fn = call.child_by_field_name("function")
        if fn is None:
            return ""
        if fn.type == "template_function":
            fn = fn.child_by_field_name("name") or fn
        text = self.src.text(fn)
        return text.rsplit("::", 1)[-1].rsplit(".", 1)[-1].rsplit("->", 1)[-1].strip()

    def _classify(self, node: ts.Node, root: str, effects: Effects, aliases: dict[str, str]) -> None:
        """`node` evaluates to a pointer derived from parameter `root`; find what is done through it."""
        cur = node
        while True:
            parent = cur.parent
            if parent is None:
                return
            t = parent.type
            if t in ("parenthesized_expression", "conditional_expression") or (
                t == "cast_expression" and parent.child_by_field_name("value") == cur
            ):
                cur = parent
                continue
            if t == "binary_expression" and self._op(parent) in ("+", "-"):
                cur = parent
                continue
            if t == "argument_list":
                call = parent.parent
                if call is not None and call.type == "call_expression":
                    name = self._callee_name(call)
                    if name in CAST_FUNCTIONS:
                        cur = call
                        continue
                    index = [c for c in parent.named_children if c.type != "comment"].index(cur)
                    self._call_effect(name, index, root, effects)
                return
            if t == "subscript_expression" and parent.child_by_field_name("argument") == cur:
                self._access(parent, root, effects, aliases)
                return
            if t == "pointer_expression" and self._op(parent) == "*":
                self._access(parent, root, effects, aliases)
                return
            if t == "field_expression" and self._op(parent) == "->" and parent.child_by_field_name("argument") == cur:
                self._access(parent, root, effects, aliases)
                return
            if t == "init_declarator" and parent.child_by_field_name("value") == cur:
                declarator = parent.child_by_field_name("declarator")
                if declarator is not None and declarator.type in ("pointer_declarator", "reference_declarator"):
                    alias = self._declared_name(declarator)
                    if alias:
                        aliases[alias] = root
                return
            if t == "assignment_expression" and parent.child_by_field_name("right") == cur and self._op(parent) == "=":
                left = parent.child_by_field_name("left")
                if left is not None and left.type == "identifier":
                    aliases[self.src.text(left)] = root
                return
            return  # comparisons, pointer increments, returns: no access through the pointer

    def _declared_name(self, declarator: ts.Node) -> str | None:
        for n in walk(declarator):
            if n.type == "identifier":
                return self.src.text(n)
        return None

    def _access(self, access: ts.Node, root: str, effects: Effects, aliases: dict[str, str]) -> None:
        """`access` is an lvalue in memory reached through `root` (p[i], *p, p->f)."""
        cur = access
        while True:
            parent = cur.parent
            if parent is None:
                effects.reads.add(root)
                return
            t = parent.type
            if t == "parenthesized_expression":
                cur = parent
                continue
            if t == "field_expression" and parent.child_by_field_name("argument") == cur:
                cur = parent  # p[i].x
                continue
            if t == "subscript_expression" and parent.child_by_field_name("argument") == cur:
                cur = parent  # p[i][j] through T**
                continue
            if t == "assignment_expression" and parent.child_by_field_name("left") == cur:
                effects.writes.add(root)
                if self._op(parent) != "=":
                    effects.reads.add(root)
                return
            if t == "update_expression":
                effects.reads.add(root)
                effects.writes.add(root)
                return
            if t == "pointer_expression" and self._op(parent) == "&":
                self._classify(parent, root, effects, aliases)  # &p[i] is a pointer again
                return
            if t == "init_declarator" and parent.child_by_field_name("value") == cur:
                declarator = parent.child_by_field_name("declarator")
                if declarator is not None and declarator.type == "reference_declarator":
                    effects.reads.add(root)  # `T& r = p[i];` may be written later: be conservative
                    effects.writes.add(root)
                    return
            effects.reads.add(root)
            return

    def _call_effect(self, name: str, index: int, root: str, effects: Effects) -> None:
        if name in self.atomics:
            if index == 0:
                effects.reads.add(root)
                effects.writes.add(root)
            return
        if name in self.loads:
            effects.reads.add(root)
            return
        if name in self.stores:
            if index == 0:
                effects.writes.add(root)
            return
        if name in KNOWN_CALLS:
            eff = KNOWN_CALLS[name].get(index)
            if eff == "w":
                effects.writes.add(root)
            elif eff == "r":
                effects.reads.add(root)
            return
        if name in self.device_functions:
            effects.edges.append((root, name, index))
            return
        effects.reads.add(root)
        effects.writes.add(root)
        effects.unknown_calls.append((root, name))


def resolve_interprocedural(
    effects: dict[str, Effects], params: dict[str, list[str]]
) -> dict[str, tuple[set[str], set[str]]]:
    """Propagate callee effects on pointer arguments to callers until nothing changes.

    `effects` and `params` are keyed by function name; params lists every parameter name in order.
    """
    result = {fn: (set(e.reads), set(e.writes)) for fn, e in effects.items()}
    changed = True
    while changed:
        changed = False
        for fn, eff in effects.items():
            reads, writes = result[fn]
            for root, callee, index in eff.edges:
                callee_params = params.get(callee, [])
                if callee not in result or index >= len(callee_params):
                    # unknown callee or variadic: conservative
                    new_r, new_w = True, True
                else:
                    target = callee_params[index]
                    new_r = target in result[callee][0]
                    new_w = target in result[callee][1]
                if new_r and root not in reads:
                    reads.add(root)
                    changed = True
                if new_w and root not in writes:
                    writes.add(root)
                    changed = True
    return result
