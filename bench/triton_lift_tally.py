"""Translation-only tally of the CUDA -> Triton rule lifter over the spec-complete kernels of a real corpus: how many
lift, and why the others are refused (grouped by the diagnostic's reason, numbers and names folded).

    python bench/triton_lift_tally.py [CORPUS] [--coverage bench/results/spec_coverage_cpu.json] [-j 2]
                                      [--json OUT.json] [--programs a,b] [--show REASON-SUBSTRING]

No fuzzing and no Triton compile: a kernel counts as lifted when the rules produce its port. The kernels are those
bench/spec_coverage.py found complete (its JSON), each file read as `xlate port FILE --kernel K` reads it.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpora" / "hecbench"
KERNEL_TIMEOUT = 120


class FileTimeout(BaseException):
    """A file ran past its time (a BaseException: no `except Exception` in the lifter may swallow it)."""


def _alarm(signum: int, frame: Any) -> None:
    raise FileTimeout


def reason_class(message: str) -> str:
    """A diagnostic's reason with names and numbers folded, so that one cause counts once."""
    m = message.split(": ", 1)[-1] if message.startswith("unsupported construct") else message
    m = re.sub(r"'[^']*'", "'…'", m)
    m = re.sub(r"\b\d+(\.\d+)?\b", "N", m)
    m = re.sub(r"\([^()]*\)", "(…)", m)
    return m[:110]


def tally_file(job: tuple[str, list[str]]) -> list[dict[str, Any]]:
    from xlate.parse import parse_file
    from xlate.translate.base import TranslateOptions
    from xlate.translate.triton.translator import CudaToTriton

    path, kernels = job
    signal.signal(signal.SIGALRM, _alarm)
    rows: list[dict[str, Any]] = []
    try:
        signal.alarm(KERNEL_TIMEOUT)
        unit = parse_file(path)
    except FileTimeout:
        return [{"path": path, "kernel": k, "lifted": False, "code": "timeout", "reason": "file timed out"}
                for k in kernels]
    finally:
        signal.alarm(0)
    for k in kernels:
        t0 = time.perf_counter()
        signal.alarm(KERNEL_TIMEOUT)  # each kernel its own time: one slow kernel does not cost the file's others
        try:
            tr = CudaToTriton().translate(unit, unit.text, TranslateOptions(kernels=[k]))
        except FileTimeout:
            rows.append({"path": path, "kernel": k, "lifted": False, "code": "timeout",
                         "reason": f"translation ran past {KERNEL_TIMEOUT} s"})
            continue
        except Exception as exc:  # a crash of the lifter is a finding
            rows.append({"path": path, "kernel": k, "lifted": False, "code": "crash",
                         "reason": f"{type(exc).__name__}: {exc}"[:200]})
            continue
        finally:
            signal.alarm(0)
        errs = [d for d in tr.diagnostics if getattr(d, "severity", "error") == "error" and d.kernel == k]
        lifted = k not in tr.needs_llm
        row = {"path": path, "kernel": k, "lifted": lifted, "seconds": round(time.perf_counter() - t0, 2)}
        if not lifted:
            d = errs[0] if errs else None
            row["code"] = d.code if d else "?"
            row["reason"] = (d.message if d else "no diagnostic")[:300]
        rows.append(row)
    return rows


def run_isolated(job: tuple[str, list[str]]) -> list[dict[str, Any]]:
    """tally_file in a process of its own, killed past its time (a kernel stuck where no alarm reaches)."""
    path, kernels = job
    limit = KERNEL_TIMEOUT * (len(kernels) + 1) + 30
    try:
        proc = subprocess.run([sys.executable, __file__, "--one", json.dumps([path, kernels])], capture_output=True,
                              text=True, timeout=limit, cwd=ROOT)
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("[")]
        if proc.returncode == 0 and lines:
            return json.loads(lines[-1])
        why = f"exit {proc.returncode}: {proc.stderr.strip()[-160:]}"
    except subprocess.TimeoutExpired:
        why = f"file ran past {limit} s"
    return [{"path": path, "kernel": k, "lifted": False, "code": "timeout" if "past" in why else "crash", "reason": why}
            for k in kernels]


def _commit() -> str:
    """The xlate commit the tally ran at (with `+dirty` where the lifter's files had changes)."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "xlate"], capture_output=True, text=True,
                               cwd=ROOT, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def _corpus_note(corpus: Path, rows: list[dict[str, Any]]) -> str:
    where = os.path.relpath(corpus, ROOT)
    return f"{where} (the {len(rows)} kernels bench/results/spec_coverage_cpu.json finds spec-complete)"


def _command(args: argparse.Namespace) -> str:
    return "python bench/triton_lift_tally.py" + (f" --programs {args.programs}" if args.programs else "") + \
        " --json OUT"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", nargs="?", default=str(DEFAULT_CORPUS))
    ap.add_argument("--coverage", default=str(ROOT / "bench" / "results" / "spec_coverage_cpu.json"))
    ap.add_argument("--programs")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--json")
    ap.add_argument("--show", help="list the kernels whose reason contains this text")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        path, kernels = json.loads(args.one)
        print(json.dumps(tally_file((path, kernels))))
        return 0
    corpus = Path(args.corpus)
    src = corpus / "src" if (corpus / "src").is_dir() else corpus
    if not src.is_dir():
        print(f"triton_lift_tally: no corpus at {corpus}", file=sys.stderr)
        return 2
    doc = json.loads(Path(args.coverage).read_text())
    only = set(args.programs.split(",")) if args.programs else None
    by_file: dict[str, list[str]] = collections.defaultdict(list)
    for p in doc["details"]:
        if only and p["program"] not in only:
            continue
        for k in p["kernels"]:
            if k.get("complete") and k.get("kernel"):
                path = src / f"{p['program']}-cuda" / k["file"]
                if path.exists():
                    by_file[str(path)].append(k["kernel"])
    jobs = sorted(by_file.items())
    rows: list[dict[str, Any]] = []
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        for part in pool.map(run_isolated, jobs):
            rows.extend(part)
    lifted = sum(r["lifted"] for r in rows)
    reasons = collections.Counter(reason_class(r["reason"]) for r in rows if not r["lifted"])
    print(f"{lifted} / {len(rows)} spec-complete kernels lifted to Triton")
    for reason, n in reasons.most_common(40):
        print(f"{n:5d}  {reason}")
    if args.show is not None:
        for r in rows:
            if not r["lifted"] and args.show in r["reason"]:
                print(f"  {r['path'].split('/src/')[-1]}:{r['kernel']}  {r['reason'][:160]}")
    if args.json:
        summary = {"kernels": len(rows), "lifted": lifted, "reasons": dict(reasons.most_common())}
        for r in rows:  # paths relative to the corpus's source folder, as the programs are named
            r["path"] = os.path.relpath(r["path"], src)
        rows.sort(key=lambda r: (r["path"], r["kernel"]))
        Path(args.json).write_text(json.dumps({"schema": "xlate.triton_lift_tally/1", "summary": summary,
                                               "kernels": rows, "xlate": _commit(), "corpus": _corpus_note(corpus, rows),
                                               "command": _command(args)}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
