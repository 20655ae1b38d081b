"""A small C/C++ tokenizer for macro bodies (tree-sitter keeps `#define` values as raw text).

Only what renaming needs: identifiers with their byte offsets and neighbours; string and character literals,
comments, numbers and line continuations are skipped, so a name inside `"..."` or `/* */` is never touched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TOKEN = re.compile(
    rb"""
    (?P<ws>(?:[ \t\r\n\f\v]|\\\r?\n)+)
  | (?P<comment>//[^\n]*|/\*.*?(?:\*/|\Z))
  | (?P<raw>(?:u8|u|U|L)?R"(?P<delim>[^()\\ \t\n]{0,16})\((?:.|\n)*?\)(?P=delim)")
  | (?P<string>(?:u8|u|U|L)?"(?:\\.|[^"\\\n])*"?)
  | (?P<char>(?:u8|u|U|L)?'(?:\\.|[^'\\\n])*'?)
  | (?P<number>\.?[0-9](?:[eEpP][+-]|[0-9A-Za-z_.'])*)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<punct>\#\#|::|->|\.\.\.|<<=|>>=|[-+*/%&|^<>=!]=|&&|\|\||<<|>>|\+\+|--|.)
    """,
    re.X | re.S,
)


@dataclass(frozen=True)
class Token:
    kind: str  # ident, punct, string, char, number, raw
    text: str
    start: int  # byte offsets into the buffer given to tokenize()
    end: int


def tokenize(data: bytes) -> list[Token]:
    """Significant tokens (no whitespace, no comments)."""
    out: list[Token] = []
    pos = 0
    n = len(data)
    while pos < n:
        m = _TOKEN.match(data, pos)
        if m is None:  # cannot happen (the last alternative matches any byte) but never loop forever
            pos += 1
            continue
        kind = m.lastgroup or "punct"
        if kind == "delim":
            kind = "raw"
        if kind not in ("ws", "comment"):
            out.append(Token(kind, m.group(0).decode("utf-8", "replace"), m.start(), m.end()))
        pos = m.end()
    return out


@dataclass(frozen=True)
class IdentUse:
    token: Token
    member: bool  # after `.` or `->`: a field name, never renamed
    scope: str | None  # the identifier before `::` that qualifies it, if any
    qualifies: bool  # followed by `::` (a namespace or class name)
    pasted: bool  # next to `##` or after `#`: built at preprocessing time


def identifiers(data: bytes) -> list[IdentUse]:
    toks = tokenize(data)
    out: list[IdentUse] = []
    for i, t in enumerate(toks):
        if t.kind != "ident":
            continue
        prev = toks[i - 1].text if i > 0 else ""
        nxt = toks[i + 1].text if i + 1 < len(toks) else ""
        scope = None
        if prev == "::" and i >= 2 and toks[i - 2].kind == "ident":
            scope = toks[i - 2].text
        out.append(IdentUse(t, prev in (".", "->"), scope, nxt == "::", prev in ("#", "##") or nxt == "##"))
    return out
