"""The one C-family front end: bytes in, a tree-sitter tree that covers as much of the file as the grammar can
reach, plus a record of every place it could not (never an exception for source text).

`parse_c` is cached by content, so the model builder, the translators and the spec inference that ask for the
same file share one parse. See normalize.py for the rewrites; byte offsets and line numbers are always those of
the user's file.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, field

import tree_sitter as ts

from xlate.model import KernelUnit, ProjectMacros
from xlate.parse import languages, normalize
from xlate.parse.nodes import walk

MAX_ROUNDS = 6
INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.M)


@dataclass
class CParse:
    path: str
    data: bytes  # the file as given
    view: bytes  # what the model reads: attribute forms and qualifier macros blanked
    tree: ts.Tree  # parsed from the repaired buffer (same offsets as `data`)
    blanked: list[tuple[int, str]]  # (offset, qualifier) of each blanked qualifier word
    masked: list[tuple[int, int]] = field(default_factory=list)  # inactive #if branches: in no tree node
    repairs: list[tuple[int, int, str]] = field(default_factory=list)  # (start, end, rule) applied in ERROR nodes
    gaps: list[tuple[int, int, bool]] = field(default_factory=list)  # (start, end, missing) the grammar left

    @property
    def root(self) -> ts.Node:
        return self.tree.root_node


NO_MACROS = ProjectMacros()


def parse_c(data: bytes, path: str, grammar: str = "cuda", macros: ProjectMacros = NO_MACROS) -> CParse:
    """Parse C-family bytes. `macros`: what the headers the file includes define (include_macros)."""
    return _parse_c(data, path, grammar, macros)


@functools.lru_cache(maxsize=32)
def _parse_c(data: bytes, path: str, grammar: str, macros: ProjectMacros) -> CParse:
    base, blanked = languages.blank_qualifiers(data, grammar)
    known = dict(macros.qualifiers)
    for name, words in normalize.qualifier_macros(data).items():
        if words or not known.get(name):
            known[name] = words
    headers = frozenset(macros.statement_headers) | normalize.statement_macros(data)
    view, more = normalize.blank_view(base, known) if grammar == "cuda" else (base, [])
    blanked = sorted(blanked + more)
    parser = languages.parser(grammar)
    buf = bytearray(view)
    tree = parser.parse(bytes(buf))
    result = CParse(path, data, view, tree, blanked)
    if grammar != "cuda" or not tree.root_node.has_error:
        return result
    groups = normalize.conditional_groups(view)
    flattened: set[int] = set()
    weight = _weight(tree)
    split = [i for i, g in enumerate(groups) if normalize.unbalanced(view, g)]
    if split:  # conditionals that split a statement: keep their first branch as plain code
        cand = bytearray(buf)
        masked = [m for i in split for m in normalize.flatten(cand, groups[i])]
        t2 = parser.parse(bytes(cand))
        if _weight(t2) < weight:
            buf, tree, weight = cand, t2, _weight(t2)
            result.masked += masked
            flattened.update(split)
    for _ in range(MAX_ROUNDS):
        if not tree.root_node.has_error:
            break
        errors = _errors(tree.root_node)
        improved = False
        for attempt in ("both", "repairs", "groups"):
            cand = bytearray(buf)
            masked: list[tuple[int, int]] = []
            done: list[tuple[int, int, str]] = []
            chosen: list[int] = []
            if attempt in ("both", "groups"):
                chosen = _groups_at(groups, errors, flattened)
                for gi in chosen:
                    masked += normalize.flatten(cand, groups[gi])
            if attempt in ("both", "repairs"):
                done = normalize.repair_ranges(cand, [(s, e) for s, e, _ in errors], headers)
            if cand == buf:
                continue
            t2 = parser.parse(bytes(cand))
            w2 = _weight(t2)
            if w2 < weight:
                buf, tree, weight = cand, t2, w2
                result.masked += masked
                result.repairs += done
                flattened.update(chosen)
                improved = True
                break
        if not improved:
            break
    result.tree = tree
    result.gaps = _errors(tree.root_node)
    return result


def parse_unit(unit: KernelUnit) -> CParse:
    """The front end's parse of a unit's file (shared with the model builder through the cache)."""
    from xlate.parse.source import to_bytes

    grammar = languages.grammar_of(unit.language)
    return parse_c(to_bytes(unit.text), unit.path, grammar, unit.project_macros)


def _errors(root: ts.Node) -> list[tuple[int, int, bool]]:
    """Outermost ERROR nodes and MISSING tokens as (start, end, missing)."""
    if not root.has_error:
        return []
    out: list[tuple[int, int, bool]] = []
    stack = [root]
    while stack:
        n = stack.pop()
        if n.is_missing:
            out.append((n.start_byte, n.end_byte, True))
        elif n.type == "ERROR":
            out.append((n.start_byte, n.end_byte, False))
        elif n.has_error:
            stack.extend(reversed(n.children))
    return out


def _weight(tree: ts.Tree) -> int:
    """How much of the file the grammar failed on: bytes inside ERROR nodes, and a little per MISSING token."""
    return sum((e - s) if not missing else 8 for s, e, missing in _errors(tree.root_node))


def _groups_at(groups: list[normalize.Group], errors: list[tuple[int, int, bool]], done: set[int]) -> list[int]:
    """Conditional groups to flatten: the innermost group around each error edge, and every group with an
    #else or #elif that lies inside an ERROR node."""
    chosen: set[int] = set()
    for s, e, missing in errors:
        for point in {s, max(s, e - 1)}:
            best = None
            for i, g in enumerate(groups):
                if g.start <= point < g.end and (best is None or g.end - g.start < groups[best].end - groups[best].start):
                    best = i
            if best is not None:
                chosen.add(best)
        if not missing:
            chosen.update(i for i, g in enumerate(groups) if s <= g.start and g.end <= e and len(g.directives) > 2)
    return sorted(chosen - done)


def gap_nodes(root: ts.Node) -> list[ts.Node]:
    """The ERROR and MISSING nodes of a tree, in order (for diagnostics)."""
    return [n for n in walk(root) if n.type == "ERROR" or n.is_missing] if root.has_error else []


# -- qualifier macros the file's project headers define ----------------------------------------------------------


def include_macros(path: str, data: bytes, include_dirs: tuple[str, ...] = (), depth: int = 4,
                   limit: int = 64) -> ProjectMacros:
    """The macros of the quoted #includes of `path` (followed transitively) and of the headers beside it: a
    header is often read alone while the macros it uses come from a sibling its includer included first."""
    if path and not path.startswith("<") and os.path.isfile(path):
        folder = os.path.dirname(os.path.abspath(path))
    elif include_dirs:  # a text from memory (a port built in its source's folder): its headers are found there
        folder = os.path.abspath(include_dirs[0])
    else:
        return NO_MACROS
    seen: set[str] = {os.path.abspath(path)}
    bodies: list[bytes] = []
    frontier = [(folder, data)]
    for _ in range(depth):
        nxt = []
        for where, text in frontier:
            for m in INCLUDE.finditer(text):
                rel = m.group(1).decode("utf-8", "replace")
                for d in (where, *include_dirs):
                    cand = os.path.normpath(os.path.join(d, rel))
                    if cand in seen or not os.path.isfile(cand) or len(seen) > limit:
                        continue
                    seen.add(cand)
                    body = _read_header(cand)
                    bodies.append(body)
                    nxt.append((os.path.dirname(cand), body))
                    break
        frontier = nxt
    for name in _folder_headers(folder)[:limit]:
        if name not in seen:
            seen.add(name)
            bodies.append(_read_header(name))
    qualifiers: dict[str, tuple[str, ...]] = {}
    for body in reversed(bodies):  # the nearest definition wins, but a definition with words beats an empty one
        for name, words in normalize.qualifier_macros(body).items():
            if words or not qualifiers.get(name):
                qualifiers[name] = words
    return ProjectMacros(tuple(sorted(qualifiers.items())), tuple(sorted(normalize.statement_macros(*bodies))))


HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".cuh", ".inl")


@functools.lru_cache(maxsize=256)
def _folder_headers_cached(folder: str, mtime: float) -> tuple[str, ...]:
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return ()
    return tuple(os.path.join(folder, n) for n in names if n.lower().endswith(HEADER_SUFFIXES))


def _folder_headers(folder: str) -> tuple[str, ...]:
    try:
        return _folder_headers_cached(folder, os.stat(folder).st_mtime)
    except OSError:
        return ()


@functools.lru_cache(maxsize=256)
def _read_header_cached(path: str, mtime: float, size: int) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read(4 << 20)
    except OSError:
        return b""


def _read_header(path: str) -> bytes:
    try:
        st = os.stat(path)
    except OSError:
        return b""
    return _read_header_cached(path, st.st_mtime, st.st_size)
