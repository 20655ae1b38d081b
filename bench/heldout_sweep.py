"""Held-out sweep: real CUDA from PyPI sdists (PyTorch extensions nobody here tuned for) through xlate's CLI.

    python bench/heldout_sweep.py [--packages 'gsplat,nerfacc'] [--out bench/results/heldout_sweep_cpu.json]
                                  [--build] [-j 2]

Each pinned sdist (PACKAGES: name, version, sha256) is downloaded once into .cache/heldout/ (git-ignored) and only
its CUDA sources (.cu, .cuh) and the headers they include (quoted #include, followed transitively; vendored
third-party folders left out) are extracted. Per package, side by side:
  migrate  `xlate migrate SRC --to hip -o OUT --no-verify --fresh --json` (the whole tree)
  hipify   `perl hipify-perl -quiet-warnings -o=OUT/f f` per file
  spec     `xlate spec F --json` per CUDA file: kernels with a complete spec, holes by key
  triton   `xlate port F --to triton --no-verify --json` per CUDA file: kernels lifted, refusals by reason
Recorded as findings: a Python traceback, an exit code outside the CLI contract (0-3), stdout that is not one JSON
document under --json, a file migrate refused, and CUDA API names left in a HIP tree (leftovers) where the other
tool translated them. With --build each HIP output is also syntax-checked with Debian's hipcc (torch headers are
not installed here, so most files stop at their first torch include: that is counted apart).
The network is needed only for the first download; tests never run this.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "heldout"
# ../shared from the main checkout, ../../shared from a worktree under wt/
HIPIFY = next((p for p in (ROOT.parent / "shared" / "tools" / "hipify-perl",
                           ROOT.parent.parent / "shared" / "tools" / "hipify-perl") if p.exists()),
              ROOT.parent / "shared" / "tools" / "hipify-perl")
DEFAULT_OUT = ROOT / "bench" / "results" / "heldout_sweep_cpu.json"
PYTHON = sys.executable
XLATE_SRC = [ROOT]  # the checkout whose xlate runs (--xlate-src: a baseline's for before/after numbers)

# (PyPI name, version, sdist sha256): pinned so that before/after numbers compare the same code
PACKAGES: list[tuple[str, str, str]] = [
    ("causal-conv1d", "1.7.0", "3202758494eaa7b597ce1c282dfa188889506bfcb92cad3c407d26736bfcd32b"),
    ("gsplat", "1.5.3", "343f080c470e891ba3c697c03bdf0952cb982d1d535fdc24adb23c2cb4fba906"),
    ("torch-scatter", "2.1.2", "69b3aa435f2424ac6a1bfb6ff702da6eb73b33ca0db38fb26989c74159258e47"),
    ("mamba-ssm", "2.3.2.post1", "104cc47e9101e5401a675fa2b784f2952b9b037f3b1dd83b5ac544394e95d028"),
    ("nerfacc", "0.5.3", "01850cbbd71b6aeab059cbfb695755f8b6604f3fdfe48c44925b4b97c0c324db"),
    ("apex", "0.9.10dev", "48aa6d9e805e661e609161bd52e0d02d89a9a32f32dc29cde6c950df58129119"),
]
CUDA_EXTS = {".cu", ".cuh"}
HEADER_EXTS = {".h", ".hpp", ".hh", ".cuh", ".inl", ".inc"}
VENDORED = re.compile(r"(^|/)(third_party|thirdparty|3rdparty|external|vendor)/", re.I)
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
# what a reader of the HIP tree still sees of CUDA's runtime and libraries (bench/realworld_hip.py counts the same)
CUDA_NAME = re.compile(r"\b(cuda[A-Z]\w*|cu(blas|blasLt|sparse|solver|rand|fft|dnn)[A-Z]\w*|CU(BLAS|SPARSE|RAND|FFT)_\w+)")
HIP_NAME = re.compile(r"\b(hip[A-Z]\w*|HIP[A-Z_]\w*)")
CONTRACT_EXITS = {0, 1, 2, 3}
TIMEOUT = 900.0


# --- sources ------------------------------------------------------------------------------------------------------

def sdist_url(name: str, version: str) -> str:
    with urllib.request.urlopen(f"https://pypi.org/pypi/{name}/json", timeout=60) as resp:
        meta = json.load(resp)
    for f in meta["releases"].get(version, []):
        if f["packagetype"] == "sdist":
            return f["url"]
    raise SystemExit(f"{name} {version}: no sdist on PyPI")


def fetch(name: str, version: str, sha256: str) -> Path:
    """The sdist in the cache, downloaded once and checked against its pinned hash."""
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"{name}-{version}.tar.gz"
    if not path.exists():
        tmp = path.with_suffix(".part")
        with urllib.request.urlopen(sdist_url(name, version), timeout=120) as resp, open(tmp, "wb") as fh:
            shutil.copyfileobj(resp, fh)
        tmp.rename(path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != sha256:
        raise SystemExit(f"{path}: sha256 {digest} is not the pinned {sha256}")
    return path


def include_closure(members: dict[str, bytes]) -> tuple[set[str], int, set[str]]:
    """CUDA files and the headers they include (quoted, resolved beside the includer or by path suffix), and
    the folders a suffix match found headers in (the package's own -I folders)."""
    wanted = [p for p in members if PurePosixPath(p).suffix in CUDA_EXTS and not VENDORED.search(p)]
    keep, vendored, todo, dirs = set(wanted), set(), list(wanted), set()
    while todo:
        cur = todo.pop()
        for inc in INCLUDE.findall(members[cur].decode("utf-8", errors="replace")):
            near = os.path.normpath(str(PurePosixPath(cur).parent / inc))
            hits = [near] if near in members else [p for p in members if p.endswith("/" + inc.lstrip("./"))][:1]
            if hits and hits[0] != near and not VENDORED.search(hits[0]):
                dirs.add(hits[0][: -len(inc.lstrip("./"))].rstrip("/"))
            for h in hits:
                if PurePosixPath(h).suffix not in HEADER_EXTS:
                    continue
                if VENDORED.search(h):
                    vendored.add(h)
                elif h not in keep:
                    keep.add(h)
                    todo.append(h)
    return keep, len(vendored), dirs


def extract(tarball: Path, dest: Path) -> dict:
    """The CUDA files and their headers under dest, relative to their common folder."""
    with tarfile.open(tarball) as tf:
        members = {m.name: tf.extractfile(m).read() for m in tf.getmembers()
                   if m.isfile() and PurePosixPath(m.name).suffix in CUDA_EXTS | HEADER_EXTS}
    keep, vendored, dirs = include_closure(members)
    if dest.exists():
        shutil.rmtree(dest)
    if not keep:
        return {"files": 0, "vendored_headers_left_out": vendored}
    common = os.path.commonpath([str(PurePosixPath(p).parent) for p in keep])
    for p in sorted(keep):
        out = dest / os.path.relpath(p, common)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(members[p])
    return {"files": len(keep), "cuda_files": sum(PurePosixPath(p).suffix in CUDA_EXTS for p in keep),
            "root_in_sdist": common, "vendored_headers_left_out": vendored,
            "include_dirs": sorted(os.path.relpath(d, common) for d in dirs)}


# --- running ------------------------------------------------------------------------------------------------------

def run(argv: list[str], cwd: Path, timeout: float = TIMEOUT) -> dict:
    """argv's exit code, output and time. xlate runs from its checkout (`python -m` puts the folder first on
    sys.path, ahead of PYTHONPATH)."""
    env = {**os.environ, "PYTHONPATH": str(XLATE_SRC[0]), "HIP_PLATFORM": "amd"}
    t0 = time.perf_counter()
    try:
        p = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, errors="replace", timeout=timeout)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as exc:
        rc, out, err = 124, exc.stdout or "", f"timed out after {timeout:.0f} s"
        out = out.decode(errors="replace") if isinstance(out, bytes) else out
    return {"rc": rc, "stdout": out, "stderr": err, "seconds": round(time.perf_counter() - t0, 2)}


def xlate(*args: str) -> list[str]:
    return [PYTHON, "-m", "xlate.cli", *args]


def problems(res: dict, what: str, json_out: bool) -> tuple[dict | None, list[dict]]:
    """The JSON document (when asked for) and any contract breach of one CLI run."""
    found: list[dict] = []
    doc = None
    if "Traceback (most recent call last)" in res["stderr"] + res["stdout"]:
        tail = (res["stderr"] + res["stdout"]).strip().splitlines()[-1][:300]
        found.append({"what": what, "kind": "traceback", "detail": tail})
    if res["rc"] not in CONTRACT_EXITS:
        found.append({"what": what, "kind": "exit code", "detail": f"rc={res['rc']}: {res['stderr'][-300:]}"})
    if json_out:
        try:
            doc = json.loads(res["stdout"])
        except ValueError:
            found.append({"what": what, "kind": "not JSON", "detail": res["stdout"][:200]})
    return doc, found


COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def cuda_left(path: Path) -> Counter:
    """CUDA names in the code (comments left out: hipify rewrites them, xlate does not, and neither builds)."""
    if not path.exists():
        return Counter()
    return Counter(m.group(0) for m in CUDA_NAME.finditer(COMMENT.sub(" ", path.read_text(errors="replace"))))


def hip_names(path: Path) -> set[str]:
    return {m.group(0) for m in HIP_NAME.finditer(path.read_text(errors="replace"))} if path.exists() else set()


def run_migrate(src: Path, out: Path, includes: list[str]) -> tuple[dict, list[dict]]:
    flags = [a for d in includes for a in ("-I", str(src / d))]
    res = run(xlate("migrate", str(src), "--to", "hip", "-o", str(out), "--no-verify", "--fresh", "--json",
                    "-j", "2", "--no-progress", *flags), XLATE_SRC[0])
    doc, found = problems(res, "migrate", True)
    row: dict = {"rc": res["rc"], "seconds": res["seconds"], "outputs": {}}
    report = out / "xlate-report" / "report.json"
    if report.exists():
        rep = json.loads(report.read_text())
        row["summary"] = {k: rep["summary"].get(k) for k in ("files", "kernels", "files_by_status", "not_migrated",
                                                              "categories", "incomplete")}
        diag = Counter()
        for f in rep["files"]:
            row["outputs"][f["path"]] = f.get("output")
            for d in f.get("diagnostics") or []:
                if d["severity"] in ("error", "warning"):
                    diag[f"{d['severity']} {d['code']}"] += 1
            if f["status"] in ("failed", "error", "refused", "not migrated") or f.get("error"):
                found.append({"what": "migrate", "kind": "refused file", "file": f["path"],
                              "detail": (f.get("error") or f.get("message") or "")[:300]})
        for n in rep.get("not_migrated", []):
            found.append({"what": "migrate", "kind": "kernel not migrated", "file": n["file"],
                          "detail": f"{n['kernel']}: {n['reason']}"[:300]})
        row["diagnostics"] = dict(diag.most_common())
        for code, n in diag.items():
            if code.startswith("error"):
                found.append({"what": "migrate", "kind": "error diagnostic", "detail": f"{code} x{n}"})
    elif doc is None:
        found.append({"what": "migrate", "kind": "no report", "detail": res["stderr"][-300:]})
    return row, found


def run_hipify(src: Path, out: Path, files: list[str]) -> dict:
    shutil.copytree(src, out, dirs_exist_ok=True)
    row = {"translated": 0, "failed": [], "warnings": 0, "seconds": 0.0}
    for f in files:
        res = run(["perl", str(HIPIFY), "-quiet-warnings", f"-o={out / f}", str(src / f)], src)
        row["seconds"] += res["seconds"]
        row["warnings"] += sum("warning" in ln for ln in (res["stdout"] + res["stderr"]).splitlines())
        if res["rc"] == 0:
            row["translated"] += 1
        else:
            row["failed"].append(f)
    row["seconds"] = round(row["seconds"], 2)
    return row


def compare(src: Path, xl: Path, hp: Path, files: list[str], outputs: dict[str, str | None]) -> tuple[dict, list]:
    """Leftover CUDA names per tool, and per file the HIP names one tool wrote and the other did not."""
    left = {"xlate": Counter(), "hipify": Counter()}
    found, per_file = [], {}
    for f in files:
        xo = xl / (outputs.get(f) or f)
        lx, lh = cuda_left(xo), cuda_left(hp / f)
        left["xlate"] += lx
        left["hipify"] += lh
        only_x = sorted(set(lx) - set(lh))
        if only_x:
            found.append({"what": "hip", "kind": "leftover", "file": f, "detail": ", ".join(only_x)[:300]})
        hx, hh = hip_names(xo), hip_names(hp / f)
        per_file[f] = {"cuda_left_xlate": sum(lx.values()), "cuda_left_hipify": sum(lh.values()),
                       "hip_names_only_hipify": sorted(hh - hx)[:20], "hip_names_only_xlate": sorted(hx - hh)[:20]}
    return {"cuda_left": {k: sum(v.values()) for k, v in left.items()},
            "cuda_left_names": {k: dict(v.most_common(15)) for k, v in left.items()}, "per_file": per_file}, found


def syntax_check(tree: Path, files: list[str], includes: list[str]) -> dict:
    """hipcc -fsyntax-only per translated source; a missing torch/ATen/c10 header is counted apart."""
    row = Counter()
    firsts = Counter()
    flags = [a for d in includes for a in ("-I", str(tree / d))]
    for f in files:
        res = run(["hipcc", "--offload-arch=gfx90a", "-fsyntax-only", "-x", "hip", "-I", str(tree), *flags,
                   "-I", str((tree / f).parent), str(tree / f)], tree, 300)
        text = res["stdout"] + res["stderr"]
        if res["rc"] == 0:
            row["ok"] += 1
            continue
        m = re.search(r"fatal error: '([^']+)' file not found", text)
        if m and re.match(r"(torch|ATen|c10|pybind11|cub|thrust|cooperative_groups|cuda|glm)", m.group(1)):
            row["missing external header"] += 1
            firsts[m.group(1)] += 1
        else:
            row["error"] += 1
            err = re.search(r"error: (.*)", text)
            firsts[(err.group(1) if err else text.strip()[-120:])[:120]] += 1
    return {"counts": dict(row), "first_errors": dict(firsts.most_common(10))}


def kernel_file_checks(src: Path, work: Path, cuda_files: list[str], jobs: int) -> tuple[dict, list]:
    """spec and Triton port per CUDA file."""
    def one(f: str) -> tuple[str, dict, dict]:
        spec = run(xlate("spec", str(src / f), "--json"), XLATE_SRC[0])
        tri = run(xlate("port", str(src / f), "--to", "triton", "--no-verify", "--json",
                        "-o", str(work / "triton" / (f.replace("/", "__") + ".py"))), XLATE_SRC[0])
        return f, spec, tri

    (work / "triton").mkdir(parents=True, exist_ok=True)
    found: list[dict] = []
    spec_row = {"kernels": 0, "complete": 0, "holes": Counter(), "errors": 0}
    tri_row = {"kernels": 0, "lifted": 0, "status": Counter(), "refusals": Counter()}
    kernels: list[dict] = []
    seconds: dict[str, dict[str, float]] = {}
    with ThreadPoolExecutor(jobs) as pool:
        for f, spec, tri in pool.map(one, cuda_files):
            seconds[f] = {"spec": spec["seconds"], "triton": tri["seconds"]}
            sdoc, s_found = problems(spec, "spec", True)
            tdoc, t_found = problems(tri, "triton", True)
            found += [{**x, "file": f} for x in s_found + t_found]
            for k in (sdoc or {}).get("kernels", []):
                spec_row["kernels"] += 1
                spec_row["complete"] += bool(k.get("complete"))
                spec_row["errors"] += bool(k.get("error"))
                spec_row["holes"].update(h["key"] if h["key"] in ("grid", "block") else hole_kind(h["hint"])
                                         for h in k.get("holes", []))
                kernels.append({"file": f, "kernel": k["kernel"], "spec_complete": bool(k.get("complete")),
                                "holes": [h["hint"][:200] for h in k.get("holes", [])]})
            for k in (tdoc or {}).get("kernels", []):
                tri_row["kernels"] += 1
                tri_row["status"][k["status"]] += 1
                if k["status"] in ("translated", "unverified", "verified", "skipped"):
                    tri_row["lifted"] += 1
                else:
                    codes = sorted({refusal_reason(d) for d in k.get("diagnostics", []) if d["severity"] == "error"})
                    tri_row["refusals"].update(codes or ["(no error diagnostic)"])
    spec_row["holes"] = dict(spec_row["holes"].most_common())
    tri_row["status"] = dict(tri_row["status"])
    tri_row["refusals"] = dict(tri_row["refusals"].most_common())
    return {"spec": spec_row, "triton": tri_row, "kernels": kernels, "seconds": seconds}, found


def hole_kind(hint: str) -> str:
    """A spec hole's hint reduced to its cause, without names."""
    for pat, kind in ((r"no definition of", "type not defined in the code read"),
                      (r"template type parameter .* used as a class", "template class parameter"),
                      (r"template type parameter .* is deduced from", "template type deduced as no number"),
                      (r"template value parameter", "template value parameter"),
                      (r"cannot fuzz the values", "values not fuzzable"),
                      (r"cannot fuzz (parameter )?'", "parameter type not fuzzable"),
                      (r"cannot infer the length", "buffer length"),
                      (r"cannot infer", "other inference")):
        if re.search(pat, hint):
            return kind
    return hint[:60]


def refusal_reason(diag: dict) -> str:
    first = diag["message"].splitlines()[0]
    first = re.sub(r"'[^']*'", "'…'", first)
    return f"{diag['code']}: {first[:90]}"


# --- driver -------------------------------------------------------------------------------------------------------

def sweep(name: str, version: str, sha: str, args: argparse.Namespace) -> tuple[dict, list[dict]]:
    tarball = fetch(name, version, sha)
    base = CACHE / f"{name}-{version}"
    src = base / "src"
    row: dict = {"package": name, "version": version, "extract": extract(tarball, src)}
    if not row["extract"]["files"]:
        row["note"] = "no CUDA files in the sdist"
        return row, []
    files = sorted(str(p.relative_to(src)) for p in src.rglob("*") if p.is_file())
    cuda_files = [f for f in files if Path(f).suffix in CUDA_EXTS]
    for d in ("xlate", "hipify", "triton"):
        shutil.rmtree(base / d, ignore_errors=True)
    includes = row["extract"]["include_dirs"]
    row["migrate"], found = run_migrate(src, base / "xlate", includes)
    row["hipify"] = run_hipify(src, base / "hipify", files)
    row["compare"], f2 = compare(src, base / "xlate", base / "hipify", files, row["migrate"]["outputs"])
    row["checks"], f3 = kernel_file_checks(src, base, cuda_files, args.jobs)
    if args.build:
        outs = row["migrate"]["outputs"]
        srcs = [f for f in cuda_files if f.endswith(".cu")]
        row["build"] = {"xlate": syntax_check(base / "xlate", [outs.get(f) or f for f in srcs], includes),
                        "hipify": syntax_check(base / "hipify", srcs, includes)}
    findings = [{**x, "package": name} for x in found + f2 + f3]
    return row, findings


def markdown(doc: dict) -> str:
    lines = ["# Held-out sweep (PyPI CUDA extensions, CPU)", "",
             f"xlate {doc['xlate_rev']}; {doc['date']}; hipify-perl from ../shared/tools. "
             "Generated by `bench/heldout_sweep.py`.", "",
             "| package | files (.cu/.cuh) | kernels | migrate rc | files translated x/h | CUDA names left x/h "
             "| spec complete | Triton lifted | findings |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in doc["packages"]:
        if "migrate" not in r:
            lines.append(f"| {r['package']} {r['version']} | 0 | - | - | - | - | - | - | {r.get('note', '')} |")
            continue
        s = r["migrate"].get("summary", {})
        fbs = s.get("files_by_status", {})
        n_x = sum(v for k, v in fbs.items() if k in ("translated", "unverified", "verified", "unchanged"))
        nf = sum(1 for f in doc["findings"] if f["package"] == r["package"])
        c, sp, tr = r["compare"]["cuda_left"], r["checks"]["spec"], r["checks"]["triton"]
        lines.append(f"| {r['package']} {r['version']} | {r['extract']['files']} ({r['extract']['cuda_files']}) "
                     f"| {s.get('kernels')} | {r['migrate']['rc']} | {n_x}/{r['hipify']['translated']} "
                     f"| {c['xlate']}/{c['hipify']} | {sp['complete']}/{sp['kernels']} "
                     f"| {tr['lifted']}/{tr['kernels']} | {nf} |")
    t = doc["totals"]
    lines += ["", f"Totals: {t['files']} files, {t['kernels_spec']} kernels (spec), CUDA names left "
              f"xlate {t['cuda_left_xlate']} / hipify {t['cuda_left_hipify']}, spec complete "
              f"{t['spec_complete']}/{t['kernels_spec']}, Triton lifted {t['triton_lifted']}/{t['kernels_triton']}, "
              f"findings {len(doc['findings'])} ({', '.join(f'{k} {v}' for k, v in t['findings_by_kind'].items())}).",
              "", "## Findings", ""]
    for f in doc["findings"]:
        lines.append(f"- {f['package']} {f['what']} {f['kind']} {f.get('file', '')}: `{f['detail'][:200]}`")
    lines += ["", "## Spec holes by cause", ""]
    holes = Counter()
    refusals = Counter()
    for r in doc["packages"]:
        if "checks" in r:
            holes.update(r["checks"]["spec"]["holes"])
            refusals.update(r["checks"]["triton"]["refusals"])
    lines += [f"- {k}: {v}" for k, v in holes.most_common()]
    lines += ["", "## Triton refusals by reason", ""] + [f"- {k}: {v}" for k, v in refusals.most_common()]
    if any("build" in r for r in doc["packages"]):
        lines += ["", "## hipcc -fsyntax-only (gfx90a)", ""]
        for r in doc["packages"]:
            if "build" in r:
                lines.append(f"- {r['package']}: xlate {r['build']['xlate']['counts']}; "
                             f"hipify {r['build']['hipify']['counts']}")
    return "\n".join(lines) + "\n"


def totals(rows: list[dict], findings: list[dict]) -> dict:
    t = Counter()
    for r in rows:
        if "checks" not in r:
            continue
        t["files"] += r["extract"]["files"]
        t["cuda_left_xlate"] += r["compare"]["cuda_left"]["xlate"]
        t["cuda_left_hipify"] += r["compare"]["cuda_left"]["hipify"]
        t["kernels_spec"] += r["checks"]["spec"]["kernels"]
        t["spec_complete"] += r["checks"]["spec"]["complete"]
        t["kernels_triton"] += r["checks"]["triton"]["kernels"]
        t["triton_lifted"] += r["checks"]["triton"]["lifted"]
    return {**t, "findings_by_kind": dict(Counter(f["kind"] for f in findings).most_common())}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--packages", default="", help="comma-separated PyPI names (default: all pinned)")
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    ap.add_argument("--build", action="store_true", help="also hipcc -fsyntax-only each HIP source")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--xlate-src", default=str(ROOT), help="checkout whose xlate to run (default: this one)")
    args = ap.parse_args()
    XLATE_SRC[0] = Path(args.xlate_src).resolve()
    wanted = {p.strip() for p in args.packages.split(",") if p.strip()}
    if not HIPIFY.exists():
        raise SystemExit(f"hipify-perl not found at {HIPIFY}")
    rows, findings = [], []
    for name, version, sha in PACKAGES:
        if wanted and name not in wanted:
            continue
        print(f"{name} {version} ...", file=sys.stderr, flush=True)
        row, found = sweep(name, version, sha, args)
        rows.append(row)
        findings += found
    rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=XLATE_SRC[0], capture_output=True,
                         text=True).stdout or XLATE_SRC[0].name
    doc = {"schema": "xlate.heldout_sweep/1", "xlate_rev": rev.strip(), "date": time.strftime("%Y-%m-%d %H:%M UTC",
           time.gmtime()), "packages": rows, "findings": findings, "totals": totals(rows, findings)}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1) + "\n")
    out.with_suffix(".md").write_text(markdown(doc))
    print(markdown(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
