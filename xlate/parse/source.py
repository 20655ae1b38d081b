"""Reading a source file with a clear error for every way it can be unusable."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from xlate.errors import InputError, Located
from xlate.model import Language

EXTENSIONS: dict[str, Language] = {
    ".cu": "cuda",
    ".cuh": "cuda",
    ".h": "cuda",
    ".hpp": "cuda",
    ".hip": "hip",
    ".cpp": "cpp",
    ".cc": "cpp",
    ".cxx": "cpp",
    ".py": "triton",
}

# Files of these languages whose text shows they are AscendC kernels.
ASCENDC_MARKERS = ("__aicore__", "kernel_operator.h")
HIP_MARKERS = ("hip/hip_runtime.h", "hipLaunchKernelGGL")


@dataclass
class SourceText:
    path: str
    data: bytes
    text: str
    language: Language


def detect_language(path: str, text: str) -> Language:
    ext = os.path.splitext(path)[1].lower()
    language = EXTENSIONS.get(ext)
    if language is None:
        known = ", ".join(sorted(EXTENSIONS))
        raise InputError(f"{path}: error: unknown source type '{ext or '(no extension)'}' (expected one of {known})")
    if language in ("cpp", "cuda") and any(marker in text for marker in ASCENDC_MARKERS):
        return "ascendc"
    if language == "cuda" and ext in (".h", ".hpp") and any(m in text for m in HIP_MARKERS):
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
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(
            f"{name}:{line}:{col}: error: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})",
            [Located(name, line, col, f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})")],
        ) from None
    return SourceText(name, data, text, language or detect_language(name, text))
