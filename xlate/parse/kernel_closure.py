"""What one kernel needs of a device slice: its closure, the rest of the file's declarations blanked.

nvcc compiles a whole file, and so does NVRTC; but a file whose other kernels use what NVRTC lacks (a
`thrust::default_random_engine` in a kernel the gate does not check, a host-only struct of `std::string`s that
a host function the slice blanked used) would keep the kernel under test from compiling at all. When the
whole slice fails, the CUDA backend compiles the kernel's closure instead: the namespace-scope declarations it
names, directly or through other kept declarations or macros, stay; the others are blanked with spaces
(newlines, preprocessor lines and `#line` directives kept, so messages still point at the user's lines).

Kept whatever their names: declarations that declare no name this reading can see (`using namespace`,
`static_assert`), operators (found by argument-dependent lookup, never named), variables in a device memory
space (the gate may fill a `__constant__` by name), and declarations that invoke a function-like macro of the
file at namespace scope (what it declares cannot be read without expanding it).
"""

from __future__ import annotations

import re

_HIDDEN = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'', re.S)
_DIRECTIVE = re.compile(r"^[ \t]*#(?:[^\n\\]|\\.)*", re.M | re.S)
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(\()?((?:[^\n\\]|\\.)*)", re.M | re.S)
_IDENT = re.compile(r"\b[A-Za-z_]\w*\b")
_SCOPE_OPEN = re.compile(r"(?:\b(?:inline\s+)?namespace(?:\s+[\w:]+)?|\bextern\s*\"C(?:\+\+)?\")\s*$")
_TYPE_HEAD = re.compile(r"\b(?:struct|class|union|enum)\b")
_TYPE_NAME = re.compile(r"\b(?:struct|class|union|enum(?:\s+class|\s+struct)?)\s+(?:__attribute__\s*\(\([^)]*\)\)\s*)?"
                        r"(?:alignas\s*\([^)]*\)\s*|__align__\s*\([^)]*\)\s*)?([A-Za-z_]\w*)")
_CALLED = re.compile(r"\b([A-Za-z_]\w*)\s*(?:<[^<>;{}()]*>\s*)?\(")
_DEVICE_VARIABLE = re.compile(r"\b(?:__constant__|__device__|__managed__)\b")
_FUNCTION_WORDS = frozenset([
    "__launch_bounds__", "__attribute__", "alignas", "__align__", "decltype", "noexcept", "sizeof", "alignof",
    "__declspec", "__global__", "__device__", "__host__", "__forceinline__", "__noinline__", "operator", "if", "for",
    "while", "switch", "return", "static_assert", "throw"])
_KEYWORDS = frozenset([
    "auto", "bool", "char", "const", "constexpr", "double", "enum", "extern", "float", "inline", "int", "long",
    "short", "signed", "static", "struct", "class", "union", "typedef", "typename", "template", "unsigned", "void",
    "volatile", "using", "namespace", "public", "private", "protected", "virtual", "friend", "explicit", "mutable",
    "register", "restrict", "__restrict__", "size_t", "std", "new", "delete", "this"])


def code_view(text: str) -> str:
    """`text` with comments, literals and preprocessor lines blanked (newlines and offsets kept)."""

    def blank(m: re.Match[str]) -> str:
        return re.sub(r"[^\n]", " ", m.group(0))

    return _DIRECTIVE.sub(blank, _HIDDEN.sub(blank, text))


def brace_end(code: str, i: int) -> int:
    """Just past the brace that closes the one at `i`; len(code) if it never closes."""
    depth = 0
    for j in range(i, len(code)):
        c = code[j]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return j + 1
    return len(code)


ATTRIBUTE = re.compile(r"\b(?:__align__|alignas|__attribute__|__declspec)\s*\((?:[^()]|\([^()]*\))*\)")


def is_type_head(head: str) -> bool:
    """Does a declaration's text before its `{` open a class, struct, union or enum (`struct __align__(16) V`),
    rather than a function (`struct V make()`, `template <class T> void f(T)`)?"""
    plain = ATTRIBUTE.sub(" ", head)
    return bool(_TYPE_HEAD.search(plain)) and not top_depth_has(plain, "(")


def top_depth_has(head: str, char: str) -> bool:
    depth = 0
    for c in head:
        if c == char and depth == 0:
            return True
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
    return False


def declarations(text: str, code: str | None = None) -> list[tuple[int, int]]:
    """The namespace-scope declarations of `text` as (start, end) offsets: a function definition ends at its
    closing brace, any other declaration at its `;` (a class, an aggregate initializer). Namespace and
    `extern "C"` blocks are gone into, not taken whole."""
    code = code_view(text) if code is None else code
    out: list[tuple[int, int]] = []
    start = 0
    i = 0
    n = len(code)
    while i < n:
        c = code[i]
        if c == ";":
            out.append((start, i + 1))
            start = i + 1
        elif c == "}":  # a namespace closes
            if code[start:i].strip():
                out.append((start, i))
            start = i + 1
        elif c == "{":
            head = code[start:i]
            if _SCOPE_OPEN.search(text[max(start, i - 200):i]):
                start = i + 1
                i += 1
                continue
            end = brace_end(code, i)
            if top_depth_has(head, "=") or is_type_head(head):
                semi = code.find(";", end)  # `struct S {...} s;`, `int t[] = {...};`
                between = code[end:semi] if semi >= 0 else ""
                end = semi + 1 if semi >= 0 and "{" not in between and "}" not in between else end
            out.append((start, end))
            start = end
            i = end
            continue
        i += 1
    if code[start:].strip():
        out.append((start, n))
    return [(s, e) for s, e in out if code[s:e].strip(" \t\r\n;")]


def _declared_names(decl: str) -> set[str]:
    """The names a declaration's code (`decl`, already a code view) declares, generously: what the head names
    before a parameter list, a class or enum name, enumerators, and the names before `=`, `;`, `,`, `[`."""
    brace = decl.find("{")
    head = decl if brace < 0 else decl[:brace]
    names = set(_TYPE_NAME.findall(head)) | {m.group(1) for m in _CALLED.finditer(head)}
    if re.search(r"\benum\b", head) and brace >= 0:
        names |= set(_IDENT.findall(decl[brace:]))  # enumerators and their values
    tail = decl if brace < 0 else decl[decl.rfind("}") + 1:]  # `} name;`, a plain declaration
    flat = re.sub(r"\([^()]*\)|<[^<>;{}]*>", " ", head if brace >= 0 and not tail.strip(" ;\n") else tail)
    names |= set(re.findall(r"\b([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)*(?:=|;|,|$)", flat))
    m = re.search(r"\busing\s+([A-Za-z_]\w*)\s*=", decl)
    if m:
        names.add(m.group(1))
    if brace < 0 and "(" in head:  # a prototype: the name before its parameter list
        names |= {m.group(1) for m in _CALLED.finditer(head)}
    return names - _FUNCTION_WORDS - _KEYWORDS


def kernel_closure(text: str, kernel: str) -> str | None:
    """`text` with the namespace-scope declarations that `kernel` does not need blanked; None when the kernel's
    definition is not found, or nothing would be left out."""
    code = code_view(text)
    decls = declarations(text, code)
    macros: dict[str, set[str]] = {}
    function_macros: set[str] = set()
    for m in _DEFINE.finditer(text):
        macros.setdefault(m.group(1), set()).update(_IDENT.findall(m.group(3)))
        if m.group(2):
            function_macros.add(m.group(1))
    names = [_declared_names(code[s:e]) for s, e in decls]
    idents = [set(_IDENT.findall(code[s:e])) for s, e in decls]
    keep = [False] * len(decls)
    found = False
    for k, (s, e) in enumerate(decls):
        piece = code[s:e]
        if kernel in names[k] and "{" in piece:
            keep[k] = found = True
        elif (not names[k] or "operator" in idents[k] or (names[k] & function_macros)
              or (_DEVICE_VARIABLE.search(piece) and "(" not in piece.split("=")[0])):
            keep[k] = True
    if not found:
        return None
    reached: set[str] = set()
    todo = [k for k in range(len(decls)) if keep[k]]
    while True:
        for k in todo:
            reached |= idents[k]
        grown = True
        while grown:  # macros the reached code names reach their bodies' names
            grown = False
            for name in [n for n in reached if n in macros]:
                new = macros.pop(name) - reached
                if new:
                    reached |= new
                    grown = True
        todo = [k for k in range(len(decls)) if not keep[k] and names[k] & reached]
        if not todo:
            break
        for k in todo:
            keep[k] = True
    if all(keep):
        return None
    directive = bytearray(len(text))  # 1 where a preprocessor line stands (comments and literals aside)
    for m in _DIRECTIVE.finditer(_HIDDEN.sub(lambda h: re.sub(r"[^\n]", " ", h.group(0)), text)):
        directive[m.start():m.end()] = b"\1" * (m.end() - m.start())
    out = list(text)
    for k, (s, e) in enumerate(decls):
        if keep[k]:
            continue
        for j in range(s, e):
            # directive lines inside a declaration stay (`#if` ... `#endif` around part of it)
            if not directive[j] and out[j] not in "\n\r":
                out[j] = " "
    return "".join(out)
