"""Fleet-scale verification: the corpus library migrated with verification through `xlate migrate --executor ray`
on 1, 2, 4 ... GPUs of one host (one file's fuzzing per GPU at a time: `--gpus-per-task 1`), or on CPU workers
where there is no GPU. Prints wall time, kernels verified per minute and the speed-up over the first row.

    python bench/fleet.py [--gpus 1,2,4] [--copies 3] [--to hip] [--examples 20] [--out results.json]
    python bench/fleet.py --cpus 1,2 --to triton --examples 5        # CPU workers (Triton interpreter)

Each row starts its own local Ray instance with exactly that many GPUs (or CPUs) visible, migrates a fresh copy
of the generated library (`--copies` renamed copies of every corpus kernel, xlate/migrate/corpus.py) into a
fresh output folder (no cache hits), and reads the report. NVLink multicast stays off (NCCL_NVLS_ENABLE=0 ...):
the tasks do not communicate, and multicast can take a shared host's GPUs down.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAFE_ENV = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}

# A driver that starts a local Ray instance with `count` GPUs (or CPUs) and runs the migrate command in-process.
DRIVER = """
import os, sys, ray
from xlate.commands.migrate import command
gpus, cpus = int(sys.argv[1]), int(sys.argv[2])
ray.init(num_gpus=gpus, num_cpus=cpus, include_dashboard=False, log_to_driver=False, configure_logging=False)
command(sys.argv[3:], standalone_mode=True)
"""


def gpu_count() -> int:
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30).stdout
        return sum(1 for line in out.splitlines() if line.startswith("GPU "))
    except (OSError, subprocess.SubprocessError):
        return 0


def run_row(lib: Path, out: Path, target: str, workers: int, use_gpus: bool, examples: int) -> dict:
    env = dict(os.environ, **SAFE_ENV)
    if use_gpus:
        env["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in range(workers))
    gpus, cpus = (workers, max(workers, 2) + 1) if use_gpus else (0, workers)
    args = [sys.executable, "-c", DRIVER, str(gpus), str(cpus), str(lib), "--to", target, "-o", str(out),
            "--executor", "ray", "-j", str(workers), "--examples", str(examples), "--no-progress", "--fresh"]
    if use_gpus:
        args += ["--gpus-per-task", "1"]
    t0 = time.perf_counter()
    proc = subprocess.run(args, capture_output=True, text=True, env=env, cwd=ROOT)
    wall = time.perf_counter() - t0
    report_path = out / "xlate-report" / "report.json"
    if not report_path.exists():
        return {"workers": workers, "error": f"migrate failed (exit {proc.returncode}): {proc.stderr[-1500:]}"}
    report = json.loads(report_path.read_text())
    by_status = report["summary"]["kernels_by_status"]
    verified = by_status.get("verified", 0)
    return {"workers": workers, "kind": "gpu" if use_gpus else "cpu", "wall_s": round(wall, 1),
            "driver_s": round(report["run"]["seconds"], 1), "kernels": report["summary"]["kernels"],
            "verified": verified, "kernels_by_status": by_status, "exit_code": proc.returncode,
            "verified_per_min": round(60 * verified / wall, 1) if wall else None}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpus", default=None, help="comma list of GPU counts (default: 1,2,4 up to what is here)")
    ap.add_argument("--cpus", default=None, help="comma list of CPU worker counts: run on CPU workers instead")
    ap.add_argument("--copies", type=int, default=3, help="renamed copies of each corpus kernel in the library")
    ap.add_argument("--to", dest="target", default="hip")
    ap.add_argument("--examples", type=int, default=20)
    ap.add_argument("--out")
    args = ap.parse_args()
    from xlate.migrate.corpus import make_library

    have = gpu_count()
    if args.cpus:
        counts, use_gpus = [int(c) for c in args.cpus.split(",")], False
    else:
        wanted = [int(c) for c in (args.gpus or "1,2,4").split(",")]
        counts, use_gpus = [c for c in wanted if c <= have], True
        skipped = [c for c in wanted if c > have]
        if skipped:
            print(f"fleet: {have} GPU(s) here: not run for {', '.join(map(str, skipped))} GPUs")
        if not counts:
            print("fleet: no GPU here; use --cpus to run the executor on CPU workers")
            return 3
    tmp = Path(tempfile.mkdtemp(prefix="xlate-fleet-"))
    n_kernels = args.copies * 42
    rows = []
    for count in counts:
        lib = make_library(tmp / f"lib{count}", n_kernels, ROOT / "examples" / "kernels", ROOT / "examples" / "references")
        row = run_row(Path(lib.root), tmp / f"out{count}", args.target, count, use_gpus, args.examples)
        rows.append(row)
        print(json.dumps(row), flush=True)
    base = next((r for r in rows if "wall_s" in r), None)
    for r in rows:
        if base and "wall_s" in r:
            r["speedup"] = round(base["wall_s"] / r["wall_s"], 2)
    print()
    cols = ["kind", "workers", "kernels", "verified", "wall_s", "verified_per_min", "speedup", "exit_code"]
    print(" | ".join(cols))
    for r in rows:
        print(" | ".join(str(r.get(c, "")) for c in cols) + (f" | {r['error'][:200]}" if "error" in r else ""))
    if args.out:
        Path(args.out).write_text(json.dumps({"bench": "fleet", "target": args.target, "examples": args.examples,
                                              "gpus_here": have, "python": platform.python_version(),
                                              "cpus_here": os.cpu_count(), "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
