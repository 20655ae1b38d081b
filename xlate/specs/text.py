"""Spec text helpers shared by the spec language and the record types (a module of its own so that neither
imports the other)."""

from __future__ import annotations


def split_top(text: str, sep: str = ",") -> list[str]:
    """Split on `sep` outside brackets and parentheses."""
    out, depth, cur = [], 0, []
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == sep and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return [x for x in out if x]
