"""Ports against their sources on one GPU, through the path a user takes: `xlate migrate SRC --to T --benchmark`
for each target, then one table per target from the reports.

Each migration verifies every kernel (in parallel), then times each verified kernel alone on the GPU: working
set at least 4x the L2 cache the device reports, source and port timed in alternating calls of back-to-back
launch batches until the port/source ratio's 95 % interval is within +-1 % (6-20 rounds, 60 s per kernel),
bandwidth (spec bytes: inputs read + outputs written) against a device-to-device copy measured once per run.

    python bench/benchmark_ports.py [SRC] [--targets triton,hip] [--examples 12] [--only saxpy,relu]
                                    [--out bench/results/benchmark_ports_h200.json] [--keep /tmp/bp]

Prints, per target: each kernel's port/source time with its interval and noise verdict, per-launch times and
spreads, % of the copy bandwidth for both sides, or why it has no number; then the geometric mean, the ports
slower than 1.05x (Triton) / 1.02x (HIP) beyond noise, and the streaming ports (source >= 50 % of copy) below
85 % of copy. Exit 0 when something was timed, 3 when nothing could be (no GPU: every reason is printed).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMIT = {"triton": 1.05, "hip": 1.02}  # the port/source time a port must not exceed (issue #16's bar)
STREAMING = 50.0  # a kernel whose source reaches this % of copy bandwidth is memory-bound
STREAM_TARGET = 85.0


def library(src: Path, only: list[str] | None, dest: Path) -> Path:
    """SRC itself, or a copy holding only the `only` stems (and the sidecar xlate.toml)."""
    if not only:
        return src
    lib = dest / "lib"
    lib.mkdir(parents=True, exist_ok=True)
    for f in src.iterdir():
        if f.is_file() and (f.stem in only or f.name == "xlate.toml"):
            shutil.copy(f, lib / f.name)
    return lib


def row(f: dict, k: dict) -> dict:
    v = k.get("verdict") or {}
    p = k.get("perf") or {}
    r = {"file": f["path"], "kernel": k["name"], "status": k["status"], "gate_s": round(v.get("seconds") or 0, 2),
         "examples": v.get("examples")}
    if p.get("status") != "ok":
        r["reason"] = p.get("reason") or k.get("reason") or "not timed"
        return r
    bw = p.get("bandwidth") or {}
    r.update(port_over_source=round(p["port_over_source"], 4), interval=[round(x, 4) for x in p["interval"]],
             verdict=p["verdict"], source_us=round(p["source_s"] * 1e6, 2), port_us=round(p["port_s"] * 1e6, 2),
             spread_source=round(p["spread"]["source"], 4), spread_port=round(p["spread"]["port"], 4),
             rounds=p["rounds"], converged=p["converged"], sizes=p["sizes"], beyond_range=p["beyond_range"],
             working_set_mib=round(p["working_set_bytes"] / 2**20, 1), fills_gpu=p["fills_gpu"],
             source_pct_copy=_round((bw.get("source") or {}).get("pct_of_copy")),
             port_pct_copy=_round((bw.get("port") or {}).get("pct_of_copy")), bench_s=round(p.get("seconds") or 0, 1))
    if p.get("note"):
        r["note"] = p["note"]
    if p.get("launch_configs"):  # the configuration the port's launcher chose, per launcher
        r["launch_configs"] = p["launch_configs"]
    return r


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 1)


def table(target: str, rows: list[dict]) -> list[str]:
    out = [f"{'kernel':26s} {'port/src':>8s} {'interval':>15s} {'verdict':13s} {'src us':>9s} {'port us':>9s} "
           f"{'spread':>11s} {'%copy s/p':>11s}"]
    for r in rows:
        if "port_over_source" not in r:
            out.append(f"{r['kernel']:26s} {r['status']}: {r.get('reason', '')[:110]}")
            continue
        pct = f"{r['source_pct_copy'] or 0:.0f}/{r['port_pct_copy'] or 0:.0f}"
        out.append(f"{r['kernel']:26s} {r['port_over_source']:8.3f} [{r['interval'][0]:.3f},{r['interval'][1]:.3f}] "
                   f"{r['verdict']:13s} {r['source_us']:9.1f} {r['port_us']:9.1f} "
                   f"{100 * r['spread_source']:4.1f}/{100 * r['spread_port']:4.1f}% {pct:>11s}"
                   + ("" if r["converged"] else f"  ({r['rounds']} rounds, not converged)")
                   + (f"  note: {r['note']}" if r.get("note") else ""))
    return out


def verdicts(target: str, rows: list[dict]) -> dict:
    timed = [r for r in rows if "port_over_source" in r]
    geo = statistics.geometric_mean([r["port_over_source"] for r in timed]) if timed else None
    limit = LIMIT.get(target, 1.05)
    slow = [r["kernel"] for r in timed if r["port_over_source"] > limit and r["verdict"] == "port slower"]
    streaming = [r for r in timed if (r["source_pct_copy"] or 0) >= STREAMING]
    low = [r["kernel"] for r in streaming if (r["port_pct_copy"] or 0) < STREAM_TARGET]
    return {"timed": len(timed), "kernels": len(rows), "geomean_port_over_source": geo,
            "faster": sum(r["verdict"] == "port faster" for r in timed),
            "slower": sum(r["verdict"] == "port slower" for r in timed),
            "within_noise": sum(r["verdict"] == "within noise" for r in timed),
            "limit": limit, "slower_than_limit": slow, "streaming": len(streaming), "streaming_below_85pct": low}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("src", nargs="?", default=str(ROOT / "examples" / "kernels"))
    ap.add_argument("--targets", default="triton,hip")
    ap.add_argument("--examples", type=int, default=12, help="fuzz examples per kernel (the gate runs before timing)")
    ap.add_argument("--jobs", type=int, default=None, help="parallel verification tasks (default: the CPUs here)")
    ap.add_argument("--only", default=None, help="comma list of file stems")
    ap.add_argument("--keep", default=None, help="folder for the migrated trees and their reports (default: temporary)")
    ap.add_argument("--out", default=None, help="JSON results")
    args = ap.parse_args()

    from xlate.migrate import MigrateOptions, migrate
    from xlate.migrate.options import default_jobs

    work = Path(args.keep or tempfile.mkdtemp(prefix="benchmark-ports-"))
    work.mkdir(parents=True, exist_ok=True)
    lib = library(Path(args.src), args.only.split(",") if args.only else None, work)
    doc: dict = {"bench": "benchmark_ports", "src": str(args.src), "examples": args.examples, "targets": {}}
    any_timed = False
    for target in args.targets.split(","):
        out = work / target
        shutil.rmtree(out, ignore_errors=True)
        t0 = time.perf_counter()
        outcome = migrate(MigrateOptions(source=str(lib), target=target, output=str(out), examples=args.examples,
                                         jobs=args.jobs or default_jobs(), benchmark=True, progress=False))
        report = outcome.report
        rows = [row(f, k) for f in report["files"] for k in f["kernels"]]
        bench = report["run"].get("benchmark") or {}
        v = verdicts(target, rows)
        any_timed = any_timed or v["timed"] > 0
        doc["targets"][target] = {"rows": rows, "summary": v, "benchmark": bench, "report": str(outcome.report_dir),
                                  "wall_s": round(time.perf_counter() - t0, 1),
                                  "verify_s": round(report["summary"].get("gate", {}).get("seconds", 0.0), 1),
                                  "bench_s": round(bench.get("seconds", 0.0), 1)}
        dev, copy = bench.get("device") or {}, bench.get("copy") or {}
        print(f"\n== {target}: {v['timed']} of {v['kernels']} kernels timed on {dev.get('name') or 'no GPU'}"
              + (f" (L2 {dev['l2_bytes'] / 2**20:.0f} MiB, {dev['l2_origin']})" if dev else "")
              + (f"; copy {copy['gbs']:.0f} GB/s" if copy.get("status") == "ok" else
                 f"; copy: {copy.get('reason')}" if copy else ""), flush=True)
        for line in table(target, rows):
            print(line)
        if v["geomean_port_over_source"]:
            print(f"geomean port/source {v['geomean_port_over_source']:.3f} over {v['timed']}; faster {v['faster']}, "
                  f"slower {v['slower']}, within noise {v['within_noise']}")
            print(f"slower than {v['limit']}x beyond noise: {', '.join(v['slower_than_limit']) or 'none'}")
            print(f"streaming ports (source >= {STREAMING:.0f} % of copy) below {STREAM_TARGET:.0f} %: "
                  f"{', '.join(v['streaming_below_85pct']) or 'none'} (of {v['streaming']})")
        print(f"wall {doc['targets'][target]['wall_s']} s: verification {doc['targets'][target]['verify_s']} s "
              f"(summed over kernels), benchmark {doc['targets'][target]['bench_s']} s; report {outcome.report_dir}")
    if args.out:
        Path(args.out).write_text(json.dumps(doc, indent=1, default=str) + "\n")
    return 0 if any_timed else 3


if __name__ == "__main__":
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    sys.exit(main())
