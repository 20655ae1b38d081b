"""How often the gate catches the race mutants (missing barriers, non-atomic updates), with and without the
schedule-jittered repeat run (backends/jitter.py). Needs an NVIDIA GPU: on a real GPU a forgotten
__syncthreads() usually goes unseen because warps run nearly in lock step.

For every CUDA mutant in tests/mutants/manifest.yaml whose expected verdict is mismatch-or-nondeterministic (a
race), and every correct CUDA variant of a kernel with barriers, run the gate `--seeds` times with different
seeds, jitter off (XLATE_SCHEDULE_JITTER=0) then on, and count rejections.

    python bench/race_detection.py --seeds 3 --examples 20 --out bench/results/race_detection_h200.json
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
RACE = {"mismatch", "nondeterministic"}


def cases() -> list[dict]:
    doc = yaml.safe_load((ROOT / "tests" / "mutants" / "manifest.yaml").read_text())
    out = []
    for e in doc:
        if e["side"] != "cuda":
            continue
        want = set(e["expect"]) if isinstance(e["expect"], list) else {e["expect"]}
        if want == RACE:
            out.append({**e, "wrong": True})
        elif want == {"verified"} and "__syncthreads" in (ROOT / e["file"]).read_text():
            out.append({**e, "wrong": False})
    return out


def run(entry: dict, seed: int, examples: int, jitter: bool) -> dict:
    from xlate.verify.api import verify

    os.environ["XLATE_SCHEDULE_JITTER"] = "1" if jitter else "0"
    t0 = time.perf_counter()
    v = verify(str(ROOT / entry["orig"]), str(ROOT / entry["file"]), kernel=entry["kernel"],
               reference=str(ROOT / entry["reference"]), examples=examples, seed=seed,
               spec_overrides=entry.get("spec_overrides"))
    return {"status": v.status, "failure": v.counterexample.failure if v.counterexample else None,
            "examples": v.examples, "seconds": round(time.perf_counter() - t0, 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--examples", type=int, default=20)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    rows = []
    for entry in cases():
        row = {"id": entry["id"], "wrong": entry["wrong"]}
        for jitter in (False, True):
            runs = [run(entry, seed, args.examples, jitter) for seed in range(args.seeds)]
            key = "jitter" if jitter else "plain"
            row[f"{key}_rejected"] = sum(r["status"] == "rejected" for r in runs)
            row[f"{key}_classes"] = sorted({r["failure"] for r in runs if r["failure"]})
            row[f"{key}_seconds"] = round(sum(r["seconds"] for r in runs), 2)
        rows.append(row)
        print(f"{row['id']:48s} {'wrong' if row['wrong'] else 'correct':8s} rejected plain "
              f"{row['plain_rejected']}/{args.seeds}  jitter {row['jitter_rejected']}/{args.seeds}  "
              f"{row['jitter_classes']}", flush=True)
    wrong = [r for r in rows if r["wrong"]]
    right = [r for r in rows if not r["wrong"]]
    summary = {
        "seeds": args.seeds, "examples": args.examples,
        "wrong_caught_every_seed_plain": sum(r["plain_rejected"] == args.seeds for r in wrong),
        "wrong_caught_every_seed_jitter": sum(r["jitter_rejected"] == args.seeds for r in wrong),
        "wrong": len(wrong),
        "false_rejections_plain": sum(r["plain_rejected"] for r in right),
        "false_rejections_jitter": sum(r["jitter_rejected"] for r in right),
        "correct_runs": len(right) * args.seeds,
    }
    print(json.dumps(summary))
    if args.out:
        from xlate.backends.cuda import nvidia_devices

        args.out.write_text(json.dumps({"device": nvidia_devices(), "summary": summary, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
