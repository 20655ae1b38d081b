"""Which CUDA sources of a corpus compile under NVRTC the way the verification gate compiles them, on the CPU.

    python bench/nvrtc_compile_tally.py [CORPUS] [--kernels KERNELS.json] [-j 2] [--nvcc failed|all|none]
                                        [--json OUT.json] [--programs a,b] [--compare OLD.json] [--show GROUP]

The kernels are those with a complete inferred spec (bench/verify_inferred.py's list: the JSON it exports, by
default .devcarry/infer_corpus/kernels.json, or computed with --coverage). Each kernel is built by the gate's own
route: the source read and parsed as `xlate fuzz SRC SRC` reads it (xlate/verify/runner.py `Side`), its template
parameters instantiated as a first case would (float32 for a type, the default for a value), and compiled by the
CUDA backend (device slice, bundled project headers, xlate's NVRTC environment) for sm_90 with a fresh compile
cache, so that nothing cached from an older header counts. Each source file runs in its own subprocess with a
time limit. Failures are grouped by their first error with names and numbers masked.

`--nvcc failed` (default) also compiles each failing file with `nvcc -c` (for a header: the file that includes
it), with the -I/-D flags of the program's Makefile, so failures nvcc has as well are told apart from ours.
Writes bench/results/nvrtc_compile_tally_cpu.json.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpora" / "hecbench"
DEFAULT_KERNELS = ROOT / ".devcarry" / "infer_corpus" / "kernels.json"
DEFAULT_OUT = ROOT / "bench" / "results" / "nvrtc_compile_tally_cpu.json"
FILE_TIMEOUT = 300
NVCC_TIMEOUT = 300
NVCC_PASS = {"--extended-lambda", "--expt-extended-lambda", "--expt-relaxed-constexpr", "-rdc=true", "--use_fast_math",
             "-use_fast_math"}
ARCH = "sm_90"

ERROR_LINE = re.compile(r"^(?P<where>.*?\(\d+\)): (?:catastrophic )?error: (?P<msg>.*)$|^(?:catastrophic )?error: (?P<bare>.*)$",
                        re.M)


def first_error(log: str) -> str:
    """The first error message of a compiler log, with the place it names."""
    m = ERROR_LINE.search(log)
    if m is None:
        lines = [ln for ln in log.strip().splitlines() if ln.strip()]
        return lines[0][:300] if lines else "(no message)"
    where = os.path.basename(m.group("where")) if m.group("where") else ""
    return f"{where}: {m.group('msg') or m.group('bare')}"[:300] if where else (m.group("bare") or "")[:300]


def error_class(message: str) -> str:
    """A first error with names, paths and numbers masked, so one cause counts once."""
    m = message.split(": ", 1)[1] if re.match(r"^[^:]*\(\d+\): ", message) else message
    m = re.sub(r'"[^"]*"', '"…"', m)
    m = re.sub(r"'[^']*'", "'…'", m)
    m = re.sub(r"\b\d+(\.\d+)?\b", "N", m)
    return m.strip()[:120]


# -- one file, in its own process ---------------------------------------------------------------------------


def first_case_template_args(side: Any, kernel: str) -> list[str]:
    """The template arguments of the gate's first build of `kernel`: its spec built as `xlate fuzz` builds it
    (sidecar overrides included), the first deterministic edge case (or the first dtype of each axis)."""
    from xlate.errors import SpecError
    from xlate.specs import build_spec, sidecar_overrides
    from xlate.verify.api import GPU_BUDGET, GPU_SIZE_CAP
    from xlate.verify.cases import Case, environment
    from xlate.verify.strategies import explicit_cases

    try:
        spec = build_spec(side.unit, kernel, sidecar_overrides(side.path, kernel) or None)
        edge = explicit_cases(spec, GPU_BUDGET, GPU_SIZE_CAP)
        case = edge[0] if edge else Case({p.name: 1 for p in spec.sizes},
                                          {n: o[0] for n, o in spec.dtype_axes.items()}, {}, {}, 0)
        try:
            env = environment(spec, case)
        except Exception:
            env = {}
        return side.template_args(case, spec, env)
    except SpecError:  # the gate stops before compiling; still measure the compile, at float / defaults
        fn = side.unit.kernel(kernel)
        return ["float" if t.kind == "type" else str(t.default or 1) for t in fn.template_params]


def compile_file(path: str, kernels: list[str]) -> list[dict[str, Any]]:
    """Each kernel of `path` built as the gate builds the source side of `xlate fuzz path path --kernel K`."""
    from xlate.backends.base import CompileError, CompileOptions
    from xlate.backends.registry import get_backend

    from xlate.verify.runner import Side

    rows = []
    side = Side(path, kernels[0], label="source")
    backend = get_backend(side.backend.name)
    for kernel in kernels:
        side.kernel = kernel  # the Side instantiates templates of its own kernel
        t0 = time.perf_counter()
        row: dict[str, Any] = {"kernel": kernel}
        try:
            fn = side.unit.kernel(kernel)
            targs = first_case_template_args(side, kernel) if fn is not None and fn.template_params else []
            options = CompileOptions(arch=ARCH, template_args=targs, include_dirs=side.include_dirs,
                                     context_path=side.context_path)
            if fn is None:
                row.update(ok=False, error="kernel not found by the parser")
            else:
                backend.compile(side.text, kernel, options, path=side.path)
                row["ok"] = True
        except CompileError as exc:
            row.update(ok=False, log=exc.log.strip()[-6000:], error=first_error(exc.log))
        except Exception as exc:  # recorded per kernel: a crash of xlate is a finding too
            row.update(ok=False, error=f"{type(exc).__name__}: {exc}"[:300], crash=True)
        row["seconds"] = round(time.perf_counter() - t0, 2)
        rows.append(row)
    return rows


def run_isolated(job: dict[str, Any]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="xlate-nvrtc-tally-") as cache:
        env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "XLATE_CACHE_DIR": cache}
        t0 = time.perf_counter()
        try:
            proc = subprocess.run([sys.executable, __file__, "--one", json.dumps(job)], capture_output=True, text=True,
                                  timeout=FILE_TIMEOUT, env=env, cwd=ROOT)
        except subprocess.TimeoutExpired:
            rows = [{"kernel": k, "ok": False, "error": f"timeout after {FILE_TIMEOUT} s"} for k in job["kernels"]]
            return {**job, "rows": rows, "seconds": FILE_TIMEOUT}
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("[")]
    if proc.returncode != 0 or not lines:
        err = f"exit {proc.returncode}: {proc.stderr.strip()[-300:]}"
        rows = [{"kernel": k, "ok": False, "error": err, "crash": True} for k in job["kernels"]]
    else:
        rows = json.loads(lines[-1])
    return {**job, "rows": rows, "seconds": round(time.perf_counter() - t0, 1)}


# -- nvcc -----------------------------------------------------------------------------------------------------


def makefile_flags(program_dir: Path) -> list[str]:
    """The -I and -D flags of a HeCBench Makefile's CFLAGS (make variables left out), relative dirs resolved."""
    mk = program_dir / "Makefile"
    if not mk.is_file():
        return []
    text = mk.read_text(errors="replace").replace("\\\n", " ")
    flags: list[str] = []
    for line in text.splitlines():
        if not re.match(r"^\s*CFLAGS\s*[:+]?=", line):
            continue
        for tok in shlex.split(line.split("=", 1)[1], posix=True) if "'" not in line else line.split():
            if "$" in tok:
                continue
            if tok.startswith("-I") and len(tok) > 2:
                d = tok[2:]
                flags.append("-I" + str((program_dir / d).resolve()) if not os.path.isabs(d) else tok)
            elif (tok.startswith("-D") and len(tok) > 2) or tok in NVCC_PASS:
                flags.append(tok)
    return flags


def nvcc_check(path: str, program_dir: Path) -> dict[str, Any]:
    """Does nvcc accept the file (a header: the translation unit that includes it)?"""
    from xlate.parse.bundle import includer_chain

    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not os.path.exists(nvcc):
        return {"ok": None, "error": "nvcc not found"}
    chain = includer_chain(path, [])  # a header, or a .cu file another one includes: compile the unit including it
    if not chain and not path.endswith(".cu"):
        return {"ok": None, "error": "no translation unit includes this header"}
    tu = chain[0][0] if chain else path
    cmd = [nvcc, "-c", "-std=c++17", f"-arch={ARCH}", "-I", str(Path(tu).parent), *makefile_flags(program_dir),
           "-o", os.devnull, "-x", "cu", tu]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=NVCC_TIMEOUT, cwd=Path(tu).parent)
    except subprocess.TimeoutExpired:
        return {"ok": None, "error": f"nvcc timed out after {NVCC_TIMEOUT} s", "tu": tu}
    out: dict[str, Any] = {"ok": proc.returncode == 0, "tu": tu}
    if proc.returncode != 0:
        out["error"] = first_error(proc.stderr + proc.stdout)
    return out


# -- the driver ----------------------------------------------------------------------------------------------


def load_kernels(args: argparse.Namespace) -> list[dict[str, str]]:
    if args.coverage:
        from verify_inferred import kernels_from_coverage

        return kernels_from_coverage(json.loads(Path(args.coverage).read_text()), Path(args.corpus))
    if Path(args.kernels).is_file():
        return json.loads(Path(args.kernels).read_text())
    from verify_inferred import complete_kernels

    return complete_kernels(Path(args.corpus), None, args.jobs)


def summarise(files: list[dict[str, Any]]) -> dict[str, Any]:
    groups: dict[str, dict[str, Any]] = {}
    kernels_ok = kernels = files_ok = 0
    for f in files:
        kernels += len(f["rows"])
        good = [r for r in f["rows"] if r["ok"]]
        kernels_ok += len(good)
        f["ok"] = len(good) == len(f["rows"])
        files_ok += f["ok"]
        if f["ok"]:
            continue
        bad = next(r for r in f["rows"] if not r["ok"])
        cls = error_class(bad.get("error", ""))
        nv = f.get("nvcc", {}).get("ok")
        g = groups.setdefault(cls, {"files": 0, "kernels": 0, "nvcc_also_fails": 0, "examples": []})
        g["files"] += 1
        g["kernels"] += len(f["rows"]) - len(good)
        g["nvcc_also_fails"] += nv is False
        if len(g["examples"]) < 4:
            g["examples"].append(f"{f['program']}/{f['file']}: {bad.get('error', '')[:200]}")
    ordered = dict(sorted(groups.items(), key=lambda kv: (-kv[1]["files"], kv[0])))
    return {"files": len(files), "files_ok": files_ok, "kernels": kernels, "kernels_ok": kernels_ok,
            "files_failing_nvcc_too": sum(1 for f in files if not f["ok"] and f.get("nvcc", {}).get("ok") is False),
            "groups": ordered}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", nargs="?", default=str(DEFAULT_CORPUS))
    ap.add_argument("--kernels", default=str(DEFAULT_KERNELS), help="JSON list of {program, file, kernel}")
    ap.add_argument("--coverage", help="bench/spec_coverage.py's JSON instead of --kernels")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--nvcc", choices=("failed", "all", "none"), default="failed")
    ap.add_argument("--programs", help="comma-separated program names")
    ap.add_argument("--json", default=str(DEFAULT_OUT))
    ap.add_argument("--compare", help="an earlier JSON of this script: list files that compiled there, not here")
    ap.add_argument("--update", help="an earlier JSON of this script: keep its other files, replace those run now")
    ap.add_argument("--show", help="print the full logs of the failures whose group contains this text")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.one:
        job = json.loads(args.one)
        print(json.dumps(compile_file(job["path"], job["kernels"])))
        return 0

    kernels = load_kernels(args)
    src = Path(args.corpus) / "src" if (Path(args.corpus) / "src").is_dir() else Path(args.corpus)
    by_file: dict[tuple[str, str], list[str]] = collections.defaultdict(list)
    for k in kernels:
        if args.programs and k["program"] not in args.programs.split(","):
            continue
        if k["kernel"] not in by_file[(k["program"], k["file"])]:
            by_file[(k["program"], k["file"])].append(k["kernel"])
    jobs = [{"program": p, "file": f, "path": str(src / f"{p}-cuda" / f), "kernels": ks}
            for (p, f), ks in sorted(by_file.items())]
    t0 = time.perf_counter()
    files: list[dict[str, Any]] = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for res in pool.map(run_isolated, jobs):
            ok = sum(r["ok"] for r in res["rows"])
            bad = next((r for r in res["rows"] if not r["ok"]), None)
            if args.nvcc == "all" or (args.nvcc == "failed" and bad is not None):
                res["nvcc"] = nvcc_check(res["path"], src / f"{res['program']}-cuda")
            nv = res.get("nvcc", {}).get("ok")
            tag = "ok  " if bad is None else "FAIL"
            note = "" if bad is None else f"  {bad.get('error', '')[:150]}" + (
                "  [nvcc fails too]" if nv is False else "  [nvcc ok]" if nv else "")
            print(f"{tag} {res['program']}/{res['file']} {ok}/{len(res['rows'])} ({res['seconds']} s){note}", flush=True)
            files.append(res)
    if args.update and Path(args.update).is_file():  # re-tallied files replace theirs in the earlier run
        fresh = {(f["program"], f["file"]) for f in files}
        old_files = json.loads(Path(args.update).read_text()).get("details", [])
        files = sorted([f for f in old_files if (f["program"], f["file"]) not in fresh] + files,
                       key=lambda f: (f["program"], f["file"]))
    summary = summarise(files)
    summary["seconds"] = round(time.perf_counter() - t0, 1)
    summary["arch"] = ARCH
    try:
        from xlate.backends.nvrtc import nvrtc_version

        summary["nvrtc"] = nvrtc_version()
    except Exception:
        pass
    rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    summary["xlate_rev"] = rev

    print(f"\nfiles: {summary['files_ok']}/{summary['files']} compile under NVRTC; kernels: "
          f"{summary['kernels_ok']}/{summary['kernels']}; failing files nvcc rejects too: "
          f"{summary['files_failing_nvcc_too']}")
    print(f"\n{'files':>5} {'krnls':>5} {'nvcc✗':>5}  first error (masked)")
    for cls, g in summary["groups"].items():
        print(f"{g['files']:5d} {g['kernels']:5d} {g['nvcc_also_fails']:5d}  {cls}")
    if args.show:
        for f in files:
            for r in f["rows"]:
                if not r["ok"] and args.show in error_class(r.get("error", "")):
                    print(f"\n=== {f['program']}/{f['file']} {r['kernel']}\n{r.get('log', r.get('error'))[-3000:]}")
                    break
    if args.compare and Path(args.compare).is_file():
        old = json.loads(Path(args.compare).read_text())
        was = {(f["program"], f["file"]) for f in old.get("details", []) if f.get("ok")}
        lost = [f"{f['program']}/{f['file']}" for f in files if (f["program"], f["file"]) in was and not f["ok"]]
        print(f"\ncompiled in {args.compare}, not now: {lost or 'none'}")
    for f in files:
        for r in f["rows"]:
            if r.get("ok"):
                r.pop("log", None)
            elif "log" in r:
                r["log"] = r["log"][-1500:]
    summary["details"] = files
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(summary, indent=1) + "\n")
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
