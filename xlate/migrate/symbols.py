"""Names a project defines itself (macros, functions, types), found by text in each file of the library, so that
the translators never report a project's own `cudaCheck` or `CUDA_CALL` as an unknown CUDA name.

A regex scan, not the parser: discovery runs it on every file in the main process, on files that may not parse.
It errs towards fewer names: a function counts only where it is declared or defined at the start of a line with
a type before it, so a call such as `return cudaGetLastError();` is never taken for a definition."""

from __future__ import annotations

import re

MACRO = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)", re.M)
TYPE = re.compile(r"\b(?:struct|class|union|enum(?:[ \t]+(?:class|struct))?)[ \t]+"
                  r"(?:(?:__align__|alignas|__attribute__|__declspec)[ \t]*\((?:[^()]|\([^()]*\))*\)[ \t]*)*"
                  r"([A-Za-z_]\w*)[ \t]*(?:final\b[ \t]*)?[:{;]")
TYPEDEF = re.compile(r"\btypedef\b[^;{}()]*?\b([A-Za-z_]\w*)[ \t]*(?:\[[^\]]*\][ \t]*)*;")
CLOSED_TYPEDEF = re.compile(r"^\}[ \t]*([A-Za-z_]\w*)[ \t]*;", re.M)  # `typedef struct {...} Pair;`
USING = re.compile(r"^[ \t]*using[ \t]+([A-Za-z_]\w*)[ \t]*=", re.M)
# Declarations and definitions at the start of a line: one or more type words (qualifiers, templates, pointers)
# before the name; the first word must not be a statement keyword.
FUNCTION = re.compile(r"^(?:template[ \t]*<[^>\n]*>[ \t]*)?([A-Za-z_][\w:<>,]*)[ \t*&]+(?:[A-Za-z_][\w:<>,]*[ \t*&]+)*"
                      r"([A-Za-z_]\w*)[ \t]*\(", re.M)
KEYWORDS = {"return", "else", "case", "goto", "throw", "new", "delete", "sizeof", "co_return", "co_yield", "if", "for",
            "while", "switch", "do", "using", "namespace", "typedef", "operator", "decltype", "static_assert", "define",
            "struct", "class", "union", "enum"}


def defined_names(text: str) -> set[str]:
    names = set(MACRO.findall(text)) | set(TYPE.findall(text)) | set(TYPEDEF.findall(text)) | set(USING.findall(text))
    names |= set(CLOSED_TYPEDEF.findall(text))
    for m in FUNCTION.finditer(text):
        first, name = m.group(1), m.group(2)
        if first not in KEYWORDS and name not in KEYWORDS:
            names.add(name)
    return names
