"""Byte-range edits on the original text, each traceable to its rule, applied in one linear pass."""

from __future__ import annotations

from xlate.parse.nodes import Source
from xlate.parse.source import to_text
from xlate.translate.base import Edit


class EditSet:
    """Collects non-overlapping replacements and insertions; `claim` keeps two rules off the same token."""

    def __init__(self, data: bytes, src: Source):
        self.data = data
        self.src = src
        self._edits: list[tuple[int, int, int, Edit]] = []  # (start, end, seq, edit)
        self._claimed: set[tuple[int, int]] = set()

    def claim(self, start: int, end: int) -> bool:
        """Reserve a token for one rule; False when another rule already has it."""
        if (start, end) in self._claimed:
            return False
        self._claimed.add((start, end))
        return True

    def is_claimed(self, start: int, end: int) -> bool:
        return (start, end) in self._claimed

    def replace(self, start: int, end: int, new: str, rule: str) -> None:
        old = self.data[start:end].decode("utf-8", "replace")
        if old == new:
            return
        span = self.src.span_bytes(start, start)
        self._edits.append((start, end, len(self._edits), Edit(start, end, old, new, rule, span.line, span.col)))

    def insert(self, at: int, new: str, rule: str) -> None:
        self.replace(at, at, new, rule)

    def delete(self, start: int, end: int, rule: str) -> None:
        self.replace(start, end, "", rule)

    def __len__(self) -> int:
        return len(self._edits)

    def sorted(self) -> list[Edit]:
        # Insertions at an offset come before a replacement that starts there; ties keep their order.
        return [e for _, _, _, e in sorted(self._edits, key=lambda t: (t[0], t[1], t[2]))]

    def apply(self) -> str:
        out: list[bytes] = []
        pos = 0
        for e in self.sorted():
            if e.start < pos:
                raise AssertionError(f"overlapping edits at byte {e.start} ({e.rule}): translator bug")
            out.append(self.data[pos : e.start])
            out.append(e.new.encode("utf-8"))
            pos = e.end
        out.append(self.data[pos:])
        return to_text(b"".join(out))  # bytes that were not UTF-8 come back unchanged
