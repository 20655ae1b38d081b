"""Check the inferred specs on a GPU, then port by the rules and verify: for every kernel of a corpus whose spec
inference completes with no annotation,

1. source: the CUDA source fuzzed against itself under its inferred spec (guard bands on; compute-sanitizer
   memcheck on every Nth kernel). A correct source must never fault: a fault means the guess was wrong.
2. hip: `port --to hip` by the rules, verified against the CUDA source (the HIP-on-NVIDIA route).
3. triton: `port --to triton` by the rules, verified against the CUDA source.

    python bench/verify_inferred.py [CORPUS] [-j 6] [--examples 20] [--timeout 600]        # on the GPU machine
    python bench/verify_inferred.py --export-subset corpus_subset      # here: copy only the programs needed
    python bench/verify_inferred.py corpus_subset --kernels corpus_subset/kernels.json   # there, from the copy
    python bench/verify_inferred.py --dry-run | --cpu                  # here: the plan; Triton ports on the CPU

Resumable: each finished kernel is appended to OUT.jsonl and skipped on the next run (--fresh starts over).
Each kernel runs in its own subprocess with a time limit, so a hang is an outcome, not a dead run. Writes OUT
(default bench/results/verify_inferred_h200.json, or verify_inferred_cpu.json with --cpu) with counts per
outcome and every rejection with its reason.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

DEFAULT_CORPUS = ROOT.parent / "shared" / "corpora" / "hecbench"


# -- selection -----------------------------------------------------------------------------------------------


def complete_kernels(corpus: Path, programs: list[str] | None, jobs: int) -> list[dict[str, str]]:
    """Kernels whose inferred spec is complete (the same reading as bench/spec_coverage.py)."""
    import multiprocessing

    from spec_coverage import measure_program, program_dirs

    dirs = program_dirs(corpus, programs)
    if jobs > 1:
        with multiprocessing.Pool(jobs) as pool:
            found = list(pool.imap(measure_program, dirs))
    else:
        found = [measure_program(d) for d in dirs]
    return kernels_from_coverage({"details": found}, corpus)


def kernels_from_coverage(doc: dict[str, Any], corpus: Path) -> list[dict[str, str]]:
    out = []
    for p in doc["details"]:
        for k in p["kernels"]:
            if k.get("complete") and k.get("kernel"):
                out.append({"program": p["program"], "file": k["file"], "kernel": k["kernel"],
                            "spec": k.get("annotation", "")})
    return out


def program_dir(corpus: Path, program: str) -> Path:
    src = corpus / "src" if (corpus / "src").is_dir() else corpus
    return src / f"{program}-cuda"


def export_subset(corpus: Path, dest: Path, kernels: list[dict[str, str]]) -> None:
    """Copy the programs that hold a kernel to check (HeCBench's layout, src/<program>-cuda), and the list."""
    programs = sorted({k["program"] for k in kernels})
    for p in programs:
        target = dest / "src" / f"{p}-cuda"
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(program_dir(corpus, p), target, ignore=shutil.ignore_patterns("*.o", "*.bin", "*.dat"))
    (dest / "kernels.json").write_text(json.dumps(kernels, indent=1) + "\n")
    print(f"copied {len(programs)} programs ({len(kernels)} kernels) to {dest}")


# -- one kernel (runs in a subprocess) -----------------------------------------------------------------------


def _verdict_row(v: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"status": v.status, "blame": v.blame, "reason": (v.reason or "")[:400],
                           "examples": v.examples, "seconds": round(v.seconds, 1)}
    side = v.candidate or v.source  # where the time went: builds (Triton: one per JIT specialisation) or runs
    if side is not None:
        row["builds"] = {"compiled": side.compiles, "compile_seconds": round(side.compile_seconds, 1),
                         "specialisations": side.specialisations}
    if v.counterexample is not None:
        row["failure"] = v.counterexample.failure
        row["counterexample"] = v.counterexample.describe()[:1500]
    return row


def check_source(src: str, kernel: str, examples: int, sanitize: bool) -> dict[str, Any]:
    from xlate.verify import api

    v = api.verify(src, src, kernel=kernel, examples=examples, sanitize=sanitize)
    row = _verdict_row(v)
    if v.status == "verified":
        row["outcome"] = "source ok"
    elif v.blame == "source":
        row["outcome"] = f"source faults: {row.get('failure', 'unknown')}"
    elif v.status == "rejected":  # the same code twice disagreeing: races or uninitialised reads
        row["outcome"] = f"source differs from itself: {row.get('failure', 'unknown')}"
    else:
        row["outcome"] = "could not run"
    return row


def port_and_verify(src: str, kernel: str, target: str, examples: int, verify: bool) -> dict[str, Any]:
    from xlate.port import PortRequest, port_file

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, Path(src).stem + {"hip": ".hip", "triton": "_triton.py"}[target])
        req = PortRequest(source=src, target=target, output=out, kernels=[kernel], engine="rules", examples=examples,
                          verify=verify, force=True)
        res = port_file(req)
        kr = next((k for k in res.kernels if k.kernel == kernel), None)
        row: dict[str, Any] = {"outcome": kr.status if kr is not None else "not translated"}
        if kr is not None and kr.verdict is not None:
            row.update(_verdict_row(kr.verdict))
        if kr is not None and not kr.translated:
            row["diagnostics"] = [d.message[:200] for d in kr.diagnostics if getattr(d, "severity", "error") == "error"][:3]
        if not verify and target == "triton" and os.path.exists(out):
            row.update(self_check(out, kernel, examples))
    return row


def self_check(path: str, kernel: str, examples: int) -> dict[str, Any]:
    """CPU mode: the Triton port fuzzed against itself on the interpreter, under the spec it carries."""
    from xlate.verify import api

    launcher = kernel.split("<")[0]
    try:
        v = api.verify(path, path, kernel=launcher, examples=examples)
    except Exception as exc:  # an input error of the port's own spec is a finding, not a crash of the bench
        return {"outcome": "port spec error", "reason": f"{type(exc).__name__}: {exc}"[:300]}
    row = _verdict_row(v)
    row["outcome"] = "port runs" if v.status == "verified" else f"port {v.status}: {row.get('failure', v.reason)}"
    return row


def spec_used(src: str, kernel: str) -> str | None:
    """The annotation this xlate infers for the kernel, which is what the gate fuzzes under (the kernel list may
    come from an older export); None where it cannot be read here (the gate's own error says why)."""
    from spec_coverage import load_unit

    from xlate.specs import resolve_spec

    try:
        return resolve_spec(load_unit(Path(src)), kernel).annotation()
    except Exception:  # recorded by the steps below, which read the same file
        return None


def run_one(job: dict[str, Any], partial: Callable[[dict[str, Any]], None] = lambda row: None) -> dict[str, Any]:
    """The kernel's steps in order; `partial` gets the row after each step, so a kernel cut by its time limit
    keeps the verdicts it finished (a slow Triton port no longer takes its source's and HIP's with it)."""
    src = job["path"]
    out: dict[str, Any] = {k: job.get(k) for k in ("program", "file", "kernel", "spec")}
    used = spec_used(src, job["kernel"])
    if used is not None and used != job.get("spec"):  # the gate infers again: the row names the spec it used
        out["spec"], out["spec_listed"] = used, job.get("spec")
    t0 = time.perf_counter()
    targets = job["targets"]
    try:
        if "source" in targets and not job["cpu"]:
            t1 = time.perf_counter()
            out["source"] = check_source(src, job["kernel"], job["examples"], job["sanitize"])
            out["source"]["step_seconds"] = round(time.perf_counter() - t1, 1)
            partial(out)
            if out["source"]["outcome"] != "source ok":
                out["seconds"] = round(time.perf_counter() - t0, 1)
                return out
        for target in ("hip", "triton"):
            if target in targets:
                t1 = time.perf_counter()
                out[target] = port_and_verify(src, job["kernel"], target, job["examples"], verify=not job["cpu"])
                out[target]["step_seconds"] = round(time.perf_counter() - t1, 1)  # porting and building included
                partial(out)
    except Exception as exc:  # recorded per kernel; the run goes on
        out["error"] = f"{type(exc).__name__}: {exc}"[:500]
    out["seconds"] = round(time.perf_counter() - t0, 1)
    return out


# -- the driver ----------------------------------------------------------------------------------------------


def visible_gpus() -> list[str]:
    """The GPUs this machine shows (`nvidia-smi -L`), as CUDA_VISIBLE_DEVICES ids; none where there is no driver,
    or where the caller already chose with CUDA_VISIBLE_DEVICES."""
    if "CUDA_VISIBLE_DEVICES" in os.environ:
        return []
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        listing = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30).stdout
        return [str(i) for i, line in enumerate(ln for ln in listing.splitlines() if ln.startswith("GPU "))]
    return []


class GpuPinning:
    """Each pool thread keeps one GPU for all its kernels, threads spread evenly over the GPUs: on a machine of
    several GPUs every kernel's subprocess (and the gate's workers under it, which inherit the variable) sees one
    card, so N cards run N times the kernels in the same device time."""

    def __init__(self, gpus: list[str]) -> None:
        self._gpus = gpus
        self._next = 0
        self._lock = threading.Lock()
        self._local = threading.local()

    def env(self) -> dict[str, str]:
        if len(self._gpus) < 2:
            return {}
        if not hasattr(self._local, "gpu"):
            with self._lock:
                self._local.gpu = self._gpus[self._next % len(self._gpus)]
                self._next += 1
        return {"CUDA_VISIBLE_DEVICES": self._local.gpu}


def run_isolated(job: dict[str, Any], timeout: float, extra_env: dict[str, str] | None = None) -> dict[str, Any]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", **(extra_env or {})}
    try:
        proc = subprocess.run([sys.executable, __file__, "--one", json.dumps(job)], capture_output=True, text=True,
                              timeout=timeout, env=env, cwd=ROOT)
    except subprocess.TimeoutExpired as exc:
        return timed_out(job, exc.stdout, timeout)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        return {**{k: job.get(k) for k in ("program", "file", "kernel", "spec")},
                "error": f"exit {proc.returncode}: {proc.stderr.strip()[-400:]}"}
    return json.loads(lines[-1])


def timed_out(job: dict[str, Any], stdout: str | bytes | None, timeout: float) -> dict[str, Any]:
    """The row of a kernel cut by its time limit: the steps it finished (the last partial row it printed), and
    the error naming the step that was running."""
    text = stdout.decode("utf-8", "replace") if isinstance(stdout, bytes) else (stdout or "")
    lines = [ln for ln in text.splitlines() if ln.startswith("{")]
    row: dict[str, Any] = {**{k: job.get(k) for k in ("program", "file", "kernel", "spec")}}
    if lines:
        with contextlib.suppress(json.JSONDecodeError):
            row = json.loads(lines[-1])
    steps = [t for t in ("source", "hip", "triton") if t in job["targets"] and not (t == "source" and job.get("cpu"))]
    running = next((t for t in steps if t not in row), None)
    row["error"] = f"timeout after {timeout:.0f} s" + (f" (in {running})" if running and running != steps[0] else "")
    return row


def key_of(row: dict[str, Any]) -> str:
    return f"{row['program']}/{row['file']}:{row['kernel']}"


def summarise(rows: list[dict[str, Any]], targets: list[str]) -> dict[str, Any]:
    summary: dict[str, Any] = {"kernels": len(rows)}
    for t in ["source", *[t for t in ("hip", "triton") if t in targets]]:
        counts = collections.Counter(r[t]["outcome"] for r in rows if t in r)
        summary[t] = dict(counts.most_common())
    summary["errors"] = dict(collections.Counter(r["error"].split(":")[0] for r in rows if "error" in r).most_common())
    ok = [r for r in rows if r.get("source", {}).get("outcome") == "source ok"]
    summary["source ok"] = len(ok)
    for t in ("hip", "triton"):
        if t in targets:
            verified = sum(1 for r in ok if r.get(t, {}).get("outcome") == "verified")
            summary[f"{t} verified of source ok"] = f"{verified} / {len(ok)}"
    summary["rejections"] = [{"kernel": key_of(r), "target": t, "failure": r[t].get("failure"),
                              "reason": r[t].get("reason", "")[:300]}
                             for r in rows for t in ("source", "hip", "triton")
                             if t in r and (r[t].get("status") == "rejected" or r[t]["outcome"].startswith("source faults"))]
    return summary


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", nargs="?", default=str(DEFAULT_CORPUS))
    ap.add_argument("--kernels", help="JSON list of {program, file, kernel} (from --export-subset) or a "
                                      "spec_coverage JSON; default: infer now")
    ap.add_argument("--programs", help="comma-separated program names")
    ap.add_argument("--targets", default="source,hip,triton")
    ap.add_argument("--examples", type=int, default=20)
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per kernel (all its steps)")
    ap.add_argument("--sanitize-every", type=int, default=10, help="compute-sanitizer on every Nth kernel's source (0: never)")
    ap.add_argument("-j", "--jobs", type=int, default=4)
    ap.add_argument("--gpus", default="auto", help="comma-separated GPU ids to spread the kernels over, or 'auto' "
                    "(every GPU nvidia-smi lists; CUDA_VISIBLE_DEVICES is left alone where there is one)")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--budget", type=float, default=0.0, help="stop starting kernels after this many seconds (a "
                                                               "session's command limit); rerun to go on")
    ap.add_argument("--out")
    ap.add_argument("--fresh", action="store_true", help="ignore results of earlier runs")
    ap.add_argument("--dry-run", action="store_true", help="list what would run")
    ap.add_argument("--cpu", action="store_true", help="no GPU: skip the source run, translate, and fuzz the Triton "
                                                       "port against itself on the interpreter")
    ap.add_argument("--export-subset", metavar="DIR", help="copy the programs needed (and kernels.json) to DIR")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(run_one(json.loads(args.one), lambda row: print(json.dumps(row), flush=True))))
        return 0
    corpus = Path(args.corpus)
    if not corpus.is_dir():
        print(f"verify_inferred: no corpus at {corpus}", file=sys.stderr)
        return 2
    only = args.programs.split(",") if args.programs else None
    if args.kernels:
        doc = json.loads(Path(args.kernels).read_text())
        kernels = kernels_from_coverage(doc, corpus) if isinstance(doc, dict) else doc
        if only:
            kernels = [k for k in kernels if k["program"] in only]
    else:
        kernels = complete_kernels(corpus, only, max(1, args.jobs))
    if args.limit:
        kernels = kernels[: args.limit]
    if args.export_subset:
        export_subset(corpus, Path(args.export_subset), kernels)
        return 0
    targets = args.targets.split(",")
    out = Path(args.out or ROOT / "bench" / "results" / f"verify_inferred_{'cpu' if args.cpu else 'h200'}.json")
    journal = out.with_suffix(".jsonl")
    done: dict[str, dict[str, Any]] = {}
    if journal.exists() and not args.fresh:
        for line in journal.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                done[key_of(row)] = row
    jobs = []
    for i, k in enumerate(kernels):
        if key_of(k) in done:
            continue
        path = program_dir(corpus, k["program"]) / k["file"]
        jobs.append({**k, "path": str(path), "targets": targets, "examples": args.examples, "cpu": args.cpu,
                     "sanitize": bool(args.sanitize_every) and i % args.sanitize_every == 0})
    print(f"{len(kernels)} kernels with a complete inferred spec; {len(done)} done before; {len(jobs)} to run",
          file=sys.stderr)
    if args.dry_run:
        for j in jobs:
            print(f"{key_of(j)}  [{', '.join(j['targets'])}{', sanitize' if j['sanitize'] else ''}]  {j['spec']}")
        return 0
    journal.parent.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    timeout = args.timeout if not args.budget else min(args.timeout, args.budget)
    gpus = (visible_gpus() if args.gpus == "auto" else [g for g in args.gpus.split(",") if g]) if not args.cpu else []
    pinning = GpuPinning(gpus)
    if len(gpus) > 1:
        print(f"spreading {max(1, args.jobs)} workers over GPUs {','.join(gpus)}", file=sys.stderr)

    def guarded(job: dict[str, Any]) -> dict[str, Any] | None:
        if args.budget and time.monotonic() - start + 5 > args.budget:
            return None  # out of time: left for the next run
        left = args.budget - (time.monotonic() - start) if args.budget else timeout
        return run_isolated(job, max(10.0, min(timeout, left)), pinning.env())

    with journal.open("a") as fh, concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        futures = {pool.submit(guarded, j): j for j in jobs}
        for n, fut in enumerate(concurrent.futures.as_completed(futures), 1):
            row = fut.result()
            if row is None or (args.budget and "timeout after" in row.get("error", "") and
                               time.monotonic() - start >= args.budget - 5):
                continue  # not run, or cut by the budget rather than its own limit: the next run does it
            done[key_of(row)] = row
            fh.write(json.dumps(row) + "\n")
            fh.flush()
            brief = ", ".join(f"{t}: {row[t]['outcome']}" for t in ("source", "hip", "triton") if t in row)
            print(f"[{n}/{len(jobs)}] {key_of(row)}  {brief or row.get('error', '')}"[:220], file=sys.stderr)
    rows = [done[key_of(k)] for k in kernels if key_of(k) in done]
    doc = {"schema": "xlate.verify_inferred/1", "corpus": str(corpus), "examples": args.examples, "cpu": args.cpu,
           "summary": summarise(rows, targets), "kernels": rows}
    out.write_text(json.dumps(doc, indent=1) + "\n")
    print(json.dumps(doc["summary"], indent=1)[:3000])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
