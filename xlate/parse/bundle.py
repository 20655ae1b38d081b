"""A source with its project headers inlined, for compilers that are given text rather than a folder.

NVRTC, hiprtc and the sandboxed compiles see one string: a kernel that includes `"common.h"` from its own
folder would not build. `bundle` replaces each quoted #include that resolves to a file of the project (beside
the file, or in the given folders) by that file's text, once per file (as `#pragma once` and include guards
would), with `#line` directives so that compiler messages still name the right file and line. The content
hash of the result then covers the headers too, so a changed header is never served from a stale cache.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence

from xlate.parse.kernel_closure import code_view

# group 1: a marker comment the device slice puts before a header's first line (xlate/parse/slice.py), kept
INCLUDE = re.compile(r'^((?:[ \t]*/\*xlate:[^\n]*?\*/)?)[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"[^\n]*$', re.M)
MAX_FILES = 256
MAX_BYTES = 8 << 20


def resolve(name: str, here: str, dirs: Sequence[str]) -> str | None:
    for d in (here, *dirs):
        if not d:
            continue
        cand = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(cand):
            return cand
    return None


def bundle(text: str, path: str, dirs: Sequence[str] = (),
           transform: Callable[[str, str], str] | None = None, seen: set[str] | None = None) -> str:
    """`text` (the file at `path`) with its project headers inlined; `transform(header_text, header_path)`
    is applied to each header first (the device slice blanks its host code). `seen`: files already inlined
    (shared between the parts of one compile)."""
    seen = set() if seen is None else seen
    if os.path.isfile(path):
        seen.add(os.path.realpath(path))
    budget = [MAX_BYTES]
    return _bundle(text, path, tuple(dirs), transform, seen, budget)


def _bundle(text: str, path: str, dirs: tuple[str, ...], transform: Callable[[str, str], str] | None,
            seen: set[str], budget: list[int]) -> str:
    here = os.path.dirname(os.path.abspath(path)) if path and not path.startswith("<") else ""
    out: list[str] = []
    pos = 0
    code: str | None = None
    for m in INCLUDE.finditer(text):
        found = resolve(m.group(2), here, dirs)
        if found is None:
            continue
        line_after = text.count("\n", 0, m.end()) + 2  # the line that follows the #include
        out.append(text[pos : m.start()])
        pos = m.end()
        if code is None:
            code = code_view(text)
        if code.count("{", 0, m.start()) > code.count("}", 0, m.start()):
            # included inside a function body (a block of local declarations kept in a file of its own): a
            # fragment of that function, inlined as written wherever it is included, never sliced as a file
            fragment = _read_within(found, budget)
            out.append(m.group(1) + (f'#include "{found}"' if not fragment else
                                     f'\n#line 1 "{_quoted(os.path.abspath(found))}"\n{fragment}\n'
                                     f'#line {line_after} "{_quoted(line_name(path))}"'))
            continue
        real = os.path.realpath(found)
        directive = m.group(0)[len(m.group(1)):].strip()
        if m.group(1):
            out.append(f"{m.group(1)}\n#line {line_after - 1} \"{_quoted(line_name(path))}\"\n")
        if real in seen or len(seen) >= MAX_FILES:
            out.append(f"/* {directive}: inlined above */")
            continue
        seen.add(real)
        header = _read_within(found, budget)
        if header is None:
            out.append(directive)
            continue
        if transform is not None:
            header = transform(header, found)
        body = _bundle(header, found, dirs, transform, seen, budget)
        out.append(f'#line 1 "{_quoted(os.path.abspath(found))}"\n{body}\n'
                   f'#line {line_after} "{_quoted(line_name(path))}"')
    out.append(text[pos:])
    return "".join(out)


def line_name(path: str) -> str:
    """How a #line directive names a file: absolute (NVRTC would prefix a relative name with its folder)."""
    return os.path.abspath(path) if path and not path.startswith("<") else path


TRANSLATION_UNIT_SUFFIXES = (".cu", ".cpp", ".cc", ".cxx", ".c", ".hip")


def includer_preamble(path: str, dirs: Sequence[str] = ()) -> tuple[str, str] | None:
    """A header's context: the first translation unit of its folder (or of `dirs`) that includes it, and that
    unit's text before the #include line (the macros, types and headers the header relies on without
    including them itself). None for a file no translation unit includes."""
    return _direct_includer(path, dirs, TRANSLATION_UNIT_SUFFIXES)


HEADER_SUFFIXES = (".h", ".hpp", ".cuh", ".hh", ".hxx", ".inl", ".inc", ".tpp", ".ipp")


def includer_chain(path: str, dirs: Sequence[str] = (), depth: int = 4) -> list[tuple[str, str]]:
    """The files through which a translation unit reaches `path`, outermost (the unit) first, each with its
    text before the #include line that leads on: [(main.cu, ...)] for a header main.cu includes, [(main.cu, ...),
    (solver.h, ...)] for kernels.cu that only solver.h includes (`#include "kernels.cu"`), main.cu including
    solver.h. Empty when no translation unit reaches it within `depth` headers."""
    chain: list[tuple[str, str]] = []
    seen = {os.path.realpath(path)} if path and not path.startswith("<") else set()
    cur = path
    while len(chain) < depth:
        found = _direct_includer(cur, dirs, TRANSLATION_UNIT_SUFFIXES)
        if found is not None and os.path.realpath(found[0]) not in seen:
            return [found, *chain]
        found = _direct_includer(cur, dirs, HEADER_SUFFIXES, seen)
        if found is None:
            return []
        seen.add(os.path.realpath(found[0]))
        chain.insert(0, found)
        cur = found[0]
    return []


def _direct_includer(path: str, dirs: Sequence[str], suffixes: tuple[str, ...],
                     skip: set[str] | None = None) -> tuple[str, str] | None:
    """The first file of `path`'s folder (or of `dirs`) with one of `suffixes` that includes `path`, and its text
    before that #include line; `skip`: real paths not to take."""
    if not path or path.startswith("<"):
        return None
    name = os.path.basename(path)
    here = os.path.dirname(os.path.abspath(path))
    rx = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"(?:[^"\n]*/)?' + re.escape(name) + r'"', re.M)
    for folder in dict.fromkeys((here, *(os.path.abspath(d) for d in dirs))):
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        for cand in names:
            full = os.path.join(folder, cand)
            real = os.path.realpath(full)
            if not cand.lower().endswith(suffixes) or real == os.path.realpath(path) or (skip and real in skip):
                continue
            try:
                with open(full, "rb") as fh:
                    text = fh.read(MAX_BYTES).decode("utf-8", "surrogateescape")
            except OSError:
                continue
            m = rx.search(text)
            target = resolve(m.group(0).split('"')[1], folder, dirs) if m else None
            if m and target and os.path.realpath(target) == os.path.realpath(path):
                return full, text[: m.start()]
    return None


def _quoted(path: str) -> str:
    return path.replace("\\", "\\\\").replace('"', '\\"')


def _read_within(found: str, budget: list[int]) -> str | None:
    """The text of `found`, its bytes taken from the bundle's budget; None if it cannot be read or the budget
    is spent."""
    try:
        with open(found, "rb") as fh:
            raw = fh.read(budget[0] + 1)
    except OSError:
        return None
    budget[0] -= len(raw)
    return None if budget[0] < 0 else raw.decode("utf-8", "surrogateescape")
