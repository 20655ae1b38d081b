"""C++ that nvcc accepts and hipcc (clang) rejects, fixed where the fix cannot change what the code computes.

`register`: ISO C++17 removed the storage class; clang rejects it in C++17 (-Wregister is an error there) while
nvcc only warns. hipcc compiles HIP as C++17, so the port drops the keyword (it never had an effect on what the
code computes). C sources (.c) keep it: C still has it.

Functions the file defines that hip_runtime.h defines too (rules/hip_defines.yaml: atomicMin on float, which
CUDA lacks): the definition is kept for every platform but AMD, between two marked lines, and HIP's own serves
AMD (same contract: the atomic operation, returning the old value). The reverse port removes the two lines.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import tree_sitter as ts

from xlate.translate.hip.compat import newline
from xlate.translate.hip.diagnostics import rules_file
from xlate.translate.hip.job import Job, Region

_REGISTER = re.compile(rb"(?<![A-Za-z0-9_])register(?![A-Za-z0-9_])")
_SPACE = re.compile(rb"[ \t]*")


def drop_register(job: Job, region: Region) -> None:
    if job.direction != "cuda->hip" or job.path.endswith(".c"):
        return
    first = None
    for m in _REGISTER.finditer(region.data, region.lo, region.hi):
        node = region.root.descendant_for_byte_range(m.start(), m.end())
        if node is not None and node.type == "register":
            node = node.parent
        if node is None or node.type != "storage_class_specifier" or node.start_byte != m.start():
            continue
        s = region.start(node)
        e = s + (m.end() - m.start())
        e += len(_SPACE.match(job.data, e).group())  # type: ignore[union-attr]
        if job.skipped(s, e) or not job.edits.claim(s, e):
            continue
        job.edits.delete(s, e, "language:register")
        job.stats.count("converted", "language", "register")
        first = node if first is None else first
    if first is not None and not any(d.code == "XL1012" for d in job.diags):  # one note per file
        job.diag("XL1012", region, first, rule="language:register")


@functools.cache
def hip_defines() -> dict[str, Any]:
    return dict(rules_file("hip_defines.yaml"))


def guard_hip_defined(job: Job) -> None:
    """CUDA -> HIP: fence off the file's definitions of functions hip_runtime.h defines for AMD (XL1017)."""
    table = hip_defines()
    names = table["functions"]
    if not any(n.encode() in job.data for n in names):
        return
    nl = newline(job.data)
    for fn in _file_scope_functions(job.main.root):
        name, params = _name_and_params(job, fn)
        if name not in names or params not in names[name]:
            continue
        s, e = fn.start_byte, fn.end_byte
        line_start = job.data.rfind(b"\n", 0, s) + 1
        if job.data[line_start:s].strip() or job.skipped(s, e):
            continue  # not at the start of its line: leave it (a guard line cannot go there)
        rid = f"hip_defines:{name}"
        job.edits.insert(line_start, table["guard"] + nl, rid)
        job.edits.insert(e, nl + table["end"], rid)
        job.diag("XL1017", job.main, fn, rule=rid, name=name, params=params.replace(",", ", "))


def unguard_hip_defined(job: Job) -> None:
    """HIP -> CUDA: remove exactly the two lines guard_hip_defined wrote."""
    table = hip_defines()
    nl = newline(job.data).encode()
    for line in (table["guard"].encode() + nl, nl + table["end"].encode()):
        at = job.data.find(line)
        while at >= 0:
            job.edits.delete(at, at + len(line), "hip_defines")
            job.skip.append((at, at + len(line)))
            at = job.data.find(line, at + len(line))


_CONDITIONALS = ("preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef")


def _file_scope_functions(root: ts.Node) -> list[ts.Node]:
    """Function definitions in the global namespace: at file scope, under #if blocks or extern "C"."""
    out, stack = [], list(reversed(root.children))
    while stack:
        n = stack.pop()
        if n.type == "function_definition":
            out.append(n)
        elif n.type in _CONDITIONALS or n.type in ("linkage_specification", "declaration_list"):
            stack.extend(reversed(n.children))
    return out


def _name_and_params(job: Job, fn: ts.Node) -> tuple[str, str]:
    decl = fn.child_by_field_name("declarator")
    while decl is not None and decl.type != "function_declarator":
        decl = decl.child_by_field_name("declarator")
    if decl is None:
        return "", ""
    ident = decl.child_by_field_name("declarator")
    plist = decl.child_by_field_name("parameters")
    if ident is None or plist is None or ident.type != "identifier":
        return "", ""
    types = []
    for p in plist.named_children:
        if p.type != "parameter_declaration":
            return "", ""
        type_node = p.child_by_field_name("type")
        stars = ""
        d = p.child_by_field_name("declarator")
        while d is not None and d.type in ("pointer_declarator", "reference_declarator"):
            stars += "*" if d.type == "pointer_declarator" else "&"
            d = d.child_by_field_name("declarator")
        if type_node is None:
            return "", ""
        types.append(job.main.text(type_node).replace(" ", "") + stars)
    return job.main.text(ident), ",".join(types)
