"""Reading a source file with a clear error for every way it can be unusable."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from xlate.diagnostics import located
from xlate.errors import InputError, Located
from xlate.model import Language
from xlate.targets import all_targets

# Every C-family file is read with the CUDA grammar (a superset of C++): host .cpp files launch kernels with
# <<<...>>> and call the CUDA runtime too. Its language is CUDA (the suffixes of data/targets.yaml) unless its
# text shows HIP or AscendC.
CUDA_BY_NAME = (".cu", ".cuh")


def extensions() -> dict[str, Language]:
    """File suffix -> the language its files are read as (the first target to claim a suffix has it)."""
    out: dict[str, Language] = {}
    for t in all_targets().values():
        for ext in t.source_suffixes:
            out.setdefault(ext, t.language)
    return out

# Files whose text shows they are AscendC kernels, or HIP (a .cpp or .h of a HIP program).
ASCENDC_MARKERS = ("__aicore__", "kernel_operator.h")
HIP_MARKERS = ("hip/hip_runtime.h", "hipLaunchKernelGGL", "hip/hip_runtime_api.h")

# A file with more undecodable bytes than this share (and more than a handful) is not text: Latin-1 or
# Windows-1252 comments leave a few, binary data leaves about half.
MAX_UNDECODABLE = 0.10


@dataclass
class SourceText:
    path: str
    data: bytes
    text: str  # bytes that are not UTF-8 are kept as lone surrogates (surrogateescape): `to_bytes` gives them back
    language: Language
    warnings: list[Located] = field(default_factory=list)


def to_bytes(text: str) -> bytes:
    """The bytes of a source text, bytes that were not UTF-8 included, exactly as read."""
    return text.encode("utf-8", "surrogateescape")


def to_text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def detect_language(path: str, text: str) -> Language:
    ext = os.path.splitext(path)[1].lower()
    table = extensions()
    language = table.get(ext)
    if language is None:
        known = ", ".join(sorted(table))
        raise InputError(f"{path}: error: unknown source type '{ext or '(no extension)'}' (expected one of {known})")
    if language == "cuda" and any(marker in text for marker in ASCENDC_MARKERS):
        return "ascendc"
    if language == "cuda" and ext not in CUDA_BY_NAME and any(m in text for m in HIP_MARKERS) and (
            "cuda_runtime" not in text):
        return "hip"
    return language


def read_source(path: str | os.PathLike[str], language: Language | None = None) -> SourceText:
    name = str(path)
    p = Path(path)
    if not p.exists():
        raise InputError(f"{name}: error: no such file")
    if p.is_dir():
        raise InputError(f"{name}: error: is a directory (give a source file; `xlate migrate` takes directories)")
    try:
        data = p.read_bytes()
    except PermissionError:
        raise InputError(f"{name}: error: permission denied") from None
    except OSError as exc:
        raise InputError(f"{name}: error: cannot read: {exc.strerror or exc}") from None
    if not data.strip():
        raise InputError(f"{name}: error: empty file (no kernels to read)")
    if b"\0" in data[:65536] or b"\0" in data:
        raise InputError(f"{name}: error: binary file (contains NUL bytes), not source text")
    text, warnings = decode(name, data)
    return SourceText(name, data, text, language or detect_language(name, text), warnings)


def decode(name: str, data: bytes) -> tuple[str, list[Located]]:
    """The text of a source file. Bytes that are not UTF-8 (a Windows-1252 quote in a comment) pass through
    unchanged, with a warning; a file that is mostly not UTF-8 is not source text (exit 2)."""
    try:
        return data.decode("utf-8"), []
    except UnicodeDecodeError as exc:
        first = exc.start
    text = data.decode("utf-8", "surrogateescape")
    bad = sum(1 for ch in text if "\udc80" <= ch <= "\udcff")
    line = data.count(b"\n", 0, first) + 1
    col = first - (data.rfind(b"\n", 0, first) + 1) + 1
    what = f"not UTF-8 text (byte 0x{data[first]:02x} at offset {first})"
    if bad > 8 and bad > MAX_UNDECODABLE * len(data):
        raise InputError(f"{name}:{line}:{col}: error: {what}, {bad} such bytes: not source text",
                         [Located(name, line, col, f"{what}, {bad} such bytes: not source text")])
    return text, [located("XL0001", name, line, col, what=what, count=bad)]
