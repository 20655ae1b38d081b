"""Verify one candidate port of one kernel for a target: the seam the rule path (xlate.port) and the LLM loop
(through the checker xlate.port hands it) share, so both judge a port the same way.

In order: the target backend's static checks (AscendC's checker; nothing for most backends), then the gate
(fuzz against the source, a reference or a golden file), then, where nothing here can run the port and the
caller asks for it, a compile check. Model output is built and run only under the sandbox policy
(backends/sandbox.py), and the verdict says how it was isolated.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

from xlate.arch import compiler_target
from xlate.backends import sandbox
from xlate.backends.base import CompileError, CompileOptions
from xlate.backends.registry import get_backend
from xlate.errors import InputError, ToolchainMissing
from xlate.targets import candidate_file, target
from xlate.verdict import CandidateVerdict, Counterexample, SideInfo, Verdict
from xlate.verify import api


@dataclass(frozen=True)
class VerifyOptions:
    """How candidates are verified (the `xlate port` options that concern the gate)."""

    examples: int = 50
    seed: int = 0
    reference: str | None = None  # oracle FILE.py:FUNCTION when the source cannot run here
    golden: str | None = None  # a golden file, or a folder of <stem>.<kernel>.xg files
    arch: str | None = None  # the user's --arch (a chip or a compiler target); None: each backend's default
    timeout: float = 60.0
    untrusted: bool = False  # model output: built and run only under the sandbox policy
    # Where the gate cannot run the port here (no device, or a source it cannot run under its spec: then an
    # unverified verdict, not an InputError), compile the port alone: one that does not compile is rejected
    # instead of left unverified (the LLM loop learns from the compiler; costs a compile per candidate).
    compile_unrunnable: bool = False


def golden_for(golden: str | None, source: str, kernel: str) -> str | None:
    """The golden file for `kernel`: the file given, or <stem>.<kernel>.xg in the folder given."""
    if golden is None:
        return None
    g = Path(golden)
    if g.is_dir():
        candidate = g / f"{Path(source).stem}.{kernel}.xg"
        return str(candidate) if candidate.exists() else None
    return golden


def verify_candidate(source: str, kernel: str, to: str, text: str, options: VerifyOptions, *,
                     path: str | None = None) -> CandidateVerdict:
    """Judge `text`, a port of `kernel` of the file `source` to target `to`. The static checker reports its
    findings at `path` (where the port is written; default: the candidate's name while it is judged). Raises
    InputError for problems of the source (a spec it contradicts, an unknown kernel)."""
    t = target(to)
    path = path or candidate_file(to)
    static = get_backend(t.backend).check_source(text, path, options.arch or t.default_arch)
    if static.errors:
        info = get_backend(t.backend).detect()
        cx = Counterexample("compile error", kernel, {}, {}, {}, 0, {}, side="candidate",
                            message="\n".join(d.format() for d in static.errors))
        verdict = Verdict("rejected", kernel, candidate=SideInfo(path, t.language, t.backend, info.platform, info.versions),
                          counterexample=cx, blame="candidate",
                          reason=f"{t.title} static checks failed: {len(static.errors)} error(s)")
        return CandidateVerdict(verdict, static.findings)
    policy_of = sandbox.untrusted(require=True, what="model output") if options.untrusted else contextlib.nullcontext()
    with policy_of as policy:
        verdict = _run_gate(source, kernel, t.name, text, options)
        compiled, note = None, ""
        if verdict.status == "unverified" and options.compile_unrunnable:
            verdict, compiled, note = _compile_alone(verdict, source, kernel, t.name, text, options)
    isolation = policy.label() if policy is not None else None
    caveat = policy.caveat() if policy is not None else None
    if caveat and caveat not in verdict.caveats:
        verdict.caveats.append(caveat)
    if static.checked and verdict.status == "unverified":
        verdict.reason = f"static checks passed ({', '.join(static.checked)}); {verdict.reason}"
    return CandidateVerdict(verdict, static.findings, isolation, compiled, note)


def _run_gate(source: str, kernel: str, to: str, text: str, options: VerifyOptions) -> Verdict:
    t = target(to)
    arch = compiler_target(options.arch, t.name) if options.arch else None
    name = candidate_file(to)
    try:
        return api.verify(source, name, kernel=kernel, candidate_text=text, candidate_language=t.language,
                      examples=options.examples, seed=options.seed, reference=options.reference,
                      golden=golden_for(options.golden, source, kernel), arch=arch, timeout=options.timeout,
                      replay_hint=f"xlate port {source} --to {t.name} --kernel {kernel}")
    except InputError as exc:
        if name not in exc.message and not any(name in loc.path for loc in exc.locations):
            if options.compile_unrunnable:  # judging the port, not the source: say why nothing ran
                return Verdict("unverified", kernel, reason=f"the source side cannot be verified: {exc.message}")
            raise  # about the source: the caller's input error
        # the port itself cannot be read as its language: as good as a compile error
        cx = Counterexample("compile error", kernel, {}, {}, {}, 0, {}, side="candidate", message="\n".join(exc.lines()))
        return Verdict("rejected", kernel, counterexample=cx, blame="candidate", reason=f"compile error: {exc.message}")
    except ToolchainMissing as exc:
        return Verdict("unverified", kernel, reason=exc.message, remedy=exc.remedy)


def _compile_alone(verdict: Verdict, source: str, kernel: str, to: str, text: str,
                   options: VerifyOptions) -> tuple[Verdict, str | None, str]:
    """(verdict, "ok" | "not compiled here", why not): a compile error turns the verdict into a rejection."""
    from xlate.parse import parse_file
    from xlate.specs import build_spec, sidecar_overrides
    from xlate.verify.runner import template_arguments

    t = target(to)
    unit = parse_file(source)
    try:
        spec = build_spec(unit, kernel, sidecar_overrides(source, kernel))
    except InputError:
        spec = None
    targs = template_arguments(unit, kernel, t.language,
                               lambda p: (spec.dtype_axes.get(p.name) or ["float32"])[0] if spec else "float32",
                               lambda p: str(spec.axes[p.name][0]) if spec and p.name in spec.axes else str(
                                   (spec.value_params.get(p.name) if spec else None) or p.default or "1"),
                               spec.type_params if spec else None)
    arch = compiler_target(options.arch, t.name) if options.arch else None
    try:
        get_backend(t.backend).compile(text, kernel, CompileOptions(arch=arch, template_args=targs, compile_only=True),
                                       path=candidate_file(to))
    except CompileError as exc:
        cx = Counterexample("compile error", kernel, {}, {}, {}, 0, {}, side="candidate", message=exc.log)
        return Verdict("rejected", kernel, counterexample=cx, blame="candidate", reason="compile error",
                       caveats=list(verdict.caveats)), None, ""
    except ToolchainMissing as exc:
        return verdict, "not compiled here", exc.message
    return verdict, "ok", ""
