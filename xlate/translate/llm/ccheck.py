"""The preprocessor-level allow-list a model-written C/C++ port (HIP, CUDA, AscendC) must pass before any compiler
sees it: the compiler is what reads files, so what it may be asked to read is checked first.

The text is lexed the way the compiler's first translation phases see it: trigraphs and digraph directives are
refused, backslash-newlines (with trailing blanks, as GCC and clang accept them) are spliced, comments become
one space, and literals (raw strings refused) are skipped whole, so a directive hidden by a continuation line
or a comment is still found. Then:
  - #include only of a literal header name, either one of the toolchain's headers (xlate/data/llm/allowlist.yaml)
    or one the source itself includes; never an absolute path, `..`, a backslash, or a name built by a macro;
  - #include_next, #import, #embed, #line, GCC line markers and any other directive not listed are refused;
    #pragma only with an allowed first word (unroll, once, ...);
  - __has_include / __has_embed probes, _Pragma, __FILE__ and friends, and ## token pasting (which could build
    any of those, or `asm`, out of harmless pieces) are refused;
  - every asm statement has a literal template whose instructions belong to allowed families, so assembler
    directives (.include, .incbin) never reach an assembler.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from xlate.resources import data

TRIGRAPH = re.compile(r"\?\?[=/'()!<>\-]")
SPLICE = re.compile(r"\\[ \t\f\v]*\n")
# control and invisible format characters (bidi overrides: "Trojan Source") anywhere; other non-ASCII only in
# comments and literals, where the compiler gives it no meaning
CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")
HEADER_NAME = re.compile(r"^(\./)?[A-Za-z0-9_][A-Za-z0-9_.+\-/]*$")
ASM_KEYWORDS = {"asm", "__asm", "__asm__"}
ASM_QUALIFIERS = {"volatile", "__volatile", "__volatile__", "goto", "inline", "__inline", "__inline__"}
RAW_PREFIXES = {"R", "LR", "uR", "UR", "u8R"}
STRING_PREFIXES = {"L", "u", "U", "u8"}


@functools.cache
def rules() -> dict[str, Any]:
    return data("llm/allowlist.yaml")["c"]


@dataclass
class Token:
    kind: str  # ident, number, string, char, punct, header
    text: str
    line: int  # 1-based line of the original text
    bol: bool  # first token of its logical line
    value: str = ""  # decoded contents of a string literal


class LexError(Exception):
    def __init__(self, line: int, message: str):
        super().__init__(message)
        self.line = line
        self.message = message


def _splice(text: str) -> tuple[str, list[int]]:
    """Text with continuation lines joined, and for each character of it the original line number."""
    out: list[str] = []
    lines: list[int] = []
    line = 1
    pos = 0
    for m in SPLICE.finditer(text):
        chunk = text[pos : m.start()]
        for ch in chunk:
            out.append(ch)
            lines.append(line)
            if ch == "\n":
                line += 1
        line += 1  # the newline spliced away
        pos = m.end()
    for ch in text[pos:]:
        out.append(ch)
        lines.append(line)
        if ch == "\n":
            line += 1
    return "".join(out), lines


ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v", "\\": "\\", "'": "'",
           '"': '"', "?": "?", "0": "\0"}


def _decode(body: str, line: int) -> str:
    out = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1 : i + 2]
        if nxt == "x":
            m = re.match(r"[0-9A-Fa-f]+", body[i + 2 :])
            if not m:
                raise LexError(line, "malformed \\x escape")
            out.append(chr(int(m.group(), 16) & 0xFF))
            i += 2 + len(m.group())
        elif nxt.isdigit():
            m = re.match(r"[0-7]{1,3}", body[i + 1 :])
            if not m:
                raise LexError(line, "malformed octal escape")
            out.append(chr(int(m.group(), 8)))
            i += 1 + len(m.group())
        elif nxt in ESCAPES:
            out.append(ESCAPES[nxt])
            i += 2
        else:
            raise LexError(line, f"escape '\\{nxt}' is not allowed in a port")
    return "".join(out)


def lex(text: str) -> list[Token]:
    """Tokens of `text` after phases 1-3 (see module doc); raises LexError on anything refused outright."""
    text = text.replace("\r\n", "\n")
    bad = CONTROL.search(text) or re.search("\r", text)
    if bad:
        line = text.count("\n", 0, bad.start()) + 1
        raise LexError(line, f"control or format character U+{ord(bad.group()):04X} is not allowed")
    tri = TRIGRAPH.search(text)
    if tri:
        raise LexError(text.count("\n", 0, tri.start()) + 1, f"trigraph '{tri.group()}' is not allowed")
    s, lines = _splice(text)
    toks: list[Token] = []
    i, n = 0, len(s)
    bol = True
    directive = False  # inside a directive line
    include_next = False  # the next token is a header name (after #include)
    while i < n:
        ch = s[i]
        line = lines[i]
        if ch == "\n":
            bol, directive, include_next = True, False, False
            i += 1
            continue
        if ch in " \t\f\v":
            i += 1
            continue
        if s.startswith("//", i):
            j = s.find("\n", i)
            i = n if j < 0 else j
            continue
        if s.startswith("/*", i):
            j = s.find("*/", i + 2)
            if j < 0:
                raise LexError(line, "unterminated comment")
            if "\n" in s[i:j] and directive:
                directive = False  # a comment cannot continue a directive past its line in our reading
                raise LexError(line, "a block comment spanning lines inside a directive is not allowed")
            i = j + 2
            continue
        if include_next and ch == "<":
            j = s.find(">", i)
            k = s.find("\n", i)
            if j < 0 or (0 <= k < j):
                raise LexError(line, "unterminated <header> name")
            toks.append(Token("header", s[i + 1 : j], line, bol, "<"))
            include_next = False
            bol = False
            i = j + 1
            continue
        if not ch.isascii():
            raise LexError(line, f"character U+{ord(ch):04X} outside a comment or literal is not allowed; use ASCII")
        if ch.isalpha() or ch == "_" or ch == "$":
            j = i
            while j < n and s[j].isascii() and (s[j].isalnum() or s[j] in "_$"):
                j += 1
            word = s[i:j]
            if j < n and s[j] in "\"'" and (word in RAW_PREFIXES or word in STRING_PREFIXES):
                if word in RAW_PREFIXES and s[j] == '"':
                    raise LexError(line, "raw string literals are not allowed in a port")
                i = j  # the prefix belongs to the literal that follows
                continue
            toks.append(Token("ident", word, line, bol))
            if directive and len(toks) >= 2 and toks[-2].text == "#" and toks[-2].bol:
                include_next = word in ("include", "include_next", "import", "embed")
            else:
                include_next = False
            bol = False
            i = j
            continue
        if ch.isdigit() or (ch == "." and i + 1 < n and s[i + 1].isdigit()):
            j = i + 1
            while j < n and s[j].isascii() and (s[j].isalnum() or s[j] in "._" or (s[j] in "+-" and s[j - 1] in "eEpP")
                             or (s[j] == "'" and j + 1 < n and s[j + 1].isalnum())):  # 1'000 (C++14)
                j += 1
            toks.append(Token("number", s[i:j], line, bol))
            bol, include_next = False, False
            i = j
            continue
        if ch in "\"'":
            j = i + 1
            while j < n and s[j] != ch:
                if s[j] == "\n":
                    raise LexError(line, "unterminated literal")
                j += 2 if s[j] == "\\" else 1
            if j >= n:
                raise LexError(line, "unterminated literal")
            body = s[i + 1 : j]
            kind = "string" if ch == '"' else "char"
            if include_next and kind == "string":
                if "\\" in body:
                    raise LexError(line, "a backslash in a header name is not allowed")
                toks.append(Token("header", body, line, bol, '"'))
            else:
                toks.append(Token(kind, s[i : j + 1], line, bol, _decode(body, line)))
            bol, include_next = False, False
            i = j + 1
            continue
        if s.startswith("%:", i):
            raise LexError(line, "the digraph '%:' (a '#') is not allowed")
        if ch == "\\":
            raise LexError(line, "a stray backslash (universal character name or continuation) is not allowed")
        punct = "##" if s.startswith("##", i) else ch
        if punct == "#" and bol:
            directive = True
        toks.append(Token("punct", punct, line, bol))
        bol, include_next = False, False
        i += len(punct)
    return toks


def include_names(text: str) -> set[tuple[str, str]]:
    """(delimiter, name) of each #include of `text`, leniently (for the source, which is not checked here)."""
    try:
        toks = lex(text)
    except LexError:
        toks = []
    out = {(t.value, t.text) for t in toks if t.kind == "header"}
    if not toks:  # a source our lexer refuses still names its headers
        out = {(m.group(1), m.group(2)) for m in
               re.finditer(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"\n]+)[>"]', text, re.M)}
    return out


def _lines(toks: list[Token], start: int) -> tuple[list[Token], int]:
    """The tokens of the logical line that starts at toks[start], and the index after it."""
    j = start + 1
    while j < len(toks) and not toks[j].bol:
        j += 1
    return toks[start:j], j


def _spelled(t: Token) -> str:
    return f"<{t.text}>" if t.value == "<" else f'"{t.text}"'


def _header_ok(t: Token, allowed_source: set[tuple[str, str]]) -> str | None:
    name = t.text
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        return f"#include of an absolute path ({_spelled(t)}) is not allowed"
    if ".." in name.split("/") or "//" in name:
        return f"#include of '{name}' is not allowed (no '..' or empty path parts)"
    if not HEADER_NAME.match(name):
        return f"#include of '{name}' is not allowed (header names are letters, digits, _ . + - /)"
    if name in rules()["headers"] or any(name == n for _, n in allowed_source):
        return None
    return (f"#include {_spelled(t)} is not allowed: only the toolchain's "
            "headers (hip/hip_runtime.h, cuda_runtime.h, cuda_fp16.h, <cmath>, <cstdint>...) and the headers the "
            "source itself includes")


def _asm_template_problems(template: str) -> list[str]:
    r = rules()
    out = []
    for stmt in re.split(r"[;\n]", template):
        s = stmt.strip().lstrip("{}").strip().rstrip("{}").strip()
        if not s:
            continue
        s = re.sub(r"^[A-Za-z_$][\w$]*:\s*", "", s)  # a label
        s = re.sub(r"^@!?%?[\w$]+\s+", "", s)  # a predicate guard
        if not s:
            continue
        if s.startswith("."):
            word = re.match(r"\.[A-Za-z_]\w*", s)
            if not word or word.group() not in r["asm_directives"]:
                out.append(f"assembler directive '{(word.group() if word else s[:12])}' in an asm template is not allowed")
            continue
        m = re.match(r"[A-Za-z_][\w]*", s)
        base = m.group().split(".")[0] if m else ""
        if not base or not (base in r["asm_mnemonics"] or base.startswith(tuple(r["asm_prefixes"]))):
            out.append(f"asm instruction '{s.split()[0][:24]}' is not in the allowed set")
    return out


def check_c(text: str, source_includes: set[tuple[str, str]] | None = None) -> list[str]:
    """Violations of the C/C++ allow-list, each 'line N: message'."""
    try:
        toks = lex(text)
    except LexError as exc:
        return [f"line {exc.line}: {exc.message}"]
    allowed_src = source_includes or set()
    problems: list[str] = []

    def bad(line: int, msg: str) -> None:
        item = f"line {line}: {msg}"
        if item not in problems:
            problems.append(item)

    i = 0
    while i < len(toks):
        t = toks[i]
        if t.kind == "punct" and t.text == "#" and t.bol:
            line_toks, nxt = _lines(toks, i)
            _directive(line_toks, allowed_src, bad)
            _tokens(line_toks[1:], bad, in_directive=True)
            i = nxt
            continue
        line_toks, nxt = _lines(toks, i)
        _tokens(line_toks, bad, in_directive=False, rest=toks[i:])
        i = nxt
    return problems


def _directive(line_toks: list[Token], allowed_src: set[tuple[str, str]], bad: Any) -> None:
    hash_tok = line_toks[0]
    if len(line_toks) == 1:
        return  # the null directive
    name = line_toks[1]
    if name.kind == "number":
        bad(hash_tok.line, "line markers ('# N \"file\"') are not allowed")
        return
    if name.kind != "ident":
        bad(hash_tok.line, f"directive '#{name.text}' is not allowed")
        return
    r = rules()
    if name.text == "include":
        rest = line_toks[2:]
        if not rest or rest[0].kind != "header":
            bad(hash_tok.line, "#include must name a header literally (<name> or \"name\"), not through a macro")
            return
        if len(rest) > 1:
            bad(hash_tok.line, "text after the header name of an #include is not allowed")
        why = _header_ok(rest[0], allowed_src)
        if why:
            bad(hash_tok.line, why)
        return
    if name.text == "pragma":
        word = line_toks[2].text if len(line_toks) > 2 else ""
        if word not in r["pragmas"]:
            bad(hash_tok.line, f"#pragma {word} is not allowed (only {', '.join('#pragma ' + p for p in r['pragmas'])})")
        return
    if name.text not in r["directives"]:
        bad(hash_tok.line, f"directive '#{name.text}' is not allowed in a port")


def _tokens(line_toks: list[Token], bad: Any, in_directive: bool, rest: list[Token] | None = None) -> None:
    r = rules()
    forbidden = set(r["forbidden_identifiers"])
    for k, t in enumerate(line_toks):
        if t.kind == "punct" and t.text == "##":
            bad(t.line, "token pasting (##) is not allowed in a port: write the names out")
        if t.kind != "ident":
            continue
        if t.text in forbidden:
            bad(t.line, f"'{t.text}' is not allowed in a port")
        nxt = line_toks[k + 1] if k + 1 < len(line_toks) else None
        if t.text in ("import", "module") and nxt is not None and (nxt.kind == "string" or nxt.text == "<"):
            bad(t.line, f"C++20 '{t.text}' of a header unit is not allowed in a port")
        if t.text in ASM_KEYWORDS:
            seq = line_toks[k + 1 :] if in_directive else (rest or line_toks)[_index(rest or line_toks, t) + 1 :]
            for why in _asm_statement(seq):
                bad(t.line, why)


def _index(toks: list[Token], t: Token) -> int:
    for k, x in enumerate(toks):
        if x is t:
            return k
    return len(toks)


def _asm_statement(seq: list[Token]) -> list[str]:
    """An asm statement's template must be literal strings of allowed instructions."""
    j = 0
    while j < len(seq) and seq[j].kind == "ident" and seq[j].text in ASM_QUALIFIERS:
        j += 1
    if j >= len(seq) or seq[j].text != "(":
        return ["asm must be followed by ( and a literal template"]
    j += 1
    parts = []
    while j < len(seq) and seq[j].kind == "string":
        parts.append(seq[j].value)
        j += 1
    if not parts or j >= len(seq) or seq[j].text not in (")", ":"):
        # a macro among the pieces could add any text to the template
        return ["an asm template must be string literals only (no macro or expression in it)"]
    return _asm_template_problems("".join(parts))
