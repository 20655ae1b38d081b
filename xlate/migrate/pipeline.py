"""The migration driver: discover the library, key every task by content, reuse what the cache already holds,
run the rest on an executor (committing each result as it completes), and assemble the report."""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import time
from dataclasses import dataclass
from typing import Any

from xlate import __version__
from xlate.errors import InputError
from xlate.migrate.cache import ResultCache
from xlate.migrate.diagnostics import diag_dict
from xlate.migrate.discover import Library, SourceFile, discover
from xlate.migrate.executors import make_executor
from xlate.migrate.keys import Hasher, task_key
from xlate.migrate.options import MigrateOptions
from xlate.migrate.progress import MigrateProgress
from xlate.migrate.task import Task, base_result, kernel_names_of
from xlate.targets import target

# Results that say something about this machine at this moment, not about the source: never reused.
TRANSIENT_ERRORS = {"crash", "timeout", "io", "internal"}


@dataclass
class Outcome:
    report: dict[str, Any]
    report_dir: str
    exit_code: int


def _inside(a: str, b: str) -> bool:
    """a is b or lies under b."""
    return os.path.commonpath([a, b]) == b


def check_options(o: MigrateOptions) -> None:
    target(o.target)  # InputError naming the known targets
    if o.jobs < 1:
        raise InputError("xlate: error: -j must be at least 1")
    if o.executor not in ("local", "ray", "serial"):
        raise InputError(f"xlate: error: unknown executor '{o.executor}' (local, ray, serial)")
    for r in o.rules_files:
        if not os.path.isfile(r):
            raise InputError(f"{r}: error: no such rules file (--rules)")
    if o.golden and not os.path.exists(o.golden):
        raise InputError(f"{o.golden}: error: no such golden file or folder (--against)")


def check_trees(lib: Library, out: str) -> None:
    root = lib.root
    if _inside(out, root) or _inside(root, out):
        raise InputError(f"xlate: error: the output folder {out} and the source tree {root} overlap; the input is never "
                         "modified, so choose an output folder outside it (e.g. a sibling)")


def make_task(f: SourceFile, lib: Library, o: MigrateOptions, out: str, hasher: Hasher | None = None) -> Task:
    kind = "analyze" if o.analysis_only else f.kind
    return Task(key=task_key(f, lib, o, hasher), rel=f.rel, kind=kind, role=f.role, language=f.language or "?",
                source=f.path, output=os.path.join(out, f.output) if f.output else None, output_rel=f.output,
                src_root=lib.root, out_root=out, rewrites=dict(f.rewrites), options=o.to_dict(),
                headers=_headers(f, lib) if o.compile_check else {}, project_names=project_names(f, lib))


def project_names(f: SourceFile, lib: Library) -> list[str]:
    """What the file and the project headers it reaches define: the translators never flag these as unknown
    CUDA names (a project's own cudaCheck)."""
    by_rel = lib.by_rel()
    names = set(f.defines)
    for rel in f.deps:
        names |= by_rel[rel].defines
    return sorted(names)


def _headers(f: SourceFile, lib: Library) -> dict[str, dict[str, Any]]:
    by_rel = lib.by_rel()
    return {rel: {"path": by_rel[rel].path, "language": by_rel[rel].language, "includes": dict(by_rel[rel].includes),
                  "rewrites": dict(by_rel[rel].rewrites)} for rel in [f.rel, *f.deps]}


def static_result(f: SourceFile, o: MigrateOptions, out: str) -> dict[str, Any]:
    """Files no worker needs to see: unreadable ones, output collisions, headers the target has no use for, and
    (in analysis mode) files already in the target language."""
    t = Task("", f.rel, f.kind, f.role, f.language or "?", f.path, None, f.output, "", out)
    r = base_result(t)
    r["diagnostics"] = list(f.diagnostics)
    if f.kind == "error":
        first = next((d for d in f.diagnostics if d["severity"] == "error"), {"message": "cannot be migrated", "code": "XL6004"})
        r.update(status="error", message=first["message"], error={"kind": "input", "code": first["code"], "message": first["message"]})
        r["kernels"] = [{"name": k, "status": "error", "engine": None, "verdict": None, "counterexample": None,
                         "diagnostics": [], "hazards": [], "attempts": [], "reason": first["message"], "timings": {},
                         "perf": None} for k in kernel_names_of(f.path)]
    elif f.kind == "skip":
        r.update(status="skipped", message=next((d["message"] for d in f.diagnostics if d["code"] == "XL6010"), "not ported"))
    else:  # copy in analysis mode
        r.update(status="copied", message=f"already {f.language}: nothing to translate")
    return r


def _cached_ok(result: dict[str, Any], out: str) -> bool:
    """A cached result is reused only if the file it recorded (port or copied source) is still in the output tree,
    unchanged."""
    if not result.get("written") and not result.get("fallback"):
        return True
    try:
        with open(os.path.join(out, result["output"]), "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest() == result.get("output_sha256")
    except (OSError, TypeError):
        return False


def _merge_discovery(result: dict[str, Any], f: SourceFile) -> dict[str, Any]:
    """Discovery's notes on a file (includes not found...) belong in its entry, ahead of the task's own."""
    if f.diagnostics:
        result = dict(result)
        result["diagnostics"] = list(f.diagnostics) + [d for d in result["diagnostics"] if d not in f.diagnostics]
    return result


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


XLATE_MARKS = (b"// Generated by xlate ", b"// xlate ", b"# Generated by xlate ")  # first bytes of a file this migration wrote


def finalize(result: dict[str, Any], f: SourceFile, o: MigrateOptions, out: str) -> dict[str, Any]:
    """A code file whose task wrote no port: in a whole-tree migration its source goes in the port's place (the
    tree stays complete and every include resolves); with --verified-only or for a single-file target, an earlier
    run's port of it is removed (a stale port must not pass for this run's)."""
    if o.analysis_only or result.get("written") or not f.output or f.kind != "port" or result.get("status") == "skipped":
        return result
    from xlate.migrate.naming import ports_headers
    from xlate.migrate.tree import write_fallback

    if ports_headers(o.target) and not o.verified_only:
        return write_fallback(result, f, out)
    path = os.path.join(out, f.output)
    try:
        with open(path, "rb") as fh:
            stale = fh.read(64).startswith(XLATE_MARKS)
        if stale:
            os.unlink(path)
    except OSError:
        pass
    return result


def tree_results(lib: Library, o: MigrateOptions, out: str) -> dict[str, dict[str, Any]]:
    """Files that are not code: copied, build files translated (--to hip); with --verified-only, none."""
    from xlate.migrate import buildfiles, naming, tree
    from xlate.migrate.compilecheck import amd_target

    results: dict[str, dict[str, Any]] = {}
    renames = {f.rel: f.output for f in lib.files if f.output and f.kind in ("port", "copy")}
    for f in lib.files:
        if f.kind not in ("asset", "build"):
            continue
        if o.verified_only:
            r = tree._result(f, "skipped", "not written: --verified-only writes verified ports only")
        elif f.kind == "asset" or o.target != "hip":
            r = tree.copy_asset(f, out)
            if f.kind == "build":
                r["diagnostics"].append(diag_dict("XL6017", f.rel))
                r["build"] = {"tool": buildfiles.tool_of(f.rel), "changes": [], "manual": []}
        else:
            ctx = buildfiles.context(f.rel, renames, naming.renamed_suffixes(o.target, o.keep_names), amd_target(o.arch), o.roc)
            r = tree.translate_build_file(f, out, ctx)
        results[f.rel] = r
    return results


def migrate(o: MigrateOptions) -> Outcome:
    check_options(o)
    out = os.path.abspath(o.output)
    lib = discover(o.source, o.target, include_dirs=o.include_dirs, root=o.root, exclude=[out], keep_names=o.keep_names)
    if o.analysis_only:  # the analysis is about code
        lib.files = [f for f in lib.files if f.kind not in ("asset", "build")]
    check_trees(lib, out)
    report_dir = o.resolved_report_dir()
    started, t0 = _now(), time.perf_counter()
    try:
        os.makedirs(out, exist_ok=True)
        cache = ResultCache(o.resolved_cache_path())
    except OSError as exc:
        raise InputError(f"{out}: error: cannot create the output folder or its cache: {exc.strerror or exc}") from None
    results: dict[str, dict[str, Any]] = {}
    tasks: list[Task] = []
    hits: set[str] = set()
    by_rel = lib.by_rel()
    hasher = Hasher()
    for f in lib.files:
        if f.kind in ("asset", "build"):
            continue  # tree_results
        runs = f.kind in ("port", "copy") and not (o.analysis_only and f.kind == "copy")
        if not runs:
            results[f.rel] = static_result(f, o, out)
            continue
        t = make_task(f, lib, o, out, hasher)
        cached = cache.get(t.key) if o.resume else None
        if cached is not None and _cached_ok(cached, out):
            results[f.rel] = _merge_discovery(cached, f)
            hits.add(f.rel)
        else:
            tasks.append(t)
    cache.start_run(len(tasks), {k: v for k, v in o.to_dict().items() if k != "progress"})
    executor = make_executor(o.executor, o.jobs, o.task_timeout, o.gpus_per_task, o.ray_address)
    label = "analysing" if o.analysis_only else "porting"

    with MigrateProgress(len(lib.files), enabled=o.progress, label=label) as progress:
        for rel, r in results.items():
            progress.advance(r, cached=rel in hits)

        def on_done(t: Task, result: dict[str, Any]) -> None:
            result = finalize(result, by_rel[t.rel], o, out)
            if (result.get("error") or {}).get("kind") not in TRANSIENT_ERRORS:
                cache.put(t.key, t.rel, result)  # committed now: a kill after this line loses nothing of it
            results[t.rel] = _merge_discovery(result, by_rel[t.rel])
            progress.advance(result)

        bench: dict[str, Any] | None = None
        try:
            executor.run(tasks, on_done)
            if o.benchmark and not o.analysis_only:  # after every task: no verification shares the GPU while timing
                from xlate.migrate.benchrun import benchmark_results

                bench = benchmark_results(results, {f.rel: f.path for f in lib.files}, o.target, o.arch, out, o.timeout)
            if not o.analysis_only:
                for rel, r in tree_results(lib, o, out).items():
                    results[rel] = r
                    progress.advance(r)
        finally:
            cache.finish_run()
            cache.close()
    run = {"started": started, "finished": _now(), "seconds": time.perf_counter() - t0, "executor": executor.name,
           "jobs": o.jobs, "tasks": len(tasks) + len(hits), "executed": len(tasks), "cache_hits": len(hits),
           "cache": o.resolved_cache_path(), "xlate_version": __version__, **({"benchmark": bench} if bench else {})}
    from xlate.migrate.report import build_report, write_report

    report = build_report(lib, [results[f.rel] for f in lib.files], o, run)
    write_report(report, report_dir)
    return Outcome(report, report_dir, report["summary"]["exit_code"])
