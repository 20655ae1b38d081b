"""Which `#define`s the preprocessor reaches: a file's conditional groups (`#if`/`#ifdef`/`#ifndef`/`#elif`/
`#else`) evaluated in file order against the macros defined before them, the quoted headers it includes read where
it includes them, and the build's `-D` flags first (C's rules: an unknown name is 0; the expression evaluated by
xlate.parse.consteval, the front end's integer evaluator).

Each `#define` line is ON (its groups taken), OFF (a group above it not taken) or UNSURE (a condition above it
could not be decided: a name a header we could not read may define, a function-like macro used as a value, an
expression we cannot read). A name defined under an UNSURE condition makes every later condition that reads it
UNSURE too. The macro collectors (xlate.parse.cfamily's per-file list, xlate.specs.infer.program's table) keep ON
and UNSURE definitions as they always did (the first wins) and drop an OFF one where the name has another
definition: a macro they found before is never lost, a `#if` branch the compiler does not take no longer wins.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable
from pathlib import Path

from xlate.parse.consteval import ConstEvaluator
from xlate.parse.makefile import DEFINE_FLAG, MakeRead, read_makefile
from xlate.parse.nodes import Source

ON, OFF, UNSURE = "on", "off", "unsure"
RANK = {OFF: 0, UNSURE: 1, ON: 2}
# what nvcc on Linux (its host compiler, g++) and the CUDA headers define, with the device pass's own macros (the
# gate's sm_90 and NVRTC, as xlate.cir.cond.DEVICE_MACROS has them)
COMPILER_MACROS: dict[str, str | None] = {"__CUDA_ARCH__": "900", "__CUDACC__": "1", "__CUDACC_RTC__": "1",
                                          "__NVCC__": "1", "__cplusplus": "201703",
                                          "CUDA_VERSION": "12040", "CUDART_VERSION": "12040",
                                          "__CUDACC_VER_MAJOR__": "12", "__CUDACC_VER_MINOR__": "4",
                                          "__GNUC__": "11", "__linux__": "1", "__x86_64__": "1"}
UNREADABLE = "@"  # the table's value of a name defined under an UNSURE condition: reading it is undecidable

CONDITIONAL = re.compile(rb"^[ \t]*#[ \t]*if", re.M)  # a file with no conditional needs no scan
DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif|define|undef|include)\b(.*)$")
COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S)
DEFINE = re.compile(r"([A-Za-z_]\w*)(\([^)]*\))?(.*)$", re.S)
IDENT = re.compile(r"[A-Za-z_]\w*")
WORD = re.compile(r"\b[A-Za-z_]\w*")
DEFINED = re.compile(r"\bdefined\s*(?:\(\s*([A-Za-z_]\w*)\s*\)|([A-Za-z_]\w*))")
BOOLEANS = {"true": "1", "false": "0"}  # C++'s #if reads them as numbers
_NO_SOURCE = Source("<#if>", b"")
INCLUDE = re.compile(r'"([^"\n]+)"')
# quoted #includes of the toolkit's or the C library's headers (`#include "cuda_runtime.h"`): no project macros
TOOLKIT = re.compile(r"(?:cuda|cu[a-z]+|curand|thrust|cub|hip|rocprim|cooperative_groups|mpi|omp|sm_\d+|vector_|"
                     r"device_|math_|helper_|nvToolsExt|nvml|std|math\.h|string\.h|assert\.h|time\.h|limits\.h|"
                     r"float\.h|sys/|c[a-z]+$)")
BUILD_FILES = ("Makefile", "makefile", "GNUmakefile", "CMakeLists.txt", "Makefile.nvidia")

Resolver = Callable[[str, str], "tuple[str, str] | None"]


def _blank_comment(m: re.Match[str]) -> str:
    s = m.group(0)
    return s if s[0] in "\"'" else "\n" * s.count("\n") or " "  # lines kept: only line numbers matter


@functools.lru_cache(maxsize=1024)
def directives(text: str) -> tuple[tuple[int, str, str], ...]:
    """(line, kind, rest) of each directive the scan reads, comments blanked and `\\` continuations joined."""
    if "#" not in text:
        return ()
    if "/*" in text or "//" in text:
        text = COMMENT.sub(_blank_comment, text)
    lines = text.split("\n")
    out: list[tuple[int, str, str]] = []
    i = 0
    while i < len(lines):
        start, line = i, lines[i]
        i += 1
        if "#" not in line or DIRECTIVE.match(line) is None:
            continue
        while line.rstrip().endswith("\\") and i < len(lines):
            line = line.rstrip()[:-1] + " " + lines[i]
            i += 1
        m = DIRECTIVE.match(line)
        if m is not None:
            out.append((start + 1, m.group(1), m.group(2).strip()))
    return tuple(out)


def build_flags(folder: str | Path) -> dict[str, tuple[str, str, int]]:
    """`-DNAME=VALUE` of the program's Makefile or CMakeLists.txt: name -> (value, build file, line); the first of
    a name wins (a flag without a value is 1)."""
    stamps = []
    for name in BUILD_FILES:
        try:
            stamps.append(os.stat(os.path.join(folder, name)).st_mtime)
        except OSError:
            stamps.append(0.0)
    return _build_flags(str(folder), tuple(stamps))


@functools.lru_cache(maxsize=256)
def _build_flags(folder: str, stamps: tuple[float, ...]) -> dict[str, tuple[str, str, int]]:
    out: dict[str, tuple[str, str, int]] = {}
    for name in BUILD_FILES:
        f = Path(folder) / name
        if not f.is_file():
            continue
        try:
            body = f.read_text(errors="replace")[:200000]
        except OSError:
            continue
        if name == "CMakeLists.txt":
            found = [(m.group(1), m.group(2), body.count("\n", 0, m.start()) + 1) for m in DEFINE_FLAG.finditer(body)]
            read = MakeRead()
        else:  # as make reads it with its defaults; a condition it cannot decide keeps its branches' flags
            read = read_makefile(body, "keep")
            found = [(f.name, f.value, f.line) for f in read.define_flags()]
        for flag, value, line in found:
            if flag not in out and not flag.startswith("_"):
                out[flag] = (read.expand(value, keep_unset=True) if value else "1", str(f), line)
    return out


def readable(value: str | None) -> bool:
    """A flag's or a definition's value the scan can use: not a make variable it could not expand (`$(N)`)."""
    return value != UNREADABLE and (value is None or "$" not in value)


def disk_resolver(including: str, rel: str) -> tuple[str, str] | None:
    """A quoted header beside the file that includes it, read from disk: (its path, its text)."""
    if not including or not os.path.isfile(including):
        return None  # a text from memory: its headers are not known
    path = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(including)), rel))
    data = _read(path)
    return None if data is None else (path, data)


def _read(path: str) -> str | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not os.path.isfile(path) or st.st_size > (2 << 20):
        return None
    return _read_cached(path, st.st_mtime, st.st_size)


@functools.lru_cache(maxsize=512)
def _read_cached(path: str, mtime: float, size: int) -> str | None:
    try:
        return Path(path).read_bytes().decode("utf-8", "replace")
    except OSError:
        return None


def _reserved(name: str) -> bool:
    """A name of the implementation (`__HIPCC__`, `_OPENMP`): never defined by a project header."""
    return name.startswith("__") or (name.startswith("_") and name[1:2].isupper())


class Scan:
    """Definitions reached, per (file, line) of each `#define`, over one or more translation units."""

    def __init__(self, flags: dict[str, str] | None = None, resolve: Resolver = disk_resolver):
        self.base: dict[str, str | None] = {**COMPILER_MACROS, **(flags or {})}
        self.resolve = resolve
        self.status: dict[tuple[str, int], str] = {}
        self.table: dict[str, str | None] = {}
        self.unsure: set[str] = set()
        self.open = False  # a quoted #include we could not read: a name it may define is undecidable
        self.seen: set[str] = set()
        # per file, per visit: (line, status) marks, each the status of the lines before it (since the last mark)
        self.spans: dict[str, list[list[tuple[float, str]]]] = {}

    def line_status(self, path: str, line: int) -> str | None:
        """The status of any line of a file (an enumerator, a declaration) over the visits the scan made: ON where
        one visit compiled it; None for a file no visit reached."""
        best: str | None = None
        for marks in self.spans.get(path, []):
            here = next(st for at, st in marks if line < at)
            if best is None or RANK[here] > RANK[best]:
                best = here
        return best

    def unit(self, path: str, text: str) -> dict[str, str | None]:
        """Scan one translation unit from the build's flags; the macros defined at its end."""
        self.table, self.unsure, self.open, self.seen = dict(self.base), set(), False, set()
        self._file(path, text, ON, 0)
        return self.table

    def _file(self, path: str, text: str, outer: str, depth: int) -> None:
        self.seen.add(path)
        # frames: [status of the enclosing region, status of this branch, a branch was taken, one may have been]
        stack: list[list] = []
        marks: list[tuple[float, str]] = []
        self.spans.setdefault(path, []).append(marks)
        for line, kind, rest in directives(text):
            here = stack[-1][1] if stack else outer
            marks.append((line, here))
            if kind in ("if", "ifdef", "ifndef"):
                if here == OFF:
                    stack.append([OFF, OFF, True, False])
                    continue
                hit = self._decide(kind, rest)
                status = ON if hit else (OFF if hit is not None else UNSURE)
                stack.append([here, _within(here, status), bool(hit), hit is None])
            elif kind in ("elif", "else"):
                if not stack:
                    continue
                frame = stack[-1]
                parent = frame[0]
                if parent == OFF or frame[2]:
                    frame[1] = OFF
                    continue
                hit = True if kind == "else" else self._decide("if", rest)
                if hit:
                    frame[1] = _within(parent, UNSURE if frame[3] else ON)
                    frame[2] = True
                elif hit is None:
                    frame[1] = _within(parent, UNSURE)
                    frame[3] = True
                else:
                    frame[1] = OFF
            elif kind == "endif":
                if stack:
                    stack.pop()
            elif kind == "define":
                m = DEFINE.match(rest)
                if m is None:
                    continue
                key = (path, line)
                if key not in self.status or RANK[here] > RANK[self.status[key]]:
                    self.status[key] = here
                if here == OFF:
                    continue
                name = m.group(1)
                if here == ON:
                    self.table[name] = None if m.group(2) is not None else m.group(3).strip()
                    self.unsure.discard(name)
                else:
                    self.table[name] = UNREADABLE
                    self.unsure.add(name)
            elif here == OFF:
                continue
            elif kind == "undef":
                m = IDENT.match(rest)
                if m is None:
                    continue
                if here == ON:
                    self.table.pop(m.group(0), None)
                    self.unsure.discard(m.group(0))
                else:
                    self.table[m.group(0)] = UNREADABLE
                    self.unsure.add(m.group(0))
            elif kind == "include":
                m = INCLUDE.match(rest)
                if m is None:
                    continue  # <system> headers: the compiler's macros stand for them
                found = self.resolve(path, m.group(1)) if depth < 16 else None
                if found is None:
                    self.open = self.open or TOOLKIT.match(m.group(1)) is None
                elif found[0] not in self.seen:
                    self._file(found[0], found[1], here, depth + 1)
        marks.append((float("inf"), stack[-1][1] if stack else outer))

    def _decide(self, kind: str, rest: str) -> bool | None:
        """Whether a condition holds; None when it cannot be decided."""
        if kind in ("ifdef", "ifndef"):
            m = IDENT.match(rest)
            if m is None:
                return None
            name = m.group(0)
            if name in self.unsure or (self.open and name not in self.table and not _reserved(name)):
                return None
            return (name in self.table) == (kind == "ifdef")
        for name in IDENT.findall(rest):
            if name == "defined":
                continue
            if name in self.unsure or (self.open and name not in self.table and not _reserved(name)):
                return None
        # C's rules: `defined X` is 1 or 0, a name that is no macro is 0; then the integer evaluator of the front
        # end (xlate.parse.consteval) through the object-like macros (a function-like one read as a value, or a
        # value it cannot read, is undecidable)
        expr = DEFINED.sub(lambda m: "1" if (m.group(1) or m.group(2)) in self.table else "0", rest)
        expr = WORD.sub(lambda m: m.group(0) if m.group(0) in self.table else BOOLEANS.get(m.group(0), "0"), expr)
        ev = ConstEvaluator(_NO_SOURCE, "cuda", [], {})
        ev.macros = {k: v for k, v in self.table.items() if v is not None}
        try:
            value = ev.eval_text(expr)
        except (ValueError, TypeError, RecursionError, OverflowError, MemoryError):
            return None
        return None if value is None else bool(value)


def _within(parent: str, status: str) -> str:
    return status if RANK[status] < RANK[parent] else parent


def file_status(path: str, text: str, flags: dict[str, str] | None = None,
                resolve: Resolver = disk_resolver) -> tuple[dict[int, str], dict[str, str | None]]:
    """One file read as its own translation unit: the status of each of its `#define` lines, and the macros
    defined at its end (its headers' included)."""
    scan = Scan(flags, resolve)
    table = scan.unit(path, text)
    return {line: st for (p, line), st in scan.status.items() if p == path}, table
