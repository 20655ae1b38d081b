"""C++ that nvcc accepts and hipcc (clang) rejects, fixed where the fix cannot change what the code computes.

`register`: ISO C++17 removed the storage class; clang rejects it in C++17 (-Wregister is an error there) while
nvcc only warns. hipcc compiles HIP as C++17, so the port drops the keyword (it never had an effect on what the
code computes). C sources (.c) keep it: C still has it.
"""

from __future__ import annotations

import re

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
