"""How many kernels of a real corpus get a complete spec with no annotation, and from which sources.

    python bench/spec_coverage.py [CORPUS] [-j N] [--programs a,b] [--json OUT.json] [--md OUT.md]

CORPUS is HeCBench's layout (src/<program>-cuda/, default ../shared/corpora/hecbench): each CUDA program is read
as a whole (its kernels, its host code, its headers), exactly as `xlate spec` reads a file and its folder. A spec
is complete when every parameter, the grid and the block are known; each item is counted by its origin (host
code, the kernel's own code, a default). A run over the whole corpus writes bench/results/spec_coverage_cpu.json
and .md; a --programs run writes only the files --json/--md name (it never replaces the committed results).
"""

from __future__ import annotations

import argparse
import collections
import json
import multiprocessing
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".cpp", ".cc", ".c", ".cxx", ".inl")
PROGRAM_TIMEOUT = 240


def program_dirs(corpus: Path, only: list[str] | None) -> list[Path]:
    src = corpus / "src" if (corpus / "src").is_dir() else corpus
    dirs = sorted(d for d in src.iterdir() if d.is_dir() and d.name.endswith("-cuda"))
    if only:
        dirs = [d for d in dirs if d.name.removesuffix("-cuda") in only or d.name in only]
    return dirs


def load_unit(path: Path):
    """A file as CUDA, whatever its suffix and encoding (real code has .c/.cpp files with kernels and Latin-1
    bytes): the front end's job, done leniently here so the count measures inference, not reading."""
    from xlate.parse import parse_string

    text = path.read_bytes().decode("utf-8", "replace")
    name = str(path)
    if not name.endswith((".cu", ".cuh")):
        name += ".cu"  # the CUDA grammar reads it; the unit keeps the real path below
    unit = parse_string(text, name, "cuda", strict=False)
    unit.path = str(path)
    return unit


PROBE_EXAMPLES = 40


def gate_problem(spec: Any) -> str | None:
    """Why the gate could not fuzz a complete spec, or None: the gate's own case strategy (GPU budget and caps,
    its explicit edge cases first) drawn from on the CPU, each case's sizes, scalars, launch, buffer lengths, value
    ranges and dtypes evaluated as the gate does before it launches anything. A spec called complete that the gate
    cannot use (an unknown sizeof, a where-clause the draws never meet, a type it cannot generate) is not."""
    from hypothesis import HealthCheck, Phase, example, given, seed, settings

    from xlate.specs import expr
    from xlate.verify.api import GPU_BUDGET, GPU_SIZE_CAP, case_budget, compares_nothing
    from xlate.verify.cases import buffer_length, ctype_dtype, environment, launch_dims, sizeof_table
    from xlate.verify.strategies import cases, explicit_cases

    def check(case: Any) -> None:
        env = environment(spec, case)
        launch_dims(spec, env, case)
        sizeof = sizeof_table(case, spec)
        for p in spec.buffers:
            ctype_dtype(p.ctype, case, spec)
            buffer_length(p, env, case, spec)
            for bound in (p.lo, p.hi):
                if bound is not None:
                    expr.evaluate(bound, env, sizeof)

    if compares_nothing(spec):  # the gate: "nothing to compare"
        return "nothing to compare: no out or inout buffer (outputs in __device__ globals, or printed only)"
    try:
        budget, _, refusal = case_budget(spec, GPU_BUDGET, GPU_SIZE_CAP)
        if refusal:
            return refusal
        fn = check
        for case in reversed(explicit_cases(spec, budget, GPU_SIZE_CAP)):
            fn = example(case=case)(fn)
        test = settings(max_examples=PROBE_EXAMPLES, deadline=None, database=None, derandomize=True,
                        suppress_health_check=list(HealthCheck), phases=[Phase.explicit, Phase.generate])(
            seed(0)(given(case=cases(spec, budget, GPU_SIZE_CAP, dict(spec.dtype_axes)))(fn)))
        test()
    except TimeoutError:
        raise
    except Exception as exc:  # what the gate would die of (Hypothesis errors included)
        return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    return None


def _alarm(signum: int, frame: Any) -> None:
    raise TimeoutError


def measure_program(d: Path) -> dict[str, Any]:
    from xlate.specs import resolve_spec

    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(PROGRAM_TIMEOUT)
    t0 = time.perf_counter()
    kernels: list[dict[str, Any]] = []
    try:
        files = sorted(p for p in d.rglob("*") if p.is_file() and p.suffix in SUFFIXES)
        units = []
        for f in files:
            try:
                u = load_unit(f)
            except Exception as exc:  # the count must go on; the reason is recorded
                kernels.append({"file": str(f.relative_to(d)), "kernel": None, "complete": False,
                                "error": f"unreadable: {type(exc).__name__}: {exc}"[:200]})
                continue
            if u.kernels:
                units.append(u)
        for u in units:
            for k in u.kernels:
                rec: dict[str, Any] = {"file": str(Path(u.path).relative_to(d)), "kernel": k.name}
                try:
                    r = resolve_spec(u, k.name)
                    rec["complete"] = r.complete
                    rec["annotation"] = r.annotation()
                    rec["origins"] = dict(collections.Counter(o.kind for _, o in r.items.values()))
                    rec["buffer_origins"] = dict(collections.Counter(
                        o.kind for key, (t, o) in r.items.items() if any(p.name == key and p.is_pointer for p in k.params)))
                    rec["holes"] = {key: h[:200] for key, h in r.holes.items()}
                    if r.error:
                        rec["error"] = r.error[:300]
                    if r.complete and r.spec is not None and not r.error:
                        why = gate_problem(r.spec)
                        rec["usable"] = why is None
                        if why:
                            rec["unusable"] = why[:300]
                except TimeoutError:
                    raise
                except Exception as exc:  # a crash is a result too
                    rec["complete"] = False
                    rec["error"] = f"{type(exc).__name__}: {exc}"[:300]
                kernels.append(rec)
    except TimeoutError:
        kernels.append({"file": None, "kernel": None, "complete": False, "error": f"timeout after {PROGRAM_TIMEOUT} s"})
    finally:
        signal.alarm(0)
    return {"program": d.name.removesuffix("-cuda"), "kernels": kernels, "seconds": round(time.perf_counter() - t0, 2)}


def summarise(programs: list[dict[str, Any]]) -> dict[str, Any]:
    total = complete = usable = 0
    unusable: collections.Counter[str] = collections.Counter()
    origins: collections.Counter[str] = collections.Counter()
    buffer_origins: collections.Counter[str] = collections.Counter()
    holes: collections.Counter[str] = collections.Counter()
    holes_kernels: collections.Counter[str] = collections.Counter()  # incomplete kernels with a hole of each cause
    per_program = []
    for p in programs:
        ks = [k for k in p["kernels"] if k.get("kernel")]
        done = [k for k in ks if k.get("complete")]
        total += len(ks)
        complete += len(done)
        usable += sum(1 for k in done if k.get("usable"))
        unusable.update(_unusable_reason(k["unusable"]) for k in done if k.get("unusable"))
        for k in done:
            origins.update(k.get("origins", {}))
            buffer_origins.update(k.get("buffer_origins", {}))
        for k in ks:
            causes = set()
            for h in k.get("holes", {}).values():
                holes[_reason(h)] += 1
                causes.add(_reason(h))
            if k.get("error") and not k.get("holes"):
                causes.add("error: " + k["error"].split("error:")[-1].strip()[:60])
                holes["error: " + k["error"].split("error:")[-1].strip()[:60]] += 1
            holes_kernels.update(causes)
        per_program.append({"program": p["program"], "kernels": len(ks), "complete": len(done), "seconds": p["seconds"]})
    return {
        "kernels": total, "complete": complete, "percent": round(100.0 * complete / total, 1) if total else 0.0,
        "usable": usable, "unusable": dict(unusable.most_common(15)),
        "items_by_origin": dict(origins.most_common()), "buffers_by_origin": dict(buffer_origins.most_common()),
        "holes": dict(holes.most_common(25)), "holes_kernels": {k: holes_kernels[k] for k, _ in holes.most_common(25)},
        "programs": per_program,
    }


def _unusable_reason(why: str) -> str:
    """The kind of problem, without the kernel's own names and numbers."""
    head = why.split(":", 1)[0]
    for key in ("unknown type in sizeof", "divides by zero", "which is not a parameter or size", "cannot fuzz values of C type",
                "Unsatisfiable", "too large"):
        if key in why:
            return f"{head}: {key}"
    return why[:60]


def _reason(hint: str) -> str:
    if "cannot infer the length" in hint:
        why = hint.split("(", 1)[-1].split(")")[0]
        return "buffer length: " + (why.split(",")[0] if why.startswith("its size uses") else why)[:70]
    if "cannot fuzz the values" in hint:
        return "index values: no range keeps them inside the buffers they index"
    if "cannot fuzz parameter" in hint and "its fields" in hint:
        return "struct by value: its fields index buffers or bound loops"
    if "cannot fuzz parameter" in hint:
        return "parameter type not generable (struct with pointers or mixed fields, texture, ...)"
    if "cannot fuzz '" in hint:
        return ("buffer type not generable (pointer to pointer)" if "**" in hint
                else "buffer type not generable (struct of mixed types, pointers)")
    if "cannot infer the grid" in hint or "cannot infer the block" in hint:
        return "launch: " + hint.split("(", 1)[-1].split(")")[0][:60]
    if hint.startswith("template value parameter"):
        return "template value parameter: no value the code read shows"
    return hint[:80]


def markdown(summary: dict[str, Any], corpus: str) -> str:
    lines = [
        "# Spec inference coverage (no annotations)", "",
        f"Corpus: `{corpus}` (the CUDA programs). Command: `python bench/spec_coverage.py`.", "",
        f"**{summary['complete']} of {summary['kernels']} kernels ({summary['percent']} %) get a complete spec** "
        "from the program alone; "
        f"**{summary.get('usable', 0)}** of them can be used by the gate as they are (checked on the CPU by drawing "
        f"the gate's own cases: every size, scalar, launch and buffer evaluates).", "",
        *(["Complete specs the gate cannot use: " + ", ".join(f"{k} {v}" for k, v in summary["unusable"].items()), ""]
          if summary.get("unusable") else []),
        "Items of the complete specs by origin: " + ", ".join(f"{k} {v}" for k, v in summary["items_by_origin"].items()),
        "",
        "Buffer lengths by origin: " + ", ".join(f"{k} {v}" for k, v in summary["buffers_by_origin"].items()), "",
        "## What is left (holes)", "",
        "Items: parameters, launch items and template arguments nothing could fill; kernels: the incomplete kernels "
        "with at least one such hole (a kernel may have holes of several causes).", "",
        "| reason | items | kernels |", "| --- | ---: | ---: |",
    ]
    lines += [f"| {k} | {v} | {summary.get('holes_kernels', {}).get(k, '')} |" for k, v in summary["holes"].items()]
    lines += ["", "## Per program", "", "| program | kernels | complete |", "| --- | ---: | ---: |"]
    lines += [f"| {p['program']} | {p['kernels']} | {p['complete']} |" for p in summary["programs"] if p["kernels"]]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", nargs="?", default=str(ROOT.parent / "shared" / "corpora" / "hecbench"))
    ap.add_argument("-j", "--jobs", type=int, default=1)
    ap.add_argument("--programs", help="comma-separated program names (default: all)")
    ap.add_argument("--json", help="where the results go (default: bench/results/spec_coverage_cpu.json for a run "
                                    "over the whole corpus; a --programs run writes only where told)")
    ap.add_argument("--md", help="the table (default: beside --json, as .md)")
    args = ap.parse_args(argv)
    if args.json is None and not args.programs:  # the committed results are those of the whole corpus
        args.json = str(ROOT / "bench" / "results" / "spec_coverage_cpu.json")
    if args.md is None and args.json is not None:
        args.md = str(Path(args.json).with_suffix(".md"))
    corpus = Path(args.corpus)
    if not corpus.is_dir():
        print(f"spec_coverage: no corpus at {corpus}", file=sys.stderr)
        return 2
    dirs = program_dirs(corpus, args.programs.split(",") if args.programs else None)
    t0 = time.perf_counter()
    if args.jobs > 1:
        with multiprocessing.Pool(args.jobs) as pool:
            programs = list(pool.imap(measure_program, dirs))
    else:
        programs = [measure_program(d) for d in dirs]
    summary = summarise(programs)
    summary["seconds"] = round(time.perf_counter() - t0, 1)
    doc = {"schema": "xlate.spec_coverage/1", "corpus": os.path.relpath(corpus, ROOT), "summary": summary,
           "details": programs}
    if args.json is not None:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(doc, indent=1) + "\n")
    if args.md is not None:
        Path(args.md).parent.mkdir(parents=True, exist_ok=True)
        Path(args.md).write_text(markdown(summary, doc["corpus"]))
    print(f"{summary['complete']} / {summary['kernels']} kernels complete ({summary['percent']} %), "
          f"{summary['usable']} usable by the gate, in "
          f"{summary['seconds']} s; items by origin {summary['items_by_origin']}")
    for k, v in list(summary["holes"].items())[:12]:
        print(f"  {v:5d}  {k}")
    for k, v in summary["unusable"].items():
        print(f"  {v:5d}  unusable: {k}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
