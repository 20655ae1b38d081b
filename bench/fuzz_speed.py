"""Fuzz throughput: examples per second and compiles per run for a 100-example fuzz of a 1-D and a 2-D
kernel, CUDA vs CUDA and CUDA vs Triton (on a GPU), Triton vs its NumPy reference (anywhere).

    python bench/fuzz_speed.py [--examples 100] [--out results.json]
"""

from __future__ import annotations

import argparse
import json
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


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--examples", type=int, default=100)
    ap.add_argument("--out")
    args = ap.parse_args()
    from xlate.verify.api import verify

    rows = []
    for label, dims, src, cand, kernel, ref in PAIRS:
        row = {"pair": label, "dims": dims, "kernel": kernel}
        if not src.exists() or (cand is not None and not cand.exists()):
            row["note"] = "missing file"
            rows.append(row)
            continue
        t0 = time.perf_counter()
        v = verify(str(src), str(cand) if cand else None, kernel=kernel, examples=args.examples,
                   reference=f"{ref}:{kernel}" if ref else None)
        wall = time.perf_counter() - t0
        row.update(status=v.status, examples=v.examples, shapes=v.shapes, wall_s=round(wall, 2),
                   examples_per_s=round(v.examples / wall, 1) if wall else None,
                   compiles=(v.source.compiles if v.source else 0) + (v.candidate.compiles if v.candidate else 0),
                   platform=(v.candidate or v.source).platform if (v.candidate or v.source) else None,
                   reason=v.reason)
        rows.append(row)
    cols = ["pair", "dims", "kernel", "status", "examples", "shapes", "wall_s", "examples_per_s", "compiles", "platform", "reason"]
    print(" | ".join(cols))
    for r in rows:
        print(" | ".join(str(r.get(c, r.get("note", "")) if c == "reason" else r.get(c, "")) for c in cols))
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
