"""Static patterns in Triton ports that cost a block-wide step per loop iteration or a cross-thread exchange
(issue #16, CPU only): which ports a lifter change to those patterns would touch, before any GPU timing.

    python bench/port_patterns.py PORT.py [PORT.py ...] [--journal verify_inferred.jsonl] [--json OUT]

Per `_<kernel>_kernel` function of each port (batched `_blocks` variants skipped), counted from the text:
  masked_loops       `while tl.max(...)` loops: the exit test is a block reduction every iteration
  gathers            `tl.gather(` calls: values exchanged between threads (shared tiles, shuffles)
  loop_reductions    `tl.sum/max/min/cumsum(` inside a for/while body: a block reduction every iteration
  loop_atomics       `tl.atomic_*(` inside a for/while body
With --journal (bench/verify_inferred.py's), only kernels whose Triton port the GPU verified are counted, and the
port file name is expected as `<program>_<file path with / as _, no suffix>_triton.py`.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
from pathlib import Path
from typing import Any

KERNEL = re.compile(r"^def (_\w+_kernel)\(", re.M)
LOOP = ("for ", "while ")


def kernel_bodies(text: str) -> dict[str, str]:
    """`_<name>_kernel` -> its body, for each jitted kernel of a port (not the batched `_blocks` variants)."""
    return {m.group(1): text[m.end():].split("\ndef ", 1)[0] for m in KERNEL.finditer(text)}


def in_loops(body: str) -> list[str]:
    """The statements of `body` inside a for/while (by indentation), loop headers excluded."""
    out: list[str] = []
    open_loops: list[int] = []
    for line in body.splitlines():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        while open_loops and indent <= open_loops[-1]:
            open_loops.pop()
        stmt = line.strip()
        if stmt.startswith(LOOP):
            open_loops.append(indent)
        elif open_loops:
            out.append(stmt)
    return out


def patterns(body: str) -> dict[str, int]:
    looped = in_loops(body)
    return {"masked_loops": len(re.findall(r"^\s*while tl\.max\(", body, re.M)),
            "gathers": body.count("tl.gather("),
            "loop_reductions": sum(1 for s in looped if re.search(r"tl\.(sum|max|min|cumsum)\(", s)),
            "loop_atomics": sum(1 for s in looped if "tl.atomic_" in s)}


def verified_ports(journal: Path) -> set[tuple[str, str]]:
    rows = [json.loads(ln) for ln in journal.read_text().splitlines() if ln.strip()]
    return {(f"{r['program']}_{Path(r['file']).with_suffix('').as_posix().replace('/', '_')}_triton.py",
             f"_{r['kernel']}_kernel") for r in rows if (r.get("triton") or {}).get("outcome") == "verified"}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ports", nargs="+", type=Path)
    ap.add_argument("--journal", type=Path, help="count only the kernels this verify_inferred journal verified")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    keep = verified_ports(args.journal) if args.journal else None
    rows: list[dict[str, Any]] = []
    for path in args.ports:
        for name, body in kernel_bodies(path.read_text(encoding="utf-8", errors="surrogateescape")).items():
            if name.endswith("_blocks_kernel") or (keep is not None and (path.name, name) not in keep):
                continue
            rows.append({"port": path.name, "kernel": name, **patterns(body)})
    totals = collections.Counter()
    for r in rows:
        for k in ("masked_loops", "gathers", "loop_reductions", "loop_atomics"):
            totals[k] += r[k] > 0
    summary = {"kernels": len(rows), "with": dict(totals),
               "expected": len(keep) if keep is not None else None}
    print(f"{len(rows)} kernels" + (f" (of {len(keep)} verified in the journal)" if keep is not None else ""))
    for k, n in totals.items():
        print(f"  {k:16s} {n}")
    for r in sorted(rows, key=lambda r: -(r["masked_loops"] + r["loop_reductions"] + r["loop_atomics"]))[:15]:
        print(f"  {r['port']}:{r['kernel']}  " + " ".join(f"{k}={r[k]}" for k in ("masked_loops", "gathers",
                                                                                   "loop_reductions", "loop_atomics")))
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
