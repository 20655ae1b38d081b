"""What every translator returns, and the registry that picks one per (source language, target)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from xlate.diagnostics import Diagnostic, Severity
from xlate.model import KernelUnit

__all__ = ["Diagnostic", "Edit", "Severity", "TranslateOptions", "Translation", "Translator"]


@dataclass
class Edit:
    """One rewrite, traceable to its rule: bytes [start, end) of the source became `new`."""

    start: int
    end: int
    old: str
    new: str
    rule: str  # e.g. "runtime:cudaMalloc", "wavefront:full-mask"
    line: int = 0
    col: int = 0


@dataclass
class Translation:
    source_path: str
    source_language: str
    target: str  # hip, cuda, triton, ascendc
    engine: str  # rules, llm
    text: str
    kernels: list[str] = field(default_factory=list)  # kernels present in the output
    diagnostics: list[Diagnostic] = field(default_factory=list)
    edits: list[Edit] = field(default_factory=list)
    stats: dict[str, dict[str, int]] = field(default_factory=dict)  # family -> {converted, unsupported, ...}
    needs_llm: list[str] = field(default_factory=list)  # kernels the rules could not translate faithfully
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def blocking(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error" or d.needs_llm]

    def to_dict(self, with_text: bool = False) -> dict[str, Any]:
        d = asdict(self)
        if not with_text:
            d.pop("text")
        d.pop("edits")
        d["edit_count"] = len(self.edits)
        return d


@dataclass
class TranslateOptions:
    arch: str | None = None  # target chip name or compiler target (resolved through templates/arch)
    kernels: list[str] = field(default_factory=list)  # restrict to these kernels (empty: all)
    rules_files: list[str] = field(default_factory=list)  # user YAML rule files (CUDA<->HIP)
    # Legacy, read only by the HIP translator (extra["rocm"], superseded by `rocm`). Verification options never
    # travel here: they are xlate.verify.candidate.VerifyOptions, held by whoever judges the port.
    extra: dict[str, Any] = field(default_factory=dict)
    # CUDA -> HIP choices (HIPIFY's): the user's ROCm (None: the newest release the mapping tables know) gates
    # which HIP names are emitted; `roc` targets rocBLAS/rocSPARSE/rocRAND/rocSOLVER instead of the hip* wrappers;
    # `launch_syntax` "ggl" writes hipLaunchKernelGGL(...) (HIPIFY's default), "chevron" keeps <<<...>>>.
    rocm: str | None = None
    roc: bool = False
    launch_syntax: str = "ggl"
    # Names the project defines in other files (macros, functions, types of the headers it includes): never
    # reported as unknown CUDA names (migrate fills it from the include graph).
    project_names: frozenset[str] = frozenset()


class Translator(Protocol):
    name: str  # e.g. "cuda->hip rules"
    source_languages: tuple[str, ...]
    target: str

    def translate(self, unit: KernelUnit, text: str, options: TranslateOptions) -> Translation: ...
