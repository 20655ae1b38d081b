"""The compat block (rules/compat.yaml): inserted by CUDA -> HIP after the leading #includes with the helpers
the port uses, and removed again by HIP -> CUDA together with the runtime #include a port may have added."""

from __future__ import annotations

import functools
import re
from typing import Any

import tree_sitter as ts

from xlate.translate.hip.diagnostics import rules_file
from xlate.translate.hip.job import Job
from xlate.translate.hip.project import reaches_cuda

LEADING = {"comment", "preproc_include", "preproc_def", "preproc_function_def", "preproc_call"}


@functools.cache
def compat() -> dict[str, Any]:
    return rules_file("compat.yaml")


def ordered(helpers: set[str]) -> list[str]:
    """The helpers and what they require, in the order of compat.yaml."""
    table = compat()["helpers"]
    unknown = helpers - set(table)
    if unknown:
        raise KeyError(f"compat helpers not in rules/compat.yaml: {', '.join(sorted(unknown))}")
    need = set(helpers)
    stack = list(helpers)
    while stack:
        for dep in table[stack.pop()].get("requires", []):
            if dep not in need:
                need.add(dep)
                stack.append(dep)
    return [h for h in table if h in need]


def block(helpers: set[str]) -> str:
    c = compat()
    parts = [c["begin"], c["preamble"].rstrip("\n")]
    parts += [c["helpers"][h]["text"].rstrip("\n") for h in ordered(helpers)]
    parts.append(c["end"])
    return "\n".join(parts) + "\n"


def _top_level(job: Job) -> tuple[ts.Node | None, ts.Node | None]:
    """(last #include of the file's leading preprocessor run, first node that is not a comment)."""
    anchor = first = None
    for child in job.main.root.children:
        if first is None and child.type != "comment":
            first = child
        if child.type not in LEADING:
            break
        if child.type == "preproc_include":
            anchor = child
    return anchor, first


def insert(job: Job, includes: list[tuple[ts.Node, str, str | None]]) -> None:
    """CUDA -> HIP: the runtime #include hipcc needs and the compat block.

    nvcc includes cuda_runtime.h implicitly, before anything else in a .cu file; hipcc includes only its
    wrapper of attributes, not the runtime. So the port adds hip_runtime.h where the source relied on nvcc:
    - a file that uses device code or the API without including the runtime (today's rule below);
    - a translation unit (not a header) whose project headers use CUDA: they include the runtime once ported,
      possibly after the unit's own #defines (a `#define T float` then breaks HIP's headers), so the unit
      includes it first, as nvcc did;
    - a file whose own unconditional runtime include comes after its #defines, project includes or code:
      the added one goes first (the later one is then a no-op).
    The include goes at the very top (after leading comments and `#pragma`s). A header keeps compiling alone;
    the translation units that include it get the runtime before their own macros. A runtime include only
    under a conditional is the project's choice (a CPU build) and is left alone."""
    c = compat()
    runtime = set(c["runtime_headers"])
    has_runtime = any(new in runtime or old in runtime for _, old, new in includes)
    anchor, first = _top_level(job)
    unit = not _is_header(job.path)
    # Device code needs hip_runtime.h; host code that names the API needs it only when nvcc's implicit
    # include was all it had (a file including e.g. cuda_runtime_api.h keeps just its mapped header).
    mapped_any = any(new is not None for _, _, new in includes)
    late = _late_runtime(job, includes, runtime)
    if late is not None:
        need_runtime = late
    elif has_runtime:
        need_runtime = False  # only under a conditional
    else:
        need_runtime = bool(job.unit.functions or job.helpers or (len(job.edits) and not mapped_any)) or (
            unit and not job.path.endswith(".c") and reaches_cuda(job.path, job.data))
    anchor_end = anchor.end_byte if anchor is not None else None
    nl = newline(job.data)
    if need_runtime:
        at = _after_pragmas(first, len(job.data))
        job.edits.insert(at, c["added_include"] + nl, "compat:runtime-include")
        job.diag("XL1016" if late else "XL1007", job.main, at, header=sorted(runtime)[0])
        if anchor_end is None or anchor_end < at:
            anchor_end = at
    if not job.helpers:
        return
    text = block(job.helpers).replace("\n", nl)
    if anchor_end is not None:
        job.edits.insert(anchor_end, nl + text, "compat:block")
    else:
        at = first.start_byte if first is not None else len(job.data)
        job.edits.insert(at, text + nl, "compat:block")


HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".cuh", ".inl", ".inc", ".tpp", ".ipp")


def _is_header(path: str) -> bool:
    return path.lower().endswith(HEADER_SUFFIXES)


def _late_runtime(job: Job, includes: list[tuple[ts.Node, str, str | None]], runtime: set[str]) -> bool | None:
    """For the file's first top-level (unconditional) runtime include: True when a #define, a project include,
    a conditional or code comes before it, False when only comments, pragmas and system includes do; None
    when there is no such include."""
    runtime_at = {inc.start_byte for inc, old, new in includes if new in runtime or old in runtime}
    user_first = False
    for child in job.main.root.children:
        if child.type == "preproc_include":
            if child.start_byte in runtime_at:
                return user_first
            path = child.child_by_field_name("path")
            user_first = user_first or path is None or path.type != "system_lib_string"
        elif child.type not in ("comment", "preproc_call"):
            user_first = True
    return None


def newline(data: bytes) -> str:
    """The file's line ending (CRLF files keep CRLF in what the port inserts)."""
    return "\r\n" if data.count(b"\r\n") * 2 > data.count(b"\n") else "\n"


def _after_pragmas(first: ts.Node | None, end: int) -> int:
    """Where a new first #include goes: before the first code line, after a leading `#pragma once`."""
    node = first
    while node is not None and node.type == "preproc_call":
        if node.next_sibling is None:
            return node.end_byte
        node = node.next_sibling
    return node.start_byte if node is not None else end


def remove(job: Job) -> None:
    """HIP -> CUDA: drop the compat block and the added runtime #include (exactly what insert() wrote)."""
    c = compat()
    pat = re.compile(re.escape(c["begin"].encode()) + rb".*?" + re.escape(c["end"].encode()) + rb"[^\n]*\n?", re.S)
    nl = newline(job.data).encode()
    for m in pat.finditer(job.data):
        s, e = m.start(), m.end()
        if s >= 2 * len(nl) and job.data[s - 2 * len(nl) : s] == nl + nl:
            s -= len(nl)  # the blank line insert() put before the block
        elif s == 0 and job.data[e : e + len(nl)] == nl:
            e += len(nl)
        job.edits.delete(s, e, "compat:block")
        job.skip.append((s, e))
    line = c["added_include"].encode() + nl
    at = job.data.find(line)
    if at >= 0 and (at == 0 or job.data[at - 1 : at] == b"\n"):
        job.edits.delete(at, at + len(line), "compat:runtime-include")
        job.skip.append((at, at + len(line)))
