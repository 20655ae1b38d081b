"""Names a project defines itself (macros, functions, types, variables), so that `cudaCheck`, `CUBLAS_CHECK` or a
`cuComplexHelper` of its own is never reported as an unknown CUDA name (XL1001).

Within the file being translated the tree-sitter definitions are used (rewriter.defined_names). Across files,
`xlate migrate` passes the names of the whole tree as TranslateOptions.project_names; `xlate port` on one file
follows its quoted #includes (relative to the file, then to the folders above it, transitively) and reads their
definitions with the lexical scan below. The scan skips comments and strings, so a name only mentioned there
does not count.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from xlate.translate.hip.ctokens import tokenize

_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.M)
_KEYWORDS = {"return", "case", "else", "goto", "throw", "sizeof", "delete", "new", "typedef", "using", "if",
             "while", "for", "switch", "do", "co_return", "co_yield", "operator"}
MAX_FILES = 64  # an include graph larger than this is a migrate job (it passes project_names)
MAX_BYTES = 4 << 20


def defined_names(data: bytes) -> set[str]:
    """Macros, functions, types, enumerators and variables a C/C++/CUDA text defines (a lexical scan)."""
    out: set[str] = set()
    toks = tokenize(data)
    for i, t in enumerate(toks):
        if t.kind != "ident":
            continue
        if t.text == "enum":
            out |= _enumerators(toks, i)
        elif _declares(toks, i):
            out.add(t.text)
    return out


def _declares(toks: list, i: int) -> bool:  # type: ignore[type-arg]
    """Token i is the name a #define, struct/class/enum/namespace, declaration or typedef introduces."""
    prev = toks[i - 1].text if i else ""
    nxt = toks[i + 1].text if i + 1 < len(toks) else ""
    if prev == "define":
        return i >= 2 and toks[i - 2].text == "#"
    if prev in ("struct", "class", "union", "enum", "namespace") and nxt in ("{", ":", ";", "final"):
        return True
    if nxt in ("(", "=", ";", "[", ",", ")", ":") and _after_type(toks, i):
        return True
    if prev == "," and nxt in (";", "=", ","):
        return _declaration_list(toks, i)  # `T a, b;`: the declarators after the first
    if prev == "using" and nxt == "=":
        return True
    return nxt == ";" and _typedef_name(toks, i)


def _after_type(toks: list, i: int) -> bool:  # type: ignore[type-arg]
    """`T name`, `T* name`, `T& name`, `T<U> name`: a declaration (or definition) of `name`."""
    j = i - 1
    while j >= 0 and toks[j].text in ("*", "&", "&&", "const"):
        j -= 1
    if j < 0:
        return False
    t = toks[j]
    return (t.kind == "ident" and t.text not in _KEYWORDS) or t.text == ">"


def _declaration_list(toks: list, i: int) -> bool:  # type: ignore[type-arg]
    """Token i follows a `,` of a declaration statement `T a, b` (not a call's or an initializer's comma)."""
    k, depth = i - 2, 0
    while k >= 0:
        t = toks[k].text
        if t in (")", "]", "}"):
            if depth == 0 and t == "}":
                break  # the previous statement ended
            depth += 1
        elif t in ("(", "["):
            if depth == 0:
                return False
            depth -= 1
        elif t == "{":
            if depth == 0:
                if k and toks[k - 1].text in ("=", ",", "(", "return"):
                    return False  # an initializer list
                break
            depth -= 1
        elif t == ";" and depth == 0:
            break
        k -= 1
    s = k + 1
    while s < i and toks[s].text in ("static", "const", "extern", "volatile", "unsigned", "signed", "inline"):
        s += 1
    return s + 1 < i and toks[s].kind == "ident" and toks[s].text not in _KEYWORDS and (
        toks[s + 1].kind == "ident" or toks[s + 1].text in ("*", "&", "<", "::"))


def _typedef_name(toks: list, i: int) -> bool:  # type: ignore[type-arg]
    """`name` ends a `typedef ...;` at the outer level."""
    depth = 0
    for j in range(i - 1, max(-1, i - 200), -1):
        t = toks[j].text
        if t in ("}", ")"):
            depth += 1
        elif t in ("{", "("):
            depth -= 1
        elif t == ";" and depth == 0:
            return False
        elif t == "typedef" and depth <= 0:
            return True
    return False


def _enumerators(toks: list, i: int) -> set[str]:  # type: ignore[type-arg]
    """The names in `enum [class] [Name] [: T] { A, B = 1, ... }` starting at token i."""
    j, n = i + 1, len(toks)
    while j < n and toks[j].text not in ("{", ";") and j < i + 12:
        j += 1
    if j >= n or toks[j].text != "{":
        return set()
    out, depth, expect = set(), 0, True
    for t in toks[j + 1 :]:
        if t.text in ("(", "[", "{"):
            depth += 1
        elif t.text in (")", "]"):
            depth -= 1
        elif t.text == "}":
            if depth == 0:
                break
            depth -= 1
        elif t.text == "," and depth == 0:
            expect = True
        elif expect and t.kind == "ident" and depth == 0:
            out.add(t.text)
            expect = False
        else:
            expect = False
    return out


def _quoted_includes(path: str | Path, data: bytes) -> Iterator[bytes]:
    """The text of each file `data` (the file at `path`) includes with "...", transitively, each once (at most
    MAX_FILES files; larger or unreadable ones are skipped)."""
    seen: set[Path] = set()
    stack = [(Path(path).resolve().parent, m.group(1).decode("utf-8", "replace")) for m in _INCLUDE.finditer(data)]
    while stack and len(seen) < MAX_FILES:
        where, inc = stack.pop()
        found = _resolve(where, inc)
        if found is None or found in seen:
            continue
        seen.add(found)
        text = _read(found)
        if text is None:
            continue
        yield text
        stack.extend((found.parent, m.group(1).decode("utf-8", "replace")) for m in _INCLUDE.finditer(text))


def included_names(path: str | Path, data: bytes) -> set[str]:
    """Definitions of the files `data` (the file at `path`) includes with "...", transitively."""
    names: set[str] = set()
    for text in _quoted_includes(path, data):
        names |= defined_names(text)
    return names


# What makes a project header need the GPU runtime once ported: device code, CUDA's built-in variables, its API
# names, or an include of a CUDA header (a superset of what makes the translator add hip_runtime.h to it).
_CUDA_TEXT = re.compile(rb"__global__|__device__|__shared__|__constant__|__syncthreads|\b(?:threadIdx|blockIdx|blockDim"
                        rb"|gridDim|warpSize)\b|\bcu(?:da|blas|sparse|solver|rand|fft|dnn)[A-Z_]\w*"
                        rb"|#[ \t]*include[ \t]*[<\"](?:cuda|cuda_runtime|cuda_runtime_api|cooperative_groups)\.h[>\"]")


_COMMENTS = re.compile(rb"/\*.*?\*/|//[^\n]*", re.S)


def reaches_cuda(path: str | Path, data: bytes) -> bool:
    """A project header that `data` (the file at `path`) includes with "...", transitively, uses CUDA: after the
    port it includes the HIP runtime, so the file (a translation unit) must include it first (compat.insert)."""
    return any(_CUDA_TEXT.search(_COMMENTS.sub(b" ", text)) for text in _quoted_includes(path, data))


def _read(path: Path) -> bytes | None:
    try:
        if path.stat().st_size > MAX_BYTES:
            return None
        return path.read_bytes()
    except OSError:
        return None


def _resolve(where: Path, inc: str) -> Path | None:
    for d in (where, *list(where.parents)[:3]):
        p = d / inc
        if p.is_file():
            return p.resolve()
    return None
