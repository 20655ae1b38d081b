"""tree-sitter languages, parsers and the query files of grammars/, loaded once per process."""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Sequence
from pathlib import Path

import tree_sitter as ts

from xlate.resources import grammars_dir, load_yaml
from xlate.targets import of_language


def grammar_of(language: str) -> str:
    """The grammar that reads `language` (data/targets.yaml), also the folder of grammars/ holding its queries."""
    return of_language(language).grammar


@functools.cache
def language(grammar: str) -> ts.Language:
    if grammar == "cuda":
        import tree_sitter_cuda as mod
    elif grammar == "cpp":
        import tree_sitter_cpp as mod
    elif grammar == "python":
        import tree_sitter_python as mod
    else:
        raise ValueError(f"no tree-sitter grammar named {grammar!r}")
    return ts.Language(mod.language())


def parser(grammar: str) -> ts.Parser:
    # Parsers are cheap; a fresh one per call keeps this safe across threads.
    return ts.Parser(language(grammar))


@functools.cache
def query(grammar: str, name: str) -> ts.Query:
    path: Path = grammars_dir() / grammar / f"{name}.scm"
    return ts.Query(language(grammar), path.read_text(encoding="utf-8"))


def captures(grammar: str, name: str, node: ts.Node) -> dict[str, list[ts.Node]]:
    return ts.QueryCursor(query(grammar, name)).captures(node)


def matches(grammar: str, name: str, node: ts.Node) -> list[dict[str, list[ts.Node]]]:
    return [m for _, m in ts.QueryCursor(query(grammar, name)).matches(node)]


def pattern_owners(query: ts.Query, parts: list[str], names: Sequence[str]) -> list[str]:
    """The name of the part each pattern of `query` (the parts joined by newlines) comes from, by where the
    pattern starts: compiling each part again only to count its patterns cost as much as the combined query."""
    ends, at = [], 0
    for part in parts:
        at += len(part.encode("utf-8")) + 1
        ends.append(at)
    return [names[bisect.bisect_right(ends, query.start_byte_for_pattern(i))] for i in range(query.pattern_count)]


@functools.cache
def _combined(grammar: str, names: tuple[str, ...]) -> tuple[ts.Query, list[tuple[int, str]]]:
    """One query made of several query files (captures prefixed by file), so a single traversal serves all."""
    parts = []
    for name in names:
        text = (grammars_dir() / grammar / f"{name}.scm").read_text(encoding="utf-8")
        parts.append(re.sub(r"@([A-Za-z_][\w.]*)", lambda m, n=name: f"@{n}__{m.group(1)}", text))
    q = ts.Query(language(grammar), "\n".join(parts))
    names_of = pattern_owners(q, parts, names)
    return q, [(names_of.index(name), name) for name in names_of]  # (the file's first pattern, the file)


def matches_many(grammar: str, names: list[str], node: ts.Node) -> dict[str, list[dict[str, list[ts.Node]]]]:
    """Like `matches` for each query file in `names`, in one pass over the tree."""
    q, owners = _combined(grammar, tuple(names))
    out: dict[str, list[dict[str, list[ts.Node]]]] = {n: [] for n in names}
    for pattern, caps in ts.QueryCursor(q).matches(node):
        name = owners[pattern][1]
        prefix = f"{name}__"
        out[name].append({k[len(prefix):]: v for k, v in caps.items()})
    return out


@functools.cache
def blank_words(grammar: str) -> tuple[str, ...]:
    path = grammars_dir() / grammar / "preprocess.yaml"
    if not path.exists():
        return ()
    return tuple(load_yaml(path).get("blank", []))


def blank_qualifiers(data: bytes, grammar: str) -> tuple[bytes, list[tuple[int, str]]]:
    """Replace qualifier macros the grammar does not know by spaces (offsets stay exact).

    Returns the new bytes and the (offset, word) of each blanked word, so the model can still report them.
    """
    words = blank_words(grammar)
    if not words:
        return data, []
    pattern = re.compile(rb"\b(" + b"|".join(re.escape(w.encode()) for w in words) + rb")\b")
    found: list[tuple[int, str]] = []

    def repl(m: re.Match[bytes]) -> bytes:
        found.append((m.start(), m.group(1).decode()))
        return b" " * len(m.group(1))

    return pattern.sub(repl, data), found
