"""The verification gate's entry points: `verify()` (used by port, fuzz, migrate, the LLM loop) and
`assert_equivalent()` for users' own test suites."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xlate.backends.base import first_error
from xlate.errors import InputError, SpecError, ToolchainMissing
from xlate.identifiers import python_identifier
from xlate.specs import KernelSpec, build_spec, sidecar_overrides, sidecar_reference
from xlate.specs.model import LARGEST_CASE
from xlate.verdict import Counterexample, SideInfo, Verdict
from xlate.verify.cases import Case
from xlate.verify.engine import FuzzConfig, Fuzzer, run_fuzz
from xlate.verify.golden import Golden, read_golden, signature_hash, write_golden
from xlate.verify.oracle import ReferenceOracle
from xlate.verify.runner import Side, describe_side, require_globals, require_kernel
from xlate.verify.strategies import smallest_total

GPU_BUDGET = 1 << 23
GPU_SIZE_CAP = 1 << 22
CPU_BUDGET = 1 << 15
CPU_SIZE_CAP = 1 << 13
LARGE_CASE_EXAMPLES = 3  # a case past GPU_BUDGET costs seconds to draw, copy and compare (each of 2 runs a side)


@dataclass
class RecordResult:
    path: str
    kernel: str
    cases: int
    shapes: int
    producer: dict[str, Any]
    warnings: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {"schema": "xlate.record/1", "recorded": self.path, "kernel": self.kernel, "cases": self.cases,
                "shapes": self.shapes, "producer": self.producer, "warnings": self.warnings}


def pick_kernel(side: Side | None, unit_kernels: list[str], path: str, kernel: str | None) -> str:
    if kernel:
        return kernel
    if len(unit_kernels) == 1:
        return unit_kernels[0]
    names = ", ".join(unit_kernels) or "none"
    raise InputError(f"{path}: error: {len(unit_kernels)} kernels here ({names}): choose one with --kernel")


def _side_info(side: Side) -> SideInfo:
    info = describe_side(side)
    return SideInfo(info["path"], info["language"], info["backend"], info["platform"], info["versions"],
                    side.compile_seconds, side.compiles, list(side.caveats), side.specialisations)


def same_instantiation(names: list[str], kernel: str) -> str | None:
    """The name among `names` of the instantiation `kernel` (`k<__nv_bfloat16, 4>`) spelt in another language's
    types (`k<__hip_bfloat16, 4>`): the same template with arguments that are equal or the same number type."""
    from xlate.specs.model import ctypes_table, normalise_ctype

    def split(name: str) -> tuple[str, list[str]] | None:
        if not name.endswith(">") or "<" not in name:
            return None
        base, _, args = name.partition("<")
        return base.strip(), [a.strip() for a in args[:-1].split(",")]

    def same(a: str, b: str) -> bool:
        if a == b:
            return True
        ta, tb = (ctypes_table().get(normalise_ctype(x)) or {} for x in (a, b))
        return ta.get("numpy") is not None and ta.get("numpy") == tb.get("numpy")

    want = split(kernel)
    if want is None:
        return None
    found = [n for n in names if (got := split(n)) is not None and got[0] == want[0] and len(got[1]) == len(want[1])
             and all(same(a, b) for a, b in zip(got[1], want[1]))]
    return found[0] if len(found) == 1 else None


def identifier_spelling(names: list[str], kernel: str) -> str | None:
    """The name among `names` that spells the instantiation `kernel` as an identifier (`k<__half>` ->
    `k___half_`): how a port in a language without templates (a Triton module) names the launcher of one
    explicit specialisation."""
    if kernel.isidentifier():
        return None
    spelt = python_identifier(kernel)
    return spelt if spelt in names else None


def name_in_candidate(side: Side) -> None:
    """Point `side` (a port, named by its source's kernel) at that kernel's own name in it, where the port spells
    it otherwise: an instantiation in the port language's types, or as an identifier (a Triton launcher)."""
    if not side.has_kernel():
        names = side.unit.callable_names()
        side.kernel = same_instantiation(names, side.kernel) or identifier_spelling(names, side.kernel) or side.kernel


def _can_run(side: Side) -> tuple[bool, str | None, str | None]:
    info = side.backend.detect()
    if info.can_run:
        return True, None, None
    missing = "; ".join(info.missing) or "toolchain or device"
    return False, f"cannot run {side.language} ({side.path}) here: missing {missing}", info.remedy


def _limits(sides: list[Side]) -> tuple[int, int]:
    cpu = any(s.backend.detect().interpreter for s in sides)  # an interpreter fuzzes smaller cases
    return (CPU_BUDGET, CPU_SIZE_CAP) if cpu else (GPU_BUDGET, GPU_SIZE_CAP)


def compares_nothing(spec: KernelSpec) -> bool:
    """No out or inout buffer (a parameter or a module global, `d: global inout[n]`): whatever the kernel does
    (prints, writes variables its spec does not name), the gate sees none."""
    return not any(p.role in ("out", "inout") for p in spec.buffers)


def case_budget(spec: KernelSpec, budget: int, cap: int) -> tuple[int, str | None, str | None]:
    """The per-case budget for `spec`: `budget`, or for a kernel built for fixed large sizes (`#define N
    100000000`) on a GPU, its smallest case up to LARGEST_CASE. Returns (budget, note, refusal): a note for the
    verdict when cases are that large, a refusal when even the smallest case is over what this machine fuzzes."""
    smallest = smallest_total(spec, cap)
    if smallest is None or smallest <= budget:
        return budget, None, None
    if budget >= GPU_BUDGET and smallest <= LARGEST_CASE:
        return (min(LARGEST_CASE, 2 * smallest),
                f"the spec's smallest case holds {smallest} numbers (more than the usual {budget}): fuzzed near its "
                f"smallest sizes, with at most {LARGE_CASE_EXAMPLES} examples", None)
    if budget < GPU_BUDGET:
        return budget, None, (f"the spec's smallest case holds {smallest} numbers, more than an interpreter fuzzes in "
                              f"one case ({budget})" + ("; run it on a GPU" if smallest <= LARGEST_CASE else ""))
    return budget, None, (f"the spec's smallest case holds {smallest} numbers, more than the gate fuzzes in one case "
                          f"({LARGEST_CASE})")


def verify(
    source_path: str,
    candidate_path: str | None = None,
    *,
    kernel: str | None = None,
    candidate_kernel: str | None = None,
    examples: int = 50,
    seed: int = 0,
    reference: str | None = None,
    golden: str | None = None,
    arch: str | None = None,
    timeout: float = 60.0,
    candidate_text: str | None = None,
    candidate_language: str | None = None,
    source_text: str | None = None,
    dtypes: list[str] | None = None,
    replay: str | None = None,
    spec_overrides: str | None = None,
    replay_hint: str = "",
    sanitize: bool = False,
) -> Verdict:
    """Fuzz `candidate` against `source` (or against a reference / golden file) and return the verdict.

    With no candidate, `source` itself is checked against `reference` (the `fuzz A --reference` form).
    """
    import time

    t0 = time.perf_counter()
    source = Side(source_path, "?", text=source_text, label="source")
    kernel = pick_kernel(source, source.unit.kernel_names(), source_path, kernel)
    source.kernel = kernel
    source.timeout = timeout
    require_kernel(source)
    overrides = ", ".join(x for x in (sidecar_overrides(source_path, kernel), spec_overrides) if x) or None
    spec = build_spec(source.unit, kernel, overrides)
    reference = reference or sidecar_reference(source_path, kernel)
    oracle = ReferenceOracle(reference) if reference else None
    candidate: Side | None = None
    if candidate_path is not None or candidate_text is not None:
        # A port includes the source's project headers (`port` writes one file): found in the source's folder.
        beside_source = [os.path.dirname(os.path.abspath(source_path))] if os.path.isfile(source_path) else []
        candidate = Side(candidate_path or "<candidate>", candidate_kernel or kernel, text=candidate_text,
                         language=candidate_language, arch=arch, timeout=timeout, label="candidate",
                         include_dirs=beside_source, context_path=source.context_path)
        if candidate_kernel is None:
            name_in_candidate(candidate)
        require_kernel(candidate)
    elif oracle is None:
        raise InputError("xlate: error: nothing to compare with: give a second implementation, --reference or --against")

    verdict = Verdict(status="unverified", kernel=kernel, seed=seed, spec=spec_summary(spec))
    runner_side = candidate or source
    ok, why, remedy = _can_run(runner_side)
    if not ok:
        verdict.reason, verdict.remedy = why, remedy
        verdict.candidate = _side_info(runner_side)
        return verdict
    use_source = candidate is not None
    if candidate is not None:
        src_ok, src_why, src_remedy = _can_run(source)
        if not src_ok:
            if oracle is None and golden is None:
                verdict.reason = src_why + " (give --reference or --against golden.xg to verify without running it)"
                verdict.remedy = src_remedy
                verdict.source = SideInfo(source.path, source.language, source.backend_name)
                return verdict
            use_source = False
            verdict.caveats.append(f"the source was not executed here ({src_why}); judged against "
                                   f"{'the golden file' if golden else oracle.label if oracle else ''}")
    if not replay_hint:
        replay_hint = f"xlate fuzz {source_path}" + (f" {candidate_path}" if candidate_path else "") + f" --kernel {kernel}"
        if reference:
            replay_hint += f" --reference {reference}"
    config = FuzzConfig(examples=examples, seed=seed, dtypes=dtypes, replay_hint=replay_hint)
    gold: Golden | None = None
    cases = None
    if golden:
        gold = read_golden(golden)
        sig = signature_hash(None, kernel, [p.name for p in spec.params])
        if gold.signature != sig or gold.kernel != kernel:
            raise InputError(f"{golden}: error: golden file is for kernel '{gold.kernel}' with another signature; "
                             f"it cannot check '{kernel}'")
        cases = [gc.case for gc in gold.cases]
        use_source = False
        verdict.oracle = f"golden:{Path(golden).name}" + (f" + {gold.oracle}" if gold.oracle else "")
    if replay:
        cases = [Case.from_dict(json.loads(replay))]
    fuzzer = Fuzzer(spec, candidate if candidate is not None else source,
                    source if use_source else None, oracle, gold, config)
    if compares_nothing(spec):  # a kernel that only prints: verified of nothing
        verdict.reason = (f"could not verify: '{kernel}' writes no buffer its spec names (no out or inout): there is "
                          "nothing to compare")
        return verdict
    try:
        for s in (source if use_source else None, candidate):
            if s is not None:
                require_globals(s, spec)
    except ToolchainMissing as exc:  # refused before anything runs: never verified with the variables unseen
        verdict.reason = f"could not verify: {exc.message}"
        return verdict
    budget, cap = _limits([s for s in (source if use_source else None, candidate or source) if s is not None])
    budget, large, refusal = case_budget(spec, budget, cap)
    if refusal is not None and cases is None:
        verdict.reason = f"could not verify: {refusal}"
        return verdict
    if large is not None:
        config.examples = min(config.examples, LARGE_CASE_EXAMPLES)
        verdict.caveats.append(large)
    try:
        result = run_fuzz(fuzzer, budget=budget, size_cap=cap, cases=cases, golden=gold.cases if gold and not replay else None)
    except ToolchainMissing as exc:
        verdict.reason, verdict.remedy = exc.message, exc.remedy
        return verdict
    if verdict.oracle is None:
        verdict.oracle = ("source" if use_source else "") + (" + " if use_source and oracle else "") + (oracle.label if oracle else "")
    verdict.examples, verdict.shapes, verdict.dtypes = result.examples, result.shapes, result.dtypes
    verdict.max_error, verdict.max_error_ratio, verdict.tolerance = result.max_error, result.max_ratio, result.tolerance
    verdict.seconds = time.perf_counter() - t0
    verdict.warnings = result.warnings
    if use_source or candidate is None:
        verdict.source = _side_info(source)
    if candidate is not None:
        verdict.candidate = _side_info(candidate)
    for s in (source if use_source else None, candidate):
        if s is not None:
            verdict.caveats.extend(c for c in s.caveats if c not in verdict.caveats)
    if result.failure is not None:
        verdict.counterexample = result.failure
        if candidate is not None and use_source and result.failure.side == source.label:
            return blame_source(verdict, result.failure, source_path, kernel)
        verdict.status = "rejected"
        verdict.blame = "candidate" if candidate is not None else None
        verdict.reason = f"{result.failure.failure}: {result.failure.message}"
        return verdict
    if result.examples == 0:
        verdict.reason = "no case could be generated within the spec's constraints"
        return verdict
    if sanitize:
        found = _sanitize(spec, [s for s in (source if use_source else None, candidate) if s is not None], budget, cap)
        if found is not None and candidate is not None and found.side == source.label:
            verdict.counterexample = found
            return blame_source(verdict, found, source_path, kernel)
        if found is not None:
            verdict.status = "rejected"
            verdict.counterexample = found
            verdict.reason = f"{found.failure}: {found.message}"
            return verdict
        verdict.caveats.append(_sanitize_note())
    verdict.status = "verified"
    return verdict


def spec_summary(spec: KernelSpec) -> dict[str, Any]:
    """How the spec was obtained, for verdicts and reports: its source and each item's origin."""
    return {"source": spec.source, "items": {k: o.label()[:160] for k, o in spec.origins.items()}}


SOURCE_FAULTS = {
    "compile error": "the source does not compile here",
    "crash": "the source crashes on its own under its spec",
    "timeout": "the source does not finish on its own under its spec",
    "out-of-bounds write": "the source writes out of bounds on its own under its spec",
    "input modified": "the source writes into a buffer its spec calls an input",
    "nondeterministic": "the source gives different results from run to run",
    "unwritten output": "the source leaves outputs unwritten",
}


def blame_source(verdict: Verdict, failure: Counterexample, source_path: str, kernel: str) -> Verdict:
    """The source itself misbehaved: nothing can be said about the port (exit 3), and the likely culprit is the
    spec (inferred or annotated) or the toolchain, which the message says."""
    verdict.status = "unverified"
    verdict.blame = "source"
    what = SOURCE_FAULTS.get(failure.failure, f"the source fails on its own ({failure.failure})")
    if failure.failure == "compile error":
        first = first_error(failure.message)
    else:
        first = (failure.message.strip().splitlines() or [""])[0][:300]
    verdict.reason = f"{what}: {first}"
    if failure.failure == "compile error":
        verdict.remedy = "make the source compile on its own (NVRTC sees only its device code), or verify against --reference or --against"
    elif verdict.spec.get("source") in ("inferred", "mixed"):
        verdict.remedy = (f"the spec was inferred: check it with `xlate spec {source_path} --kernel {kernel}` and "
                          "annotate what is wrong (// xlate: ...)")
    else:
        verdict.remedy = f"check the spec of {kernel} (`xlate spec {source_path} --kernel {kernel}`)"
    return verdict


def record(source_path: str, golden_path: str, *, kernel: str | None = None, examples: int = 24, seed: int = 0,
           reference: str | None = None, arch: str | None = None, timeout: float = 60.0, record_budget: int = 1 << 14) -> RecordResult:
    """Run `source` on generated cases and save inputs and outputs as a golden file for replay elsewhere."""
    source = Side(source_path, "?", label="source", arch=arch, timeout=timeout)
    kernel = pick_kernel(source, source.unit.kernel_names(), source_path, kernel)
    source.kernel = kernel
    require_kernel(source)
    spec = build_spec(source.unit, kernel, sidecar_overrides(source_path, kernel))
    ok, why, remedy = _can_run(source)
    if not ok:
        raise ToolchainMissing(why or "cannot run the source", remedy)
    reference = reference or sidecar_reference(source_path, kernel)
    oracle = ReferenceOracle(reference) if reference else None
    fuzzer = Fuzzer(spec, None, source, oracle, None, FuzzConfig(examples=examples * 4, seed=seed))
    budget, cap = _limits([source])
    fuzzer.run_hypothesis(min(budget, record_budget), min(cap, record_budget), record=True, record_limit=examples,
                          record_budget=record_budget)
    if fuzzer._failures:
        raise SpecError(f"{source_path}: error: the source itself failed while recording: "
                        f"{fuzzer._failures[-1].describe()}")
    info = describe_side(source)
    producer = {"backend": info["backend"], "platform": info["platform"], "versions": info["versions"],
                "source": str(source_path), "devices": source.backend.detect().devices}
    gold = Golden(kernel, signature_hash(None, kernel, [p.name for p in spec.params]), spec.to_dict(), producer,
                  fuzzer.recorded, oracle.label if oracle else None)
    write_golden(golden_path, gold)
    return RecordResult(golden_path, kernel, len(fuzzer.recorded), len({gc.case.shape_key() for gc in fuzzer.recorded}),
                        producer, fuzzer.warnings())


def _sanitize_note() -> str:
    from xlate.verify.sanitize import sanitizer_path

    if sanitizer_path() is None:
        return "--sanitize: compute-sanitizer not found; memcheck/racecheck did not run"
    return "compute-sanitizer memcheck and racecheck found nothing on the edge cases"


def _sanitize(spec: KernelSpec, sides: list[Side], budget: int, cap: int) -> Counterexample | None:
    from xlate.verify.sanitize import sanitize
    from xlate.verify.strategies import explicit_cases

    cases = explicit_cases(spec, min(budget, 1 << 16), min(cap, 4096))[:3]
    for side in sides:
        for f in sanitize(side, spec, cases):
            failure = "nondeterministic" if f.tool == "racecheck" else "out-of-bounds write"
            c = cases[0] if cases else Case({}, {}, {}, {}, 0)
            return Counterexample(failure, spec.kernel, c.sizes, c.scalars, c.dtypes, c.seed, c.profiles, side=f.side,
                                  message=f"compute-sanitizer {f.tool}: {f.errors} error(s) in the {f.side}\n{f.report}")
    return None


def assert_equivalent(a: str, b: str | None = None, *, kernel: str | None = None, examples: int = 50, seed: int = 0,
                      reference: str | None = None, golden: str | None = None, **spec: str) -> Verdict:
    """pytest-friendly: raise AssertionError with the counterexample unless `b` is verified against `a`.

    Extra keyword arguments are spec items, e.g. `n="size(1..1000)"`, `grid="cdiv(n, 256)"`.
    """
    overrides = ", ".join(f"{k}: {v}" for k, v in spec.items()) or None
    verdict = verify(a, b, kernel=kernel, examples=examples, seed=seed, reference=reference, golden=golden,
                     spec_overrides=overrides)
    if verdict.status != "verified":
        raise AssertionError(verdict.summary())
    return verdict


__all__ = ["Counterexample", "RecordResult", "Verdict", "assert_equivalent", "record", "verify"]
