"""Plan a partial re-run of bench/verify_inferred.py after fixes: which kernels of an earlier run could now end
differently, in the order worth spending GPU time on, as a journal of the rows that stand (the rest are re-run).

    python bench/verify_inferred_rerun.py --kernels NEW_KERNELS.json [--journal OLD.jsonl] [--tally LIFT.json]
        [--ports-before OLD_HASHES.json --ports-after NEW_HASHES.json]
        --out-kernels DIR/kernels.json --out-journal STATE/verify_inferred_h200.jsonl

NEW_KERNELS.json is the list `verify_inferred.py --export-subset` writes with today's inference (its specs are
compared with the ones the earlier run used); LIFT.json is bench/triton_lift_tally.py's output (a kernel the rule
lifter now translates whose Triton port was "not translated" before); the --ports files are bench/port_hashes.py's
Triton port hashes at the journal's commit and today (a kernel whose port text changed is re-run). The earlier
journal's rows for kernels not chosen are copied to --out-journal, so verify_inferred.py (which skips journalled
kernels) runs only the chosen ones, in the order of --out-kernels. Order: ports rejected before (a fix of the port
or its route), then kernels whose spec could not be used or whose spec changed, then sources that did not compile,
then newly lifted and changed Triton ports, then the rest of the faults.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def key(row: dict[str, Any]) -> str:
    return f"{row['program']}/{row['file']}:{row['kernel']}"


def priority(old: dict[str, Any] | None, new_spec: str, lifted_now: bool | None, port_changed: bool = False
             ) -> int | None:
    """0 first; None: keep the earlier result."""
    if old is None:
        return 1  # never run
    src = old.get("source", {}).get("outcome", "")
    if old.get("hip", {}).get("outcome") == "rejected" or old.get("triton", {}).get("outcome") == "rejected":
        return 0
    if "error" in old:
        return 1
    spec_changed = old.get("spec", "") != new_spec
    if src and src != "source ok":
        if spec_changed:
            return 1
        return 2 if "compile error" in src else 4
    if spec_changed:
        return 1
    if old.get("triton", {}).get("outcome") == "not translated" and lifted_now:
        return 3
    if port_changed and old.get("triton", {}).get("outcome") not in (None, "not translated"):
        return 3
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernels", required=True)
    ap.add_argument("--journal", default=str(ROOT / "bench" / "results" / "verify_inferred_h200.jsonl"))
    ap.add_argument("--tally", help="bench/triton_lift_tally.py's JSON of today's lifter")
    ap.add_argument("--out-kernels", required=True)
    ap.add_argument("--out-journal", required=True)
    ap.add_argument("--skip-faults", action="store_true", help="leave source faults with an unchanged spec as they are")
    ap.add_argument("--ports-before", help="bench/port_hashes.py's output at the journal's commit")
    ap.add_argument("--ports-after", help="bench/port_hashes.py's output today")
    args = ap.parse_args()

    kernels = json.loads(Path(args.kernels).read_text())
    old = {key(r): r for r in map(json.loads, Path(args.journal).read_text().splitlines()) if r}
    lifted: dict[str, bool] = {}
    if args.tally:
        for k in json.loads(Path(args.tally).read_text())["kernels"]:
            program, file = k["path"].split("/", 1)
            lifted[f"{program.removesuffix('-cuda')}/{file}:{k['kernel']}"] = bool(k.get("lifted"))
    before = json.loads(Path(args.ports_before).read_text()) if args.ports_before else {}
    after = json.loads(Path(args.ports_after).read_text()) if args.ports_after else {}
    changed = {f for f in after if f in before and after[f] != before[f]}
    chosen: list[tuple[int, int, dict[str, Any]]] = []
    kept: list[dict[str, Any]] = []
    for i, k in enumerate(kernels):
        o = old.get(key(k))
        p = priority(o, k.get("spec", ""), lifted.get(key(k)), f"{k['program']}/{k['file']}" in changed)
        if p == 4 and args.skip_faults:
            p = None
        if p is None:
            kept.append(o)  # type: ignore[arg-type]
        else:
            chosen.append((p, i, k))
    chosen.sort(key=lambda t: (t[0], t[1]))
    rerun = {key(c) for _, _, c in chosen}
    ordered = [k for _, _, k in chosen] + [k for k in kernels if key(k) not in rerun]
    Path(args.out_kernels).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out_kernels).write_text(json.dumps(ordered, indent=1) + "\n")
    Path(args.out_journal).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out_journal).write_text("".join(json.dumps(r) + "\n" for r in kept))
    counts: dict[int, int] = {}
    for p, _, _ in chosen:
        counts[p] = counts.get(p, 0) + 1
    print(f"{len(kernels)} kernels: {len(chosen)} to re-run (by priority {dict(sorted(counts.items()))}), "
          f"{len(kept)} kept")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
