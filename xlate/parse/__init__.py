"""Parsing: source file -> tree-sitter tree -> KernelUnit (see xlate.model).

C-family text is never refused for what the grammar cannot read: the front end (frontend.py) repairs what it
can, and every place it could not is a `file:line:col` warning on the unit (XL0002). Only input that is not
source text at all (missing, empty, binary) is an InputError (exit 2). `strict=True` (for model output, which
must be plain C++) turns grammar gaps back into an error.
"""

from __future__ import annotations

import os
import re

from xlate import gcpause
from xlate.diagnostics import located
from xlate.errors import InputError, Located
from xlate.model import KernelUnit, Language, ProjectMacros
from xlate.parse import languages
from xlate.parse.nodes import Source, syntax_errors
from xlate.parse.source import SourceText, decode, read_source, to_bytes

MAX_GAP_WARNINGS = 20


def parse_text(source: SourceText, *, strict: bool = False, include_dirs: tuple[str, ...] = (),
               context: ProjectMacros | None = None) -> KernelUnit:
    """Build the model of one source. With `strict`, any syntax error raises InputError (exit 2).
    `context`: macros of the file that includes this one (a header read alone for its includer)."""
    with gcpause.paused():  # the model is many small acyclic objects (xlate/gcpause.py)
        return _parse_text(source, strict, include_dirs, context)


def _parse_text(source: SourceText, strict: bool, include_dirs: tuple[str, ...],
                context: ProjectMacros | None = None) -> KernelUnit:
    grammar = languages.grammar_of(source.language)
    if grammar == "python":
        data, _ = languages.blank_qualifiers(source.data, grammar)
        tree = languages.parser(grammar).parse(data)
        src = Source(source.path, data)
        errors = syntax_errors(src, tree.root_node)
        if errors and strict:
            raise InputError(f"{source.path}: {len(errors)} syntax error(s)", errors)
        from xlate.parse.triton import build_triton_unit

        unit = build_triton_unit(src, tree.root_node, source.language)
        unit.warnings = list(source.warnings) + [_as_warning(e) for e in errors[:MAX_GAP_WARNINGS]]
    else:
        from xlate.parse.cfamily import build_unit
        from xlate.parse.frontend import include_macros, parse_c

        macros = include_macros(source.path, source.data, include_dirs)
        if context is not None:
            macros = macros.merged_under(context)
        parsed = parse_c(source.data, source.path, grammar, macros)
        src = Source(source.path, parsed.view)
        if strict and parsed.root.has_error:
            errors = syntax_errors(src, parsed.root)
            raise InputError(f"{source.path}: {len(errors)} syntax error(s)", errors)
        unit = build_unit(src, source.language, grammar, parsed.root, parsed.blanked)
        unit.project_macros = macros
        unit.warnings = list(source.warnings) + gap_warnings(src, parsed.view, parsed.gaps, unit)
    unit.text = source.text
    return unit


def gap_warnings(src: Source, view: bytes, gaps: list[tuple[int, int, bool]], unit: KernelUnit) -> list[Located]:
    """What the grammar could not read, as warnings: the port still translates it, token by token. A missing
    `;` after a statement macro (`CHECK(cudaMalloc(&p, n))` on its own line) is how such macros are written,
    not a gap."""
    out: list[Located] = []
    real = [(s, e, missing) for s, e, missing in gaps if not (missing and _after_statement_macro(view, s))]
    for s, e, missing in real[:MAX_GAP_WARNINGS]:
        span = src.span_bytes(s, e)
        if missing:
            what = "grammar gap: a token the grammar expected is missing here"
        else:
            first = view[s:e].decode("utf-8", "replace").strip().splitlines()
            what = "grammar gap: unexpected input" + (f" near '{first[0][:40]}'" if first else "")
        kernel = next((k.name for k in unit.kernels if k.span and k.span.start_byte <= s < k.span.end_byte), None)
        if kernel:
            what += f" in kernel '{kernel}'"
        out.append(located("XL0002", src.path, span.line, span.col, what=what))
    if len(real) > MAX_GAP_WARNINGS:
        last = out[-1]
        out.append(located("XL0002", src.path, last.line, last.col,
                           what=f"... and {len(real) - MAX_GAP_WARNINGS} more grammar gap(s) in this file"))
    return out


STATEMENT_MACRO_CALL = re.compile(rb"\b[A-Z_][A-Z0-9_]*\s*\(")


def _after_statement_macro(view: bytes, at: int) -> bool:
    """`at` follows `NAME(...)` with NAME in capitals, ending its line (the macro supplies its own `;`)."""
    while True:  # step back over blank and comment-only lines between the macro and the gap
        line_start = view.rfind(b"\n", 0, max(0, at - 1)) + 1
        stripped = view[line_start:at].strip()
        if line_start == 0 or (stripped and not stripped.startswith((b"//", b"/*", b"*"))):
            break
        at = line_start - 1
    head = view[line_start:at].rstrip()
    while head.endswith(b")") and not STATEMENT_MACRO_CALL.match(head.lstrip()):
        # a call spanning lines: look at the line that opens it
        prev = view.rfind(b"\n", 0, max(0, line_start - 1)) + 1
        if prev == line_start or line_start - prev > 4096:
            break
        line_start = prev
        head = view[line_start:at].rstrip()
    return head.endswith(b")") and bool(STATEMENT_MACRO_CALL.match(head.lstrip()))


def _as_warning(e: Located) -> Located:
    return located("XL0002", e.path, e.line, e.col, what=e.message.replace("syntax error", "grammar gap", 1))


def parse_file(path: str | os.PathLike[str], language: Language | None = None, *, strict: bool = False,
               include_dirs: tuple[str, ...] = ()) -> KernelUnit:
    return parse_text(read_source(path, language), strict=strict, include_dirs=include_dirs)


def parse_string(text: str, path: str = "<string>.cu", language: Language | None = None, *,
                 strict: bool = False, context: ProjectMacros | None = None,
                 include_dirs: tuple[str, ...] = ()) -> KernelUnit:
    from xlate.parse.source import detect_language

    data = to_bytes(text)
    _, warnings = decode(path, data)
    return parse_text(SourceText(path, data, text, language or detect_language(path, text), warnings), strict=strict,
                      include_dirs=include_dirs, context=context)


__all__ = ["parse_file", "parse_string", "parse_text"]
