"""Fuzz throughput: examples per second and compiles per run for a 100-example fuzz of a 1-D and a 2-D
kernel, CUDA vs CUDA and CUDA vs Triton (on a GPU), Triton vs its NumPy reference (anywhere).

    python bench/fuzz_speed.py [--examples 100] [--out results.json] [--profile DIR]

Each pair runs twice in one fresh process: "cold" (compile caches and the Hypothesis database emptied first, the
workers start) and "cached" (the same verification again: built kernels come from the caches, the workers are
warm, as they are for every kernel after the first in a migration). The cached row is what verifying a kernel
costs once it is built; `specialisations` counts the builds a run needs
(template instances, the jittered repeat build, Triton's launch-time variants), `compiles` those that missed the
cache.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
K = ROOT / "examples" / "kernels"
T = ROOT / "examples" / "triton"
R = ROOT / "examples" / "references"

PAIRS = [
    # (label, dims, source, candidate or None, kernel, reference)
    ("CUDA vs CUDA", "1-D", K / "vector_add.cu", K / "vector_add.cu", "vector_add", None),
    ("CUDA vs Triton", "1-D", K / "vector_add.cu", T / "vector_add.py", "vector_add", None),
    ("Triton vs reference", "1-D", T / "vector_add.py", None, "vector_add", R / "vector_add.py"),
    ("CUDA vs CUDA", "2-D", K / "matrix_ld.cu", K / "matrix_ld.cu", "matrix_axpy_ld", None),
    ("CUDA vs Triton", "2-D", K / "matrix_ld.cu", T / "matrix_ld.py", "matrix_axpy_ld", None),
    ("Triton vs reference", "2-D", T / "matrix_ld.py", None, "matrix_axpy_ld", R / "matrix_ld.py"),
]


def run_pair(index: int, examples: int, run: str) -> dict:
    """One verification of one pair, in this process (the child of main)."""
    from xlate.verify.api import verify

    label, dims, src, cand, kernel, ref = PAIRS[index]
    row: dict = {"pair": label, "dims": dims, "kernel": kernel, "run": run}
    if not src.exists() or (cand is not None and not cand.exists()):
        row["note"] = "missing file"
        return row
    t0 = time.perf_counter()
    v = verify(str(src), str(cand) if cand else None, kernel=kernel, examples=examples,
               reference=f"{ref}:{kernel}" if ref else None)
    wall = time.perf_counter() - t0
    sides = [s for s in (v.source, v.candidate) if s is not None]
    row.update(status=v.status, examples=v.examples, shapes=v.shapes, wall_s=round(wall, 2),
               examples_per_s=round(v.examples / wall, 1) if wall else None,
               specialisations=sum(s.specialisations for s in sides), compiles=sum(s.compiles for s in sides),
               platform=(v.candidate or v.source).platform if sides else None, reason=v.reason)
    return row


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--examples", type=int, default=100)
    ap.add_argument("--out")
    ap.add_argument("--profile", help="write a cProfile summary of each cached run (xlate's side) into this folder")
    ap.add_argument("--pair", type=int, help=argparse.SUPPRESS)  # internal: run one pair, print its row
    args = ap.parse_args()
    if args.pair is not None:
        print(json.dumps(run_pair(args.pair, args.examples, "cold")))
        if args.profile:
            import cProfile
            import io
            import pstats

            prof = cProfile.Profile()
            row = prof.runcall(run_pair, args.pair, args.examples, "cached")
            text = io.StringIO()
            pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(30)
            label = f"{row['pair']}_{row['dims']}".replace(" ", "_").replace("-", "")
            Path(args.profile, f"{label}.txt").write_text(text.getvalue())
        else:
            row = run_pair(args.pair, args.examples, "cached")
        print(json.dumps(row))
        return 0
    rows = []
    if args.profile:
        Path(args.profile).mkdir(parents=True, exist_ok=True)
    cache = tempfile.mkdtemp(prefix="xlate-fuzz-speed-")
    env = {**os.environ, "XLATE_CACHE_DIR": f"{cache}/xlate", "TRITON_CACHE_DIR": f"{cache}/triton"}
    for i in range(len(PAIRS)):
        shutil.rmtree(cache, ignore_errors=True)  # cold: nothing compiled, no Hypothesis database
        profile = ["--profile", args.profile] if args.profile else []
        proc = subprocess.run([sys.executable, __file__, "--pair", str(i), "--examples", str(args.examples), *profile],
                              capture_output=True, text=True, env=env)
        lines = [ln for ln in proc.stdout.strip().splitlines() if ln.startswith("{")]
        if proc.returncode != 0 or len(lines) != 2:
            rows.append({"pair": PAIRS[i][0], "dims": PAIRS[i][1], "kernel": PAIRS[i][4], "note": proc.stderr.strip()[-300:]})
        rows.extend(json.loads(ln) for ln in lines)
    shutil.rmtree(cache, ignore_errors=True)
    cols = ["pair", "dims", "kernel", "run", "status", "examples", "shapes", "wall_s", "examples_per_s", "specialisations",
            "compiles", "platform", "reason"]
    print(" | ".join(cols))
    for r in rows:
        print(" | ".join(str(r.get(c, r.get("note", "")) if c == "reason" else r.get(c, "")) for c in cols))
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
