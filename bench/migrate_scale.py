"""`xlate migrate` at scale: generate libraries of N kernels from the corpus (renamed files and kernels, variations,
sub-folders, a shared header; xlate/migrate/corpus.py), migrate each in a fresh process, then re-run it unchanged
(every task a cache hit). Prints kernels, seconds and kernels/s per N, the marginal cost per kernel between the
sizes (linear growth: a constant marginal cost) and the cache-hit re-run time.

    python bench/migrate_scale.py [--sizes 100,500] [-j 2] [--to hip] [--verify] [--out results.json]
                                  [--screenshot report.png]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MIGRATE = [sys.executable, "-c", "from xlate.commands.migrate import command; command()"]


def run(lib: Path, out: Path, target: str, jobs: int, verify: bool, extra: list[str]) -> tuple[float, dict, int]:
    args = [*MIGRATE, str(lib), "--to", target, "-o", str(out), "-j", str(jobs), "--no-progress", *extra]
    if not verify:
        args.append("--no-verify")
    t0 = time.perf_counter()
    proc = subprocess.run(args, capture_output=True, text=True, cwd=ROOT)
    seconds = time.perf_counter() - t0
    report_path = out / "xlate-report" / "report.json"
    if not report_path.exists():
        raise SystemExit(f"migrate failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    return seconds, json.loads(report_path.read_text()), proc.returncode


def measure(n: int, tmp: Path, target: str, jobs: int, verify: bool, extra: list[str]) -> dict:
    import shutil

    from xlate.migrate.corpus import make_library

    lib = make_library(tmp / f"lib{n}", n, ROOT / "examples" / "kernels", ROOT / "examples" / "references")
    out = tmp / f"out{n}"
    first, report, code = run(Path(lib.root), out, target, jobs, verify, extra)
    shutil.copy(out / "xlate-report" / "report.html", tmp / f"first_run_report{n}.html")  # before the re-run's
    again, rerun, _ = run(Path(lib.root), out, target, jobs, verify, extra)
    s = report["summary"]
    return {"kernels": s["kernels"], "files": s["files"], "seconds": round(first, 2),
            "kernels_per_s": round(s["kernels"] / first, 1), "driver_seconds": round(report["run"]["seconds"], 2),
            "rerun_seconds": round(again, 2), "rerun_cache_hits": rerun["run"]["cache_hits"],
            "rerun_executed": rerun["run"]["executed"], "exit_code": code, "kernels_by_status": s["kernels_by_status"],
            "report": str(tmp / f"first_run_report{n}.html")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100,500")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--to", dest="target", default="hip")
    ap.add_argument("--verify", action="store_true", help="verify too (where this machine can; else unverified)")
    ap.add_argument("--examples", type=int, default=10, help="with --verify: fuzz examples per kernel")
    ap.add_argument("--out", help="write the results as JSON here")
    ap.add_argument("--screenshot", help="PNG of the largest run's HTML report (headless chromium)")
    ap.add_argument("--keep", help="generate into this folder (kept) instead of a temporary one")
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    extra = ["--examples", str(args.examples)] if args.verify else []
    tmp_ctx = tempfile.TemporaryDirectory(prefix="xlate-migrate-scale-") if not args.keep else None
    tmp = Path(args.keep or tmp_ctx.name)  # type: ignore[union-attr]
    tmp.mkdir(parents=True, exist_ok=True)
    rows = [measure(n, tmp, args.target, args.jobs, args.verify, extra) for n in sizes]
    print(f"xlate migrate --to {args.target} -j {args.jobs} {'(verify)' if args.verify else '--no-verify'} "
          f"on {os.cpu_count()} CPUs ({platform.processor() or platform.machine()})")
    print(f"{'kernels':>8} {'files':>6} {'seconds':>8} {'kernels/s':>10} {'re-run s':>9} {'re-run hits':>12}")
    for r in rows:
        print(f"{r['kernels']:>8} {r['files']:>6} {r['seconds']:>8.2f} {r['kernels_per_s']:>10.1f} "
              f"{r['rerun_seconds']:>9.2f} {r['rerun_cache_hits']:>12}")
    marginal = []
    for a, b in itertools.pairwise(rows):
        per = (b["seconds"] - a["seconds"]) / (b["kernels"] - a["kernels"])
        marginal.append({"from": a["kernels"], "to": b["kernels"], "seconds_per_kernel": round(per, 4)})
        print(f"marginal cost {a['kernels']} -> {b['kernels']} kernels: {per * 1e3:.1f} ms/kernel "
              f"(fixed start-up ~{a['seconds'] - per * a['kernels']:.1f} s)")
    if args.screenshot:
        from xlate.report.browser import Page

        with Page() as page:
            page.open(rows[-1]["report"])
            page.screenshot(args.screenshot)
            if page.errors:
                print("browser errors:", page.errors, file=sys.stderr)
        print(f"screenshot: {args.screenshot}")
    if args.out:
        doc = {"bench": "migrate_scale", "target": args.target, "jobs": args.jobs, "verify": args.verify,
               "cpus": os.cpu_count(), "python": platform.python_version(), "load_average": os.getloadavg(),
               "runs": rows, "marginal": marginal}
        for r in doc["runs"]:
            r.pop("report")
        Path(args.out).write_text(json.dumps(doc, indent=1) + "\n")
    if tmp_ctx is not None:
        tmp_ctx.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
