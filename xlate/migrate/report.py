"""The migration report: report.json (schema xlate.migrate/1, documented in xlate/data/migrate_report.schema.json), a
self-contained report.html (templates/report/migrate.html.j2) and summary.md for a pull-request comment."""

from __future__ import annotations

import copy
import functools
import html
import json
import math
import os
from typing import Any

import jinja2

from xlate import __version__
from xlate.migrate.summary import gate_time
from xlate.resources import cache_dir, data_dir, templates_dir

SCHEMA = "xlate.migrate/1"
SCHEMA_FILE = data_dir() / "migrate_report.schema.json"
# Fields that differ between two runs of the same migration (timings, where it ran, what the compile caches
# already held): `comparable()` drops them.
VOLATILE = {"run", "source_root", "output_root", "report_dir", "timings", "seconds", "compile_seconds", "compiles",
            "cached", "perf", "gate"}
STATUS_CLASS = {"verified": "ok", "rules": "ok", "copied": "ok", "translated": "ok", "rejected": "bad", "error": "bad",
                "not translated": "bad", "not migrated": "bad", "unsupported": "bad", "llm": "warn",
                "unverified": "warn", "skipped": "warn", "analysed": "ok",
                "accepted": "ok", "candidate": "warn", "unchanged": "ok", "untranslated": "bad", "partial": "bad",
                "build": "ok", "not written": "bad"}
CATEGORY_TITLES = {"accepted": "Accepted: verified ports", "candidate": "Candidates: translated, not verified here",
                   "translated": "Translated files without kernels (nothing to verify)",
                   "rejected": "Rejected ports written with --force", "partial": "Partial ports: kernels the rules cannot translate, marked for review",
                   "untranslated": "Not translated: the source copied unchanged in the port's place",
                   "unchanged": "Nothing to translate (written unchanged)", "copied": "Copied files",
                   "build": "Build files", "not written": "Not written", "skipped": "Skipped"}
CATEGORY_ORDER = list(CATEGORY_TITLES)
EXIT_MEANING = {0: "every kernel verified (or nothing to do)", 1: "some kernels were rejected or not migrated",
                2: "bad input", 3: "nothing rejected, but some kernels could not be verified here"}
ANALYSIS_EXIT_MEANING = {0: "the rules can translate every kernel", 1: "some kernels need the LLM or are unsupported"}


def build_report(lib: Any, files: list[dict[str, Any]], options: Any, run: dict[str, Any]) -> dict[str, Any]:
    from xlate.migrate.summary import summarize

    if not options.analysis_only:
        files = [with_verdict(f) for f in files]
    summary, missing = summarize(files, options.analysis_only)
    opts = {**options.result_options(), "benchmark": options.benchmark, "rules_files": list(options.rules_files), "golden": options.golden,
            "include_dirs": list(options.include_dirs)}
    return {"schema": SCHEMA, "xlate_version": __version__, "mode": "analysis" if options.analysis_only else "port",
            "target": options.target, "origin": "folder" if lib.origin == "folder" else "compile_commands",
            "source_root": lib.root, "output_root": os.path.abspath(options.output),
            "report_dir": options.resolved_report_dir(), "options": opts, "summary": summary,
            "not_migrated": missing, "skipped_units": [os.path.relpath(p, lib.root) for p in lib.skipped],
            "files": files, "run": run}


def with_verdict(f: dict[str, Any]) -> dict[str, Any]:
    """The file's category (accepted, candidate, translated, untranslated, copied, build...) and its verdict in
    words: for a port, the line of its header comment."""
    from xlate.migrate.verdicts import category, verdict_line

    cat = category(f)
    if cat in ("accepted", "candidate", "translated", "rejected", "partial"):
        verdict, detail = verdict_line(f)
        words = f"{verdict}: {detail}" if detail else verdict
    elif cat == "untranslated":
        words = f"not translated, source copied unchanged: {f.get('message') or ''}"
    elif cat == "unchanged":
        words = "nothing to translate: written unchanged"
    else:
        words = f.get("message") or cat
    return {**f, "category": cat, "verdict": words}


def comparable(report: dict[str, Any]) -> dict[str, Any]:
    """The report without the fields that vary between identical runs (timings, paths of the run)."""

    def strip(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k not in VOLATILE}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x

    return strip(copy.deepcopy(report))


# -- writing ----------------------------------------------------------------------------------------------------


def write_report(report: dict[str, Any], directory: str) -> dict[str, str]:
    from xlate.fsutil import atomic_write_bytes
    from xlate.migrate.task import file_mode

    os.makedirs(directory, exist_ok=True)
    paths = {name: os.path.join(directory, name) for name in ("report.json", "report.html", "summary.md")}
    texts = {"report.json": json.dumps(report, indent=1, default=str) + "\n", "report.html": render_html(report),
             "summary.md": render_summary(report)}
    for name, text in texts.items():
        # A message may quote source bytes that are not UTF-8 (lone surrogates): U+FFFD in the pages.
        atomic_write_bytes(paths[name], text.encode("utf-8", "replace"), mode=file_mode())
    return paths


@functools.cache
def _env() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(templates_dir() / "report")),
                             autoescape=lambda name: name is None or name.endswith(".html.j2"),
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                             bytecode_cache=_template_cache())
    env.filters["fmt_s"] = fmt_seconds
    env.filters["fmt_us"] = fmt_launch
    env.filters["pct"] = lambda x: "" if x is None else f"{100 * x:.1f} %"
    env.filters["status_class"] = lambda s: STATUS_CLASS.get(s, "warn")
    # Markdown table cells: no HTML, no column breaks, one line.
    env.filters["md"] = lambda s: html.escape(str(s), quote=False).replace("|", "\\|").replace("\n", " ")
    return env


def _template_cache() -> jinja2.BytecodeCache | None:
    """The compiled templates, kept in the user's cache (keyed by each template's source): compiling the report's
    templates took a fifth of a second in every run."""
    try:
        path = cache_dir() / "jinja"
        path.mkdir(exist_ok=True)
    except OSError:
        return None
    return jinja2.FileSystemBytecodeCache(str(path))


def fmt_seconds(x: float | None) -> str:
    if x is None:
        return ""
    return f"{x * 1e3:.0f} ms" if x < 1 else f"{x:.1f} s"


def fmt_launch(x: float | None) -> str:
    """Seconds per kernel launch: microseconds below a millisecond."""
    if x is None:
        return ""
    return f"{x * 1e6:.1f} µs" if x < 1e-3 else f"{x * 1e3:.2f} ms" if x < 1 else f"{x:.2f} s"


def diff_lines(diff: str) -> list[tuple[str, str]]:
    out = []
    for line in diff.splitlines():
        cls = "hunk" if line.startswith("@@") else "head" if line.startswith(("+++", "---")) else \
            "add" if line.startswith("+") else "del" if line.startswith("-") else ""
        out.append((cls, line))
    return out


def rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """One table row per kernel; a code file without kernels gets one row of its own."""
    out = []
    for i, f in enumerate(report["files"]):
        if f.get("kind") in ("asset", "build"):
            continue  # not code: listed in the output-tree section
        base = {"file": f["path"], "anchor": f"f{i}", "output": f.get("output") or "", "written": f.get("written")}
        if not f["kernels"]:
            out.append({**base, "kernel": "", "status": f["status"], "engine": f.get("engine") or "",
                        "errors": _count(f["diagnostics"], "error"), "warnings": _count(f["diagnostics"], "warning"),
                        "hazards": 0, "seconds": (f.get("timings") or {}).get("total_s"), "gate": None,
                        "perf": perf_view(None), "note": f.get("message") or ""})
            continue
        for k in f["kernels"]:
            diags = k.get("diagnostics") or []
            v = k.get("verdict") or {}
            out.append({**base, "kernel": k["name"], "status": k["status"], "engine": k.get("engine") or "",
                        "errors": _count(diags, "error"), "warnings": _count(diags, "warning"),
                        "hazards": len(k.get("hazards") or []), "seconds": (k.get("timings") or {}).get("verify_s"),
                        "gate": gate_time(k.get("verdict")), "perf": perf_view(k.get("perf")),
                        "note": (f"oracle {v['oracle']}" if k["status"] == "verified" and v.get("oracle") else k.get("reason") or "")})
    return out


NOISE_CLASS = {"port faster": "ok", "port slower": "bad", "within noise": "muted"}


def perf_view(perf: dict[str, Any] | None) -> dict[str, Any]:
    """A kernel's benchmark as the pages show it: port/source time ratio, its interval and noise verdict, the
    port's share of the copy bandwidth; or why there is no number."""
    from xlate.migrate.summary import noise_verdict, port_over_source

    empty = {"ratio": None, "text": "", "lo": None, "hi": None, "verdict": "", "cls": "", "why": "", "pct": None}
    if not perf:
        return empty
    r = port_over_source(perf)
    if r is None:
        return {**empty, "why": f"{perf.get('status')}: {perf.get('reason') or ''}".rstrip(": ")}
    verdict = noise_verdict(perf) or ""
    lo, hi = (perf.get("interval") or [None, None])[:2]
    pct = ((perf.get("bandwidth") or {}).get("port") or {}).get("pct_of_copy")
    return {"ratio": r, "text": f"{r:.3f}×", "lo": lo, "hi": hi, "verdict": verdict, "cls": NOISE_CLASS.get(verdict, ""),
            "why": "", "pct": pct}


def _count(diags: list[dict[str, Any]], severity: str) -> int:
    return sum(d.get("severity") == severity for d in diags)


def ratio_chart(report: dict[str, Any], width: int = 760, bar: int = 16) -> dict[str, Any] | None:
    """Bars of port/source time (log scale, centred on 1 = parity; left of it the port is faster) with each
    ratio's interval as a whisker; ratios within noise in grey."""
    data = []
    for f in report["files"]:
        for k in f["kernels"]:
            v = perf_view(k.get("perf"))
            if v["ratio"]:
                data.append((f"{f['path']}:{k['name']}", v))
    if not data:
        return None
    data.sort(key=lambda x: x[1]["ratio"])
    ends = [x for _, v in data for x in (v["ratio"], v.get("lo"), v.get("hi")) if x]
    span = max(math.log10(1.5), max(abs(math.log10(x)) for x in ends)) * 1.1
    label_w = 260
    mid = label_w + (width - label_w) // 2
    half = (width - label_w) // 2 - 40

    def x_of(value: float) -> float:
        return mid + half * math.log10(value) / span

    bars = []
    for i, (name, v) in enumerate(data):
        x = x_of(v["ratio"])
        cls = v["cls"] or ("ok" if v["ratio"] <= 1 else "bad")
        whisker = {"x1": x_of(v["lo"]), "x2": x_of(v["hi"])} if v.get("lo") and v.get("hi") else None
        bars.append({"y": 24 + i * (bar + 4), "x": min(mid, x), "w": max(1.0, abs(x - mid)), "name": name,
                     "ratio": v["ratio"], "cls": cls, "verdict": v.get("verdict") or "", "whisker": whisker,
                     "label_x": max(x, mid, whisker["x2"] if whisker else 0) + 4 if v["ratio"] > 1 else
                     min(x, mid, whisker["x1"] if whisker else mid) - 4})
    return {"width": width, "height": 40 + len(data) * (bar + 4), "mid": mid, "bar": bar, "bars": bars,
            "label_x": label_w - 6, "span": 10 ** span}


def render_html(report: dict[str, Any]) -> str:
    analysis = report["mode"] == "analysis"
    meaning = (ANALYSIS_EXIT_MEANING if analysis else EXIT_MEANING).get(report["summary"]["exit_code"], "")
    statuses = sorted({r["status"] for r in rows(report)})
    files = []
    for i, f in enumerate(report["files"]):
        files.append({**f, "anchor": f"f{i}", "diff_lines": diff_lines(f.get("diff") or ""),
                      "kernels": [{**k, "gate": gate_time(k.get("verdict")), "perf_view": perf_view(k.get("perf")),
                                   "verdict_json": json.dumps(k.get("verdict"), indent=1, default=str) if k.get("verdict") else "",
                                   "cx_json": json.dumps(k.get("counterexample"), indent=1, default=str) if k.get("counterexample") else ""}
                                  for k in f["kernels"]]})
    return _env().get_template("migrate.html.j2").render(
        report=report, summary=report["summary"], rows=rows(report), files=files, statuses=statuses,
        exit_meaning=meaning, chart=ratio_chart(report), analysis=analysis, status_class=STATUS_CLASS,
        groups=groups(report), titles=CATEGORY_TITLES)


def groups(report: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    """Files by category, in CATEGORY_ORDER (port mode only)."""
    by: dict[str, list[dict[str, Any]]] = {}
    for i, f in enumerate(report["files"]):
        if "category" in f:
            by.setdefault(f["category"], []).append({**f, "anchor": f"f{i}"})
    return [(c, by[c]) for c in CATEGORY_ORDER if c in by]


def render_summary(report: dict[str, Any], limit: int = 50) -> str:
    analysis = report["mode"] == "analysis"
    meaning = (ANALYSIS_EXIT_MEANING if analysis else EXIT_MEANING).get(report["summary"]["exit_code"], "")
    return _env().get_template("migrate_summary.md.j2").render(
        report=report, summary=report["summary"], missing=report["not_migrated"][:limit],
        more=max(0, len(report["not_migrated"]) - limit), exit_meaning=meaning, analysis=analysis,
        groups=groups(report), titles=CATEGORY_TITLES, limit=limit)
