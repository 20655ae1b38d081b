"""Entry points used by xlate.port: `--engine llm` (translate every kernel with the repair loop) and
`--engine auto` (the LLM takes only the kernels the rules could not lift, merged into the rule output). Both
take the `gate` that judges each candidate (xlate.port builds it from xlate.verify.candidate) and return the
engine's own outcomes; xlate.port turns them into its report."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, replace
from typing import Any

from xlate.diagnostics import make
from xlate.model import KernelUnit
from xlate.targets import target as target_of
from xlate.translate.base import Diagnostic, TranslateOptions, Translation
from xlate.translate.llm.client import Client
from xlate.translate.llm.config import LLMConfig, configured_model, load_config
from xlate.translate.llm.loop import Budget, CandidateCheck, KernelRequest, Outcome, judge, run_loop
from xlate.translate.llm.merge import merge
from xlate.verdict import Verdict


@dataclass
class KernelOutcome:
    """What the LLM engine did for one kernel: accepted or not, the verdict of the merged file, its findings."""

    kernel: str
    accepted: bool
    verdict: Verdict | None
    diagnostics: list[Diagnostic]
    attempts: list[dict[str, Any]]



def llm_available(model: str | None) -> bool:
    """A model is configured (argument, XLATE_MODEL or [tool.xlate] model). Configuration only: no network."""
    return configured_model(model)[0] is not None


def _missing_litellm(unit: KernelUnit, kernels: list[str]) -> list[Diagnostic]:
    if importlib.util.find_spec("litellm") is not None:
        return []
    return [make("XL4006", unit.path, kernel=k, rule="llm") for k in kernels]


def _note(cfg: LLMConfig, o: Outcome) -> str:
    status = o.verdict.status if o.verdict else "unverified"
    return f"kernel {o.kernel}: LLM translator ({cfg.model}); {status} by xlate when accepted"


def kernel_diagnostics(unit: KernelUnit, translation: Translation, kernel: str) -> list[Diagnostic]:
    """The rule diagnostics about `kernel`: tagged with it, or located in a device function it calls."""
    spans = [(f.span.line, f.span.end_line) for f in unit.reachable(kernel) if f.span is not None]
    return [d for d in translation.diagnostics if d.kernel == kernel
            or (d.kernel is None and d.path == unit.path and any(a <= d.line <= b for a, b in spans))]


def _isolation(o: Outcome) -> str | None:
    """How the model's candidates for this kernel were built and run (the last one that was)."""
    return next((a["isolation"] for a in reversed(o.attempts) if a.get("isolation")), None)


def _summary(cfg: LLMConfig, budget: Budget, client: Client, outcomes: list[Outcome]) -> dict[str, Any]:
    return {"config": cfg.describe(), "budget": budget.to_dict(), "http_calls": client.calls,
            "kernels": {o.kernel: {"accepted": o.accepted, "verdict": o.verdict.status if o.verdict else None,
                                   "isolation": _isolation(o), "attempts": o.attempts} for o in outcomes},
            # the accepted model answers as checked: xlate.port checks them again before writing
            "accepted": {o.kernel: o.code for o in outcomes if o.accepted and o.code is not None}}


def _run(jobs: list[KernelRequest], cfg: LLMConfig) -> tuple[list[Outcome], Budget, Client]:
    client = Client(cfg)
    budget = Budget(cfg.budget_tokens, cfg.budget_usd)
    return [run_loop(job, cfg, client, budget) for job in jobs], budget, client


def llm_translate(unit: KernelUnit, text: str, target: str, options: TranslateOptions, gate: CandidateCheck, *,
                  model: str | None = None, max_attempts: int = 4) -> Translation:
    """Translate every kernel of `options.kernels` (or all) with the repair loop, each candidate judged by
    `gate`. Kernels that never yield an accepted port are listed in `needs_llm` with XL4xxx diagnostics."""
    cfg = load_config(model)
    names = list(options.kernels) or unit.kernel_names()
    out = Translation(unit.path, unit.language, target, "llm", "", [], [], needs_llm=[])
    missing = _missing_litellm(unit, names)
    if missing:
        out.diagnostics, out.needs_llm = missing, names
        return out
    jobs = [KernelRequest(unit.path, unit, k, target, gate, arch=options.arch, max_attempts=max_attempts) for k in names]
    outcomes, budget, client = _run(jobs, cfg)
    for o in outcomes:
        out.diagnostics.extend(o.diagnostics)
        if o.accepted and o.code is not None:
            out.text = merge(target, out.text, o.code, o.kernel, target_of(target).language, _note(cfg, o))
            out.kernels.append(o.kernel)
        else:
            out.needs_llm.append(o.kernel)
    out.meta["llm"] = _summary(cfg, budget, client, outcomes)
    return out


def llm_repair_or_translate(unit: KernelUnit, translation: Translation, kernels: list[str], target: str,
                            gate: CandidateCheck, *, model: str | None = None, arch: str | None = None,
                            max_attempts: int = 4, rejected: dict[str, Verdict] | None = None,
                            ) -> tuple[Translation, list[KernelOutcome]]:
    """`--engine auto`: port `kernels` (those the rules left in `needs_llm`, or rule ports listed in `rejected`
    with their verdicts, which the model is asked to repair) and merge them into the rule translation. Every
    accepted kernel is judged again by `gate` inside the merged text; that verdict is the one reported."""
    cfg = load_config(model)
    source = unit.path
    missing = _missing_litellm(unit, kernels)
    if missing:
        results = [KernelOutcome(k, False, None, [d for d in missing if d.kernel == k], []) for k in kernels]
        return replace(translation, diagnostics=[*translation.diagnostics, *missing]), results
    rejected = rejected or {}
    jobs = []
    intro: dict[str, Diagnostic] = {}
    for k in kernels:
        diags = kernel_diagnostics(unit, translation, k)
        prior = (translation.text, rejected[k]) if k in rejected and translation.text else None
        jobs.append(KernelRequest(source, unit, k, target, gate, arch=arch, max_attempts=max_attempts, diagnostics=diags,
                        prior=prior))
        blocking = next((d for d in diags if d.needs_llm or d.severity == "error"), None)
        why = (f"{blocking.code}: {blocking.message}" if blocking else
               "its rule port was rejected" if prior else "the rule translator left it untranslated")
        line = blocking.line if blocking else 1
        intro[k] = make("XL4000", source, line, kernel=k, rule="llm", reason=why, model=cfg.model)
    outcomes, budget, client = _run(jobs, cfg)
    text = translation.text
    accepted = [o for o in outcomes if o.accepted and o.code is not None]
    for o in accepted:
        text = merge(target, text, o.code or "", o.kernel, target_of(target).language, _note(cfg, o))
    results: list[KernelOutcome] = []
    new_diags = list(translation.diagnostics)
    for o, job in zip(outcomes, jobs):
        diags = [intro[o.kernel], *o.diagnostics]
        verdict = o.verdict
        if o.accepted and text != o.code and o.contract is not None:
            final = judge(job, o.contract, text)
            verdict = final.verdict
            if final.failure is not None or verdict is None:
                diags.append(make("XL4007", source, intro[o.kernel].line, kernel=o.kernel, rule="llm",
                                  failure=final.failure,
                                  detail=(final.counterexample or final.log or " ".join(final.messages))[:300]))
                if verdict is None:
                    verdict = Verdict("rejected", o.kernel, reason=f"merged file: {final.failure}")
        new_diags.extend(diags)
        results.append(KernelOutcome(o.kernel, o.accepted, verdict if o.accepted else None,
                                     [*job.diagnostics, *diags], o.attempts))
    done = {o.kernel for o in accepted}
    merged = replace(translation, text=text, engine="rules+llm" if done else translation.engine,
                     kernels=[*translation.kernels, *[k for k in kernels if k in done and k not in translation.kernels]],
                     needs_llm=[k for k in translation.needs_llm if k not in done], diagnostics=new_diags,
                     meta={**translation.meta, "llm": _summary(cfg, budget, client, outcomes)})
    return merged, results


__all__ = ["CandidateCheck", "KernelOutcome", "llm_available", "llm_repair_or_translate", "llm_translate"]
