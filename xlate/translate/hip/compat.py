"""The compat block (rules/compat.yaml): inserted by CUDA -> HIP after the leading #includes with the helpers
the port uses, and removed again by HIP -> CUDA together with the runtime #include a port may have added."""

from __future__ import annotations

import functools
import re
from typing import Any

import tree_sitter as ts

from xlate.translate.hip.diagnostics import rules_file
from xlate.translate.hip.job import Job

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
    """CUDA -> HIP: the runtime #include hipcc needs (when the source had none) and the compat block."""
    c = compat()
    runtime = set(c["runtime_headers"])
    has_runtime = any(new in runtime or old in runtime for _, old, new in includes)
    anchor, first = _top_level(job)
    # Device code needs hip_runtime.h; host code that names the API needs it only when nvcc's implicit
    # include was all it had (a file including e.g. cuda_runtime_api.h keeps just its mapped header).
    mapped_any = any(new is not None for _, _, new in includes)
    need_runtime = not has_runtime and bool(job.unit.functions or job.helpers or (len(job.edits) and not mapped_any))
    anchor_end = anchor.end_byte if anchor is not None else None
    nl = newline(job.data)
    if need_runtime:
        at = _after_pragmas(first, len(job.data))
        job.edits.insert(at, c["added_include"] + nl, "compat:runtime-include")
        job.diag("XL1007", job.main, at, header=sorted(runtime)[0])
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
