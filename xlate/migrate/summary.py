"""The library-level outcome of a migration: counts per status, the hard list of what was not migrated, and the
exit code (0 every kernel verified or nothing to do; 1 something rejected or not migrated; 3 nothing rejected but
something could not be verified here)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from xlate.errors import EXIT_OK, EXIT_REJECTED, EXIT_UNVERIFIED

FAILED_KERNEL = {"rejected", "not translated", "error"}
UNVERIFIED_KERNEL = {"unverified", "skipped"}
FAILED_FILE = {"error", "not migrated", "rejected"}


def not_migrated(files: list[dict[str, Any]], analysis: bool) -> list[dict[str, Any]]:
    """Every kernel (and kernel-less file) whose port is not in the output tree, with the reason."""
    out: list[dict[str, Any]] = []
    for f in files:
        if analysis:
            for k in f["kernels"]:
                if k["status"] in ("llm", "unsupported", "error"):
                    why = (k.get("blocking") or [{}])[0].get("message") or k.get("reason") or ""
                    out.append({"file": f["path"], "kernel": k["name"], "status": k["status"], "reason": why})
            if f["status"] == "error" and not f["kernels"]:
                out.append({"file": f["path"], "kernel": None, "status": "error", "reason": f["message"]})
            continue
        if f["written"]:
            # A partial port is in the tree, but its untranslated kernels are not migrated: still on the list.
            for k in f["kernels"]:
                if k["status"] in ("not translated", "error"):
                    out.append({"file": f["path"], "kernel": k["name"], "status": k["status"],
                                "reason": f"{k.get('reason') or ''}; written as a partial port: review its XL6018 sites"})
            continue
        if f["status"] in ("skipped",):
            continue
        if f["kernels"]:
            blockers = [k["name"] for k in f["kernels"] if k["status"] in FAILED_KERNEL]
            for k in f["kernels"]:
                reason = k.get("reason") or ""
                if k["status"] not in FAILED_KERNEL and blockers:
                    # Files are written whole: a good kernel shares the fate of the file's failed ones.
                    reason = f"{k['status']}, but its file was not written because of {', '.join(blockers)}"
                elif k["status"] == "verified":
                    reason = "verified, but not written"
                out.append({"file": f["path"], "kernel": k["name"], "status": k["status"], "reason": reason})
        elif f["status"] != "verified":
            out.append({"file": f["path"], "kernel": None, "status": f["status"], "reason": f["message"]})
    return out


def summarize(files: list[dict[str, Any]], analysis: bool) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    kernels = [k for f in files for k in f["kernels"]]
    by_kernel = Counter(k["status"] for k in kernels)
    by_file = Counter(f["status"] for f in files)
    if analysis:
        from xlate.migrate.analysis import library_effort

        blocked = by_kernel["llm"] + by_kernel["unsupported"] + by_kernel["error"] + by_file["error"]
        code = EXIT_REJECTED if blocked else EXIT_OK
        efforts = [k.get("effort", "high") for k in kernels]
        extra = {"effort": library_effort(efforts, by_file["error"]), "by_effort": dict(Counter(efforts)),
                 "hazards": sum(len(k.get("hazards", [])) for k in kernels)}
    else:
        from xlate.migrate.verdicts import category

        # Failures: a kernel rejected or not translated, a file that failed, a translation with constructs the
        # rules left (written, but it will not build as is), a file whose port does not compile.
        incomplete = [f for f in files if f.get("rule_errors")]
        broken = [f for f in files if (f.get("compile") or {}).get("ok") is False]
        failed = any(k["status"] in FAILED_KERNEL for k in kernels) or any(f["status"] in FAILED_FILE for f in files) \
            or bool(incomplete) or bool(broken)
        unverified = any(k["status"] in UNVERIFIED_KERNEL for k in kernels)
        code = EXIT_REJECTED if failed else EXIT_UNVERIFIED if unverified else EXIT_OK
        extra = {"written": sum(bool(f["written"]) for f in files),
                 "copied_unchanged": sum(bool(f.get("fallback")) for f in files),
                 "categories": dict(sorted(Counter(category(f) for f in files).items())),
                 "incomplete": len(incomplete),
                 "build_manual": sum(len((f.get("build") or {}).get("manual") or []) for f in files),
                 "compile": compile_summary(files)}
        perf = perf_summary(kernels)
        if perf:
            extra["perf"] = perf
        gate = gate_summary(files)
        if gate:
            extra["gate"] = gate
    missing = not_migrated(files, analysis)
    return {"files": len(files), "kernels": len(kernels), "kernels_by_status": dict(sorted(by_kernel.items())),
            "files_by_status": dict(sorted(by_file.items())), "not_migrated": len(missing),
            "exit_code": code, **extra}, missing


def compile_summary(files: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The compile check over the library: its compiler (with its ROCm), what compiled, failed or could not be
    checked here, and the HIP names newer than the local ROCm (each with the release that has it)."""
    checks = [f["compile"] for f in files if f.get("compile")]
    if not checks:
        return None
    newer: dict[str, str] = {}
    for c in checks:
        for d in c.get("not_checkable") or []:
            newer.setdefault(d["name"], d["rocm"])
    return {"compilers": sorted({c.get("compiler") or "compiler" for c in checks}),
            "rocm": next((c.get("rocm") for c in checks if c.get("rocm")), None),
            "checked": len(checks), "compiled": sum(c.get("ok") is True for c in checks),
            "failed": sum(c.get("ok") is False for c in checks),
            "not_checkable": sum(c.get("ok") is None and bool(c.get("not_checkable")) for c in checks),
            "not_compiled": sum(c.get("ok") is None and not c.get("not_checkable") for c in checks),
            "newer_constructs": [{"name": n, "rocm": v} for n, v in sorted(newer.items())]}


def port_over_source(perf: dict[str, Any]) -> float | None:
    """A timed kernel's port/source time ratio (reports before it was recorded: 1 / source-over-port)."""
    if perf.get("status") != "ok":
        return None
    if perf.get("port_over_source"):
        return float(perf["port_over_source"])
    return 1.0 / perf["ratio"] if perf.get("ratio") else None


def noise_verdict(perf: dict[str, Any]) -> str | None:
    """'port faster', 'port slower', 'within noise' (reports without a verdict: by the ratio alone)."""
    r = port_over_source(perf)
    if r is None:
        return None
    return perf.get("verdict") or ("port faster" if r < 1 else "port slower" if r > 1 else "within noise")


def perf_summary(kernels: list[dict[str, Any]]) -> dict[str, Any] | None:
    """--benchmark over the library: kernels timed, the geometric mean of port/source time, how many ratios are
    speed-ups, slow-downs or within noise, the port's bandwidth as a share of the copy's, and why the others
    have no number (reason -> kernels)."""
    import statistics

    perfs = [k["perf"] for k in kernels if k.get("perf")]
    if not perfs:
        return None
    timed = [p for p in perfs if p.get("status") == "ok"]
    reasons = Counter(str(p.get("reason") or p.get("status")) for p in perfs if p.get("status") != "ok")
    out: dict[str, Any] = {"kernels": len(timed), "benchmarked": len(perfs),
                           "reasons": dict(reasons.most_common())}
    if timed:
        ratios = [p["ratio"] for p in timed]
        over = [port_over_source(p) or 0.0 for p in timed]
        verdicts = Counter(noise_verdict(p) for p in timed)
        out.update(geomean_ratio=statistics.geometric_mean(ratios), min_ratio=min(ratios), max_ratio=max(ratios),
                   geomean_port_over_source=statistics.geometric_mean(over), max_port_over_source=max(over),
                   faster=verdicts["port faster"], slower=verdicts["port slower"],
                   within_noise=verdicts["within noise"])
        pcts = [((p.get("bandwidth") or {}).get("port") or {}).get("pct_of_copy") for p in timed]
        pcts = [x for x in pcts if x is not None]
        if pcts:
            out["port_pct_of_copy"] = {"median": statistics.median(pcts), "min": min(pcts), "max": max(pcts)}
    return out


def gate_summary(files: list[dict[str, Any]], slowest: int = 5) -> dict[str, Any] | None:
    """The gate's cost over the library: verification wall time, examples and builds summed over the kernels it
    judged, and the slowest verifications (where a migration's time goes)."""
    rows = []
    for f in files:
        for k in f["kernels"]:
            g = gate_time(k.get("verdict"))
            if g:
                rows.append({"file": f["path"], "kernel": k["name"], **g})
    if not rows:
        return None
    rows.sort(key=lambda r: -r["seconds"])
    return {"kernels": len(rows), "seconds": sum(r["seconds"] for r in rows),
            "examples": sum(r["examples"] for r in rows), "compiles": sum(r["compiles"] for r in rows),
            "specialisations": sum(r["specialisations"] for r in rows), "slowest": rows[:slowest]}


def gate_time(verdict: dict[str, Any] | None) -> dict[str, Any] | None:
    """The gate's cost for one kernel: wall seconds, examples, and the builds of both sides (specialisations:
    distinct builds the run needed; compiles: those the compile cache did not hold; their seconds)."""
    if not verdict:
        return None
    sides = [verdict.get(s) or {} for s in ("source", "candidate")]
    return {"seconds": float(verdict.get("seconds") or 0.0), "examples": int(verdict.get("examples") or 0),
            "specialisations": sum(int(s.get("specialisations") or 0) for s in sides),
            "compiles": sum(int(s.get("compiles") or 0) for s in sides),
            "compile_seconds": sum(float(s.get("compile_seconds") or 0.0) for s in sides)}
