"""Time the verified ports of real kernels against their CUDA sources on one GPU (issue #16 on real code): the
kernels `bench/verify_inferred.py` verified (its journal), ported again by the rules, each timed with the same
benchmark `xlate migrate --benchmark` runs (xlate/migrate/bench.py: a GPU-filling case, source and port
interleaved until the ratio's interval is narrow or a cap is hit, bandwidth against a device copy).

    python bench/time_inferred.py CORPUS --journal verify_inferred_h200.jsonl [--targets triton,hip]
        [--per-program 2] [--max-seconds 8] [--budget 400] [--out bench/results/time_inferred_h200.json]

One kernel at a time per GPU (nothing else shares a GPU while it is timed; several GPUs time several kernels), each in its own subprocess with a time
limit; finished kernels are appended to OUT.jsonl and skipped on the next run (resumable within a session's
command limit). Order: programs round-robin (at most --per-program kernels of each), so a budget-cut run still
covers many programs. The device copy bandwidth is measured at the start and at the end of the run, and both are
reported: percentages of copy are only as good as that reference. Prints per target the table and the bars of
issue #16 (bench/benchmark_ports.py's `verdicts`)."""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

SUFFIX = {"hip": ".hip", "triton": "_triton.py"}


def plan(max_seconds: float) -> Any:
    from xlate.migrate.benchstats import Plan

    return Plan(max_seconds=max_seconds, max_rounds=12)


def measure_reference(max_seconds: float) -> dict[str, Any]:
    """Device facts and the copy bandwidth, as one run of `xlate migrate --benchmark` takes them."""
    from xlate.migrate.benchdevice import device_facts, measure_copy

    facts = device_facts()
    return {"device": facts.to_dict(), "copy": measure_copy("cuda", facts, plan(max_seconds))}


def port_one(job: dict[str, Any]) -> dict[str, Any]:
    """Port `job`'s kernel by the rules into job["out"]: unverified (the journal says it verified), so its table of
    launch configurations keeps the default alone; with job["verify"] through the gate here, so the table keeps
    every configuration the gate verified and the launcher chooses among them by timing, as a user's port does."""
    from xlate.port import PortRequest, port_file

    res = port_file(PortRequest(source=job["path"], target=job["target"], output=job["out"], kernels=[job["kernel"]],
                                engine="rules", verify=bool(job.get("verify")), force=True))
    kr = next((k for k in res.kernels if k.kernel == job["kernel"]), None)
    if kr is None or not kr.translated or not os.path.exists(job["out"]):
        return {"status": "not translated", "reason": "the rules did not translate it this time"}
    return {"status": "ok"}


def time_one(job: dict[str, Any]) -> dict[str, Any]:
    """Time the port in job["out"] against its source."""
    from xlate.migrate.bench import benchmark_kernel
    from xlate.migrate.benchdevice import DeviceFacts
    from xlate.migrate.benchrun import compiler_arch
    from xlate.targets import target as target_of

    target = job["target"]
    text = Path(job["out"]).read_text(encoding="utf-8", errors="surrogateescape")
    facts = DeviceFacts(**job["device"]) if job.get("device") else None
    return benchmark_kernel(job["path"], text, target_of(target).language, job["kernel"],
                            arch=compiler_arch(target, None), timeout=job["timeout"], plan=plan(job["max_seconds"]),
                            device=facts, copy=job.get("copy"), port_path=job["out"])


def run_isolated(args: list[str], payload: dict[str, Any], timeout: float, gpu: str | None = None) -> dict[str, Any]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True",
           **({"CUDA_VISIBLE_DEVICES": gpu} if gpu is not None else {})}
    try:
        proc = subprocess.run([sys.executable, __file__, *args, json.dumps(payload)], capture_output=True, text=True,
                              timeout=timeout, env=env, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"status": "failed", "reason": f"timeout after {timeout:.0f} s"}
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        return {"status": "failed", "reason": f"exit {proc.returncode}: {proc.stderr.strip()[-300:]}"}
    return json.loads(lines[-1])


def choose(journal: list[dict[str, Any]], targets: list[str], per_program: int) -> list[tuple[dict[str, Any], str]]:
    """(row, target) pairs whose port verified, programs round-robin, at most `per_program` kernels each."""
    by_program: dict[str, list[tuple[dict[str, Any], str]]] = collections.defaultdict(list)
    for row in journal:
        for t in targets:
            if (row.get(t) or {}).get("outcome") == "verified":
                by_program[row["program"]].append((row, t))
    queues = [v[: per_program * len(targets)] for _, v in sorted(by_program.items())]
    order: list[tuple[dict[str, Any], str]] = []
    while any(queues):
        for q in queues:
            if q:
                order.append(q.pop(0))
    return order


def journal_key(row: dict[str, Any], target: str) -> str:
    """The key of a verify_inferred row's timing, as its row_of() row reads back: target/file:kernel."""
    return f"{target}/{row['program']}/{row['file']}:{row['program']}:{row['kernel']}"


def row_of(row: dict[str, Any], target: str, perf: dict[str, Any]) -> dict[str, Any]:
    """A row in bench/benchmark_ports.py's shape (so its table and verdicts apply)."""
    from benchmark_ports import row as port_row

    kernel = {"name": f"{row['program']}:{row['kernel']}", "status": "verified", "verdict": {}, "perf": perf}
    return {**port_row({"path": f"{row['program']}/{row['file']}"}, kernel), "target": target}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus")
    ap.add_argument("--journal", required=True, help="bench/verify_inferred.py's JSONL journal")
    ap.add_argument("--targets", default="triton")
    ap.add_argument("--per-program", type=int, default=2)
    ap.add_argument("--programs", help="comma-separated program names (default: every program of the journal)")
    ap.add_argument("--max-seconds", type=float, default=8.0, help="timing cap per kernel (both sides)")
    ap.add_argument("--timeout", type=float, default=150.0, help="subprocess limit per kernel (port, compile, time)")
    ap.add_argument("-j", "--jobs", type=int, default=8, help="parallel porting (CPU) before the timing")
    ap.add_argument("--budget", type=float, default=0.0, help="stop starting kernels after this many seconds")
    ap.add_argument("--gpus", default="auto", help="comma-separated GPU ids, each timing one kernel at a time, or "
                    "'auto' (every GPU nvidia-smi lists, unless CUDA_VISIBLE_DEVICES is set)")
    ap.add_argument("--extra-ports", help="JSON list of {program, file, kernel, target, label, port}: port files "
                    "made elsewhere (a variant of the lifter), timed against their sources in the same run, as "
                    "target 'TARGET+LABEL' (relative paths: from the corpus)")
    ap.add_argument("--verify-configs", action="store_true",
                    help="port through the gate (on this GPU) so each port keeps every launch configuration the "
                    "gate verified and its launcher chooses among them by timing, as `xlate port` writes it (each "
                    "row records the choice: perf.launch_configs); default: unverified ports, their default alone")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "time_inferred_h200.json"))
    argv = sys.argv[1:] if argv is None else argv
    modes = {"--port": port_one, "--one": time_one, "--reference": lambda p: measure_reference(p["max_seconds"])}
    if argv[:1] and argv[0] in modes:  # a subprocess of the driver
        try:
            print(json.dumps(modes[argv[0]](json.loads(argv[1])), default=str))
        except Exception as exc:  # recorded per kernel; the run goes on
            print(json.dumps({"status": "failed", "reason": f"{type(exc).__name__}: {exc}"[:400]}))
        return 0
    args = ap.parse_args(argv)

    from benchmark_ports import table, verdicts
    from verify_inferred import program_dir, visible_gpus

    corpus = Path(args.corpus)
    targets = args.targets.split(",")
    journal = [json.loads(ln) for ln in Path(args.journal).read_text().splitlines() if ln.strip()]
    if args.programs:
        journal = [r for r in journal if r["program"] in args.programs.split(",")]
    todo = choose(journal, targets, args.per_program)
    out = Path(args.out)
    done_path = out.with_suffix(".jsonl")
    done_path.parent.mkdir(parents=True, exist_ok=True)
    done: dict[str, dict[str, Any]] = {}
    if done_path.exists():
        for ln in done_path.read_text().splitlines():
            if ln.strip():
                r = json.loads(ln)
                done[f"{r['target']}/{r['file']}:{r['kernel']}"] = r  # row_of's file and kernel: see key()
    start = time.monotonic()
    ports = Path(tempfile.mkdtemp(prefix="time-inferred-"))
    jobs: dict[str, dict[str, Any]] = {}
    for n, (row, target) in enumerate(todo):
        key = journal_key(row, target)
        if key not in done:
            jobs[key] = {"path": str(program_dir(corpus, row["program"]) / row["file"]), "kernel": row["kernel"],
                         "target": target, "max_seconds": args.max_seconds, "timeout": args.timeout,
                         "out": str(ports / f"{n}_{Path(row['file']).stem}{SUFFIX[target]}"),
                         "verify": args.verify_configs}
    # the ports first, in parallel (CPU work); then the timing, one kernel at a time
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        ported = dict(zip(jobs, pool.map(lambda j: run_isolated(["--port"], j, args.timeout), jobs.values())))
    for extra in json.loads(Path(args.extra_ports).read_text()) if args.extra_ports else []:
        row = {"program": extra["program"], "file": extra["file"], "kernel": extra["kernel"]}
        target = f"{extra['target']}+{extra['label']}"
        key = journal_key(row, target)
        if key in done:
            continue
        port = Path(extra["port"]) if Path(extra["port"]).is_absolute() else corpus / extra["port"]
        todo.append((row, target))
        jobs[key] = {"path": str(program_dir(corpus, row["program"]) / row["file"]), "kernel": row["kernel"],
                     "target": extra["target"], "max_seconds": args.max_seconds, "timeout": args.timeout,
                     "out": str(port)}
        ported[key] = {"status": "ok"} if port.is_file() else {"status": "failed", "reason": f"no file {port}"}
        if target not in targets:
            targets.append(target)
    print(f"ported {sum(p.get('status') == 'ok' for p in ported.values())} of {len(jobs)} in "
          f"{time.monotonic() - start:.0f} s", file=sys.stderr, flush=True)
    ref0 = run_isolated(["--reference"], {"max_seconds": args.max_seconds}, 300)
    print(f"device {((ref0.get('device') or {}).get('name'))}; copy at start: "
          f"{(ref0.get('copy') or {}).get('gbs') or ref0}", file=sys.stderr, flush=True)
    # one kernel at a time on each card: a machine of several GPUs times as many kernels at once, each alone on
    # its card (the copy reference is card 0's; the cards of one host are one model)
    gpus = visible_gpus() if args.gpus == "auto" else [g for g in args.gpus.split(",") if g]
    lanes: list[str | None] = list(gpus) if len(gpus) > 1 else [None]
    pending = [(n, row, target) for n, (row, target) in enumerate(todo, 1) if journal_key(row, target) not in done]
    lock = threading.Lock()

    def lane(gpu: str | None, fh: Any) -> None:
        while True:
            with lock:
                if not pending:
                    return
                if args.budget and time.monotonic() - start > args.budget:
                    print(f"budget spent with {len(pending)} of {len(todo)} left", file=sys.stderr)
                    pending.clear()
                    return
                n, row, target = pending.pop(0)
            key = journal_key(row, target)
            job = {**jobs[key], "device": ref0.get("device"), "copy": ref0.get("copy")}
            perf = (run_isolated(["--one"], job, args.timeout, gpu) if ported[key].get("status") == "ok"
                    else ported[key])
            r = row_of(row, target, perf)
            what = (f"{r['port_over_source']:.3f} ({r['verdict']})" if "port_over_source" in r
                    else f"{perf.get('status')}: {perf.get('reason', '')}")
            if r.get("launch_configs"):
                what += " chose " + ", ".join(f"{k}: {json.dumps(c)}" for k, c in r["launch_configs"].items())
            with lock:
                done[key] = r
                fh.write(json.dumps(r) + "\n")
                fh.flush()
                print(f"[{n}/{len(todo)}]{f' gpu {gpu}' if gpu is not None else ''} {target} {r['kernel']}  {what}"[:200],
                      file=sys.stderr, flush=True)

    with done_path.open("a") as fh:
        threads = [threading.Thread(target=lane, args=(gpu, fh)) for gpu in lanes]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    ref1 = run_isolated(["--reference"], {"max_seconds": args.max_seconds}, 300)
    doc: dict[str, Any] = {"bench": "time_inferred", "corpus": str(corpus), "journal": args.journal,
                           "copy_start": ref0.get("copy"), "copy_end": ref1.get("copy"), "device": ref0.get("device"),
                           "chosen": len(todo), "targets": {}}
    for target in targets:
        rows = [r for r in done.values() if r["target"] == target]
        doc["targets"][target] = {"rows": rows, "summary": verdicts(target, rows)}
        print(f"\n== {target}: {doc['targets'][target]['summary']['timed']} of {len(rows)} timed")
        for line in table(target, rows):
            print(line)
        s = doc["targets"][target]["summary"]
        if s["geomean_port_over_source"]:
            print(f"geomean port/source {s['geomean_port_over_source']:.3f}; slower than {s['limit']}x beyond noise: "
                  f"{', '.join(s['slower_than_limit']) or 'none'}; streaming below 85 % of copy: "
                  f"{', '.join(s['streaming_below_85pct']) or 'none'} (of {s['streaming']})")
    c0, c1 = (ref0.get("copy") or {}).get("gbs"), (ref1.get("copy") or {}).get("gbs")
    print(f"copy reference: {c0} GB/s at start, {c1} GB/s at end")
    out.write_text(json.dumps(doc, indent=1, default=str) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
