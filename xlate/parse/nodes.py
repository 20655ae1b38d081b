"""Small helpers over tree-sitter nodes: text, spans, parse-error collection, annotations."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import tree_sitter as ts

from xlate.errors import Located
from xlate.model import Span


class Source:
    """The bytes of one file with a line index, to turn byte offsets into 1-based character columns."""

    def __init__(self, path: str, data: bytes):
        self.path = path
        self.data = data
        self._line_starts = [0, *(m.end() for m in re.finditer(b"\n", data))]
        self._ascii = data.isascii()  # then a byte column is the character column: no decoding per span

    def text(self, node: ts.Node | None) -> str:
        if node is None:
            return ""
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def col(self, row: int, byte_col: int) -> int:
        if self._ascii:
            return byte_col + 1
        start = self._line_starts[row] if row < len(self._line_starts) else len(self.data)
        return len(self.data[start : start + byte_col].decode("utf-8", "replace")) + 1

    def span(self, node: ts.Node) -> Span:
        (r0, c0), (r1, c1) = node.start_point, node.end_point
        return Span(self.path, r0 + 1, self.col(r0, c0), r1 + 1, self.col(r1, c1), node.start_byte, node.end_byte)

    def span_bytes(self, start: int, end: int) -> Span:
        import bisect

        r0 = bisect.bisect_right(self._line_starts, start) - 1
        r1 = bisect.bisect_right(self._line_starts, end) - 1
        return Span(
            self.path,
            r0 + 1,
            self.col(r0, start - self._line_starts[r0]),
            r1 + 1,
            self.col(r1, end - self._line_starts[r1]),
            start,
            end,
        )


def walk(node: ts.Node) -> Iterator[ts.Node]:
    """Pre-order traversal without recursion (deep expression trees exist in generated code)."""
    cursor = node.walk()
    reached_root = False
    while not reached_root:
        yield cursor.node
        if cursor.goto_first_child():
            continue
        if cursor.goto_next_sibling():
            continue
        while True:
            if not cursor.goto_parent() or cursor.node == node:
                reached_root = True
                break
            if cursor.goto_next_sibling():
                break


def syntax_errors(src: Source, root: ts.Node, limit: int = 50) -> list[Located]:
    """Every ERROR and MISSING node as a located message (tree-sitter recovers silently otherwise)."""
    if not root.has_error:
        return []
    found: list[Located] = []
    for node in walk(root):
        if len(found) >= limit:
            break
        if node.is_missing:
            r, c = node.start_point
            found.append(Located(src.path, r + 1, src.col(r, c), f"syntax error: missing '{node.type}'"))
        elif node.type == "ERROR":
            r, c = node.start_point
            snippet = src.text(node).strip().splitlines()[0][:40] if src.text(node).strip() else ""
            near = f" near '{snippet}'" if snippet else ""
            found.append(Located(src.path, r + 1, src.col(r, c), f"syntax error: unexpected input{near}"))
    if not found:  # has_error without a visible node: report the root
        found.append(Located(src.path, 1, 1, "syntax error"))
    return found


PREPROC_BLOCKS = ("preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef")


def _above(node: ts.Node) -> list[ts.Node]:
    """The comments above `node`, nearest first, looking through preprocessor lines (#define, #include, #pragma)
    and out of enclosing #if/#ifdef blocks; stops at the first code (a declaration, another function)."""
    collected: list[ts.Node] = []
    cur = node
    while True:
        sib = cur.prev_sibling
        parent = cur.parent
        header = set()
        if parent is not None and parent.type in PREPROC_BLOCKS:
            for field in ("name", "condition"):
                h = parent.child_by_field_name(field)
                if h is not None:
                    header.add((h.start_byte, h.end_byte))
        while sib is not None:
            if sib.type == "comment":
                collected.append(sib)
            elif sib.type.startswith("preproc_") and sib.type not in PREPROC_BLOCKS:
                pass  # #define, #include, #pragma, #undef lines between the annotation and its kernel
            elif not sib.is_named or (sib.start_byte, sib.end_byte) in header:
                pass  # the '#ifdef NAME' header of the block the kernel sits in
            else:
                return collected
            sib = sib.prev_sibling
        if parent is None or parent.type not in PREPROC_BLOCKS:
            return collected
        cur = parent


def _marker_lines(src: Source, comments: list[ts.Node], prefix: str) -> tuple[list[str], list[str], Span | None]:
    """`xlate:` items and `xlate-note:` notes of comments (`// xlate:`, `/* xlate: */`, `# xlate:`)."""
    leaders = ("#",) if prefix == "#" else ("//", "/*", "*")
    items: list[str] = []
    notes: list[str] = []
    first: Span | None = None
    for comment in comments:
        for line in src.text(comment).splitlines():
            body = line.strip()
            for lead in leaders:
                if body.startswith(lead):
                    body = body[len(lead):].strip()
                    break
            else:
                continue
            body = body.removesuffix("*/").strip()
            if body.startswith("xlate:"):
                items.append(body.split("xlate:", 1)[1].strip())
                if first is None:
                    first = src.span(comment)
            elif body.startswith("xlate-note:"):
                notes.append(body.split("xlate-note:", 1)[1].strip())
    return items, notes, first


def annotation_above(src: Source, node: ts.Node, marker: str) -> tuple[str | None, list[str], Span | None]:
    """Collect `<marker>` comment lines above `node`: through other comments, blank lines and preprocessor lines
    (`#define`, `#include`, an enclosing `#ifdef`), up to the previous piece of code.

    `marker` is e.g. "// xlate:" or "# xlate:". Returns (joined items, notes, span of the first line).
    """
    prefix = marker.split("xlate:")[0].strip()
    comments = list(reversed(_above(node)))
    items, notes, first = _marker_lines(src, comments, prefix)
    if not items:
        return None, notes, None
    joined = ", ".join(i.rstrip(",").strip() for i in items if i)
    return joined, notes, first


def file_annotation(src: Source, root: ts.Node, marker: str) -> tuple[str | None, Span | None]:
    """The `<marker>` lines of the comments that open a file (before its first code): the spec of a file with one
    kernel or one launcher may be written there."""
    prefix = marker.split("xlate:")[0].strip()
    comments: list[ts.Node] = []
    for child in root.children:
        if child.type == "comment":
            comments.append(child)
        elif child.type.startswith("preproc_") and child.type not in PREPROC_BLOCKS:
            continue
        elif child.type in ("import_statement", "import_from_statement", "future_import_statement") or (
                child.type == "expression_statement" and child.named_children and child.named_children[0].type == "string"):
            continue  # Python: imports and the module docstring
        else:
            break
    items, _, first = _marker_lines(src, comments, prefix)
    if not items:
        return None, None
    return ", ".join(i.rstrip(",").strip() for i in items if i), first


def declared_name(decl: ts.Node | None, text: Callable[[ts.Node], str]) -> str | None:
    """The identifier a declarator declares (`x`, `*x`, `(*x)(int)`, `x[4]`)."""
    while decl is not None and decl.type != "identifier":
        inner = decl.child_by_field_name("declarator")
        if inner is None:
            inner = next((c for c in decl.named_children if c.type.endswith("declarator") or c.type == "identifier"),
                         None)
        decl = inner
    return text(decl) if decl is not None else None


def declared_value(at: ts.Node, name: str, text: Callable[[ts.Node], str]) -> ts.Node | None:
    """The initialiser of local variable `name` as seen from `at`: its nearest declaration before `at` in an
    enclosing block (`auto k = &kernel<T>;` for a launch `k<<<g, b>>>(...)`), or None."""
    cur = at.parent
    while cur is not None:
        if cur.type == "compound_statement":
            for decl in reversed(cur.named_children):
                if decl.type != "declaration" or decl.end_byte > at.start_byte:
                    continue
                for init in decl.named_children:
                    if init.type == "init_declarator" and declared_name(init.child_by_field_name("declarator"),
                                                                         text) == name:
                        return init.child_by_field_name("value")
        cur = cur.parent
    return None
