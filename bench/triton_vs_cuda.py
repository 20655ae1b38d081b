"""Speed of xlate's Triton ports against the CUDA originals on the same GPU in one run: each port with the launch
configuration its launcher chooses, beside its default configuration (CUDA's launch, one program per block).

For every corpus kernel the CUDA -> Triton rules lift: port it as `xlate port` does (the default configuration and
each other launch configuration verified by the gate; a port keeps only the verified ones), in `--jobs` processes.
Then, one kernel at a time, at a size whose working set is several times the GPU's L2 cache (the spec's size
bounds lifted; within them if source and port disagree beyond them), time
  * the CUDA original (CuPy),
  * the port restricted to its default configuration,
  * the port as written: its launcher times its verified configurations at its first launch and keeps the fastest
    (with a tuning cache of this run's own, so nothing measured earlier is reused),
in `--rounds` interleaved rounds of back-to-back launch batches (median per side). Bandwidth counts each buffer
once (inout twice) against a device-to-device copy measured in the same run. Prints a table, the geometric means
of port/CUDA time and the targets of issue #16 (each port <= 1.05x CUDA, memory-bound ports >= 85 % of the copy,
geometric mean <= 0.85).

    python bench/triton_vs_cuda.py [--only relu,softmax] [--examples 8] [--jobs 4] [--rounds 2] [--out r.json]

Without an NVIDIA GPU running CUDA and Triton it still ports and verifies (the Triton interpreter against the
NumPy references), prints which configurations each port keeps, and exits 3: nothing was timed.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "examples" / "kernels"
TARGET_RATIO, TARGET_PCT, TARGET_GEOMEAN = 1.05, 85.0, 0.85
MEMORY_BOUND_PCT = 60.0  # a kernel whose CUDA original reaches this share of the copy is called memory-bound


def port_one(job: tuple[str, str, int, str]) -> dict[str, Any]:
    """Port and verify one kernel as `xlate port` does (a worker process of the pool)."""
    path, kernel, examples, outdir = job
    from xlate.port import PortRequest, port_file

    t0 = time.perf_counter()
    out = os.path.join(outdir, f"{Path(path).stem}.{kernel}.py")
    row: dict[str, Any] = {"file": Path(path).name, "kernel": kernel}
    try:
        res = port_file(PortRequest(source=path, target="triton", output=out, kernels=[kernel], engine="rules",
                                    examples=examples))
    except Exception as exc:  # a crash of one port must not end the run
        return {**row, "status": "error", "note": f"{type(exc).__name__}: {exc}"[:200]}
    k = res.kernels[0]
    row.update(status=k.status, port_seconds=round(time.perf_counter() - t0, 1))
    if k.status != "verified":
        row["note"] = ((k.verdict.reason if k.verdict else None) or res.message or k.status)[:200]
        return row
    row["text"] = res.translation.text if res.translation else ""
    row["configs"] = k.configs.to_dict() if k.configs else None
    return row


def lifted_kernels(only: set[str] | None) -> list[tuple[str, str]]:
    from xlate.parse import parse_file

    out = []
    for f in sorted(KERNELS.glob("*.cu")):
        if only and f.stem not in only:
            continue
        out.extend((str(f), k.name) for k in parse_file(f).kernels)
    return out


# -- timing ------------------------------------------------------------------------------------------------------


def _args(spec: Any, case: Any, env: dict[str, Any], inputs: dict[str, Any]) -> list[Any]:
    import numpy as np

    from xlate.verify.cases import buffer_arg, buffer_length, ctype_dtype, scalar_arg

    args: list[Any] = []
    for p in sorted((q for q in spec.params if q.position >= 0), key=lambda q: q.position):
        if p.is_buffer:
            n = buffer_length(p, env, case, spec)
            data = inputs[p.name].copy() if p.name in inputs else np.zeros(n, ctype_dtype(p.ctype, case, spec))
            args.append(buffer_arg(p.name, data, 0, n))
        else:
            args.append(scalar_arg(p, case, env, spec))
    return args


def _bytes_moved(spec: Any, case: Any, env: dict[str, Any]) -> int:
    from xlate.verify.cases import buffer_length, ctype_dtype

    return sum(buffer_length(p, env, case, spec) * ctype_dtype(p.ctype, case, spec).itemsize
               * (2 if p.role == "inout" else 1) for p in spec.buffers)


class RunFailed(Exception):
    pass


def time_kernel(path: str, kernel: str, text: str, rounds: int, facts: Any, plan: Any = None) -> dict[str, Any]:
    """The source (`path`: the CUDA original), the port's default configuration and its chosen one, interleaved.
    `facts`: the device's (benchdevice.DeviceFacts: its L2 size sets the benchmark's size); `plan`: a
    benchstats.Plan (its l2_multiple and batch length)."""
    from xlate.backends.base import CompileError, LaunchConfig

    from xlate.migrate.bench import bench_case, gpu_budget, outputs_differ
    from xlate.migrate.benchstats import Plan, launches_per_batch
    from xlate.parse import parse_file
    from xlate.specs import build_spec, sidecar_overrides
    from xlate.verify.cases import environment, launch_dims, make_inputs
    from xlate.verify.configs import declared, only
    from xlate.verify.runner import Side

    plan = plan or Plan()
    spec = build_spec(parse_file(path), kernel, sidecar_overrides(path, kernel))
    default_text = only(text, kernel, 0) if kernel in (declared(text) or {}) else text
    sides = {"cuda": Side(path, kernel, label="source"),  # "cuda": what the table calls the source
             "default": Side("<default>.py", kernel, text=default_text, language="triton", label="default"),
             "chosen": Side("<chosen>.py", kernel, text=text, language="triton", label="chosen")}
    budget = gpu_budget(spec, facts.l2_bytes, plan)
    note = ""
    for beyond in (True, False):
        case = bench_case(spec, budget, beyond)
        if case is None:
            return {"status": "unavailable", "note": "no benchmark case fits the spec"}
        env = environment(spec, case)
        inputs = make_inputs(spec, case, env)
        launch = LaunchConfig(*launch_dims(spec, env, case))
        try:
            arts = {label: side.artifact(case, spec, env) for label, side in sides.items()}
        except CompileError as exc:
            return {"status": "failed", "note": f"does not compile: {exc.log.strip()[-200:]}"}

        def call(label: str, bench: dict[str, int] | None) -> Any:
            res = sides[label].backend.run(arts[label], _args(spec, case, env, inputs), launch, timeout=300,  # noqa: B023
                                           bench=bench)
            if res.status != "ok":
                raise RunFailed(f"{label}: {res.status} {res.message}"[:200])
            return res

        try:
            first = {label: call(label, None) for label in sides}
        except RunFailed as exc:
            return {"status": "failed", "note": str(exc)}
        bad = [f"{label}: {m}" for label in ("default", "chosen")
               if (m := outputs_differ(spec, case, env, inputs, first["cuda"].buffers, first[label].buffers))]
        if not bad:
            break
        if not beyond:
            return {"status": "failed", "note": "; ".join(bad)[:200], "sizes": dict(case.sizes)}
        note = f"timed within the spec's ranges: beyond them {'; '.join(bad)}"[:200]
    per_launch: dict[str, list[float]] = {label: [] for label in sides}
    meta: dict[str, Any] = {}
    try:
        batch = {}
        for label in sides:  # calibration; the chosen side's launcher times its configurations here, at first use
            res = call(label, {"warmup": 2, "repeat": plan.batches, "discard_outputs": 1})
            meta[label] = res.meta
            one = statistics.median(res.meta.get("times") or [res.seconds])
            batch[label] = launches_per_batch(one, plan) * plan.batches
        order = list(sides)
        for r in range(rounds):
            for label in order[r % len(order):] + order[: r % len(order)]:
                res = call(label, {"warmup": 1, "repeat": batch[label], "discard_outputs": 1})  # checked above
                per_launch[label].append(statistics.median(res.meta.get("times") or [res.seconds]))
                meta[label] = res.meta
    except RunFailed as exc:
        return {"status": "failed", "note": str(exc)}
    seconds = {label: statistics.median(v) for label, v in per_launch.items()}
    spread = {label: (max(v) - min(v)) / statistics.median(v) if len(v) > 1 else 0.0 for label, v in per_launch.items()}
    chosen_meta = meta.get("chosen", {})
    return {"status": "ok", "sizes": dict(case.sizes), "bytes_moved": _bytes_moved(spec, case, env),
            "seconds": seconds, "spread": spread, "note": note,
            "chosen_config": (chosen_meta.get("launch_configs") or {}).get(kernel),
            "config_timings_ms": (chosen_meta.get("launch_timings") or {}).get(kernel)}


# -- report ------------------------------------------------------------------------------------------------------


def add_timing(row: dict[str, Any], t: dict[str, Any], copy_bps: float | None) -> None:
    """The table's columns of one kernel from time_kernel's result (bytes per second of the copy, if measured)."""
    row["timing"] = t
    if t["status"] == "ok":
        s = t["seconds"]
        row.update(cuda_us=s["cuda"] * 1e6, default_us=s["default"] * 1e6, chosen_us=s["chosen"] * 1e6,
                   default_over_cuda=s["default"] / s["cuda"], chosen_over_cuda=s["chosen"] / s["cuda"],
                   chosen=config_text(t.get("chosen_config")))
        if copy_bps:
            for label in ("cuda", "default", "chosen"):
                row[f"{label}_pct_copy"] = 100 * t["bytes_moved"] / s[label] / copy_bps
    if t.get("note"):
        row["note"] = t["note"]


def _fmt(v: Any, digits: int = 3) -> str:
    if v is None:
        return "-"
    return f"{v:.{digits}f}" if isinstance(v, float) else str(v)


def config_text(config: Any) -> str:
    if not isinstance(config, dict):
        return "-"
    return f"{config.get('blocks', '?')}x/w{config.get('num_warps', '?')}"


def summarize(rows: list[dict[str, Any]], copy_gbs: float | None) -> dict[str, Any]:
    from xlate.migrate.benchstats import geomean

    timed = [r for r in rows if "chosen_over_cuda" in r]
    out = {"timed": len(timed),
           "geomean_chosen_over_cuda": geomean([r["chosen_over_cuda"] for r in timed]),
           "geomean_default_over_cuda": geomean([r["default_over_cuda"] for r in timed])}
    out["over_target_ratio"] = [r["kernel"] for r in timed if r["chosen_over_cuda"] > TARGET_RATIO]
    bound = [r for r in timed if (r.get("cuda_pct_copy") or 0) >= MEMORY_BOUND_PCT]
    out["memory_bound"] = len(bound)
    out["memory_bound_below_target_pct"] = [r["kernel"] for r in bound if (r.get("chosen_pct_copy") or 0) < TARGET_PCT]
    g = out["geomean_chosen_over_cuda"]
    out["targets_met"] = bool(timed) and not out["over_target_ratio"] and not out["memory_bound_below_target_pct"] \
        and g is not None and g <= TARGET_GEOMEAN
    return out


def print_table(rows: list[dict[str, Any]], summary: dict[str, Any] | None) -> None:
    cols = [("kernel", "kernel"), ("kept", "configs kept"), ("chosen", "chosen"), ("cuda_us", "cuda us"),
            ("default_us", "default us"), ("chosen_us", "chosen us"), ("default_over_cuda", "default/cuda"),
            ("chosen_over_cuda", "chosen/cuda"), ("cuda_pct_copy", "cuda %copy"), ("default_pct_copy", "default %copy"),
            ("chosen_pct_copy", "chosen %copy")]
    print("| " + " | ".join(h for _, h in cols) + " | note |")
    print("|" + "---|" * (len(cols) + 1))
    for r in rows:
        print("| " + " | ".join(_fmt(r.get(k), 1 if k.endswith(("_us", "pct_copy")) else 3) for k, _ in cols)
              + f" | {r.get('note', '')} |")
    if summary is None:
        return
    print()
    print(f"geometric mean of port/CUDA time over {summary['timed']} kernels: chosen configuration "
          f"{_fmt(summary['geomean_chosen_over_cuda'])}, default configuration {_fmt(summary['geomean_default_over_cuda'])}")
    print(f"targets (issue #16): each port <= {TARGET_RATIO}x CUDA: "
          f"{', '.join(summary['over_target_ratio']) or 'all'}{' over' if summary['over_target_ratio'] else ''}; "
          f"memory-bound ports (CUDA >= {MEMORY_BOUND_PCT:.0f} % of the copy, {summary['memory_bound']}) >= "
          f"{TARGET_PCT:.0f} % of the copy: {', '.join(summary['memory_bound_below_target_pct']) or 'all'}"
          f"{' below' if summary['memory_bound_below_target_pct'] else ''}; geometric mean <= {TARGET_GEOMEAN}: "
          f"{'yes' if (summary['geomean_chosen_over_cuda'] or 9) <= TARGET_GEOMEAN else 'no'}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default=None, help="comma list of file stems")
    ap.add_argument("--examples", type=int, default=8, help="fuzz examples verifying each configuration")
    ap.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1), help="processes porting and verifying")
    ap.add_argument("--rounds", type=int, default=2, help="interleaved timed rounds per kernel")
    ap.add_argument("--l2-multiple", type=float, default=None,
                    help="working set as a multiple of the L2 cache (default: --benchmark's, 4)")
    ap.add_argument("--out", help="JSON results, rewritten after every kernel (a cut-off run keeps what it timed)")
    args = ap.parse_args()

    from xlate.migrate.benchdevice import device_facts, gpu_timing, measure_copy
    from xlate.migrate.benchstats import Plan

    cannot = [why for n in ("cuda", "triton") if (why := gpu_timing(n))]
    tmp = tempfile.mkdtemp(prefix="xlate-triton-vs-cuda-")
    os.environ["XLATE_TRITON_TUNE_CACHE"] = os.path.join(tmp, "tune.json")  # this run's own choices
    t0 = time.perf_counter()
    jobs = [(p, k, args.examples, tmp) for p, k in lifted_kernels(set(args.only.split(",")) if args.only else None)]
    # spawn, not fork: this process has initialised CUDA (detection), which a forked child could not use
    ported = []
    with ProcessPoolExecutor(max_workers=max(1, args.jobs), mp_context=multiprocessing.get_context("spawn")) as pool:
        for p in pool.map(port_one, jobs):
            ported.append(p)
            cfg = p.get("configs")
            kept = f", {len(cfg['kept'])} of {cfg['declared']} launch configurations kept" if cfg else ""
            print(f"  port {p['kernel']}: {p['status']}{kept}" + (f" ({p.get('port_seconds')} s)" if "port_seconds" in p else "")
                  + (f": {p['note']}" if p.get("note") and p["status"] != "verified" else ""), flush=True)
    print(f"ported and verified {len(ported)} kernels in {time.perf_counter() - t0:.0f} s", flush=True)
    plan = Plan(l2_multiple=args.l2_multiple) if args.l2_multiple else Plan()
    facts = copy = None
    if not cannot:
        facts = device_facts()
        copy = measure_copy("cuda", facts, plan)
        print(f"{facts.name}: L2 {facts.l2_bytes >> 20} MiB; device-to-device copy "
              + (f"{copy['gbs']:.0f} GB/s" if copy.get("status") == "ok" else copy.get("reason", "not measured")), flush=True)
    copy_bps = copy["gbs"] * 1e9 if copy and copy.get("status") == "ok" else None
    rows: list[dict[str, Any]] = []

    def dump(summary: dict[str, Any] | None, done: bool) -> None:
        if args.out:
            Path(args.out).write_text(json.dumps({
                "bench": "triton_vs_cuda", "schema": 2, "complete": done, "device": facts.to_dict() if facts else None,
                "copy": copy, "examples": args.examples, "rounds": args.rounds, "plan": plan.to_dict(), "rows": rows,
                "summary": summary, "not_timed": cannot, "seconds": round(time.perf_counter() - t0, 1)},
                indent=1, default=str))

    unported = [p["kernel"] for p in ported if p["status"] == "not translated"]
    if unported:
        print(f"not lifted by the rules (nothing to time): {', '.join(unported)}")
    for p in (p for p in ported if p["status"] != "not translated"):
        row = {k: v for k, v in p.items() if k not in ("text", "configs")}
        cfg = p.get("configs")
        row["kept"] = f"{len(cfg['kept'])}/{cfg['declared']}" if cfg else "1/1"
        row["configs"] = cfg
        if p["status"] == "verified" and not cannot:
            t = time_kernel(str(KERNELS / p["file"]), p["kernel"], p["text"], args.rounds, facts, plan)
            add_timing(row, t, copy_bps)
            tuned = " ".join(f"{config_text(c)} {ms * 1e3:.1f}" for c, ms in t.get("config_timings_ms") or [])
            print(f"{p['kernel']:24s} " + (f"cuda {row['cuda_us']:9.1f} us  default {row['default_us']:9.1f} us  chosen "
                  f"{row['chosen_us']:9.1f} us ({row['chosen']}; the launcher's timing, us: {tuned or '-'})"
                  if "cuda_us" in row else f"{t['status']}: {t.get('note')}"), flush=True)
        elif cannot and p["status"] == "verified":
            row["note"] = "not timed: " + "; ".join(cannot)
        rows.append(row)
        dump(None, False)
    summary = summarize(rows, copy["gbs"] if copy_bps else None) if not cannot else None
    print()
    print_table(rows, summary)
    dump(summary, True)
    if cannot:
        print(f"\ntriton_vs_cuda: nothing timed: {'; '.join(cannot)}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
