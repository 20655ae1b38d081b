"""The device slice of a file: what a device-only compiler (NVRTC, hiprtc) can build on its own.

Host function definitions and host-only includes are blanked with spaces, newlines kept, so compiler messages
about the slice point at the user's own lines and columns.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Sequence

from xlate.model import KernelUnit, ProjectMacros
from xlate.parse import normalize
from xlate.parse.buildflags import BuildFlags, build_flags
from xlate.parse.bundle import bundle, includer_preamble, line_name
from xlate.parse.source import to_bytes, to_text
from xlate.resources import data

INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"]+)[>"]', re.M)


@functools.cache
def _headers() -> dict:
    return data("device_headers.yaml")


def _blank(buf: bytearray, start: int, end: int) -> None:
    for i in range(start, end):
        if buf[i] not in (10, 13):
            buf[i] = 32


def device_slice(unit: KernelUnit, text: str, *, hip: bool = False, include_dirs: Sequence[str] = (),
                 system_dirs: Sequence[str] | None = None, context_path: str | None = None,
                 path: str | None = None) -> str:
    """Return `text` with host code and host-only includes blanked (HIP includes mapped for NVRTC), and the
    project headers it includes inlined, each sliced the same way (xlate/parse/bundle.py).

    `system_dirs`: where the device compiler finds headers; an include found neither there nor in the project
    is host-only and dropped (None: keep every include the tables do not drop).
    `context_path`: the file whose includer supplies what a header relies on without including it (a kernel in
    kernels.h using a macro that main.cu defines before `#include "kernels.h"`); default: the unit's own file.
    `path`: the file `text` came from, where it differs from the unit's (a build's renamed copy)."""
    path = path or unit.path
    here = os.path.dirname(os.path.abspath(path)) if os.path.isfile(path) else ""
    # nvcc compiles the program with its Makefile's -D and -I flags (`-Ddfloat=float`, `-I../common`): the
    # defines go first in the slice, the folders join the project's
    flags = build_flags(unit.path if os.path.isfile(unit.path) else path) if here else BuildFlags()
    includer_dirs = list(include_dirs)
    include_dirs = list(dict.fromkeys([*include_dirs, *flags.include_dirs]))
    project = [d for d in (here, *include_dirs) if d]
    out = _slice(unit, text, hip, project, system_dirs)
    if not project:
        return out
    defines = f'{flags.preamble()}#line 1 "{line_name(path)}"\n' if flags.defines else ""

    # a header is read with its includer's qualifier macros (`#define HD __host__ __device__` in main.cu before
    # `#include "array.h"`): without them its device members would look like host code
    context = includer_macros(unit)

    def slice_header(header: str, path: str) -> str:
        from xlate.parse import parse_string

        return _slice(parse_string(header, path, unit.language, context=context), header, hip,
                      [os.path.dirname(path), *project], system_dirs)

    seen: set[str] = set()
    includer = includer_preamble(context_path or path, includer_dirs)
    preamble = ""
    if includer is not None:
        tu, before = includer
        seen.add(os.path.realpath(context_path or path))
        preamble = bundle(slice_header(before, tu), tu, include_dirs, slice_header, seen)
        preamble = f'#line 1 "{line_name(tu)}"\n{preamble}\n#line 1 "{line_name(path)}"\n'
        defines = flags.preamble()
    return defines + preamble + bundle(out, path, include_dirs, slice_header, seen)


def includer_macros(unit: KernelUnit) -> ProjectMacros:
    """The qualifier macros a header included by `unit` sees: the unit's own and those of its headers."""
    own = ProjectMacros(tuple(sorted(normalize.qualifier_macros(to_bytes(unit.text)).items())))
    return own.merged_under(unit.project_macros)


def _slice(unit: KernelUnit, text: str, hip: bool, project: Sequence[str], system_dirs: Sequence[str] | None) -> str:
    original = to_bytes(text)
    data_bytes = bytearray(original)
    for host in unit.host_functions:
        _blank(data_bytes, host.span.start_byte, host.span.end_byte)
    for start, end in host_variables(unit):
        _blank(data_bytes, start, end)
    out = _blank_aliases_of(host_classes(unit, original), to_text(bytes(data_bytes)))
    out = statement_expression_macros(out)
    headers = _headers()
    drop = set(headers["drop"])
    drop_prefixes = tuple(headers.get("drop_prefixes", ()))
    replace = {**headers.get("replace", {}), **(headers["replace_hip"] if hip else {})}

    def repl(m: re.Match[str]) -> str:
        name = m.group(1)
        if name in replace:
            new = replace[name]
            if new and system_dirs is not None and not _found(new, (), system_dirs):
                return " " * len(m.group(0))  # a toolkit header this machine lacks (curand_kernel.h): as any other
            line = f'#include "{new}"' if new else ""
            return line.ljust(len(m.group(0)))
        if name in drop or name.startswith(drop_prefixes):
            return " " * len(m.group(0))
        if system_dirs is not None and not _found(name, project, system_dirs):
            return " " * len(m.group(0))  # host-only: nothing the device compiler can open
        if "<" in m.group(0) and system_dirs is not None and not _found(name, (), system_dirs):
            # `#include <Vector.hpp>` of a project header (nvcc gets it through the Makefile's -I.): inline it as
            # a quoted include (same length, so columns stay); a header of the device compiler's own stays as is
            return m.group(0).replace("<", '"', 1).replace(">", '"', 1)
        return m.group(0)

    return INCLUDE.sub(repl, out)


def _found(name: str, project: Sequence[str], system_dirs: Sequence[str]) -> bool:
    return any(os.path.isfile(os.path.join(d, name)) for d in (*project, *system_dirs))


CLASS_HEAD = re.compile(rb"\s*(?:template\s*<[^{;]*>\s*)?(?:class|struct)\b")


def host_classes(unit: KernelUnit, text: bytes) -> list[str]:
    """Names of the host-only classes the slice blanks (`class Domain { Domain(); ... };`); `text`: the unit's."""
    return [v.name for v in unit.host_variables if CLASS_HEAD.match(text, v.span.start_byte)]


ALIAS_NAME = (re.compile(r"^\s*using\s+(\w+)"), re.compile(r"\(\s*[\w:\s]*\*\s*(\w+)\s*\)"),
              re.compile(r"(\w+)\s*(?:\[[^\]]*\]\s*)*;\s*$"))


def _blank_aliases_of(names: Sequence[str], text: str) -> str:
    """Blank file-scope `typedef`/`using` lines that name a blanked host class (`typedef Real_t &(Domain::*
    member)(Index_t);`), and then those that name such an alias: without the class they cannot compile, and
    only host code can use them."""
    names = list(names)
    while names:
        alt = "|".join(re.escape(n) for n in names)
        rx = re.compile(rf"^[ \t]*(?:typedef\b|using[ \t]+\w+[ \t]*=)[^;{{}}#]*\b(?:{alt})\b[^;{{}}#]*;", re.M)
        names = []
        for m in rx.finditer(text):
            alias = next((a.group(1) for a in (r.search(m.group(0)) for r in ALIAS_NAME) if a), None)
            if alias is not None:
                names.append(alias)
        text = rx.sub(lambda m: re.sub(r"[^\n\r]", " ", m.group(0)), text)
    return text


def host_variables(unit: KernelUnit) -> list[tuple[int, int]]:
    """File-scope variables that live on the host (no __device__/__constant__/__managed__ and not constant):
    the device compiler refuses them, and device code cannot use them anyway."""
    return [(v.span.start_byte, v.span.end_byte) for v in unit.host_variables]


DEFINE_BODY = re.compile(r"^([ \t]*#[ \t]*define[ \t]+\w+(?:\([^)\n]*\))?[ \t]+)((?:\\\r?\n|[^\n])*)", re.M)
JUMP = re.compile(r"\b(?:return|break|continue|goto)\b")
# `__typeof__ (a) _a = (a)`: a copy of a macro argument, as `auto` has it (a nested statement expression's lambda
# may not stand in `decltype` before C++20)
TYPEOF_COPY = re.compile(r"\b__typeof(?:__)?\s*\(([^()]*(?:\([^()]*\)[^()]*)*)\)\s*(\w+)\s*=\s*\(([^()]*(?:\([^()]*\)[^()]*)*)\)")
STATEMENT_KEYWORD = re.compile(r"^\s*(?:if|for|while|do|switch|else)\b")


def _last_statement(inner: str) -> int | None:
    """Where the last top-level statement of a block's text begins (its text ends with `;`); None if it is
    not an expression statement or the text cannot be read."""
    depth = 0
    start = 0
    i = 0
    while i < len(inner) - 1:  # the final `;` is the statement's own
        c = inner[i]
        if c in "\"'":
            j = i + 1
            while j < len(inner) and inner[j] != c:
                j += 2 if inner[j] == "\\" else 1
            i = j + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth < 0:
                return None
            if depth == 0 and c == "}":
                start = i + 1
        elif c == ";" and depth == 0:
            start = i + 1
        i += 1
    if depth != 0 or STATEMENT_KEYWORD.match(inner[start:]):
        return None
    return start


def statement_expression_macros(text: str) -> str:
    """`#define max(a,b) ({ __typeof__(a) _a = (a); ...; _a > _b ? _a : _b; })`: a GNU statement expression,
    which nvcc takes and NVRTC cannot parse, becomes an immediately called lambda with the same value
    (`([&]() { ...; return _a > _b ? _a : _b; }())`). Only macro bodies that are one statement expression, with
    no jump out of it; other lines stay as they are."""

    def rewrite(m: re.Match[str]) -> str:
        head, body = m.group(1), m.group(2)
        flat = re.sub(r"\\\r?\n", lambda c: " " * len(c.group(0)), body).rstrip()
        if not (flat.startswith("({") and flat.endswith("})")) or JUMP.search(flat):
            return m.group(0)
        inner = body[2:len(flat) - 2]  # same offsets as `flat`: continuations kept
        code = flat[2:-2].rstrip()
        if not code.endswith(";"):
            return m.group(0)
        start = _last_statement(code)
        if start is None:
            return m.group(0)
        value = code[start:-1]
        if not value.strip():
            return m.group(0)
        decls = TYPEOF_COPY.sub(lambda d: f"auto {d.group(2)} = ({d.group(1)})" if d.group(1).strip() == d.group(3).strip()
                                else d.group(0), inner[:start])
        return f"{head}([&]() {{{decls} return {inner[start:len(code)]} }}()){body[len(flat):]}"

    return DEFINE_BODY.sub(rewrite, text) if "({" in text else text
