"""Benchmarks over many kernels: `xlate migrate --benchmark` times every verified kernel after all tasks have
finished (one at a time, in the driver process, so no verification shares the GPU while a kernel is timed), and
`xlate port --stats` the kernels of one port. The device's L2 size and copy bandwidth are taken once per run.
Timings are never cached: they describe this GPU now, not the source."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from xlate.migrate.bench import benchmark_kernel
from xlate.migrate.benchdevice import DeviceFacts, device_facts, gpu_timing, measure_copy
from xlate.migrate.benchstats import Plan
from xlate.migrate.summary import gate_time


class RunContext:
    """What one run's benchmarks share: the plan, the device, and the copy bandwidth (measured on first use,
    on the first of the kernel's backends that times on a GPU)."""

    def __init__(self, plan: Plan | None = None, timeout: float = 60.0):
        self.plan = plan or Plan()
        self.timeout = timeout
        self.facts: DeviceFacts | None = None
        self.copy: dict[str, Any] | None = None

    def device(self) -> DeviceFacts:
        if self.facts is None:
            self.facts = device_facts()
        return self.facts

    def copy_for(self, backends: list[str]) -> dict[str, Any]:
        if self.copy is None or self.copy.get("status") != "ok":
            usable = [b for b in backends if gpu_timing(b) is None]
            if usable:
                self.copy = measure_copy(usable[0], self.device(), self.plan, timeout=max(self.timeout, 120.0))
            elif self.copy is None:
                self.copy = {"status": "unavailable", "reason": gpu_timing(backends[0]) if backends else "no backend"}
        return self.copy

    def to_dict(self) -> dict[str, Any]:
        return {"plan": self.plan.to_dict(), "device": self.facts.to_dict() if self.facts else None, "copy": self.copy}


def _backends(verdict: dict[str, Any] | None, source_language: str, port_language: str) -> list[str]:
    """The backends that ran the two sides (from the verdict where it names them)."""
    from xlate.backends.registry import backend_for_language

    v = verdict or {}
    names = [(v.get(side) or {}).get("backend") for side in ("source", "candidate")]
    fallback = [backend_for_language(lang).name for lang in (source_language, port_language)]
    return [n or f for n, f in zip(names, fallback)]


def time_kernel(ctx: RunContext, source: str, port_text: str, port_language: str, kernel: str, *,
                source_language: str, verdict: dict[str, Any] | None, arch: str | None,
                port_path: str | None = None, untrusted: bool = False) -> dict[str, Any]:
    """Benchmark one verified kernel; `untrusted` (a model wrote the port): run only as the gate ran it, under
    the sandbox policy."""
    import contextlib

    from xlate.backends.sandbox import untrusted as untrusted_scope

    backends = _backends(verdict, source_language, port_language)
    for b in backends:
        why = gpu_timing(b)
        if why:
            return {"status": "unavailable", "reason": why}
    copy = ctx.copy_for(backends)
    scope = untrusted_scope(require=True, what="model output") if untrusted else contextlib.nullcontext()
    try:
        with scope:
            return benchmark_kernel(source, port_text, port_language, kernel, arch=arch, timeout=ctx.timeout,
                                    plan=ctx.plan, device=ctx.device(), copy=copy, port_path=port_path)
    except Exception as exc:  # a benchmark failure never costs the port
        return {"status": "failed", "reason": f"{type(exc).__name__}: {exc}"}


def compiler_arch(target: str, arch: str | None) -> str | None:
    if target != "hip":
        return None
    from xlate.arch import compiler_target

    return compiler_target(arch, "hip")


def benchmark_results(results: dict[str, dict[str, Any]], sources: dict[str, str], target: str, arch: str | None,
                      out: str, timeout: float = 60.0, plan: Plan | None = None,
                      on_kernel: Callable[[str, str, dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Time every verified kernel of `results` (file path -> task result; `sources`: file path -> source path)
    whose port is in the output tree `out`, setting each kernel's `perf` and `timings.bench_s`. Returns the
    run's benchmark facts (device, copy bandwidth, plan, kernels timed, seconds)."""
    from xlate.targets import target as target_of

    t0 = time.perf_counter()
    ctx = RunContext(plan, timeout)
    language = target_of(target).language
    todo = [(rel, f, k) for rel, f in sorted(results.items()) for k in f.get("kernels") or [] if k.get("status") == "verified"]
    for rel, f, k in todo:
        k0 = time.perf_counter()
        if not f.get("written") or not f.get("output"):
            perf: dict[str, Any] = {"status": "unavailable", "reason": "its port was not written (nothing to time)"}
        else:
            port_path = os.path.join(out, f["output"])
            with open(port_path, encoding="utf-8", errors="surrogateescape") as fh:
                text = fh.read()
            perf = time_kernel(ctx, sources[rel], text, language, k["name"], source_language=f.get("language") or "cuda",
                               verdict=k.get("verdict"), arch=compiler_arch(target, arch), port_path=port_path,
                               untrusted=k.get("engine") == "llm")
        k["perf"] = perf
        k.setdefault("timings", {})["bench_s"] = time.perf_counter() - k0
        if on_kernel is not None:
            on_kernel(rel, k["name"], perf)
    ok = sum((k.get("perf") or {}).get("status") == "ok" for _, _, k in todo)
    return {**ctx.to_dict(), "kernels": len(todo), "timed": ok, "seconds": time.perf_counter() - t0}


def port_stats(req: Any, result: Any) -> dict[str, Any]:
    """`xlate port --stats`: per kernel, the gate's time (seconds, examples, compiles) and, for a verified
    kernel, its benchmark; the run's device and copy bandwidth."""
    from xlate.targets import target as target_of

    ctx = RunContext(timeout=req.timeout)
    tr = result.translation
    kernels: dict[str, Any] = {}
    for k in result.kernels:
        v = k.verdict.to_dict() if k.verdict is not None else None
        entry: dict[str, Any] = {"gate": gate_time(v)}
        if v is None or v["status"] != "verified":
            entry["perf"] = {"status": "unavailable", "reason": f"not timed: the port is {v['status'] if v else k.status}"}
        elif tr is None or not tr.text:
            entry["perf"] = {"status": "unavailable", "reason": "no port text"}
        else:
            from xlate.parse.source import read_source

            src = read_source(req.source, None)
            entry["perf"] = time_kernel(ctx, req.source, tr.text, target_of(req.target).language, k.kernel,
                                        source_language=src.language, verdict=v, arch=compiler_arch(req.target, req.arch),
                                        untrusted=k.engine == "llm")
        kernels[k.kernel] = entry
    return {**ctx.to_dict(), "kernels": kernels}
