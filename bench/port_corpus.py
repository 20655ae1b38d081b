"""Port every corpus kernel to a target with the rule translators, verify each port through the gate, and
print a table (one row per kernel: verdict, examples, oracle, failure) plus the totals.

    python bench/port_corpus.py --to hip [--examples 40] [--against examples/golden] [--out results.json]

On an NVIDIA GPU, HIP ports run through the HIP-on-NVIDIA route (32-wide warps) against the CUDA originals;
on a CPU machine, Triton ports are replayed against golden files recorded from the CUDA originals.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--to", required=True, choices=["hip", "triton", "ascendc"])
    ap.add_argument("--examples", type=int, default=40)
    ap.add_argument("--against", default=None, help="folder of golden files <stem>.<kernel>.xg")
    ap.add_argument("--only", default=None)
    ap.add_argument("--out")
    ap.add_argument("--keep", default=None, help="write the ports into this folder")
    args = ap.parse_args()
    from xlate.parse import parse_file
    from xlate.port import PortRequest, port_file
    from xlate.targets import target

    rows = []
    files = sorted((ROOT / "examples" / "kernels").glob("*.cu"))
    if args.only:
        files = [f for f in files if f.stem in set(args.only.split(","))]
    outdir = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="xlate-port-"))
    outdir.mkdir(parents=True, exist_ok=True)
    for f in files:
        for k in parse_file(f).kernels:
            t0 = time.perf_counter()
            row = {"file": f.name, "kernel": k.name}
            try:
                out = outdir / (f"{f.stem}.{k.name}" + target(args.to).port_suffix)
                res = port_file(PortRequest(str(f), args.to, str(out), [k.name], examples=args.examples,
                                            golden=args.against, force=True))
                kr = res.kernels[0]
                v = kr.verdict
                row.update(status=kr.status, engine=kr.engine, written=res.written,
                           examples=v.examples if v else 0, oracle=v.oracle if v else None,
                           failure=v.counterexample.failure if v and v.counterexample else None,
                           reason=(v.reason if v else res.message) or None,
                           diagnostics=[d.code for d in kr.diagnostics],
                           platform=v.candidate.platform if v and v.candidate else None,
                           caveats=v.caveats if v else [])
            except Exception as exc:  # one broken kernel must not stop the table
                row.update(status="error", reason=f"{type(exc).__name__}: {exc}")
            row["seconds"] = round(time.perf_counter() - t0, 2)
            rows.append(row)
            print(f"{row['status']:15s} {f.name:22s} {k.name:24s} {row.get('examples', 0):4d} ex {row['seconds']:6.1f}s "
                  f"{(row.get('reason') or '')[:110]}", flush=True)
    totals: dict[str, int] = {}
    for r in rows:
        totals[r["status"]] = totals.get(r["status"], 0) + 1
    print("totals:", totals, f"(ports in {outdir})")
    if args.out:
        Path(args.out).write_text(json.dumps({"target": args.to, "rows": rows, "totals": totals}, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
