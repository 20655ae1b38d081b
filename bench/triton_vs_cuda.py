"""Speed of xlate's Triton ports against the CUDA originals, side by side on the same GPU in one run.

For every corpus kernel the CUDA -> Triton rules lift: port it, then time the CUDA original (CuPy) and the port
(Triton) on the same inputs at a size that fills the GPU rather than its L2 cache (the spec's size bounds are
lifted; `--budget` elements over all buffers), median of `--repeat` launches timed with CUDA events after
warm-up. Bandwidth counts each buffer once (inout twice) and is compared with a device-to-device copy measured
in the same run. The geometric mean of port time / CUDA time is printed last (< 1: the ports are faster).

    python bench/triton_vs_cuda.py [--budget 33554432] [--repeat 50] [--only saxpy,softmax] [--out results.json]

Needs an NVIDIA GPU with CuPy, torch and Triton. Each port is verified first (`--examples`), so a fast wrong
port is never timed.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "examples" / "kernels"


def copy_bandwidth(nbytes: int = 1 << 30, repeat: int = 20) -> float:
    """Device-to-device copy, bytes read + written per second (the ceiling for a streaming kernel)."""
    import cupy as cp

    a = cp.empty(nbytes // 4, dtype=cp.float32)
    b = cp.empty_like(a)
    for _ in range(3):
        b[...] = a
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(repeat):
        start.record()
        b[...] = a
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop) / 1e3)
    return 2 * a.nbytes / sorted(times)[len(times) // 2]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--budget", type=int, default=1 << 25, help="elements over all buffers of one kernel")
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--examples", type=int, default=12, help="fuzz examples verifying each port before timing")
    ap.add_argument("--only", default=None, help="comma list of file stems")
    ap.add_argument("--out")
    args = ap.parse_args()

    from xlate.backends.registry import get_backend

    from xlate.migrate.bench import benchmark_kernel
    from xlate.parse import parse_file
    from xlate.translate.base import TranslateOptions
    from xlate.translate.triton.translator import CudaToTriton
    from xlate.verify.api import verify

    info = {n: get_backend(n).detect() for n in ("cuda", "triton")}
    missing = [n for n, i in info.items() if not i.can_run or (n == "triton" and i.platform != "nvidia gpu")]
    if missing:
        print(f"triton_vs_cuda: needs an NVIDIA GPU running CUDA and Triton; cannot here: {', '.join(missing)}")
        return 3
    peak = copy_bandwidth()
    print(f"device-to-device copy: {peak / 1e9:.0f} GB/s (read + write)", flush=True)
    rows = []
    files = sorted(KERNELS.glob("*.cu"))
    if args.only:
        files = [f for f in files if f.stem in set(args.only.split(","))]
    for f in files:
        unit = parse_file(f)
        for k in unit.kernels:
            t = CudaToTriton().translate(unit, unit.text, TranslateOptions(kernels=[k.name]))
            if k.name not in t.kernels:
                continue  # not lifted by the rules: nothing to time
            row: dict = {"file": f.name, "kernel": k.name}
            t0 = time.perf_counter()
            v = verify(str(f), None, kernel=k.name, candidate_text=t.text, candidate_language="triton",
                       examples=args.examples)
            row["verdict"] = v.status
            if v.status != "verified":
                row["note"] = (v.reason or "")[:160]
                rows.append(row)
                print(f"{k.name:24s} {v.status}: not timed ({row['note']})", flush=True)
                continue
            r = benchmark_kernel(str(f), t.text, "triton", k.name, repeat=args.repeat, budget=args.budget,
                                 beyond_range=True)
            row.update(status=r["status"], seconds=round(time.perf_counter() - t0, 1))
            if r["status"] != "ok":
                row["note"] = r.get("reason", "")[:160]
            else:
                gbs = {s: r["bytes_moved"] / r[f"{s}_s"] / 1e9 for s in ("source", "port")}
                row.update(sizes=r["sizes"], cuda_us=round(r["source_s"] * 1e6, 2), triton_us=round(r["port_s"] * 1e6, 2),
                           port_over_cuda=round(r["port_s"] / r["source_s"], 3), mbytes=round(r["bytes_moved"] / 1e6, 1),
                           cuda_gbs=round(gbs["source"], 1), triton_gbs=round(gbs["port"], 1),
                           cuda_pct_copy=round(100 * gbs["source"] * 1e9 / peak, 1),
                           triton_pct_copy=round(100 * gbs["port"] * 1e9 / peak, 1))
            rows.append(row)
            print(f"{k.name:24s} " + (f"cuda {row['cuda_us']:10.2f} us  triton {row['triton_us']:10.2f} us  "
                  f"ratio {row['port_over_cuda']:6.3f}  {row['cuda_gbs']:7.1f} / {row['triton_gbs']:7.1f} GB/s"
                  if "cuda_us" in row else f"{row['status']}: {row.get('note', '')}"), flush=True)

    timed = [r for r in rows if "port_over_cuda" in r]
    geo = math.exp(sum(math.log(r["port_over_cuda"]) for r in timed) / len(timed)) if timed else None
    print()
    cols = ["kernel", "cuda_us", "triton_us", "port_over_cuda", "mbytes", "cuda_gbs", "triton_gbs", "cuda_pct_copy",
            "triton_pct_copy", "verdict"]
    print(" | ".join(cols))
    for r in rows:
        print(" | ".join(str(r.get(c, "")) for c in cols) + (f" | {r['note']}" if r.get("note") else ""))
    slow = [r["kernel"] for r in timed if r["port_over_cuda"] > 1.10]
    print(f"\nslower than CUDA by more than 10 %: {', '.join(slow) or 'none'}")
    print(f"geometric mean port/CUDA time over {len(timed)} kernels: {geo:.3f}" if geo else "no kernel timed")
    if args.out:
        Path(args.out).write_text(json.dumps({"bench": "triton_vs_cuda", "copy_gbs": round(peak / 1e9, 1),
                                              "budget_elements": args.budget, "repeat": args.repeat, "rows": rows,
                                              "geomean_port_over_cuda": geo,
                                              "backends": {n: i.to_dict() for n, i in info.items()}}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
