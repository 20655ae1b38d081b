"""One migration task: port (or copy, or analyse) one file of the library. Runs in a worker process (local pool
or Ray); takes and returns plain data, and turns every failure it can catch into a result, never an exception.
Paths inside a result are relative to the library root, so a cached result does not depend on where it lives."""

from __future__ import annotations

import difflib
import errno
import os
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xlate.diagnostics import Diagnostic
from xlate.errors import InputError, Located
from xlate.migrate import faults, includes
from xlate.migrate.diagnostics import diag_dict

DIFF_LIMIT = 200_000  # characters of unified diff kept per file


@dataclass
class Task:
    key: str
    rel: str
    kind: str  # port | copy | analyze
    role: str  # source | header
    language: str
    source: str  # absolute path
    output: str | None  # absolute path
    output_rel: str | None
    src_root: str
    out_root: str
    rewrites: dict[str, str] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)  # MigrateOptions.to_dict()
    # Project headers reachable from this file (and the file itself): rel -> {path, language, includes, rewrites}
    headers: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Names the project defines in this file and the headers it reaches (never reported as unknown CUDA names)
    project_names: list[str] = field(default_factory=list)
    test_faults: str | None = field(default_factory=faults.current)  # TEST-ONLY (faults.py); None in real runs


def base_result(task: Task) -> dict[str, Any]:
    return {"path": task.rel, "output": task.output_rel, "role": task.role, "language": task.language,
            "kind": task.kind, "status": "error", "written": False, "output_sha256": None, "message": "",
            "error": None, "engine": None, "diagnostics": [], "kernels": [], "includes_rewritten": [], "diff": "",
            "diff_truncated": False, "timings": {}}


def error_result(task: Task, kind: str, code: str, kernels: list[str] | None = None, **fields: Any) -> dict[str, Any]:
    """A task that produced no port: the file, and every kernel we know of in it, are not migrated."""
    r = base_result(task)
    d = diag_dict(code, task.rel, **fields)
    r.update(status="error", error={"kind": kind, "code": code, "message": d["message"]}, message=d["message"])
    r["diagnostics"].append(d)
    names = kernels if kernels is not None else kernel_names_of(task.source)
    r["kernels"] = [{"name": k, "status": "error", "engine": None, "verdict": None, "counterexample": None,
                     "diagnostics": [], "hazards": [], "attempts": [], "reason": d["message"], "timings": {},
                     "perf": None} for k in names]
    return r


def kernel_names_of(path: str) -> list[str]:
    """Best-effort kernel names for a file whose task failed (a crash may come from the parser itself)."""
    import re

    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return list(dict.fromkeys(re.findall(r"__global__\s+(?:[\w:<>,*&\s]+?\s+)?\**(\w+)\s*\(", text)))


def run_task(task: Task) -> dict[str, Any]:
    t0 = time.perf_counter()
    try:
        faults.inject(task.rel, task.test_faults)  # TEST-ONLY hook; inert unless XLATE_TEST_FAULTS was set
        if task.kind == "copy":
            result = _copy(task)
        elif task.kind == "analyze":
            result = _analyze(task)
        else:
            result = _port(task)
    except InputError as exc:
        result = error_result(task, "parse", "XL6008", detail="; ".join(exc.lines())[:2000])
    except ImportError as exc:
        result = error_result(task, "translator", "XL6011", detail=f"no working rule translator for "
                              f"{task.language} -> {task.options['target']} here ({type(exc).__name__}: {exc})")
    except OSError as exc:
        result = io_error_result(task, exc)
    except Exception as exc:
        tb = traceback.format_exc(limit=6)
        result = error_result(task, "internal", "XL6009", detail=f"{type(exc).__name__}: {exc}")
        result["error"]["traceback"] = tb[-4000:]
    result.setdefault("timings", {})["total_s"] = time.perf_counter() - t0
    return relativize(result, task.src_root, task.out_root)


def io_error_result(task: Task, exc: OSError) -> dict[str, Any]:
    name = errno.errorcode.get(exc.errno or 0, "")
    hint = {"ENOSPC": "the disk is full", "EDQUOT": "the disk quota is exceeded", "EACCES": "permission denied",
            "EPERM": "operation not permitted", "EROFS": "read-only file system"}.get(name, exc.strerror or str(exc))
    target = exc.filename or task.output or task.rel
    r = error_result(task, "io", "XL6005", output=os.path.relpath(str(target), task.out_root) if os.path.isabs(str(target)) else target,
                     detail=f"{hint} ({name or type(exc).__name__})")
    r["error"]["errno"] = name
    return r


def relativize(obj: Any, *roots: str) -> Any:
    prefixes = [r.rstrip("/") + "/" for r in roots if r]
    if isinstance(obj, str):
        for p in prefixes:
            obj = obj.replace(p, "")
        return obj
    if isinstance(obj, dict):
        return {k: relativize(v, *roots) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [relativize(v, *roots) for v in obj]
    return obj


def _sha(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def _diff(task: Task, source_text: str, port_text: str) -> tuple[str, bool]:
    lines = difflib.unified_diff(source_text.splitlines(keepends=True), port_text.splitlines(keepends=True),
                                 fromfile=task.rel, tofile=task.output_rel or "(port)", n=2)
    text = _printable("".join(lines))
    return (text[:DIFF_LIMIT], True) if len(text) > DIFF_LIMIT else (text, False)


def _printable(text: str) -> str:
    """Report text: bytes of the source that are not UTF-8 (kept as lone surrogates) become U+FFFD."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def file_mode() -> int:
    """What open() would give a new file here (0666 less the umask): mkstemp's 0600 would hide the ports from
    the rest of a team's build."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _bytes(text: str) -> bytes:
    """Source text back to bytes: bytes that were not UTF-8 were read as lone surrogates and go back unchanged."""
    return text.encode("utf-8", "surrogateescape")


def _write(path: str, text: str) -> str:
    from xlate.fsutil import atomic_write_bytes

    data = _bytes(text)
    atomic_write_bytes(path, data, mode=file_mode())
    return _sha(data)


def _copy(task: Task) -> dict[str, Any]:
    r = base_result(task)
    with open(task.source, encoding="utf-8", errors="surrogateescape") as fh:
        text = fh.read()
    new, changed = includes.rewrite(text, task.rewrites)
    assert task.output is not None
    r["output_sha256"] = _write(task.output, new)
    r.update(status="copied", written=True, includes_rewritten=changed, message="already in the target language: copied")
    r["diagnostics"].append(diag_dict("XL6012", task.rel, language=task.language))
    r["diff"], r["diff_truncated"] = _diff(task, text, new) if changed else ("", False)
    return r


def _translation_options(task: Task) -> Any:
    import dataclasses

    from xlate.translate.base import TranslateOptions

    o = task.options
    kw: dict[str, Any] = {"rocm": o.get("rocm"), "roc": bool(o.get("roc")), "launch_syntax": o.get("launch_syntax") or "ggl",
                          "project_names": frozenset(task.project_names)}
    known = {f.name for f in dataclasses.fields(TranslateOptions)}
    return TranslateOptions(arch=o.get("arch"), rules_files=list(o.get("rules_files") or []),
                            **{k: v for k, v in kw.items() if k in known})


def _parse(task: Task) -> Any:
    from xlate.parse import parse_file

    return parse_file(task.source, task.language if task.language not in ("?", "") else None, strict=False)


def _analyze(task: Task) -> dict[str, Any]:
    from xlate.migrate.analysis import analyse
    from xlate.translate.registry import rule_translator

    r = base_result(task)
    unit = _parse(task)
    t0 = time.perf_counter()
    tr = rule_translator(unit.language, task.options["target"]).translate(unit, unit.text, _translation_options(task))
    r["timings"]["translate_s"] = time.perf_counter() - t0
    a = analyse(unit, tr)
    r.update(status="analysed", engine=tr.engine, diagnostics=a["file_diagnostics"], stats=a["stats"])
    r["kernels"] = [{**k, "status": k["category"], "engine": tr.engine, "verdict": None, "counterexample": None,
                     "attempts": [], "timings": {}, "perf": None,
                     "reason": (k["blocking"][0]["message"] if k["blocking"] else "the rules translate it")}
                    for k in a["kernels"]]
    r["diff"], r["diff_truncated"] = _diff(task, unit.text, includes.rewrite(tr.text, task.rewrites)[0])
    return r


def _port(task: Task) -> dict[str, Any]:
    from xlate.migrate.naming import ports_headers

    o = task.options
    unit = _parse(task)
    if not unit.kernels:
        if not ports_headers(o["target"]):
            r = base_result(task)
            r.update(status="skipped", message=f"no kernels: nothing to port for --to {o['target']}")
            return r
        return _translate_only(task, unit)
    return _port_kernels(task, unit)


def _compilable(task: Task) -> bool:
    """Translation units a compiler takes as HIP/CUDA C++ on their own (headers are compiled inside them)."""
    return task.role == "source" and Path(task.rel).suffix.lower() in (".cu", ".hip", ".cpp", ".cc", ".cxx")


def _comment(options: dict[str, Any]) -> str:
    """The target language's line comment: a Triton port is Python (a `//` header made every migrated Triton
    port a syntax error)."""
    from xlate.targets import target

    return target(options["target"]).comment


def _translate_only(task: Task, unit: Any) -> dict[str, Any]:
    """A file without kernels (headers, host code): the rules translate it; nothing can be verified. Constructs the
    rules cannot translate stay in the file, listed in its header and the report (the rest of the file is still
    the better start than the CUDA original); with --verified-only such a file is not written."""
    from xlate.migrate.verdicts import port_header
    from xlate.translate.registry import rule_translator

    o = task.options
    r = base_result(task)
    t0 = time.perf_counter()
    tr = rule_translator(unit.language, o["target"]).translate(unit, unit.text, _translation_options(task))
    r["timings"]["translate_s"] = time.perf_counter() - t0
    text, changed = includes.rewrite(tr.text, task.rewrites)
    r.update(engine=tr.engine, diagnostics=[d.to_dict() for d in tr.diagnostics], includes_rewritten=changed)
    r["diagnostics"][:0] = [_warning_dict(w) for w in unit.warnings]
    r["diff"], r["diff_truncated"] = _diff(task, unit.text, text)
    errors = [d for d in tr.diagnostics if d.severity == "error"]
    r["rule_errors"] = len(errors)
    if errors:
        r["diagnostics"].append(diag_dict("XL6014", task.rel, count=len(errors)))
        if o.get("verified_only"):
            r.update(status="not migrated", message=f"{len(errors)} error(s) left by the rules: not written (--verified-only)")
            return r
    assert task.output is not None
    unchanged = text == unit.text
    if o.get("compile_check") and not unchanged and _compilable(task):
        _compile_check(task, r, text, None)
    if unchanged:
        r["output_sha256"] = _write(task.output, text)
        r.update(status="translated", written=True, unchanged=True, message="no CUDA constructs: written unchanged")
        return r
    r["output_sha256"] = _write(task.output, port_header(r, Path(task.rel).name, tr.engine, tr.meta.get("rocm"), _comment(o)) + text)
    r["diagnostics"].append(diag_dict("XL6013", task.rel))
    r.update(status="translated", written=True,
             message="no kernels: translated by the rules" + (f"; {len(errors)} construct(s) left to port by hand" if errors else ""))
    return r


def _warning_dict(w: Located) -> dict[str, Any]:
    """A front-end warning (a grammar gap, bytes that are not UTF-8: always catalogued, xlate.diagnostics.located)
    as a diagnostic."""
    return Diagnostic(w.code or "XL0002", w.severity, w.message, w.path, w.line, w.col).to_dict()


def _kernel_entry(k: Any, translation: Any, verify: bool, diagnostics: list[Any]) -> dict[str, Any]:
    v = k.verdict
    if v is not None:
        status = v.status
        reason = v.reason or ""
    elif translation is not None and k.kernel in translation.needs_llm:
        status = "not translated"
        blocking = [d for d in diagnostics if d.needs_llm or d.severity == "error"]
        reason = "the rules cannot port it" + (f": {blocking[0].message}" if blocking else "") + \
                 " (an LLM translator can take it: --engine llm)"
    elif not verify:
        status, reason = "skipped", "translated; not verified (--no-verify)"
    else:
        status, reason = "not translated", "no port was produced"
    from xlate.migrate.analysis import hazard, is_hazard

    vd = v.to_dict() if v is not None else None
    timings: dict[str, float] = {}
    if v is not None:
        timings["verify_s"] = v.seconds
        timings["compile_s"] = sum(s.compile_seconds for s in (v.source, v.candidate) if s is not None)
    return {"name": k.kernel, "status": status, "engine": k.engine, "verdict": vd,
            "counterexample": vd["counterexample"] if vd else None,
            "diagnostics": [d.to_dict() for d in diagnostics], "hazards": [hazard(d) for d in diagnostics if is_hazard(d)],
            "attempts": k.attempts, "reason": reason, "timings": timings, "perf": None}


def _port_request(task: Task, output: str) -> Any:
    import dataclasses

    from xlate.port import PortRequest

    o = task.options
    kw: dict[str, Any] = {"rocm": o.get("rocm"), "roc": o.get("roc"), "launch_syntax": o.get("launch_syntax"),
                          "project_names": frozenset(task.project_names)}
    known = {f.name for f in dataclasses.fields(PortRequest)}
    return PortRequest(source=task.source, target=o["target"], output=output, engine=o["engine"], model=o.get("model"),
                       arch=o.get("arch"), examples=o["examples"], seed=o["seed"], verify=o["verify"], force=False,
                       golden=o.get("golden"), rules_files=list(o.get("rules_files") or []), timeout=o["timeout"],
                       **{k: v for k, v in kw.items() if k in known})


def _port_kernels(task: Task, unit: Any) -> dict[str, Any]:
    """Translate and verify the kernels of one file (port_file), then decide what the output tree gets: the port
    (headed with its verdict) unless a kernel was rejected (then the driver copies the source unchanged in its
    place; --force writes the port anyway) or, with --verified-only, unless every kernel was verified. A kernel the
    rules cannot translate makes the port partial: written for whole-file targets, its sites listed for review. port_file writes into a scratch folder: the output tree only ever sees this task's final file."""
    import shutil
    import tempfile

    from xlate.migrate.naming import ports_headers
    from xlate.migrate.verdicts import port_header
    from xlate.parse.source import detect_language
    from xlate.port import port_file

    o = task.options
    r = base_result(task)
    t0 = time.perf_counter()
    # Beside the output tree (same file system: a full disk shows here as it would for the port itself).
    tmp_root = os.path.join(task.out_root, ".xlate", "tmp")
    os.makedirs(tmp_root, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix="port-", dir=tmp_root)
    try:
        req = _port_request(task, os.path.join(scratch, Path(task.output or task.rel).name))
        res = port_file(req, unit if unit.language == detect_language(task.source, unit.text) else None)
    except OSError as exc:  # the scratch write stands for the port's: name the port
        raise OSError(exc.errno, exc.strerror, task.output) from exc
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    r["timings"]["port_s"] = time.perf_counter() - t0
    tr = res.translation
    r["engine"] = tr.engine if tr else None
    from xlate.migrate.analysis import attribute

    # port_file gives each kernel the file-level findings too; attribute() places them by line.
    per, rest = attribute(unit, tr.diagnostics) if tr else ({}, [])
    kernels = [_kernel_entry(k, tr, req.verify, per.get(k.kernel, k.diagnostics)) for k in res.kernels]
    r["kernels"] = kernels
    r["diagnostics"] = [_warning_dict(w) for w in unit.warnings] + [d.to_dict() for d in rest]
    r = relativize(r, scratch)
    kernels = r["kernels"]
    counts = Counter(k["status"] for k in kernels)
    port_text, changed = includes.rewrite(tr.text, task.rewrites) if tr and tr.text else ("", [])
    r["includes_rewritten"] = changed
    r["diff"], r["diff_truncated"] = _diff(task, unit.text, port_text) if port_text else ("", False)
    if o.get("compile_check") and port_text and not counts["not translated"]:
        _compile_stage(task, r, kernels, port_text)
    r["status"] = file_status(kernels)
    counts = Counter(k["status"] for k in kernels)  # after the compile stage
    r["message"] = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    if counts["not translated"] and res.message:
        r["message"] += f"; {res.message}"
    statuses = {k["status"] for k in kernels}
    # A kernel the rules cannot translate does not cost its file: a whole-file target's port is written with the
    # construct left as written (the rest translated token by token), each site an XL6018 warning to review.
    partial = bool(port_text) and "not translated" in statuses and not statuses & {"rejected", "error"} \
        and ports_headers(o["target"])
    if o.get("verified_only"):
        write = statuses == {"verified"} or (o.get("force") and bool(port_text))
    else:
        write = bool(port_text) and (o.get("force") or partial or not statuses & {"rejected", "not translated", "error"})
    if write and tr is not None and "not translated" in statuses:
        r["review"] = review_sites(task, tr, [k["name"] for k in kernels if k["status"] == "not translated"])
        r["diagnostics"] += [diag_dict("XL6018", task.rel, s["line"], s["col"], finding=s["code"], detail=s["detail"],
                                       kernels=s["kernels"]) for s in r["review"]]
    if write and task.output:
        head = port_header(r, Path(task.rel).name, tr.engine if tr else None, (tr.meta.get("rocm") if tr else None),
                           _comment(o))
        r["output_sha256"] = _write(task.output, head + port_text)
        r["written"] = True
    return r


def review_sites(task: Task, tr: Any, untranslated: list[str]) -> list[dict[str, Any]]:
    """Where a partial port needs a person: every construct the rules left as written (an error or a construct
    only an LLM could port), with the kernels it stops. A site outside any kernel (a macro they use) names the
    untranslated kernels without a site of their own (all of them if each has one)."""
    sites: dict[tuple[int, int, str], dict[str, Any]] = {}
    blocking = [d for d in tr.diagnostics if d.severity == "error" or d.needs_llm]
    own = {d.kernel for d in blocking}
    orphans = [k for k in untranslated if k not in own] or untranslated
    for d in blocking:
        names = [d.kernel] if d.kernel in untranslated else orphans
        sites.setdefault((d.line, d.col, d.code), {"path": task.rel, "line": d.line, "col": d.col, "code": d.code,
                                                  "detail": d.message, "kernels": ", ".join(names)})
    return [sites[k] for k in sorted(sites)]


def _compile_check(task: Task, r: dict[str, Any], port_text: str, kernel: str | None) -> dict[str, Any]:
    from xlate.migrate.compilecheck import compile_port, display_path, inline_headers

    o = task.options
    t0 = time.perf_counter()
    text = inline_headers(port_text, task.rel, task.headers, o["target"], _translation_options(task))
    result = compile_port(o["target"], text, kernel or Path(task.rel).stem, o.get("arch"), display_path(task))
    r["compile"] = result
    r["timings"]["compile_check_s"] = time.perf_counter() - t0
    return result


def _compile_stage(task: Task, r: dict[str, Any], kernels: list[dict[str, Any]], port_text: str) -> None:
    """Compile the port; one that does not compile is rejected (not written unless --force). One that fails only
    on HIP names newer than the local ROCm is not checkable here, never rejected."""
    from xlate.backends.base import first_error

    result = _compile_check(task, r, port_text, kernels[0]["name"])
    if result["ok"] is not False:
        return
    why = f"the port does not compile ({result['compiler']}): {(result.get('errors') or [first_error(result['log'])])[0]}"
    for k in kernels:
        if k["status"] in ("skipped", "unverified"):
            k["status"], k["reason"] = "rejected", why


def file_status(kernels: list[dict[str, Any]]) -> str:
    statuses = {k["status"] for k in kernels}
    if not kernels:
        return "verified"
    if "rejected" in statuses:
        return "rejected"
    if statuses & {"not translated", "error"}:
        return "not migrated"
    if statuses & {"unverified", "skipped"}:
        return "unverified"
    return "verified"
