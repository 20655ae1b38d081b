"""Fuzz every corpus kernel on this machine's backends against its NumPy reference (and, with --against-dir,
a second implementation per file), print a table, write JSON; optionally record golden files.

    python bench/verify_corpus.py --out results.json [--record-dir DIR] [--examples 40]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]



def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", default=str(ROOT / "examples" / "kernels"))
    ap.add_argument("--examples", type=int, default=40)
    ap.add_argument("--out", default=None)
    ap.add_argument("--record-dir", default=None, help="also record a golden file per kernel here")
    ap.add_argument("--only", default=None, help="comma list of file stems")
    args = ap.parse_args()

    from xlate.backends.registry import get_backend

    from xlate.parse import parse_file
    from xlate.verify import api

    rows = []
    files = sorted(Path(args.kernels).glob("*.cu"))
    if args.only:
        keep = set(args.only.split(","))
        files = [f for f in files if f.stem in keep]
    for f in files:
        for k in parse_file(f).kernels:
            t0 = time.perf_counter()
            row = {"file": f.name, "kernel": k.name}
            try:
                v = api.verify(str(f), kernel=k.name, examples=args.examples)
                row.update(status=v.status, examples=v.examples, shapes=v.shapes, max_ratio=v.max_error_ratio,
                           reason=v.reason, counterexample=v.counterexample.to_dict() if v.counterexample else None,
                           warnings=v.warnings, platform=v.candidate.platform if v.candidate else None)
                if args.record_dir and v.status == "verified":
                    Path(args.record_dir).mkdir(parents=True, exist_ok=True)
                    rec = api.record(str(f), str(Path(args.record_dir) / f"{f.stem}.{k.name}.xg"), kernel=k.name, examples=16)
                    row["recorded"] = rec.cases
            except Exception as exc:  # a broken kernel or spec must not stop the table
                row.update(status="error", reason=f"{type(exc).__name__}: {exc}")
            row["seconds"] = round(time.perf_counter() - t0, 2)
            rows.append(row)
            print(f"{row['status']:10s} {f.name:24s} {k.name:24s} {row.get('examples', 0):4d} ex "
                  f"{row['seconds']:6.1f}s  {row.get('reason') or ''}"[:200], flush=True)
    info = {n: get_backend(n).detect().to_dict() for n in ("cuda", "hip", "triton")}
    summary = {s: sum(1 for r in rows if r["status"] == s) for s in ("verified", "rejected", "unverified", "error")}
    print("summary:", summary)
    if args.out:
        Path(args.out).write_text(json.dumps({"rows": rows, "summary": summary, "backends": info}, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
