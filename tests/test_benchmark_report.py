"""--benchmark and the gate's cost in the migration report (JSON against its schema, HTML, summary.md) and in
`xlate port --stats`: per kernel the port/source time ratio with its interval and noise verdict, the share of
the copy bandwidth, the gate's time, examples and builds; on a machine without a GPU, why no number exists."""

from __future__ import annotations

import copy
import json
import math
import re
import shutil

import pytest

from tests.test_migrate_support import KERNELS, ROOT, load_report, run_cli
from xlate.migrate.report import comparable, render_html, render_summary
from xlate.migrate.summary import perf_summary, summarize

GOLDEN = ROOT / "examples" / "golden"


@pytest.fixture(scope="module")
def cpu_run(tmp_path_factory):
    """Two kernels migrated to Triton with --benchmark on this machine (verified against golden files)."""
    from xlate.backends.registry import get_backend

    if not get_backend("triton").detect().can_run:
        pytest.skip("Triton cannot run here")
    if get_backend("cuda").detect().can_run:
        pytest.skip("a GPU is here: the CPU rows are tested without one")
    tmp = tmp_path_factory.mktemp("bench")
    lib = tmp / "lib"
    lib.mkdir()
    for name in ("saxpy", "relu"):
        shutil.copy(KERNELS / f"{name}.cu", lib / f"{name}.cu")
    res = run_cli(str(lib), "--to", "triton", "-o", str(tmp / "out"), "--executor", "serial", "--against", str(GOLDEN),
                  "--examples", "8")
    assert res.exit_code == 0, res.output
    res = run_cli(str(lib), "--to", "triton", "-o", str(tmp / "out"), "--executor", "serial", "--against", str(GOLDEN),
                  "--examples", "8", "--benchmark")
    assert res.exit_code == 0, res.output
    return tmp / "out", load_report(tmp / "out")


def _kernels(report):
    return [k for f in report["files"] for k in f["kernels"]]


def test_cpu_rows_say_why_no_gpu_number_exists(cpu_run):
    out, report = cpu_run
    from xlate.migrate.benchdevice import gpu_timing

    why = gpu_timing("cuda")
    assert why and why.startswith("cannot run cuda here: missing")
    ks = _kernels(report)
    assert [k["status"] for k in ks] == ["verified", "verified"]
    assert all(k["perf"] == {"status": "unavailable", "reason": why} for k in ks)
    assert report["summary"]["perf"] == {"kernels": 0, "benchmarked": 2, "reasons": {why: 2}}
    assert report["run"]["benchmark"]["kernels"] == 2 and report["run"]["benchmark"]["timed"] == 0
    page = (out / "xlate-report" / "report.html").read_text()
    assert "No number for 2 kernel(s)" in page and f"2 × {why}" in page
    assert page.count(f'title="unavailable: {why}"') == 2  # the table's ratio cells say why
    assert f"2 × {why}" in (out / "xlate-report" / "summary.md").read_text()


def test_benchmark_is_not_part_of_the_cache_key(cpu_run):
    """The run with --benchmark reused the verification of the run without it, and still timed (tried) each."""
    _, report = cpu_run
    assert report["run"]["executed"] == 0 and report["run"]["cache_hits"] == 2
    assert report["options"]["benchmark"] is True
    assert all(k["perf"] is not None and "bench_s" in k["timings"] for k in _kernels(report))


def test_report_json_follows_its_schema(cpu_run):
    jsonschema = pytest.importorskip("jsonschema")
    _, report = cpu_run
    schema = json.loads((ROOT / "xlate" / "data" / "migrate_report.schema.json").read_text())
    jsonschema.validate(report, schema)
    jsonschema.validate(timed(report), schema)


def test_gate_time_per_kernel(cpu_run):
    out, report = cpu_run
    gate = report["summary"]["gate"]
    ks = _kernels(report)
    assert gate["kernels"] == 2
    assert gate["examples"] == sum(k["verdict"]["examples"] for k in ks)
    assert gate["seconds"] == pytest.approx(sum(k["verdict"]["seconds"] for k in ks))
    assert [g["seconds"] for g in gate["slowest"]] == sorted((k["verdict"]["seconds"] for k in ks), reverse=True)
    page = (out / "xlate-report" / "report.html").read_text()
    assert 'id="gate"' in page and "The gate judged 2 kernel(s)" in page
    for k in ks:
        v = k["verdict"]
        builds = sum(v[s]["specialisations"] for s in ("candidate",) if v.get(s))
        assert f"{v['examples']} examples, {builds} build(s)" in page
    assert "**Verification**: 2 kernel(s)" in (out / "xlate-report" / "summary.md").read_text()


def _perf(port_over: float, lo: float, hi: float, verdict: str, pct: float) -> dict:
    src = 100e-6
    return {"status": "ok", "source_s": src, "port_s": src * port_over, "ratio": 1 / port_over,
            "port_over_source": port_over, "interval": [lo, hi], "interval_coverage": 0.96875,
            "spread": {"source": 0.004, "port": 0.006, "ratio": 0.003, "interval_half_width": (hi - lo) / 2 / port_over},
            "verdict": verdict, "within_noise": verdict == "within noise", "rounds": 6,
            "samples": {"source": 30, "port": 30}, "converged": True, "stopped": "interval within ±1% after 6 rounds",
            "sizes": {"n": 33554432}, "beyond_range": True, "working_set_bytes": 268435456, "bytes_moved": 402653184,
            "l2_bytes": 62914560, "working_set_over_l2": 268435456 / 62914560, "fills_gpu": True,
            "bandwidth": {"copy_gbs": 4000.0, "source": {"gbs": 4026.5, "pct_of_copy": 100.7},
                          "port": {"gbs": 4000.0 * pct / 100, "pct_of_copy": pct}},
            "platforms": {"source": "nvidia sm_90", "port": None}, "device": "NVIDIA H200", "note": None, "caveats": []}


def timed(report: dict) -> dict:
    """The CPU run's report as an H200 run would give it: relu 0.87x (faster), saxpy 1.005x (within noise)."""
    r = copy.deepcopy(report)
    perfs = {"relu": _perf(0.87, 0.86, 0.88, "port faster", 93.0), "saxpy": _perf(1.005, 0.99, 1.02, "within noise", 88.0)}
    for f in r["files"]:
        for k in f["kernels"]:
            k["perf"] = perfs[k["name"]]
    r["summary"], _ = summarize(r["files"], analysis=False)
    r["run"]["benchmark"] = {"plan": r["run"]["benchmark"]["plan"], "kernels": 2, "timed": 2, "seconds": 30.0,
                             "device": {"name": "NVIDIA H200", "l2_bytes": 62914560, "l2_origin": "device"},
                             "copy": {"status": "ok", "gbs": 4000.0, "bytes_per_copy": 503316480, "backend": "cuda",
                                      "samples": 15, "spread": 0.002, "kernel": "one float per thread"}}
    return r


def test_perf_summary_numbers(cpu_run):
    _, report = cpu_run
    s = perf_summary(_kernels(timed(report)))
    assert s["kernels"] == 2 and s["benchmarked"] == 2 and s["reasons"] == {}
    assert s["geomean_port_over_source"] == pytest.approx(math.sqrt(0.87 * 1.005))
    assert s["max_port_over_source"] == pytest.approx(1.005)
    assert s["geomean_ratio"] == pytest.approx(1 / math.sqrt(0.87 * 1.005))
    assert (s["faster"], s["slower"], s["within_noise"]) == (1, 0, 1)
    assert s["port_pct_of_copy"] == {"median": pytest.approx(90.5), "min": 88.0, "max": 93.0}


def test_timed_report_pages(cpu_run):
    _, report = cpu_run
    r = timed(report)
    page = render_html(r)
    assert "Timed on NVIDIA H200: L2 cache 60 MiB (device); device-to-device copy 4000 GB/s" in page
    assert "geometric mean port/source time 0.935×" in page  # sqrt(0.87 * 1.005)
    # per kernel: the ratio, its verdict and interval, the per-launch times and spreads, the bandwidth shares
    assert "port/source time <strong class=\"ok\">0.870×</strong> — port faster (97 % interval 0.860–0.880 over 6 rounds)" in page
    assert "<strong class=\"muted\">1.005×</strong> — within noise" in page
    assert "Per launch: source 100.0 µs, port 87.0 µs (spread, IQR/median: source 0.4 %, port 0.6 %)" in page
    assert "working set 256 MiB (4.3× L2), beyond the spec's ranges (outputs checked)" in page
    assert "port 3720 GB/s = 93.0 % of the copy (4000 GB/s)" in page
    # the table: ratio cells sortable by value, the noise badge, % copy
    cells = re.findall(r'<td class="num (ok|bad|muted)" data-sort="([0-9.]+)">([0-9.]+)×', page)
    assert sorted((c, float(v)) for c, v, _ in cells) == [("muted", 1.005), ("ok", 0.87)]
    assert page.count('<span class="badge muted">noise</span>') == 1
    assert '<td class="num" data-sort="93.0">93 %</td>' in page
    # the chart: one bar per kernel, whiskers for the intervals, grey for within noise
    assert re.findall(r'<rect class="(ok|bad|muted)"', page) == ["ok", "muted"]
    assert page.count('<line class="whisker"') == 2
    md = render_summary(r)
    assert "**Benchmark** (2 kernels timed on one GPU): port/source time geomean 0.935×, worst 1.005×; " \
           "port faster 1, slower 0, within noise 1; ports at 88–93 % of the copy bandwidth (median 90 %)" in md


def test_migrate_closing_lines(cpu_run):
    from xlate.backends.registry import get_backend

    from xlate.migrate.benchdevice import gpu_timing
    from xlate.migrate.benchtext import summary_lines

    _, report = cpu_run
    assert get_backend("cuda").detect().can_run is False
    assert summary_lines(report["summary"]) == [f"  no benchmark number for 2 kernel(s): {gpu_timing('cuda')}"]
    assert summary_lines(timed(report)["summary"]) == [
        "benchmark: 2 kernel(s) timed: port/source time geomean 0.935x, worst 1.005x; port faster 1, slower 0, "
        "within noise 1; ports at 88-93 % of the copy bandwidth (median 90 %)"]


def test_comparable_ignores_timings(cpu_run):
    _, report = cpu_run
    assert comparable(report) == comparable(timed(report))


def test_port_stats(cli, tmp_path):
    from xlate.backends.registry import get_backend

    if get_backend("cuda").detect().can_run:
        pytest.skip("a GPU is here")
    res = cli("port", str(KERNELS / "saxpy.cu"), "--to", "triton", "--against", str(GOLDEN), "-o",
              str(tmp_path / "saxpy.py"), "--examples", "8", "--stats", "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    k = doc["stats"]["kernels"]["saxpy"]
    verdict = doc["kernels"][0]["verdict"]
    assert k["gate"]["examples"] == verdict["examples"] and k["gate"]["seconds"] == verdict["seconds"]
    assert k["perf"]["status"] == "unavailable" and k["perf"]["reason"].startswith("cannot run cuda here: missing")
    assert f"saxpy: gate {verdict['seconds']:.1f} s, {verdict['examples']} examples" in res.stderr
    assert f"saxpy: no timing (unavailable): {k['perf']['reason']}" in res.stderr
