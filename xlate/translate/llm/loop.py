"""The repair loop for one kernel: ask, extract, check the contract, compile and verify; feed what went wrong
back (trimmed compile errors, the verifier's minimal counterexample, contract violations) until a port is
verified, the attempts run out, or the token/cost budget does.

Model output is untrusted: it is held to the allow-list (contract.py) before anything builds it, every build
and run of it happens under `sandbox.untrusted()` (backends/sandbox.py: in the OS sandbox, or not at all unless
the user passed --trust-model-output), and tool output goes back only as messages about the candidate's own
lines (feedback.py). Each attempt records exactly the messages it sent and how the candidate was isolated.

Targets that cannot be verified here (no device, no oracle) end at the first candidate that compiles, with an
`unverified` verdict: nothing better can be learnt by asking again.

The loop never imports the gate: xlate.port hands it a `CandidateCheck` (xlate.verify.candidate.verify_candidate
with the user's verification options), the same function that judges rule ports.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from xlate.diagnostics import make
from xlate.errors import InputError
from xlate.model import KernelUnit
from xlate.specs import KernelSpec
from xlate.targets import candidate_file
from xlate.translate.base import Diagnostic
from xlate.translate.llm.client import Client, Completion, Message, prompt_hash
from xlate.translate.llm.config import LLMConfig
from xlate.translate.llm.context import kernel_context
from xlate.translate.llm.contract import Contract, check, contract_for
from xlate.translate.llm.extract import extract
from xlate.translate.llm.feedback import reduce_compiler_log, reduce_runtime
from xlate.translate.llm.prompt import (
    arch_summary,
    pick_examples,
    repair_prompt,
    system_prompt,
    task_prompt,
    trim_log,
)
from xlate.translate.llm.redact import redact, redact_obj
from xlate.verdict import CandidateVerdict, Verdict

MAX_ANSWER_CHARS = 20000  # of a failed answer kept in the conversation
# (kernel, candidate text) -> the gate's judgement of it (model output: sandboxed, compiled where it cannot run)
CandidateCheck = Callable[[str, str], CandidateVerdict]


@dataclass
class KernelRequest:
    """One kernel for the repair loop: what to port, to which target, judged by which gate."""

    source_path: str
    unit: KernelUnit
    kernel: str
    target: str
    gate: CandidateCheck
    arch: str | None = None  # for the prompt's architecture summary
    max_attempts: int = 4
    diagnostics: list[Diagnostic] = field(default_factory=list)  # the rule translator's, for this kernel
    prior: tuple[str, Verdict] | None = None  # a rejected rule port to start from


@dataclass
class Budget:
    tokens: int | None
    usd: float | None
    spent_tokens: int = 0
    spent_usd: float = 0.0
    live_tokens: int = 0  # spent over the network in this run (cached replays are free)
    live_usd: float = 0.0
    cost_unknown: bool = False

    def exhausted(self) -> str | None:
        if self.tokens is not None and self.spent_tokens >= self.tokens:
            return f"token budget exhausted ({self.spent_tokens} of {self.tokens} tokens)"
        if self.usd is not None and self.spent_usd >= self.usd:
            return f"cost budget exhausted (${self.spent_usd:.4f} of ${self.usd:.4f})"
        return None

    def request_tokens(self, cfg: LLMConfig) -> int:
        if self.tokens is None:
            return cfg.max_output_tokens
        return max(1, min(cfg.max_output_tokens, self.tokens - self.spent_tokens))

    def add(self, c: Completion) -> None:
        # Cached answers count as if asked again, so a replay stops where the original run stopped.
        self.spent_tokens += c.tokens_in + c.tokens_out
        self.spent_usd += c.cost_usd
        if not c.cached:
            self.live_tokens += c.tokens_in + c.tokens_out
            self.live_usd += c.cost_usd
        self.cost_unknown |= not c.cost_known

    def to_dict(self) -> dict[str, Any]:
        return {"budget_tokens": self.tokens, "budget_usd": self.usd, "tokens": self.spent_tokens,
                "cost_usd": round(self.spent_usd, 6), "live_tokens": self.live_tokens,
                "live_cost_usd": round(self.live_usd, 6), "cost_unknown": self.cost_unknown}


@dataclass
class Outcome:
    kernel: str
    code: str | None  # the accepted candidate (verified, or compiled but unverifiable here)
    verdict: Verdict | None
    attempts: list[dict[str, Any]] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    contract: Contract | None = None

    @property
    def accepted(self) -> bool:
        return self.code is not None


@dataclass
class Judgement:
    compile: str  # ok, failed, skipped, not compiled here
    failure: str | None = None  # None: accepted
    verdict: Verdict | None = None
    log: str = ""
    counterexample: str = ""
    messages: list[str] = field(default_factory=list)
    isolation: str | None = None  # sandboxed, trusted-unsandboxed, refused; None: nothing was built or run


def kernel_spec(job: KernelRequest) -> tuple[KernelSpec | None, str | None]:
    from xlate.specs import build_spec, sidecar_overrides

    try:
        return build_spec(job.unit, job.kernel, sidecar_overrides(job.source_path, job.kernel)), None
    except InputError as exc:
        return None, exc.message


def _arch_spec(target: str, arch: str | None) -> dict[str, Any] | None:
    from xlate.arch import default_arch, find_arch

    if arch:
        try:
            return find_arch(arch)
        except InputError:
            return None
    return default_arch(target)


def compiler_feedback(log: str, code: str, target: str) -> str:
    """A compiler's log as the model may see it: only diagnostics about the candidate's own lines."""
    return trim_log(reduce_compiler_log(log, code, candidate_file(target)))


def _for_model(describe: str) -> str:
    # The replay command line names the user's paths and helps nobody but the user.
    return "\n".join(ln for ln in describe.splitlines() if not ln.strip().startswith("replay:"))


def _counterexample_for_model(cx: Any, code: str, target: str) -> str:
    """xlate's own description of the failing case; the failure message (a worker's exception and stderr for
    crashes) reduced to the candidate's own lines."""
    from dataclasses import replace

    message = reduce_runtime(cx.message or "", code, candidate_file(target))
    return _for_model(replace(cx, message=message).describe())


def _unverified(kernel: str, reason: str, remedy: str | None = None) -> Verdict:
    return Verdict(status="unverified", kernel=kernel, reason=reason, remedy=remedy)


def judge(job: KernelRequest, contract: Contract, code: str) -> Judgement:
    """Check one candidate against the contract, then have the gate judge it (job.gate: built and run only as
    untrusted code, see the module doc), and say what went wrong in the terms the repair prompt uses."""
    failure, problems = check(contract, code)
    if failure == "compile error":
        return Judgement("failed", "compile error", log=compiler_feedback("\n".join(problems), code, job.target))
    if failure:
        return Judgement("skipped", failure, messages=problems)
    try:
        judged = job.gate(job.kernel, code)
    except InputError as exc:
        judged = CandidateVerdict(_unverified(job.kernel, f"the source side cannot be verified: {exc.message}"))
    except Exception as exc:  # a verifier failure on odd model output must not end the port
        return Judgement("unknown", "verifier error",
                         messages=[reduce_runtime(f"{type(exc).__name__}: {str(exc)[:500]}", code, candidate_file(job.target))])
    j = _judgement(job, code, judged)
    j.isolation = judged.isolation
    return j


def _judgement(job: KernelRequest, code: str, judged: CandidateVerdict) -> Judgement:
    verdict = judged.verdict
    static_errors = [d for d in judged.diagnostics if d.severity == "error"]
    if static_errors:  # the target's static checker refused it before any compiler saw it
        return Judgement("skipped", "checker", messages=[d.format() for d in static_errors[:20]])
    if verdict.status == "verified":
        return Judgement("ok", None, verdict)
    if verdict.status == "rejected":
        cx = verdict.counterexample
        if cx is not None and cx.failure == "compile error":
            return Judgement("failed", "compile error", verdict, log=compiler_feedback(cx.message, code, job.target))
        return Judgement("ok", cx.failure if cx else "rejected", verdict,
                         counterexample=_counterexample_for_model(cx, code, job.target) if cx else
                         reduce_runtime(verdict.reason or "", code, candidate_file(job.target)))
    # unverified: accepted once it compiles (or where nothing here compiles it): asking again teaches nothing
    notes = [d.format() for d in judged.diagnostics[:10]]
    return Judgement(judged.compiled or "ok", None, verdict, messages=[judged.note, *notes] if judged.note else notes)


def _diag(job: KernelRequest, code: str, **fields: Any) -> Diagnostic:
    fn = job.unit.kernel(job.kernel)
    line = fn.span.line if fn and fn.span else next((f.span.line for f in job.unit.py_functions if f.name == job.kernel), 1)
    return make(code, job.source_path, line, 1, kernel=job.kernel, rule="llm", **fields)


def _first_line(text: str, limit: int = 300) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line[:limit]


def run_loop(job: KernelRequest, cfg: LLMConfig, client: Client, budget: Budget) -> Outcome:
    spec, spec_error = kernel_spec(job)
    contract = contract_for(job.unit, job.kernel, job.target, spec)
    ctx = kernel_context(job.unit, job.kernel)
    examples = pick_examples(job.unit.language, job.target, spec.op if spec else None, cfg.examples, exclude=job.kernel)
    secret_names = (cfg.api_key_env,) if cfg.api_key_env else ()
    prior = None
    if job.prior is not None:
        prior = {"code": job.prior[0], "verdict": _for_model(job.prior[1].summary())}
    user = task_prompt(job.unit.language, contract, context=ctx.code, source_file=os.path.basename(job.source_path),
                       spec=spec, spec_error=spec_error, arch=arch_summary(_arch_spec(job.target, job.arch)),
                       diagnostics=[d.format() for d in job.diagnostics], examples=examples, prior=prior)
    messages: list[Message] = [{"role": "system", "content": redact(system_prompt(contract), secret_names)},
                               {"role": "user", "content": redact(user, secret_names)}]
    out = Outcome(job.kernel, None, None, contract=contract)
    last_failure = ""
    sent = 0  # messages of the conversation already sent in an earlier request
    for attempt in range(1, job.max_attempts + 1):
        stop = budget.exhausted()
        if stop:
            out.diagnostics.append(_diag(job, "XL4003", attempt=attempt, stop=stop))
            last_failure = "budget exhausted"
            break
        phash = prompt_hash(messages)
        comp = client.complete(messages, phash, max_tokens=budget.request_tokens(cfg))
        budget.add(comp)
        rec: dict[str, Any] = {"attempt": attempt, "prompt_hash": phash, "model": cfg.model, "cached": comp.cached,
                               "tokens_in": comp.tokens_in, "tokens_out": comp.tokens_out,
                               "cost_usd": round(comp.cost_usd, 6), "cost_known": comp.cost_known,
                               "finish_reason": comp.finish_reason, "code_hash": None, "compile": "skipped",
                               "verdict": None, "failure": None, "message": "", "isolation": None,
                               # exactly what this request added to the conversation (the earlier messages
                               # were sent before and are in the earlier attempts)
                               "sent": [dict(m) for m in messages[sent:]]}
        sent = len(messages)
        out.attempts.append(rec)
        if comp.error:
            rec.update(failure="provider error", message=_first_line(comp.error))
            out.diagnostics.append(_diag(job, "XL4004", error=_first_line(comp.error)))
            last_failure = "provider error"
            break
        ex = extract(comp.content, job.target, comp.finish_reason)
        if ex.code is None:
            rec.update(failure=ex.failure, message=ex.message)
            feedback = repair_prompt(contract, attempt, job.max_attempts, ex.failure or "invalid answer", messages=[ex.message])
        else:
            rec["code_hash"] = hashlib.sha256(ex.code.encode()).hexdigest()
            j = judge(job, contract, ex.code)
            rec.update(compile=j.compile, verdict=j.verdict.status if j.verdict else None, failure=j.failure,
                       isolation=j.isolation,
                       message=_first_line(j.counterexample or j.log or "\n".join(j.messages) or
                                           (j.verdict.reason if j.verdict and j.verdict.reason else "")))
            if j.failure is None:
                out.code, out.verdict = ex.code, j.verdict
                break
            title = "Compiler output (trimmed)" if j.failure == "compile error" else "Details"
            feedback = repair_prompt(contract, attempt, job.max_attempts, j.failure, log=j.log, log_title=title,
                                     counterexample=j.counterexample, messages=j.messages)
        last_failure = rec["failure"] or ""
        messages = [*messages, {"role": "assistant", "content": comp.content[:MAX_ANSWER_CHARS]},
                    {"role": "user", "content": redact(feedback, secret_names)}]
    out.attempts = redact_obj(out.attempts, secret_names)
    n = len(out.attempts)
    if out.accepted and out.verdict is not None and out.verdict.status == "unverified":
        what = "compiles but cannot be verified" if out.attempts[-1]["compile"] == "ok" else "can be neither compiled nor verified"
        out.diagnostics.append(_diag(job, "XL4002", what=what, reason=out.verdict.reason))
    elif out.accepted:
        out.diagnostics.append(_diag(job, "XL4005", model=cfg.model, attempt=n, attempts=job.max_attempts))
    elif last_failure not in ("budget exhausted", "provider error"):
        out.diagnostics.append(_diag(job, "XL4001", attempts=n, last=last_failure or "no attempt"))
    return out
