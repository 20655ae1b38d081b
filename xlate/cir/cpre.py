"""Preprocessing of one function's (or expression's) source for the lifters: macro expansion (object- and function-like macros
of the file) and spellings tree-sitter-cuda misparses (cooperative-groups template types).

Expansion keeps every newline, so line numbers stay those of the file; each output byte maps back to the
original byte that produced it (`origin`), so diagnostics point at the source, not at the expansion.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from xlate.model import Macro

# Operators of several characters are one token (`+=` spelled apart as `+ =` would parse as `+`), and a line
# continuation inside a macro's value is whitespace.
TOKEN = re.compile(
    r"""(?P<ws>(?:\s|\\\r?\n)+)|(?P<comment>//[^\n]*|/\*.*?\*/)|(?P<str>"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*')"""
    r"""|(?P<num>\.?\d(?:[eEpP][+-]|[\w.])*)|(?P<id>[A-Za-z_]\w*)"""
    r"""|(?P<op>##|->\*?|\+\+|--|<<=|>>=|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^]=|::|\.\.\.)|(?P<punct>.)""",
    re.S,
)

# tree-sitter-cuda reads `cg::thread_block_tile<32> t = ...;` as a comparison: give those types plain names.
CG_TYPES = [
    (re.compile(r"\bcooperative_groups\s*::"), "cg::"),
    (re.compile(r"\bcg\s*::\s*thread_block_tile\s*<\s*(\d+)\s*(?:,[^>]*)?>"), r"__xl_tile_\1"),
    (re.compile(r"\bcg\s*::\s*thread_block\b"), "__xl_block"),
    (re.compile(r"\bcg\s*::\s*grid_group\b"), "__xl_grid"),
    (re.compile(r"\bcg\s*::\s*coalesced_group\b"), "__xl_coalesced"),
]
CG_ALIAS = re.compile(r"\bnamespace\s+(\w+)\s*=\s*(?:::)?\s*cooperative_groups\s*;")
# `using namespace cooperative_groups;`: its type names spelled bare get the same plain names
CG_USING = re.compile(r"\busing\s+namespace\s+(?:::)?\s*(?:cooperative_groups|cg)\s*;")
CG_BARE_TYPES = [(re.compile(r"(?<![\w:.>])" + rx.pattern.removeprefix(r"\bcg\s*::\s*")), repl)
                 for rx, repl in CG_TYPES[1:]]
LAUNCH_BOUNDS = re.compile(r"__launch_bounds__\s*\(")


def _pad(new: str, old: str) -> str:
    return new + " " * (len(old) - len(new)) if len(new) <= len(old) else new


class ExpansionError(Exception):
    def __init__(self, message: str, offset: int):
        super().__init__(message)
        self.offset = offset


@dataclass
class Expanded:
    text: str
    origin: list[int]  # origin[i]: offset in the original text of output character i (segment starts)
    starts: list[int]  # output offsets where a new origin segment starts

    def original(self, offset: int) -> int:
        i = bisect.bisect_right(self.starts, offset) - 1
        return self.origin[i] if i >= 0 else 0


def _tokens(text: str) -> list[tuple[str, str, int]]:
    return [(m.lastgroup or "punct", m.group(), m.start()) for m in TOKEN.finditer(text)]


def _macro_tokens(value: str) -> list[tuple[str, str]]:
    return [(k, t) for k, t, _ in _tokens(value) if k != "comment"]


def expand(text: str, macros: list[Macro], *, limit: int = 20000) -> Expanded:
    """Expand the macros in `text` (a function definition). Raises ExpansionError on a runaway expansion or a
    paste that makes no single token."""
    table = {m.name: m for m in macros}
    out: list[str] = []
    origin: list[int] = []
    starts: list[int] = []
    pos = 0

    def emit(tok: str, orig: int) -> None:
        nonlocal pos
        starts.append(pos)
        origin.append(orig)
        out.append(tok)
        pos += len(tok)

    toks = _tokens(text)
    budget = [limit]

    def expand_tokens(seq: list[tuple[str, str]], disabled: frozenset[str], orig: int) -> list[tuple[str, str]]:
        result: list[tuple[str, str]] = []
        i = 0
        while i < len(seq):
            kind, tok = seq[i]
            budget[0] -= 1
            if budget[0] < 0:
                raise ExpansionError("macro expansion does not terminate", orig)
            m = table.get(tok) if kind == "id" and tok not in disabled else None
            if m is None:
                result.append((kind, tok))
                i += 1
                continue
            if m.params is None:
                body = _substitute(_macro_tokens(m.value), [], [], [], orig)  # `a ## b` pastes here too
                result.extend(expand_tokens(body, disabled | {tok}, orig))
                i += 1
                continue
            j = i + 1
            while j < len(seq) and seq[j][0] in ("ws", "comment"):
                j += 1
            if j >= len(seq) or seq[j][1] != "(":
                result.append((kind, tok))  # a function-like macro name not followed by ( is not expanded
                i += 1
                continue
            args, j = _collect_args(seq, j, orig)
            if len(m.params) == 0 and args == [[]]:
                args = []
            if len(args) != len(m.params):
                raise ExpansionError(f"macro {tok} takes {len(m.params)} arguments, {len(args)} given", orig)
            body = _macro_tokens(m.value)
            expanded = [expand_tokens(a, disabled, orig) for a in args]
            subst = _substitute(body, m.params, args, expanded, orig)
            result.extend(expand_tokens(subst, disabled | {tok}, orig))
            i = j
        return result

    k = 0
    while k < len(toks):
        kind, tok, off = toks[k]
        if kind == "id" and tok in table:
            # gather the invocation (with its arguments) from the original token stream
            m = table[tok]
            end = k + 1
            if m.params is not None:
                j = k + 1
                while j < len(toks) and toks[j][0] in ("ws", "comment"):
                    j += 1
                if j < len(toks) and toks[j][1] == "(":
                    depth = 0
                    while j < len(toks):
                        if toks[j][1] == "(":
                            depth += 1
                        elif toks[j][1] == ")":
                            depth -= 1
                            if depth == 0:
                                break
                        j += 1
                    end = j + 1
            seq = [(t[0], t[1]) for t in toks[k:end]]
            emit(_spell(expand_tokens(seq, frozenset(), off)), off)
            newlines = sum(t[1].count("\n") for t in toks[k:end])
            if newlines:  # an invocation spread over lines keeps the line count
                emit("\n" * newlines, toks[end - 1][2])
            k = end
            continue
        emit(tok, off)
        k += 1
    return Expanded("".join(out), origin, starts)


Token = tuple[str, str]
PLACEMARKER: Token = ("placemarker", "")


def _substitute(body: list[Token], params: list[str], raw: list[list[Token]], expanded: list[list[Token]],
                orig: int) -> list[Token]:
    """A macro's replacement list with its arguments substituted as C does (C11 6.10.3.1-3): `#p` is the
    argument's spelling as a string literal, a parameter beside `##` is its argument as written (not expanded),
    any other parameter its expanded argument; then each `##` joins the tokens either side into one."""
    out: list[Token] = []
    paste = False  # the next piece joins the last token of `out`
    i = 0
    while i < len(body):
        kind, tok = body[i]
        nxt = _next_token(body, i + 1)
        if tok == "##":
            while out and out[-1][0] in ("ws", "comment"):
                out.pop()
            paste, i = True, (nxt if nxt is not None else len(body))
            continue
        if tok == "#" and params and nxt is not None and body[nxt][1] in params:
            piece: list[Token] = [("str", _stringise(raw[params.index(body[nxt][1])]))]
            i = nxt + 1
        elif kind == "id" and tok in params:
            k = params.index(tok)
            beside_paste = paste or (nxt is not None and body[nxt][1] == "##")
            piece = _trimmed(raw[k]) if beside_paste else list(expanded[k])
            if beside_paste and not piece:  # an empty argument pastes as nothing (C's placemarker)
                piece = [PLACEMARKER]
            i += 1
        else:
            piece = [(kind, tok)]
            i += 1
        if paste:
            piece = _trimmed(piece)
            if piece and out:
                joined = out.pop()[1] + piece[0][1]
                toks = _macro_tokens(joined) if joined else [PLACEMARKER]
                if len(toks) != 1:
                    raise ExpansionError(f"pasting makes '{joined}', not one token", orig)
                piece = toks + piece[1:]
            paste = False
        out.extend(piece)
    return [t for t in out if t is not PLACEMARKER]


def _next_token(seq: list[Token], i: int) -> int | None:
    """The index of the first token at or after `i` that is not whitespace, or None."""
    while i < len(seq) and seq[i][0] in ("ws", "comment"):
        i += 1
    return i if i < len(seq) else None


def _trimmed(seq: list[Token]) -> list[Token]:
    lo, hi = 0, len(seq)
    while lo < hi and seq[lo][0] in ("ws", "comment"):
        lo += 1
    while hi > lo and seq[hi - 1][0] in ("ws", "comment"):
        hi -= 1
    return list(seq[lo:hi])


def _stringise(seq: list[Token]) -> str:
    """`#x`: the argument's tokens as written, whitespace runs as one space, `"` and `\\` of its string and
    character literals escaped."""
    parts: list[str] = []
    for kind, tok in _trimmed(seq):
        if kind in ("ws", "comment"):
            if parts and parts[-1] != " ":
                parts.append(" ")
            continue
        parts.append(tok.replace("\\", "\\\\").replace('"', '\\"') if kind == "str" else tok)
    return '"' + "".join(parts) + '"'


WORD = re.compile(r"[\w.]")
OPERATOR = re.compile(r"[-+*/%<>=!&|^~:#?]")


def _spell(tokens: list[tuple[str, str]]) -> str:
    """An expansion as text: one space where the source had whitespace or where two tokens would otherwise read
    as one (`a` `b`, `-` `-1`), and one after it, so it never joins what follows."""
    out: list[str] = []
    space = False
    for kind, tok in tokens:
        if kind in ("ws", "comment"):
            space = bool(out)
            continue
        if out and (space or (WORD.match(out[-1][-1]) and WORD.match(tok[0]))
                    or (OPERATOR.match(out[-1][-1]) and OPERATOR.match(tok[0]) and _joins(out[-1], tok))):
            out.append(" ")
        out.append(tok)
        space = False
    return "".join(out) + " "


def _joins(a: str, b: str) -> bool:
    """Whether operator tokens `a` and `b` written together would read as other tokens (`-` `-1`, `<<` `<`)."""
    return [t for _, t, _ in _tokens(a + b)] != [a, b]


def _collect_args(seq: list[tuple[str, str]], j: int, orig: int) -> tuple[list[list[tuple[str, str]]], int]:
    depth = 0
    args: list[list[tuple[str, str]]] = [[]]
    while j < len(seq):
        kind, tok = seq[j]
        if tok == "(":
            depth += 1
            if depth == 1:
                j += 1
                continue
        elif tok == ")":
            depth -= 1
            if depth == 0:
                return [[t for t in a if t[0] not in ("comment",)] for a in args], j + 1
        elif tok == "," and depth == 1:
            args.append([])
            j += 1
            continue
        args[-1].append((kind, tok))
        j += 1
    raise ExpansionError("unterminated macro invocation", orig)


def normalise(text: str, scope: str = "") -> str:
    """Length-preserving spelling fixes applied before expansion (cooperative-groups namespace aliases and types,
    __launch_bounds__). `scope`: the text around `text` (the file of a function), whose namespace aliases and
    `using namespace cooperative_groups;` hold in `text` too."""
    file_aliases = [m.group(1) for m in CG_ALIAS.finditer(scope)]
    for m in list(CG_ALIAS.finditer(text)):
        text = text[: m.start()] + _pad("", m.group(0)) + text[m.end() :]  # the declaration says nothing more
        file_aliases.append(m.group(1))
    for alias in dict.fromkeys(file_aliases):
        if alias != "cg" and len(alias) >= 2:
            text = re.sub(rf"\b{alias}\s*::", lambda a: _pad("cg::", a.group(0)), text)
    for rx, repl in CG_TYPES + (CG_BARE_TYPES if CG_USING.search(text) or CG_USING.search(scope) else []):
        text = rx.sub(lambda m, r=repl: _pad(m.expand(r), m.group(0)), text)
    m = LAUNCH_BOUNDS.search(text)
    while m:
        depth, j = 0, m.end() - 1
        while j < len(text):
            if text[j] == "(":
                depth += 1
            elif text[j] == ")":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        blank = re.sub(r"[^\n]", " ", text[m.start() : j + 1])
        text = text[: m.start()] + blank + text[j + 1 :]
        m = LAUNCH_BOUNDS.search(text, m.start() + len(blank))
    return text
