"""Verdicts of the verification gate (the JSON contract other stages and users read): plain data that the gate
produces and every stage above it exchanges (port, the LLM loop, migrate, reports).

verified   - both sides executed on N examples and agreed within tolerance.
rejected   - a counterexample was found (minimised by Hypothesis), with its failure class.
unverified - something needed to execute one side is missing; says what.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from xlate.diagnostics import Diagnostic
from xlate.errors import EXIT_OF_STATUS

Status = Literal["verified", "rejected", "unverified"]
FailureClass = Literal[
    "mismatch", "out-of-bounds write", "unwritten output", "nondeterministic", "input modified", "crash", "timeout",
    "compile error",
]


@dataclass
class Counterexample:
    failure: FailureClass
    kernel: str
    sizes: dict[str, int]
    scalars: dict[str, float | int]
    dtypes: dict[str, str]  # template parameter -> dtype
    seed: int  # data seed: inputs are a pure function of (case, seed)
    profile: dict[str, str]  # buffer -> value profile
    buffer: str | None = None
    index: list[int] | None = None  # first mismatching element (multi-index by the buffer's dims)
    flat_index: int | None = None
    expected: str | None = None
    got: str | None = None
    oracle: str | None = None  # the float64 oracle's value where one exists
    side: str | None = None  # which implementation misbehaved (for crashes, OOB, unwritten, nondeterminism)
    mismatches: int = 0  # elements out of tolerance in that buffer
    elements: int = 0
    message: str = ""
    inputs: dict[str, str] = field(default_factory=dict)  # buffer -> short summary (shape, range, first values)
    replay: str = ""  # the command line that replays this case

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        shape = ", ".join(f"{k}={v}" for k, v in self.sizes.items())
        scal = ", ".join(f"{k}={v}" for k, v in self.scalars.items())
        dt = ", ".join(f"{k}={v}" for k, v in self.dtypes.items())
        lines = [f"{self.failure} in {self.kernel}: {self.message}".rstrip(": ")]
        lines.append(f"  case: {shape}" + (f"; scalars {scal}" if scal else "") + (f"; dtypes {dt}" if dt else "")
                     + f"; seed {self.seed}")
        if self.buffer is not None:
            where = f"{self.buffer}{self.index}" if self.index is not None else self.buffer
            lines.append(f"  first bad element: {where} (flat {self.flat_index}); "
                         f"{self.mismatches} of {self.elements} elements bad")
        if self.expected is not None or self.got is not None:
            lines.append(f"  expected {self.expected}, got {self.got}" + (f" (float64 oracle {self.oracle})" if self.oracle else ""))
        for name, summary in self.inputs.items():
            lines.append(f"  input {name}: {summary}")
        if self.replay:
            lines.append(f"  replay: {self.replay}")
        return "\n".join(lines)


@dataclass
class SideInfo:
    path: str
    language: str
    backend: str
    platform: str | None = None
    versions: dict[str, str] = field(default_factory=dict)
    compile_seconds: float = 0.0
    compiles: int = 0  # builds during the run that the compile cache did not hold
    caveats: list[str] = field(default_factory=list)
    specialisations: int = 0  # distinct builds the run needed (template instances, jittered build, JIT variants)


@dataclass
class Verdict:
    status: Status
    kernel: str
    source: SideInfo | None = None
    candidate: SideInfo | None = None
    oracle: str | None = None  # "source", "reference:mod.py:fn", "golden:file.xg", "float64 source"
    examples: int = 0  # cases executed on both sides
    shapes: int = 0  # distinct size tuples
    dtypes: list[str] = field(default_factory=list)
    max_error: float | None = None  # largest |candidate - expected| seen
    max_error_ratio: float | None = None  # largest error / tolerance (< 1 passes)
    tolerance: str | None = None
    seed: int | None = None
    seconds: float = 0.0
    counterexample: Counterexample | None = None
    reason: str | None = None  # unverified: what is missing; rejected: one line
    remedy: str | None = None
    warnings: list[str] = field(default_factory=list)
    caveats: list[str] = field(default_factory=list)
    # Who misbehaved: "candidate" (rejected), "source" (unverified: the source does not compile, crashes or
    # writes out of bounds on its own under its spec, so nothing can be said about the port).
    blame: str | None = None
    spec: dict[str, Any] = field(default_factory=dict)  # how the spec was obtained: {"source", "items": {key: origin}}

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["schema"] = "xlate.verdict/1"
        return d

    @property
    def exit_code(self) -> int:
        return EXIT_OF_STATUS[self.status]

    def summary(self) -> str:
        if self.status == "verified":
            err = f", max error {self.max_error:.3g} ({self.max_error_ratio:.2f} of tolerance)" if self.max_error is not None and self.max_error_ratio is not None else ""
            text = (f"verified {self.kernel}: {self.examples} examples, {self.shapes} shapes, "
                    f"dtypes {', '.join(self.dtypes) or '-'}, oracle {self.oracle}{err}")
        elif self.status == "rejected":
            text = f"rejected {self.kernel}: " + (self.counterexample.describe() if self.counterexample else (self.reason or ""))
        elif self.blame == "source":
            text = f"could not verify {self.kernel}: {self.reason}"
            if self.counterexample is not None:
                text += "\n" + "\n".join("  " + line for line in self.counterexample.describe().splitlines())
            if self.remedy:
                text += f"\n  next: {self.remedy}"
        else:
            text = f"unverified {self.kernel}: {self.reason}" + (f"\n  to enable: {self.remedy}" if self.remedy else "")
        if self.spec.get("source") and self.spec["source"] != "annotation":
            kinds: dict[str, int] = {}
            for origin in self.spec.get("items", {}).values():
                kind = origin.split(" ", 1)[0]
                kinds[kind] = kinds.get(kind, 0) + 1
            text += f"\n  spec: {self.spec['source']} (" + ", ".join(f"{k} {v}" for k, v in kinds.items()) + \
                "; `xlate spec` shows each item)"
        for c in self.caveats:
            text += f"\n  caveat: {c}"
        for w in self.warnings:
            text += f"\n  warning: {w}"
        return text


@dataclass
class CandidateVerdict:
    """A candidate port judged by the gate (xlate.verify.candidate): the verdict, the findings of the target's
    static checker, how model output was isolated, and whether a port that cannot run here compiled."""

    verdict: Verdict
    diagnostics: list[Diagnostic] = field(default_factory=list)
    isolation: str | None = None  # sandboxed, trusted-unsandboxed, refused; None: not untrusted
    compiled: str | None = None  # "ok", "not compiled here"; None: no compile check was asked for or needed
    note: str = ""  # why it was not compiled here
