"""Strict extraction of the one fenced code block an answer must contain. Anything else (no block, several,
an unclosed one, an empty one, the wrong language) is a failed attempt with a message the model gets back."""

from __future__ import annotations

import re
from dataclasses import dataclass

FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([\w+#.-]*)[^\n]*$")

# Fence tags accepted per target language (an untagged block is accepted too).
TAGS = {
    "triton": {"python", "py", "python3", "triton"},
    "cuda": {"cuda", "cu", "cpp", "c++", "cxx", "c"},
    "hip": {"hip", "cpp", "c++", "cxx", "c", "cuda"},
    "ascendc": {"cpp", "c++", "cxx", "c", "ascendc"},
}


@dataclass
class Extracted:
    code: str | None
    failure: str | None = None  # empty answer, no code block, several code blocks, truncated, wrong language, empty code block
    message: str = ""


def extract(answer: str, target: str, finish_reason: str | None = None) -> Extracted:
    if not answer.strip():
        return Extracted(None, "empty answer", "the answer was empty")
    blocks: list[tuple[str, list[str]]] = []
    open_fence: tuple[str, str] | None = None
    body: list[str] = []
    for line in answer.splitlines():
        m = FENCE.match(line)
        if open_fence is None:
            if m:
                open_fence, body = (m.group(1), m.group(2).lower()), []
            continue
        fence, _ = open_fence
        if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not m.group(2) \
                and line.strip() == m.group(1):
            blocks.append((open_fence[1], body))
            open_fence = None
        else:
            body.append(line)
    truncated = open_fence is not None
    if truncated and not blocks:
        why = " (the provider stopped at the token limit)" if finish_reason == "length" else ""
        return Extracted(None, "truncated", f"the code block is not closed: the answer looks truncated{why}")
    if truncated or len(blocks) > 1:
        n = len(blocks) + (1 if truncated else 0)
        return Extracted(None, "several code blocks", f"the answer has {n} code blocks; give exactly one")
    if not blocks:
        why = " and stopped at the token limit" if finish_reason == "length" else ""
        return Extracted(None, "no code block", f"the answer has no fenced code block{why}")
    tag, lines = blocks[0]
    if tag and tag not in TAGS.get(target, set()):
        return Extracted(None, "wrong language", f"the code block is tagged '{tag}'; a {target} port was asked for")
    code = "\n".join(lines).strip("\n")
    if not code.strip():
        return Extracted(None, "empty code block", "the code block is empty")
    return Extracted(code + "\n")
