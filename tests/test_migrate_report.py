"""The migration report: HTML (self-contained, escaped, chart when benchmarks ran), summary.md, the volatile-field
filter; and the HTML in a real headless Chromium: no JavaScript errors, the filter hides rows, sorting, screenshot."""

from __future__ import annotations

import copy
import json
import re

import pytest

from tests.test_migrate_support import ROOT, load_report, make_lib, run_cli
from xlate.migrate.report import comparable, render_html, render_summary
from xlate.report.browser import Page, find_chromium


@pytest.fixture(scope="module")
def real_report(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("report")
    make_lib(tmp / "lib", 10)
    run_cli(str(tmp / "lib"), "--to", "hip", "-o", str(tmp / "out"), "--executor", "serial", "--no-verify")
    return tmp / "out", load_report(tmp / "out")


def with_perf(report: dict) -> dict:
    """The report as if --benchmark had timed every skipped kernel: ratios 0.5, 1, 2, 4..."""
    r = copy.deepcopy(report)
    ratios = iter([0.5, 1.0, 2.0, 4.0, 0.8, 1.25, 3.0, 0.25, 1.5, 2.5])
    for f in r["files"]:
        for k in f["kernels"]:
            if k["status"] == "skipped":
                ratio = next(ratios)
                k["perf"] = {"status": "ok", "source_s": 1e-3 * ratio, "port_s": 1e-3, "ratio": ratio}
    return r


def test_html_is_self_contained_and_escaped(real_report):
    _, report = real_report
    r = copy.deepcopy(report)
    f = next(f for f in r["files"] if f["kernels"])
    f["kernels"][0]["reason"] = "<script>alert('x')</script>"
    f["diff"] = "--- a\n+++ b\n@@ -1 +1 @@\n-<b>old</b>\n+<i>new</i>\n"
    page = render_html(r)
    assert "<script>alert" not in page and "&lt;script&gt;alert(" in page
    assert "&lt;i&gt;new&lt;/i&gt;" in page and '<span class="add">' in page
    # Nothing is fetched: no external scripts, styles, images or fonts.
    assert not re.search(r'(src|href)="(https?:)?//', page) and "@import" not in page
    assert page.count("<script>") == 1
    # One table row per kernel (kernel-less files get one row).
    rows = sum(max(1, len(f["kernels"])) for f in r["files"] if f["kind"] not in ("asset", "build"))
    assert page.count('<tr data-status="') == rows
    assert "<svg" not in page  # no benchmark: no chart


def test_chart_of_speed_ratios(real_report):
    _, report = real_report
    page = render_html(with_perf(report))
    bars = re.findall(r'<rect class="(ok|bad|muted)"', page)
    timed = sum(1 for f in report["files"] for k in f["kernels"] if k["status"] == "skipped")
    assert len(bars) == timed
    # Bars are port/source time: a source/port ratio below 1 is a slower port; exactly 1 is within noise.
    speeds = [0.5, 1.0, 2.0, 4.0, 0.8, 1.25, 3.0, 0.25, 1.5, 2.5][:timed]
    assert bars.count("bad") == sum(1 for r in speeds if r < 1)
    assert bars.count("muted") == sum(1 for r in speeds if r == 1)
    assert "4.00×" in page  # source/port 0.25: the port takes 4x the source's time


def test_summary_markdown(real_report):
    _, report = real_report
    md = render_summary(report)
    assert md.startswith("## xlate migrate → hip")
    for status, n in report["summary"]["kernels_by_status"].items():
        assert f"| {status} | {n} |" in md
    for m in report["not_migrated"]:
        assert f"`{m['kernel']}`" in md
    perf = render_summary({**with_perf(report), "summary": {**report["summary"], "perf": {
        "kernels": 3, "geomean_ratio": 1.5, "min_ratio": 0.5, "max_ratio": 4.0}}})
    assert "geomean 1.50×" in perf


def test_comparable_drops_only_volatile_fields(real_report):
    _, report = real_report
    a, b = copy.deepcopy(report), copy.deepcopy(report)
    b["run"]["seconds"] += 5
    b["files"][0]["timings"]["total_s"] = 99.0
    b["output_root"] = "/elsewhere"
    assert comparable(a) == comparable(b)
    b["files"][0]["status"] = "verified"
    assert comparable(a) != comparable(b)


@pytest.mark.skipif(find_chromium() is None, reason="chromium is not installed (apt-get install chromium)")
def test_report_in_headless_chromium(real_report, tmp_path):
    pytest.importorskip("websocket")
    _, report = real_report
    html_path = tmp_path / "report.html"
    html_path.write_text(render_html(with_perf(report)))
    rows = sum(max(1, len(f["kernels"])) for f in report["files"] if f["kind"] not in ("asset", "build"))
    ptx = [k for f in report["files"] if "inline_ptx" in f["path"] for k in f["kernels"]]
    assert ptx
    with Page() as page:
        page.open(html_path)
        visible = "Array.from(document.querySelectorAll('#kernels tbody tr')).filter(r => !r.hidden && r.offsetParent !== null)"
        assert page.eval(f"{visible}.length") == rows
        assert page.eval("document.getElementById('shown').textContent") == f"{rows} of {rows} rows"
        # Typing into the filter hides the rows that do not match.
        page.type_into("#filter", "inline_ptx")
        assert page.eval(f"{visible}.length") == len(ptx)
        assert page.eval(f"{visible}.every(r => r.textContent.includes('inline_ptx'))")
        page.eval("const f = document.getElementById('filter'); f.value = ''; f.dispatchEvent(new Event('input'))")
        # The status menu filters too.
        page.eval("const s = document.getElementById('status-filter'); s.value = 'not translated'; s.dispatchEvent(new Event('change'))")
        assert page.eval(f"{visible}.length") == len([k for k in ptx if k["status"] == "not translated"])
        page.eval("const s2 = document.getElementById('status-filter'); s2.value = ''; s2.dispatchEvent(new Event('change'))")
        # Clicking a header sorts by it (numeric column: the speed ratio), again reverses.
        page.eval("document.querySelectorAll('#kernels th')[8].click()")
        ratios = page.eval("Array.from(document.querySelectorAll('#kernels tbody tr')).map(r => parseFloat(r.cells[8].dataset.sort))")
        assert ratios == sorted(ratios)
        page.eval("document.querySelectorAll('#kernels th')[8].click()")
        ratios = page.eval("Array.from(document.querySelectorAll('#kernels tbody tr')).map(r => parseFloat(r.cells[8].dataset.sort))")
        assert ratios == sorted(ratios, reverse=True)
        assert page.eval("document.querySelectorAll('#chart rect').length") > 0
        shot = page.screenshot(tmp_path / "report.png")
        assert page.errors == [], page.errors
    assert shot[:8] == b"\x89PNG\r\n\x1a\n" and len(shot) > 10_000
    # A page with a broken script would have been caught: the same check sees an injected error.
    broken = tmp_path / "broken.html"
    broken.write_text(render_html(report).replace('"use strict";', '"use strict"; undefinedFunction();'))
    with Page() as page:
        page.open(broken)
        assert any("undefinedFunction" in e for e in page.errors)


def test_report_json_is_valid_json_with_schema_id(real_report):
    out, report = real_report
    assert report["schema"] == "xlate.migrate/1"
    doc = json.loads((ROOT / "xlate" / "data" / "migrate_report.schema.json").read_text())
    assert doc["$id"] == report["schema"]
    assert (out / "xlate-report" / "report.html").read_text().startswith("<!DOCTYPE html>")


def _file(path, status, written, *kernels):
    return {"path": path, "status": status, "written": written, "message": "", "kernels": [
        {"name": n, "status": s, "reason": f"{n} is {s}"} for n, s in kernels]}


@pytest.mark.parametrize("files, code", [
    ([_file("a.cu", "verified", True, ("a", "verified"))], 0),
    ([], 0),
    ([_file("a.cu", "verified", True, ("a", "verified")), _file("b.cu", "unverified", False, ("b", "unverified"))], 3),
    ([_file("a.cu", "unverified", True, ("a", "skipped"))], 3),
    ([_file("a.cu", "rejected", False, ("a", "rejected")), _file("b.cu", "unverified", False, ("b", "unverified"))], 1),
    ([_file("a.cu", "not migrated", False, ("a", "verified"), ("b", "not translated"))], 1),
    ([_file("h.cuh", "not migrated", False)], 1),  # a header the rules left errors in
    ([_file("h.cuh", "translated", True), _file("k.hip", "copied", True)], 0),
])
def test_exit_codes(files, code):
    from xlate.migrate.summary import summarize

    summary, _ = summarize(files, analysis=False)
    assert summary["exit_code"] == code


def test_not_migrated_lists_every_kernel_not_in_the_output():
    from xlate.migrate.summary import summarize

    files = [_file("a.cu", "not migrated", False, ("good", "verified"), ("bad", "not translated")),
             _file("b.cu", "unverified", False, ("b", "unverified")),
             _file("c.cu", "unverified", True, ("c", "skipped")),
             _file("h.cuh", "error", False)]
    files[3]["message"] = "cannot read"
    _, missing = summarize(files, analysis=False)
    assert [(m["file"], m["kernel"]) for m in missing] == [("a.cu", "good"), ("a.cu", "bad"), ("b.cu", "b"), ("h.cuh", None)]
    assert missing[0]["reason"] == "verified, but its file was not written because of bad"
    assert missing[1]["reason"] == "bad is not translated" and missing[2]["reason"] == "b is unverified"
    assert missing[3]["reason"] == "cannot read"
