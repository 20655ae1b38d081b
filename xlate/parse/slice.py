"""The device slice of a file: what a device-only compiler (NVRTC, hiprtc) can build on its own.

Host function definitions and host-only includes are blanked with spaces, newlines kept, so compiler messages
about the slice point at the user's own lines and columns.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Sequence

from xlate.model import KernelUnit, ProjectMacros
from xlate.parse import normalize
from xlate.parse.buildflags import BuildFlags, build_flags
from xlate.parse.bundle import bundle, includer_chain, line_name
from xlate.parse.kernel_closure import brace_end, code_view, declarations, is_type_head, top_depth_has
from xlate.parse.source import to_bytes, to_text
from xlate.resources import data

INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"]+)[>"]', re.M)


@functools.cache
def _headers() -> dict:
    return data("device_headers.yaml")


CONDITIONAL = re.compile(rb"^[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif|else|endif)\b[^\n]*", re.M)


def _blank(buf: bytearray, start: int, end: int) -> None:
    """Blank `buf[start:end]`, newlines and conditional directive lines kept: a host function whose signature
    has an `#ifdef` ... `#else` ... `#endif` leaves the conditional balanced whatever part of it the span
    covers."""
    keep = [m.span() for m in CONDITIONAL.finditer(buf, start, end)] if b"#" in buf[start:end] else []
    for i in range(start, end):
        if buf[i] not in (10, 13) and not any(a <= i < b for a, b in keep):
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
    # (a port compiled from memory has no folder of its own: it gets its source's, through `context_path`)
    flag_file = next((p for p in (unit.path, path, context_path) if p and os.path.isfile(p)), None)
    flags = build_flags(flag_file) if flag_file and (here or include_dirs) else BuildFlags()
    includer_dirs = list(include_dirs)
    include_dirs = list(dict.fromkeys([*include_dirs, *flags.include_dirs]))
    project = [d for d in (here, *include_dirs) if d]
    out = _slice(unit, text, hip, project, system_dirs)
    if not project:
        return out
    defines = f'{flags.preamble()}#line 1 "{line_name(path)}"\n' if flags.defines else ""

    device_names = set(IDENT.findall(_COMMENT.sub(" ", out)))
    # a header is read with its includer's qualifier macros (`#define HD __host__ __device__` in main.cu before
    # `#include "array.h"`): without them its device members would look like host code
    context = includer_macros(unit)

    qualifiers = {name for name, words in context.qualifiers  # those that stand for an execution space
                  if {"__device__", "__global__", "__host__", "__constant__", "__shared__", "__managed__"} & set(words)}

    def slice_header(header: str, path: str) -> str:
        from xlate.parse import parse_string

        out = _slice(parse_string(header, path, unit.language, context=context), header, hip,
                     [os.path.dirname(path), *project], system_dirs, device_names)
        if _device_free(out, qualifiers):  # marked, so that it can be left out when nothing uses it
            return f"{HOST_BEGIN}{out}{HOST_END}"
        return out

    seen: set[str] = set()
    # the translation unit that includes the file (or a header that does, which a unit includes): what comes
    # before each #include on that way is the file's context
    chain = includer_chain(context_path or path, includer_dirs)
    preamble = ""
    if chain:
        seen.add(os.path.realpath(context_path or path))
        seen.update(os.path.realpath(f) for f, _ in chain)
        for tu, before in chain:
            # the text before the #include may leave conditionals open (the includer's include guard): closed
            before += "\n#endif" * _open_conditionals(before)
            part = bundle(slice_header(before, tu), tu, include_dirs, slice_header, seen)
            preamble += f'#line 1 "{line_name(tu)}"\n{part}\n'
        preamble += f'#line 1 "{line_name(path)}"\n'
        defines = flags.preamble()
    return drop_unused_host_headers(defines + preamble + bundle(out, path, include_dirs, slice_header, seen))


OPENING = re.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|endif)\b", re.M)


def _open_conditionals(text: str) -> int:
    """How many `#if`/`#ifdef`/`#ifndef` of `text` its end leaves open."""
    depth = 0
    for m in OPENING.finditer(_COMMENT.sub(lambda c: re.sub(r"[^\n]", " ", c.group(0)), text)):
        depth = depth + 1 if m.group(1) != "endif" else max(0, depth - 1)
    return depth


def includer_macros(unit: KernelUnit) -> ProjectMacros:
    """The qualifier macros a header included by `unit` sees: the unit's own and those of its headers."""
    own = ProjectMacros(tuple(sorted(normalize.qualifier_macros(to_bytes(unit.text)).items())))
    return own.merged_under(unit.project_macros)


def _slice(unit: KernelUnit, text: str, hip: bool, project: Sequence[str], system_dirs: Sequence[str] | None,
           device_names: set[str] | frozenset[str] = frozenset()) -> str:
    """`device_names`: names the device code of the rest of the compile uses (a header's struct that the
    including file's kernels take is no host-only class, though nothing in the header itself is device code)."""
    original = to_bytes(text)
    data_bytes = bytearray(original)
    device_macros = {n.encode() for n, words in includer_macros(unit).qualifiers
                     if {"__device__", "__global__"} & set(words)}
    # `#if defined(__CUDACC__) / #define ESS __device__ / #else / #define ESS inline`: the front end reads the
    # last definition; a CUDA compiler takes the one that names the device
    device_macros |= set(DEVICE_DEFINE.findall(original))
    host_macros = {n.encode() for n, words in includer_macros(unit).qualifiers
                   if not {"__device__", "__global__"} & set(words)} - device_macros
    for host in unit.host_functions:
        if _qualified_before(original, host.span.start_byte, device_macros):
            continue
        _blank(data_bytes, _host_prefix(original, host.span.start_byte, host_macros), host.span.end_byte)
    used_classes = set(host_classes(unit, original)) & set(device_names)
    for v in unit.host_variables:
        if v.name not in used_classes:
            _blank(data_bytes, v.span.start_byte, v.span.end_byte)
    for start, end, at in reversed(_constexpr_kept(unit, original, bytes(data_bytes))):
        # nvcc (--expt-relaxed-constexpr) lets device code call a constexpr function; NVRTC needs it marked
        data_bytes[start:end] = original[start:end]
        data_bytes[at:at] = b"__host__ __device__ "
    out = _blank_aliases_of([c for c in host_classes(unit, original) if c not in used_classes],
                            to_text(bytes(data_bytes)))
    out = blank_host_instantiation_macros(out, {h.name.rsplit("::", 1)[-1] for h in unit.host_functions})
    out = blank_host_members(out)
    # HIP has CUDA's execution spaces (an unannotated member is host code) and NVRTC, which compiles a HIP port's
    # slice on NVIDIA, refuses `register` as well: the same rules for both
    out = drop_register(out)
    out = blank_unannotated_members(out, {n for n, words in includer_macros(unit).qualifiers
                                          if EXECUTION_SPACES & set(words)})
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


DEVICE_DEFINE = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+(?:[A-Za-z_]\w*[ \t]+)*"
                           rb"(?:__device__|__global__)\b[ \t\w]*$", re.M)
DECL_BOUNDARY = re.compile(rb"[;{}]|\b(?:public|private|protected)\s*:(?!:)")


def _qualified_before(text: bytes, start: int, macros: set[bytes]) -> bool:
    """Does the declaration a function's span starts within name an execution space before the span (`ESS
    friend inline T abs(...)`, the parser's span starting after `friend`)?"""
    window = COMMENT_BYTES.sub(lambda m: re.sub(rb"[^\n]", b" ", m.group(0)), text[max(0, start - 300):start])
    cut = [m.end() for m in DECL_BOUNDARY.finditer(window)]
    words = set(re.findall(rb"\b[A-Za-z_]\w*\b", window[cut[-1] if cut else 0:]))
    return bool(words & {b"__device__", b"__global__"} or words & macros)


COMMENT_BYTES = re.compile(rb"//[^\n]*|/\*.*?\*/|^[ \t]*#(?:[^\n\\]|\\.)*", re.S | re.M)  # and directive lines
HEAD_WORDS = frozenset({b"static", b"inline", b"friend", b"explicit", b"virtual", b"__host__", b"__inline__",
                        b"__forceinline__", b"extern"})


def _host_prefix(text: bytes, start: int, macros: set[bytes]) -> int:
    """Where a host function's declaration begins when the parser's span starts after a host qualifier macro
    (`#define HOST __host__` ... `HOST Accessor(T* p) {...}`): the macro goes with it, or it would be left on
    its own before the next declaration."""
    window = COMMENT_BYTES.sub(lambda m: re.sub(rb"[^\n]", b" ", m.group(0)), text[max(0, start - 300):start])
    cut = [m.end() for m in DECL_BOUNDARY.finditer(window)]
    words = list(re.finditer(rb"\S+", window[cut[-1] if cut else 0:]))
    base = max(0, start - 300) + (cut[-1] if cut else 0)
    if not words or not any(w.group(0) in macros for w in words):
        return start
    if all(w.group(0) in macros or w.group(0) in HEAD_WORDS for w in words):
        return base + words[0].start()
    return start


def _found(name: str, project: Sequence[str], system_dirs: Sequence[str]) -> bool:
    return any(os.path.isfile(os.path.join(d, name)) for d in (*project, *system_dirs))


CONSTEXPR = re.compile(rb"\bconstexpr\b")


def _constexpr_kept(unit: KernelUnit, original: bytes, sliced: bytes) -> list[tuple[int, int, int]]:
    """The constexpr host functions (`constexpr int block_work() { return 4 * 128; }`) that what the slice
    keeps calls, directly or through another such function: (start, end, offset of `constexpr`) each,
    ascending."""
    found: dict[str, tuple[int, int, int]] = {}
    for host in unit.host_functions:
        start, end = host.span.start_byte, host.span.end_byte
        fn = original[start:end]
        paren = fn.find(b"(")
        head = CONSTEXPR.search(fn, 0, max(paren, 0))
        if head is None or "::" in host.name or b"__host__" in fn[:paren]:
            continue
        found[host.name] = (start, end, start + head.start())
    if not found:
        return []
    words = set(re.findall(rb"\b[A-Za-z_]\w*\b", sliced))
    kept: set[str] = set()
    todo = [n for n in found if n.encode() in words]
    while todo:
        name = todo.pop()
        if name in kept:
            continue
        kept.add(name)
        start, end, _ = found[name]
        called = set(re.findall(rb"\b[A-Za-z_]\w*\b", original[start:end]))
        todo.extend(n for n in found if n not in kept and n.encode() in called)
    return sorted((found[n] for n in kept), key=lambda f: f[0])


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


# -- project headers with no device code (a header-only host library: a hash map, a command line parser) -------

HOST_BEGIN = "/*xlate:host-header{*/"
HOST_END = "/*}xlate:host-header*/"
DEVICE_WORD = re.compile(r"\b(?:__global__|__device__|__constant__|__shared__|__managed__|__host__)\b|<<<")
_COMMENT = re.compile(r"//[^\n]*|/\*(?!xlate:|\}xlate:).*?\*/", re.S)
IDENT = re.compile(r"\b[A-Za-z_]\w*\b")
DECLARED_TYPES = re.compile(r"\b(?:class|struct|union|namespace|enum(?:\s+class|\s+struct)?)\s+"
                            r"(?:__attribute__\s*\(\([^)]*\)\)\s*)?([A-Za-z_]\w*)")
DECLARED_MACRO = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)", re.M)
DECLARED_FUNCTION = re.compile(r"\b([A-Za-z_]\w*)\s*(?:<[^<>;{}]*>\s*)?\(")
DECLARED = [
    re.compile(r"\busing\s+([A-Za-z_]\w*)\s*="),
    re.compile(r"\b([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)*(?:=|;|,)"),  # variables, constants, typedefs, `} name;`
    re.compile(r"\benum\b[^{;]*\{([^}]*)\}"),  # enumerators
]
_PREPROCESSOR = re.compile(r"^[ \t]*#(?:[^\n\\]|\\.)*", re.M | re.S)
_NAMESPACE_OPEN = re.compile(r"(?:\bnamespace(?:\s+[\w:]+)?|\bextern\s*\"C(?:\+\+)?\")\s*$")


def _blank_nested(text: str, open_: str, close: str, keep: Callable[[str, int], bool] | None = None) -> str:
    """`text` with what lies inside each outermost `open_ ... close` pair blanked (pairs `keep` accepts stay
    open: a namespace's braces)."""
    out = list(text)
    depth = 0  # blanking depth
    for i, c in enumerate(text):
        if c == open_:
            if depth == 0 and keep is not None and keep(text, i):
                continue
            if depth > 0:
                out[i] = " "
            depth += 1
        elif c == close and depth > 0:
            depth -= 1
            if depth > 0:
                out[i] = " "
        elif depth > 0 and c not in "\n":
            out[i] = " "
    return "".join(out)


def _top_level(text: str) -> str:
    """A header's namespace-scope text: bodies of classes and functions, template parameter lists and
    parameter lists blanked (their names are no one else's to use)."""
    code = _PREPROCESSOR.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    code = _blank_nested(code, "{", "}", lambda t, i: bool(_NAMESPACE_OPEN.search(t[max(0, i - 80):i])))
    code = re.sub(r"\btemplate\s*<", lambda m: "template (", code)
    code = _blank_nested(code, "(", ")")
    return code


def _declared(text: str) -> set[str]:
    """The names a header declares at namespace scope: types, namespaces, macros, functions, variables,
    aliases, enumerators."""
    top = _top_level(text)
    names = set(DECLARED_MACRO.findall(text)) | set(DECLARED_TYPES.findall(top)) | set(DECLARED_FUNCTION.findall(top))
    for rx in DECLARED:
        for m in rx.finditer(top if rx is not DECLARED[2] else _PREPROCESSOR.sub(" ", text)):
            names.update(IDENT.findall(m.group(1)))
    return names


MARKED_CONSTEXPR = re.compile(r"\b__host__ __device__ constexpr\b")
KEPT_LINE = re.compile(r'^[ \t]*#[ \t]*(?:include|line)\b[^\n]*', re.M)


def _device_free(text: str, qualifiers: set[str]) -> bool:
    """No device code in a header's slice: no execution or memory space, launch, or qualifier macro of the
    includer (`HD` standing for `__host__ __device__`)."""
    code = MARKED_CONSTEXPR.sub(" ", _COMMENT.sub(" ", text))  # a constexpr helper is no kernel to keep
    if DEVICE_WORD.search(code):
        return False
    return not (qualifiers and any(w in qualifiers for w in IDENT.findall(code)))


def _regions(text: str) -> list[tuple[int, int]]:
    """The marked host header regions of a bundled text, (start, end) with both markers, nested ones too."""
    out: list[tuple[int, int]] = []
    stack: list[int] = []
    for m in re.finditer(re.escape(HOST_BEGIN) + "|" + re.escape(HOST_END), text):
        if m.group(0) == HOST_BEGIN:
            stack.append(m.start())
        elif stack:
            out.append((stack.pop(), m.end()))
    return out


def drop_unused_host_headers(text: str) -> str:
    """Blank each inlined project header with no device code none of whose names the rest of the compile uses
    (nvcc parses a host library like a hash map's templates for the host; NVRTC cannot, and no kernel needs
    it); its lines stay, so messages still point at the right lines. A header that declares a type, a macro or
    a constant the device code names stays, as does one that includes device code."""
    if HOST_BEGIN not in text:
        return text
    buf = list(text)
    changed = True
    while changed:
        changed = False
        current = "".join(buf)
        for start, end in sorted(_regions(current), key=lambda r: r[0] - r[1]):  # outermost first
            region = current[start:end]
            if DEVICE_WORD.search(MARKED_CONSTEXPR.sub(" ", _COMMENT.sub(" ", region))):
                continue  # a nested header with device code: kept with its includer
            names = _declared(_COMMENT.sub(" ", region.replace(HOST_BEGIN, "").replace(HOST_END, ""))) - CPP_WORDS
            rest = KEPT_LINE.sub(" ", _COMMENT.sub(" ", current[:start] + current[end:]))  # file names are no use
            if names and not names & set(IDENT.findall(rest)):
                # its declarations go; its #include lines stay, for what the rest gets through them
                keep = [(m.start() + start, m.end() + start) for m in KEPT_LINE.finditer(region)]
                for i in range(start, end):
                    if buf[i] not in "\n\r" and not any(a <= i < b for a, b in keep):
                        buf[i] = " "
                changed = True
                break
    return "".join(buf).replace(HOST_BEGIN, " " * len(HOST_BEGIN)).replace(HOST_END, " " * len(HOST_END))


CPP_WORDS = frozenset(["alignas", "alignof", "asm", "auto", "bool", "break", "case", "catch", "char", "char16_t", "char32_t", "class", "const", "constexpr", "const_cast", "continue", "decltype", "default", "delete", "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "nullptr", "operator", "private", "protected", "public", "register", "reinterpret_cast", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct", "switch", "template", "this", "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while", "override", "final", "std", "size_t", "define", "include", "ifdef", "ifndef", "endif", "pragma", "once", "line"])


HOST_WORD = re.compile(r"\b__host__\b")
DECL_START = re.compile(r"[;{}]|\b(?:public|private|protected)\s*:(?!:)|^[ \t]*#[^\n]*\n", re.M)


MACRO_WITH_PARAMS = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)\([^)\n]*\)((?:[^\n]*\\\n)*[^\n]*)", re.M)
EXPLICIT_INSTANTIATION = re.compile(r"\s*template\s+(?!<)[^;{<]*?\b([A-Za-z_]\w*)\s*<")


def blank_host_instantiation_macros(text: str, host_names: set[str]) -> str:
    """Blank the file-scope uses of a macro that instantiates a host function template explicitly
    (`#define FOR(W) template void launch<W>(const float*, int);` then `FOR(5)`): the slice has blanked that host
    template, so each use would name a template NVRTC never saw ("launch is not a template"). A macro that
    instantiates a kernel or a device function is left alone."""
    macros = set()
    for m in MACRO_WITH_PARAMS.finditer(text):
        inst = EXPLICIT_INSTANTIATION.match(m.group(2).replace("\\\n", " "))
        if inst is not None and inst.group(1) in host_names:
            macros.add(m.group(1))
    if not macros:
        return text
    out = list(text)
    use = re.compile(r"^[ \t]*(" + "|".join(map(re.escape, sorted(macros))) + r")[ \t]*\(", re.M)
    for m in use.finditer(text):
        end = _match(text, m.end() - 1, "(", ")")
        if end < 0:
            continue
        rest = re.match(r"[ \t]*;?", text[end:])
        end += rest.end() if rest else 0
        for i in range(m.start(), end):
            if out[i] not in "\r\n":
                out[i] = " "
    return "".join(out)


def _match(text: str, i: int, open_: str, close: str) -> int:
    """The index just past the bracket that closes the one at `i`; -1 if it never closes."""
    depth = 0
    for j in range(i, len(text)):
        if text[j] == open_:
            depth += 1
        elif text[j] == close:
            depth -= 1
            if depth == 0:
                return j + 1
    return -1


def blank_host_members(text: str) -> str:
    """Blank functions marked `__host__` alone (a class's `__host__ void free_buffers() { cudaFree(...); }`, or
    its prototype): NVRTC refuses any function explicitly marked host, device code cannot call one, and nvcc
    compiles it for the host only. `__host__ __device__` ones stay."""
    if "__host__" not in text:
        return text
    buf = list(text)
    pos = 0
    while (m := HOST_WORD.search(text, pos)) is not None:
        pos = m.end()
        line_start = text.rfind("\n", 0, m.start()) + 1
        if text[line_start:m.start()].lstrip().startswith("#"):
            continue  # a macro's body
        before = [d.end() for d in DECL_START.finditer(text, max(0, m.start() - 2000), m.start())]
        start = before[-1] if before else max(0, m.start() - 2000)
        paren = text.find("(", m.end())
        if paren < 0 or re.search(r"[;{}]", text[m.end():paren]):
            continue
        head = text[start:paren]
        if re.search(r"\b(?:__device__|__global__)\b|=", head):
            continue
        close = _match(text, paren, "(", ")")
        if close < 0:
            continue
        tail = re.match(r"[^;{}]*", text[close:])
        end = close + (tail.end() if tail else 0)
        if end >= len(text):
            continue
        if text[end] == "{":
            end = _match(text, end, "{", "}")
            if end < 0:
                continue
        elif text[end] == ";":
            end += 1
        else:
            continue
        while start < m.start() and text[start].isspace():
            start += 1
        for i in range(start, end):
            if buf[i] not in "\n\r":
                buf[i] = " "
        pos = end
    return "".join(buf)


# -- member functions with no execution space ---------------------------------------------------------------

EXECUTION_SPACES = frozenset({"__device__", "__global__", "__host__"})
CLASS_KEY = re.compile(r"\b(?:struct|class|union)\b")
ACCESS = re.compile(r"^\s*(?:public|private|protected)\s*:(?!:)")
MACRO_LIKE = re.compile(r"\b[A-Z_][A-Z0-9_]{2,}\b")


def blank_unannotated_members(text: str, qualifiers: set[str]) -> str:
    """Blank the member functions (and friends defined in a class) that name no execution space, in the
    namespace-scope classes of `text`: nvcc compiles them for the host only, so device code cannot call them,
    and NVRTC refuses them outright ("host functions are not allowed in JIT mode"), which would stop the class
    that device code does use (`struct Particle { Particle() : pos{} {} float pos[3]; };`). A constexpr one is
    marked `__host__ __device__` instead (nvcc's relaxed constexpr); `= default` / `= delete` ones stay, as does
    one whose head has a macro this reading cannot tell from a qualifier."""
    if not CLASS_KEY.search(text):
        return text
    code = code_view(text)
    spans: list[tuple[int, int]] = []
    marks: list[int] = []
    for start, end in declarations(text, code):
        brace = code.find("{", start, end)
        if brace < 0:
            continue
        head = code[start:brace]
        if CLASS_KEY.search(head) and is_type_head(head):
            _members(code, brace, brace_end(code, brace), qualifiers, spans, marks)
    if not spans and not marks:
        return text
    buf = list(text)
    for a, b in spans:
        for i in range(a, b):
            if buf[i] not in "\n\r":
                buf[i] = " "
    for at in sorted(marks, reverse=True):
        buf.insert(at, "__host__ __device__ ")
    return "".join(buf)


def _members(code: str, open_: int, close: int, qualifiers: set[str], spans: list[tuple[int, int]],
             marks: list[int]) -> None:
    """Collect, in the class body `code[open_:close]`, the spans of unannotated member functions (and where
    to mark constexpr ones); nested classes are gone into."""
    i = open_ + 1
    start = i
    end_body = close - 1
    while i < end_body:
        c = code[i]
        if c == ";":
            _member(code, start, i + 1, None, qualifiers, spans, marks)
            start = i + 1
        elif c == ":" and code[i + 1:i + 2] != ":" and code[i - 1:i] != ":" and ACCESS.match(code[start:i + 1]):
            start = i + 1
        elif c == "{":
            head = code[start:i]
            if CLASS_KEY.search(head) and is_type_head(head):  # a nested class
                end = brace_end(code, i)
                _members(code, i, end, qualifiers, spans, marks)
                semi = code.find(";", end)
                i = start = (semi + 1) if semi >= 0 else end
                continue
            if "(" not in head or top_depth_has(head.split("(", 1)[0], "="):
                end = brace_end(code, i)  # a data member's braced initializer, an enum
                semi = code.find(";", end)
                i = start = (semi + 1) if semi >= 0 else end
                continue
            body = _body_brace(code, i, end_body)
            end = brace_end(code, body)
            _member(code, start, end, body, qualifiers, spans, marks)
            i = start = end
            continue
        i += 1


def _body_brace(code: str, i: int, limit: int) -> int:
    """The function body's `{` from `i` on: past a constructor's braced member initializers (`: x{}, y{1}`)."""
    head_close = code.rfind(")", 0, i)
    tail = code[head_close + 1:i] if head_close >= 0 else ""
    if not re.search(r"(?<!:):(?!:)", tail):
        return i
    j = i
    while j < limit:
        if code[j] == "{":
            prev = code[:j].rstrip()[-1:]
            if prev in (")", "}"):
                return j
            j = brace_end(code, j)
            continue
        if code[j] == "(":
            depth = 0
            while j < limit:
                depth += code[j] == "("
                depth -= code[j] == ")"
                j += 1
                if depth == 0:
                    break
            continue
        j += 1
    return i


def _member(code: str, start: int, end: int, body: int | None, qualifiers: set[str],
            spans: list[tuple[int, int]], marks: list[int]) -> None:
    head = code[start:body if body is not None else end]
    m = ACCESS.match(head)
    if m:
        start += m.end()
        head = head[m.end():]
    paren = head.find("(")
    if paren < 0:
        return
    before = head[:paren]
    if "operator" in before:  # `operator()(...)`: the name's own parentheses
        paren = head.find("(", paren + 1) if re.search(r"\boperator\s*\($", before + "(") else paren
        before = head[:paren] if paren >= 0 else before
    named = re.sub(r"\boperator\b.*", "", before, flags=re.S)  # `operator<<` opens no template argument list
    if named.count("<") > named.count(">") or re.match(r"\(\s*[*&^]", head[paren:]):
        return  # `std::function<void(int)> f;`, `void (*callback)(int);`: data members
    if top_depth_has(before, "=") or re.search(r"\btypedef\b|\busing\b|\bstatic_assert\b", before):
        return  # a data member, an alias
    words = set(re.findall(r"\b[A-Za-z_]\w*\b", before))
    if words & EXECUTION_SPACES or words & qualifiers:
        return
    if re.search(r"=\s*(?:default|delete|0)\s*;?\s*$", head):
        return
    if MACRO_LIKE.search(before.replace("__", "")) and not re.fullmatch(r"\s*", before):
        caps = [w for w in MACRO_LIKE.findall(before) if not w.startswith("__")]
        if caps:
            return  # `ESS void f()` with ESS read as no qualifier: leave it to the compiler
    cx = re.search(r"\bconstexpr\b", before)
    if cx:
        marks.append(start + cx.start())
        return
    while start < end and code[start].isspace():
        start += 1
    spans.append((start, end))


REGISTER = re.compile(r"\bregister\b")


def drop_register(text: str) -> str:
    """Blank the `register` storage class: C++17 removed it, nvcc ignores it (a warning), NVRTC refuses it."""
    if "register" not in text:
        return text
    code = code_view(text)
    spans = [m.span() for m in REGISTER.finditer(code)]
    if not spans:
        return text
    buf = list(text)
    for a, b in spans:
        buf[a:b] = " " * (b - a)
    return "".join(buf)
