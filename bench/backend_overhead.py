"""Compile time (cold and cached) and launch overhead per backend for a small kernel, and how a fuzz run
splits between compiling and executing.

    python bench/backend_overhead.py [--out results.json]

Cold compiles use a fresh cache directory; "launch" is one worker round trip (send buffers, launch, sync,
return buffers) for a 4096-element vector add, median of 30; "kernel" is the kernel time the worker measured.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
N = 4096


def _args(n: int):
    from xlate.backends.base import BufferArg, ScalarArg

    g = 64
    rng = np.random.default_rng(0)
    a = np.zeros(n + 2 * g, np.float32)
    a[g : g + n] = rng.standard_normal(n)
    b = a.copy()
    c = np.zeros_like(a)
    return [BufferArg("a", a, g, n), BufferArg("b", b, g, n), BufferArg("c", c, g, n), ScalarArg("n", n, "int32")]


def bench_backend(name: str, path: Path, kernel: str, launch) -> dict:
    from xlate.backends.base import CompileOptions
    from xlate.backends.registry import get_backend

    b = get_backend(name)
    info = b.detect()
    row: dict = {"backend": name, "platform": info.platform, "source": path.name}
    if not (info.can_compile or info.can_run):  # HIP on NVIDIA compiles through NVRTC without hipcc
        row["note"] = "cannot compile here: " + "; ".join(info.missing)
        return row
    text = path.read_text()
    with tempfile.TemporaryDirectory() as cache:
        os.environ["XLATE_CACHE_DIR"] = cache
        t0 = time.perf_counter()
        art = b.compile(text, kernel, CompileOptions(), path=str(path))
        row["compile_cold_s"] = round(time.perf_counter() - t0, 4)
        t0 = time.perf_counter()
        b.compile(text, kernel, CompileOptions(), path=str(path))
        row["compile_cached_s"] = round(time.perf_counter() - t0, 5)
        if not info.can_run:
            row["note"] = "cannot run here: " + "; ".join(info.missing)
            return row
        t0 = time.perf_counter()
        first = b.run(art, _args(N), launch)
        row["first_run_s"] = round(time.perf_counter() - t0, 3)  # worker start + module load + first launch
        if first.status != "ok":
            row["note"] = f"run failed: {first.status} {first.message}"
            return row
        rounds, kernels = [], []
        for _ in range(30):
            t0 = time.perf_counter()
            r = b.run(art, _args(N), launch)
            rounds.append(time.perf_counter() - t0)
            kernels.append(r.seconds)
        row["launch_round_trip_ms"] = round(statistics.median(rounds) * 1e3, 3)
        row["kernel_ms"] = round(statistics.median(kernels) * 1e3, 4)
        row["compiles_reported"] = first.meta.get("compiles")
    return row


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    args = ap.parse_args()
    from xlate.backends.base import LaunchConfig

    launch = LaunchConfig(((N + 255) // 256, 1, 1), (256, 1, 1), 0)
    rows = [bench_backend("cuda", ROOT / "examples/kernels/vector_add.cu", "vector_add", launch)]
    hip = ROOT / "examples/hip/vector_add.hip"
    if hip.exists():
        rows.append(bench_backend("hip", hip, "vector_add", launch))
    tri = ROOT / "examples/triton/vector_add.py"
    if tri.exists():
        rows.append(bench_backend("triton", tri, "vector_add", launch))
    cols = ["backend", "platform", "compile_cold_s", "compile_cached_s", "first_run_s", "launch_round_trip_ms", "kernel_ms", "note"]
    print(" | ".join(cols))
    for r in rows:
        print(" | ".join(str(r.get(c, "")) for c in cols))
    for r in rows:
        if "launch_round_trip_ms" in r and "compile_cold_s" in r:
            runs = 4 * 100  # a 100-example fuzz: 2 runs per side per case, one side shown
            share = r["compile_cold_s"] / (r["compile_cold_s"] + runs / 2 * r["launch_round_trip_ms"] / 1e3)
            print(f"{r['backend']}: a 100-example fuzz spends ~{share:.0%} of this side's time compiling (cold), "
                  f"~0% when cached")
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
