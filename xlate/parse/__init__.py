"""Parsing: source file -> tree-sitter tree -> KernelUnit (see xlate.model)."""

from __future__ import annotations

import gc
import os

from xlate.errors import InputError
from xlate.model import KernelUnit, Language
from xlate.parse import languages
from xlate.parse.nodes import Source, syntax_errors
from xlate.parse.source import SourceText, read_source


def parse_text(source: SourceText, *, strict: bool = True) -> KernelUnit:
    """Build the model of one source. With `strict`, any syntax error raises InputError (exit 2)."""
    # The model is many small acyclic objects: cyclic GC passes over them cost a third of the build.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _parse_text(source, strict)
    finally:
        if enabled:
            gc.enable()


def _parse_text(source: SourceText, strict: bool) -> KernelUnit:
    grammar = languages.GRAMMAR_OF[source.language]
    data, blanked = languages.blank_qualifiers(source.data, grammar)
    tree = languages.parser(grammar).parse(data)
    src = Source(source.path, data)
    errors = syntax_errors(src, tree.root_node)
    if errors and strict:
        raise InputError(f"{source.path}: {len(errors)} syntax error(s)", errors)
    if grammar == "python":
        from xlate.parse.triton import build_triton_unit

        unit = build_triton_unit(src, tree.root_node)
    else:
        from xlate.parse.cfamily import build_unit

        unit = build_unit(src, source.language, grammar, tree.root_node, blanked)
    unit.text = source.text
    return unit


def parse_file(path: str | os.PathLike[str], language: Language | None = None, *, strict: bool = True) -> KernelUnit:
    return parse_text(read_source(path, language), strict=strict)


def parse_string(text: str, path: str = "<string>.cu", language: Language | None = None, *, strict: bool = True) -> KernelUnit:
    from xlate.parse.source import detect_language

    data = text.encode("utf-8")
    return parse_text(SourceText(path, data, text, language or detect_language(path, text)), strict=strict)


__all__ = ["parse_file", "parse_string", "parse_text"]
