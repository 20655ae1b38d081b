"""Offset-preserving rewrites that get the tree-sitter CUDA grammar through real code (grammars/cuda/repairs.yaml).

Three layers, each keeping every byte offset and line number (bytes become spaces or underscores):
  * the *view* (what the model reads): attribute forms (`__align__(8)`, `__attribute__((...))`) and uses of
    the project's qualifier macros (`#define HOST_DEVICE __host__ __device__`) blanked, each recorded with its
    offset so a function still gets the qualifiers that stood before it;
  * global masks of the parse buffer: `extern "C" {` guards and other conditional groups are handled by
    `flatten`, below, only where the tree shows an error;
  * repairs applied only inside ERROR nodes (valid code is never touched): a macro called with a type, `new T*[n]`,
    execution spaces on lambdas, conditional groups that split a statement (`#if A if (x) { #else if (y) { #endif`)
    flattened to their first branch.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from xlate.resources import grammars_dir, load_yaml

DIRECTIVE = re.compile(rb"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b", re.M)
DEFINE = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(?![\w(])[ \t]*((?:[^\n\\]|\\\n|\\.)*)", re.M)
FUNCTION_DEFINE = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)\([^)\n]*\)[ \t]*((?:[^\n\\]|\\\n|\\.)*)", re.M)
WORD = re.compile(r"[A-Za-z_]\w*")


@dataclass(frozen=True)
class Repair:
    name: str
    why: str
    regex: re.Pattern[bytes]
    groups: tuple[int, ...]
    fill: bytes


@functools.cache
def _rules() -> dict:
    return load_yaml(grammars_dir() / "cuda" / "repairs.yaml")


@functools.cache
def repairs() -> tuple[Repair, ...]:
    out = []
    for r in _rules()["repairs"]:
        groups = r["group"] if isinstance(r["group"], list) else [r["group"]]
        out.append(Repair(r["name"], r["why"], re.compile(r["regex"].encode()), tuple(groups), r["fill"].encode()))
    return tuple(out)


@functools.cache
def qualifier_words() -> frozenset[str]:
    return frozenset(_rules()["qualifier_words"])


@functools.cache
def _blank_calls() -> re.Pattern[bytes]:
    names = b"|".join(re.escape(n.encode()) for n in _rules()["blank_calls"])
    return re.compile(rb"\b(?:" + names + rb")\s*\(")


def fill(buf: bytearray, start: int, end: int, byte: bytes = b" ") -> None:
    """Overwrite [start, end) with `byte`, keeping newlines (line numbers stay)."""
    for i in range(start, end):
        if buf[i] not in (0x0A, 0x0D):
            buf[i] = byte[0]


def balanced_end(data: bytes | bytearray, open_at: int) -> int:
    """The offset just past the parenthesis that closes the one at `open_at` (or len(data))."""
    depth = 0
    i = open_at
    n = len(data)
    while i < n:
        c = data[i]
        if c == 0x28:
            depth += 1
        elif c == 0x29:
            depth -= 1
            if depth == 0:
                return i + 1
        elif c in (0x22, 0x27):  # skip string and character literals
            q = c
            i += 1
            while i < n and data[i] != q:
                i += 2 if data[i] == 0x5C else 1
        i += 1
    return n


# -- the project's qualifier macros ----------------------------------------------------------------------------


DEVICE_WORDS = frozenset({"__device__", "__global__"})


def qualifier_macros(*texts: bytes) -> dict[str, tuple[str, ...]]:
    """Object-like macros whose expansion is only qualifiers and attributes, or nothing: `HOST_DEVICE ->
    (__host__, __device__)`, `ALIGN16 -> ()` for `__attribute__((aligned(16)))`. Blanking the use of an empty
    macro is what the preprocessor does; a definition with words wins over an empty one of the same name, and
    one naming the device over one that does not (the branches of a compiler test: CUDA takes the device's)."""
    words = qualifier_words()
    out: dict[str, tuple[str, ...]] = {}
    for text in texts:
        for m in DEFINE.finditer(text):
            body = _strip_comments(m.group(2).replace(b"\\\n", b" ")).strip()
            rest = bytearray(body)
            for c in _blank_calls().finditer(body):
                fill(rest, c.start(), balanced_end(body, c.end() - 1))
            body_text = rest.decode("utf-8", "replace")
            if re.sub(r"[A-Za-z_]\w*|\s", "", body_text):
                continue  # punctuation left: an expression or a declaration, not qualifiers
            toks = WORD.findall(body_text)
            if all(t in words for t in toks):
                name = m.group(1).decode()
                if name in out and DEVICE_WORDS & set(out[name]) and not DEVICE_WORDS & set(toks):
                    continue  # `#if defined(__CUDACC__) / #define ESS __device__ / #else / #define ESS inline`
                if toks or name not in out:  # `#ifndef P / #define P / #endif` beside a real definition of P
                    out[name] = tuple(toks)
    return out


def _strip_comments(b: bytes) -> bytes:
    b = re.sub(rb"/\*.*?\*/", b" ", b, flags=re.S)
    return re.sub(rb"//.*", b"", b)


# -- the view -----------------------------------------------------------------------------------------------------


def blank_view(data: bytes, macros: dict[str, tuple[str, ...]]) -> tuple[bytes, list[tuple[int, str]]]:
    """Attribute forms and uses of qualifier macros blanked; (offset, word) of each qualifier they stood for."""
    found: list[tuple[int, str]] = []
    if not (b"__" in data or macros):
        return data, found
    buf = bytearray(data)
    for m in _blank_calls().finditer(data):
        if _in_directive(data, m.start()):
            continue
        end = balanced_end(data, m.end() - 1)
        fill(buf, m.start(), end)
    if macros:
        names = sorted(macros, key=len, reverse=True)
        rx = re.compile(rb"(?<![\w#])(" + b"|".join(re.escape(n.encode()) for n in names) + rb")(?!\w)")
        for m in rx.finditer(data):
            if _in_directive(data, m.start()) or buf[m.start()] == 0x20:
                continue
            fill(buf, m.start(), m.end())
            for word in macros[m.group(1).decode()]:
                found.append((m.start(), word))
    return bytes(buf), found


def _in_directive(data: bytes, pos: int) -> bool:
    """`pos` is on a preprocessor line (the #define that introduces a macro keeps its text)."""
    line_start = data.rfind(b"\n", 0, pos) + 1
    return data[line_start:pos].lstrip()[:1] == b"#"


# -- repairs inside ERROR nodes -------------------------------------------------------------------------------


@dataclass
class Group:
    """One #if ... #endif group: the offsets of its directive lines (the last is the #endif)."""

    directives: list[tuple[int, int]]  # (line start, line end) per directive

    @property
    def start(self) -> int:
        return self.directives[0][0]

    @property
    def end(self) -> int:
        return self.directives[-1][1]

    def branches(self) -> list[tuple[int, int]]:
        return [(a[1], b[0]) for a, b in zip(self.directives, self.directives[1:])]


def conditional_groups(data: bytes) -> list[Group]:
    """Every complete #if/#ifdef/#ifndef ... #endif group, inner groups before the groups that hold them."""
    groups: list[Group] = []
    stack: list[list[tuple[int, int]]] = []
    for m in DIRECTIVE.finditer(data):
        if _in_block_comment(data, m.start()):
            continue
        line_end = _logical_line_end(data, m.end())
        kind = m.group(1)
        where = (m.start(), line_end)
        if kind in (b"if", b"ifdef", b"ifndef"):
            stack.append([where])
        elif not stack:
            continue
        elif kind == b"endif":
            d = stack.pop()
            d.append(where)
            groups.append(Group(d))
        else:
            stack[-1].append(where)
    return groups


def _logical_line_end(data: bytes, pos: int) -> int:
    while True:
        nl = data.find(b"\n", pos)
        if nl < 0:
            return len(data)
        if (nl > 0 and data[nl - 1 : nl] == b"\\") or (nl > 1 and data[nl - 2 : nl] == b"\\\r"):
            pos = nl + 1
            continue
        return nl


def _in_block_comment(data: bytes, pos: int) -> bool:
    opened = data.rfind(b"/*", 0, pos)
    return opened >= 0 and data.rfind(b"*/", opened, pos) < 0


def unbalanced(data: bytes, group: Group) -> bool:
    """Some branch of `group` opens or closes more braces or parentheses than it closes or opens: the
    conditional splits a statement or a declaration (`#if A  if (x) {  #else  if (y) {  #endif`)."""
    for a, b in group.branches():
        text = code_only(data[a:b])
        if text.count(b"{") != text.count(b"}") or text.count(b"(") != text.count(b")"):
            return True
    return False


def code_only(b: bytes) -> bytes:
    """`b` without comments, string and character literals (for counting brackets)."""
    return _strip_literals(_strip_comments(b))


def brace_debt(b: bytes) -> tuple[int, int]:
    """(closing braces without an opening one, opening braces left open) in `b`."""
    depth = low = 0
    for c in code_only(b):
        if c == 0x7B:
            depth += 1
        elif c == 0x7D:
            depth -= 1
            low = min(low, depth)
    return -low, depth - low


def _strip_literals(b: bytes) -> bytes:
    return re.sub(rb'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'', b"", b)


def flatten(buf: bytearray, group: Group) -> list[tuple[int, int]]:
    """Keep the first branch of `group` as plain code: its directive lines and every other branch masked.
    Returns the masked branches (their code is translated token by token)."""
    for a, b in group.directives:
        fill(buf, a, b)
    masked = group.branches()[1:]
    for a, b in masked:
        fill(buf, a, b)
    return masked


def repair_ranges(buf: bytearray, ranges: list[tuple[int, int]],
                  header_macros: frozenset[str] = frozenset()) -> list[tuple[int, int, str]]:
    """Apply the repair rules inside `ranges` (ERROR nodes, widened to whole lines); what each changed."""
    done: list[tuple[int, int, str]] = []
    for lo, hi in ranges:
        lo = buf.rfind(b"\n", 0, lo) + 1
        nl = buf.find(b"\n", hi)
        hi = len(buf) if nl < 0 else nl
        for rule in repairs():
            for m in rule.regex.finditer(buf, lo, hi):
                for g in rule.groups:
                    s, e = m.span(g)
                    if s < e and buf[s:e].strip(b" _\t\r\n"):
                        fill(buf, s, e, rule.fill)
                        done.append((s, e, rule.name))
        for name in header_macros:
            for m in re.finditer(rb"(?<![\w.>])" + re.escape(name.encode()) + rb"\s*\(", buf[lo:hi]):
                s = lo + m.start()
                e = balanced_end(buf, lo + m.end() - 1)
                fill(buf, s, e)
                done.append((s, e, "statement-header-macro"))
    return done


def statement_macros(*texts: bytes) -> frozenset[str]:
    """Function-like macros that expand to a statement header (`#define LOOP(i, n) for (int i = 0; i < n; ++i)`):
    a use followed by a block reads as a call followed by a block to the grammar."""
    out = set()
    for text in texts:
        for m in FUNCTION_DEFINE.finditer(text):
            body = _strip_comments(m.group(2).replace(b"\\\n", b" ")).strip()
            if re.match(rb"(?:for|while|if|switch)\s*\(", body) and body.endswith(b")"):
                out.add(m.group(1).decode())
    return frozenset(out)
