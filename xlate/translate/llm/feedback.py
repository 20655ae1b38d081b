"""What of a compiler's or a worker's output may go back to the model: messages about the candidate's own lines,
and nothing else.

A compiler that was made to open another file (a header the candidate should not reach, a secret) quotes that
file in its messages: "secret.txt(1): error: ... SECRET-TOKEN". So the log is parsed into diagnostics; only those
whose file is the candidate survive, each with the candidate's own line (taken from the candidate's text, never
from the compiler's echo) and a caret. Runtime failures keep the exception line and the traceback frames in the
candidate's module; every other path is replaced by <path>. The model learns what is wrong with its code and
nothing about the machine it ran on.
"""

from __future__ import annotations

import re

CLANG = re.compile(r"^(?P<file>[^\s:][^:\n]*?):(?P<line>\d+):(?:(?P<col>\d+):)? (?P<sev>fatal error|error|warning|note): "
                   r"(?P<msg>.*)$")
EDG = re.compile(r"^(?P<file>[^\s(][^(\n]*?)\((?P<line>\d+)\): (?P<sev>catastrophic error|error|warning|remark|note): "
                 r"(?P<msg>.*)$")
FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)')
EXCEPTION = re.compile(r"^(?:[\w.]+\.)?(?P<name>[A-Z]\w*(?:Error|Exception|Warning|Exit|Interrupt))\b:?(?P<msg>.*)$")
ARTIFACT = re.compile(r"(?:/[\w.\-+@~]+)*/[0-9a-f]{32}\.py\b")  # a Triton module as the worker loaded it
PATH = re.compile(r"(?<![\w<])(?:~|\.{1,2})?(?:/[\w.\-+@~]+)+/?")
MAX_DIAGNOSTICS = 12
MAX_CHARS = 3000


def scrub_paths(text: str, candidate: str) -> str:
    return PATH.sub("<path>", ARTIFACT.sub(candidate, text))


def _excerpt(code_lines: list[str], line: int, col: int | None) -> list[str]:
    if not 1 <= line <= len(code_lines):
        return []
    src = code_lines[line - 1].rstrip()
    out = [f"  {src}"]
    if col and 1 <= col <= len(src) + 1:
        out.append("  " + " " * (col - 1) + "^")
    return out


def reduce_compiler_log(log: str, code: str, candidate: str) -> str:
    """Diagnostics of `log` located in the candidate (file name `candidate`, e.g. '<candidate>.hip'), each
    followed by the candidate's own line; a count of the others, which are not shown."""
    code_lines = code.splitlines()
    kept: list[str] = []
    foreign = 0
    names = {candidate, candidate.rsplit("/", 1)[-1]}
    for raw in log.splitlines():
        m = CLANG.match(raw.strip()) or EDG.match(raw.strip())
        if m is None:
            continue
        file = m.group("file").strip()
        if file not in names and not ARTIFACT.fullmatch(file):
            foreign += m.group("sev") != "note"
            continue
        if len(kept) >= MAX_DIAGNOSTICS * 3:
            continue
        line = int(m.group("line"))
        col = int(m.group("col")) if m.groupdict().get("col") else None
        where = f"{candidate}:{line}" + (f":{col}" if col else "")
        kept.append(f"{where}: {m.group('sev')}: {scrub_paths(m.group('msg').strip(), candidate)}")
        kept.extend(_excerpt(code_lines, line, col))
    if foreign:
        kept.append(f"({foreign} diagnostic(s) located outside the candidate file are not shown)")
    if not kept:
        return "the compiler rejected the file, but reported nothing about its own lines"
    return "\n".join(kept)[:MAX_CHARS]


def reduce_runtime(text: str, code: str, candidate: str) -> str:
    """A worker's failure message and stderr tail: exception lines (paths scrubbed), traceback frames in the
    candidate's module with its own line, and lines that repeat the candidate's code. Nothing else."""
    code_lines = code.splitlines()
    own = {ln.strip() for ln in code_lines if len(ln.strip()) > 3}
    out: list[str] = []
    lines = text.splitlines()
    if lines:
        out.append(scrub_paths(lines[0], candidate)[:500])  # xlate's own summary, or the exception
    for raw in lines[1:]:
        s = raw.strip()
        frame = FRAME.match(raw)
        if frame:
            if ARTIFACT.fullmatch(frame.group("file")) or frame.group("file") == candidate:
                n = int(frame.group("line"))
                out.append(f"  {candidate}:{n}")
                out.extend(_excerpt(code_lines, n, None))
            continue
        if EXCEPTION.match(s):
            out.append(scrub_paths(s, candidate)[:500])
        elif s in own or (s and set(s) <= set("^~ ")):
            out.append(raw.rstrip()[:300])
    dedup: list[str] = []
    for ln in out:
        if not dedup or dedup[-1] != ln:
            dedup.append(ln)
    return "\n".join(dedup)[:MAX_CHARS]
