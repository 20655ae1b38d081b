"""Small helpers over tree-sitter nodes: text, spans, parse-error collection, annotations."""

from __future__ import annotations

import re
from collections.abc import Iterator

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


def annotation_above(src: Source, node: ts.Node, marker: str) -> tuple[str | None, list[str], Span | None]:
    """Collect `<marker>` comment lines directly above `node` (contiguous comment lines, no gap).

    `marker` is e.g. "// xlate:" or "# xlate:". Returns (joined items, notes, span of the first line).
    """
    prefix = marker.split("xlate:")[0]
    items: list[str] = []
    notes: list[str] = []
    first: Span | None = None
    expected_row = node.start_point[0] - 1
    sib = node.prev_sibling
    collected: list[ts.Node] = []
    while sib is not None and sib.type == "comment" and sib.end_point[0] == expected_row:
        collected.append(sib)
        expected_row = sib.start_point[0] - 1
        sib = sib.prev_sibling
    for comment in reversed(collected):
        for line in src.text(comment).splitlines():
            stripped = line.strip()
            if stripped.startswith(prefix + " xlate:") or stripped.startswith(prefix + "xlate:"):
                body = stripped.split("xlate:", 1)[1].strip()
                items.append(body)
                if first is None:
                    first = src.span(comment)
            elif stripped.startswith(prefix + " xlate-note:") or stripped.startswith(prefix + "xlate-note:"):
                notes.append(stripped.split("xlate-note:", 1)[1].strip())
    if not items:
        return None, notes, None
    joined = ", ".join(i.rstrip(",").strip() for i in items if i)
    return joined, notes, first
