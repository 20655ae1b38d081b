"""Real CUDA programs to HIP: xlate migrate beside hipify-perl, judged by whether the translated tree builds.

    python bench/realworld_hip.py [--corpus ../shared/corpora/hecbench] [--programs 'a*,b-c'] [-j 2]
                                  [--tools xlate,hipify] [--out bench/results/realworld_hip_cpu.json] [--keep DIR]

For every program X of a HeCBench-layout corpus (src/X-cuda: the CUDA original, src/X-hip: the HIP port people
wrote) the human port is built first (cached by file hashes in --human-cache: it is slow and rarely changes). For
each program whose human port builds here, the CUDA tree is translated
  xlate    `xlate migrate X-cuda --to hip -o OUT --no-verify --fresh` (the tree as migrate writes it)
  hipify   `perl hipify-perl -quiet-warnings -o=OUT/f f` once per C-family file, other files copied;
           names are kept (a .cu stays .cu; hipcc compiles .cu and .cpp as HIP)
and both trees are built the same way (bench/hecbench_build.py): the CUDA Makefile's compile and link commands
(`make -n -B`), each unit compiled by `HIP_PLATFORM=amd hipcc --offload-arch=gfx90a -c` with the Makefile's
-I/-D/-std/-O flags, sources renamed by the tool's own output names (xlate's report; hipify keeps them), objects
linked as the Makefile links them, CUDA libraries replaced by their HIP names. Tool Makefiles are not used: one
recipe for both trees. Sibling folders a Makefile reaches (../Y-cuda) are copied untranslated for every tree.
Translations run one at a time (their times are comparable); builds run -j at once. The corpus is only read.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import platform
import re
import shutil
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hecbench_build as hb
import xlate_rev

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpora" / "hecbench"
DEFAULT_HIPIFY = ROOT.parent / "shared" / "tools" / "hipify-perl"
DEFAULT_OUT = ROOT / "bench" / "results" / "realworld_hip_cpu.json"
DEFAULT_HUMAN_CACHE = ROOT / "bench" / "results" / "realworld_hip_human_builds.json"
C_FAMILY = hb.SOURCE_EXTS | {".h", ".hpp", ".hh", ".hxx", ".cuh", ".inl", ".inc", ".tpp"}
# what a reader of the translated tree still sees of CUDA's APIs (hipify-perl's own warning uses the first form)
CUDA_NAME = re.compile(r"\b(cuda[A-Z]\w*|cu(blas|blasLt|sparse|solver|rand|fft|dnn)[A-Z]\w*|CU(BLAS|SPARSE|RAND|FFT)_\w+)")
TOOLS = ("xlate", "hipify")


# --- corpus -------------------------------------------------------------------------------------------------------

def programs(corpus: Path, patterns: list[str]) -> list[str]:
    src = corpus / "src"
    names = sorted(p.name[:-4] for p in src.glob("*-hip") if (src / (p.name[:-4] + "-cuda")).is_dir())
    if patterns:
        names = [n for n in names if any(fnmatch.fnmatch(n, pat) for pat in patterns)]
    return names


def stage(corpus: Path, folder: str, dest_src: Path, also: list[str] = ()) -> Path:
    """Copy src/folder and the sibling folders its Makefile reaches (plus `also`) into dest_src."""
    src = corpus / "src"
    for name in {folder, *also, *hb.sibling_refs(src / folder / "Makefile", src)}:
        hb.copy_tree(src / name, dest_src / name)
    return dest_src / folder


def c_family_files(tree: Path) -> list[str]:
    return sorted(str(p.relative_to(tree)) for p in tree.rglob("*") if p.is_file() and p.suffix in C_FAMILY)


def cuda_names_left(tree: Path, files: list[str]) -> int:
    n = 0
    for f in files:
        p = tree / f
        if p.is_file():
            n += len(CUDA_NAME.findall(p.read_text(errors="replace")))
    return n


# --- the human port -----------------------------------------------------------------------------------------------

class HumanCache:
    def __init__(self, path: Path, hipcc: str):
        self.path, self.hipcc, self.lock = path, hipcc, threading.Lock()
        self.data = json.loads(path.read_text()) if path.exists() else {}
        if self.data.get("hipcc") != hipcc or self.data.get("build_version") != hb.BUILD_VERSION:
            self.data = {"hipcc": hipcc, "build_version": hb.BUILD_VERSION, "programs": {}}

    def get(self, name: str, key: str) -> dict | None:
        hit = self.data["programs"].get(name)
        return hit if hit and hit.get("key") == key else None

    def put(self, name: str, entry: dict) -> None:
        with self.lock:
            self.data["programs"][name] = entry
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(self.data, indent=1, sort_keys=True) + "\n")
            tmp.replace(self.path)


def human_build(corpus: Path, name: str, work: Path, cache: HumanCache, timeout: float) -> dict:
    src = corpus / "src"
    hip, cuda = f"{name}-hip", f"{name}-cuda"
    dirs = [src / d for d in sorted({hip, cuda, *hb.sibling_refs(src / hip / "Makefile", src)})]
    key = hb.tree_hash(dirs)
    hit = cache.get(name, key)
    if hit:
        return {**hit, "cached": True}
    tree = stage(corpus, hip, work / "human" / name / "src", also=[cuda])
    recipe = hb.recipe_for(tree, cuda_libs=False)
    res = hb.build(tree, recipe, work / "human" / name / "build", timeout=timeout)
    entry = {"key": key, "built": res.built, "first_error": res.first_error, "units": len(recipe.units),
             "seconds": res.seconds}
    cache.put(name, entry)
    return {**entry, "cached": False}


# --- the tools ----------------------------------------------------------------------------------------------------

def run_xlate(cuda_tree: Path, out: Path, meta: Path, timeout: float, env: dict[str, str]) -> dict:
    meta.mkdir(parents=True, exist_ok=True)
    argv = [*xlate_rev.command(), "migrate", str(cuda_tree), "--to", "hip", "-o", str(out), "--no-verify", "--fresh",
            "--no-progress", "--report", str(meta / "report"), "--cache", str(meta / "migrate.sqlite")]
    rc, output, sec = hb.run_cmd(argv, meta, timeout, env)
    (meta / "migrate.log").write_text(output)
    report_path = meta / "report" / "report.json"
    files = c_family_files(cuda_tree)
    row = {"exit_code": rc, "seconds": round(sec, 2), "files": len(files), "translated": 0, "diagnostics": 0,
           "diagnostic_codes": {}, "not_written": [], "source_map": {}, "error": None}
    if not report_path.exists():
        row["error"] = hb.first_error(output) or f"exit {rc}, no report"
        return row
    report = json.loads(report_path.read_text())
    codes: Counter[str] = Counter()
    for f in report.get("files", []):
        diags = list(f.get("diagnostics") or [])
        for k in f.get("kernels") or []:
            diags += k.get("diagnostics") or []
        if f.get("error"):
            diags.append(f["error"])
        codes.update(str(d.get("code") or d.get("kind") or "?") for d in diags if isinstance(d, dict))
        if f.get("written") and f.get("output"):
            row["source_map"][os.path.normpath(f["path"])] = f["output"]
            row["translated"] += Path(f["path"]).suffix in C_FAMILY  # build files and the like are not counted
        else:
            row["not_written"].append({"path": f.get("path"), "status": f.get("status"),
                                       "reason": refusal(f.get("message") or "")})
    row["diagnostics"] = sum(codes.values())
    row["diagnostic_codes"] = dict(codes.most_common())
    written = {o for p, o in row["source_map"].items() if Path(p).suffix in C_FAMILY}
    row["cuda_names_left"] = cuda_names_left(out, sorted(written))
    # C-family files the report does not mention and the tool did not write under their own name
    reported = {os.path.normpath(f.get("path") or "") for f in report.get("files", [])}
    for f in files:
        if os.path.normpath(f) not in reported and not (out / f).is_file():
            row["not_written"].append({"path": f, "status": "ignored", "reason": f"{f}: not in the tool's report"})
    return row


def run_hipify(cuda_tree: Path, out: Path, hipify: Path, timeout: float) -> dict:
    """hipify-perl once per C-family file (what its users script), every other file copied; names kept."""
    files = c_family_files(cuda_tree)
    hb.copy_tree(cuda_tree, out)
    seconds, translated, warnings, errors = 0.0, 0, 0, []
    for f in files:
        rc, output, sec = hb.run_cmd(["perl", str(hipify), "-quiet-warnings", f"-o={out / f}", str(cuda_tree / f)],
                                     cuda_tree, timeout)
        seconds += sec
        warnings += sum(1 for ln in output.splitlines() if "warning" in ln)
        if rc == 0:
            translated += 1
        else:
            errors.append(f"{f}: {hb.first_error(output)}")
    return {"exit_code": 0 if not errors else 1, "seconds": round(seconds, 2), "files": len(files),
            "translated": translated, "diagnostics": warnings, "error": errors[0] if errors else None,
            "source_map": {}, "cuda_names_left": cuda_names_left(out, files)}


# --- failure causes -----------------------------------------------------------------------------------------------

def refusal(message: str) -> str:
    """The first located error of a tool's 'not written' message (file:line:col: error: ...)."""
    m = re.search(r"\S+:\d+:\d+: (fatal )?error: .*?(?=; \S+:\d+:\d+: |$)", message)
    return (m.group(0) if m else message)[:300]


def quoted(text: str) -> str:
    if text.startswith("#"):
        word = text.split()[0]
        return word + (" …" if text != word else "")
    return "…" if re.search(r"\w", text) else text


def cause(error: str | None) -> str:
    """An error line without its location and names: errors with one cause group together."""
    if not error:
        return "(none)"
    msg = re.sub(r"^\S+?:\d+(:\d+)?:\s*", "", error)
    msg = re.sub(r"^(fatal )?error:\s*", "", msg)
    if re.match(r"'[^']+' file not found", msg):  # the missing header is the cause
        return msg.strip()[:160]
    # names vary, punctuation and directives do not: "missing ';'" and "near '#ifdef …'" keep what they say
    msg = re.sub(r"'([^']*)'", lambda m: f"'{quoted(m.group(1))}'", msg)
    msg = re.sub(r"\"[^\"]*\"", "\"…\"", msg)
    msg = re.sub(r"not translated: [^()]*\(", "not translated: … (", msg)  # kernel names
    msg = re.sub(r"(?<![\w-])\d+\b", "N", msg)
    if msg.endswith("not in the translated tree"):
        return "source file not written by the tool"
    if msg.endswith("not in the tool's report"):
        return f"*{os.path.splitext(error.split(':')[0])[1]} files ignored by the tool"
    return msg.strip()[:160]


def root_cause(row: dict) -> str | None:
    """Why a tool's tree did not build: a file the tool did not write comes first (the compile errors it causes
    downstream, such as a renamed #include that is not there, are its consequences), then the first error."""
    if row.get("built") is not False:
        return None
    if row.get("error"):
        return f"tool failed (exit {row.get('exit_code')}): {row['error']}"
    by_path = {os.path.normpath(n["path"]): n for n in row.get("not_written") or []}
    missing = [s.split(" ", 1)[1] for s in row.get("failed_steps") or [] if s.startswith("missing ")]
    hit = next((by_path[m] for m in missing if m in by_path), None)
    m = re.search(r"'([^']+)' file not found", row.get("first_error") or "")
    if hit is None and m:  # an include renamed to a file the tool did not write (x.h -> x.hip.h)
        stem = os.path.basename(m.group(1)).split(".")[0]
        hit = next((n for p, n in by_path.items() if os.path.basename(p).split(".")[0] == stem), None)
    if hit is not None:
        return f"not written ({hit['status']}): {hit['reason']}"
    return row.get("first_error")


def group_failures(rows: list[dict], tool: str) -> list[dict]:
    groups: dict[str, list[str]] = defaultdict(list)
    for r in rows:
        t = r.get(tool)
        if t and t.get("built") is False:
            why = t.get("root_cause") or t.get("first_error")
            prefix = next((p for p in ("not written", "tool failed") if why and why.startswith(p)), "")
            key = f"{prefix}: {cause(why.split('): ', 1)[1])}" if prefix else cause(why)
            if comparable(r):
                groups[key].append(f"{r['program']}: {why}")
    return [{"cause": c, "count": len(ex), "examples": ex[:3]}
            for c, ex in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))]


# --- the run ------------------------------------------------------------------------------------------------------

def translate_and_build(corpus: Path, names: list[str], work: Path, tools: list[str], hipify: Path, jobs: int,
                        timeout: float, translate_timeout: float, xlate_env: dict[str, str]) -> list[dict]:
    rows = {n: {"program": n} for n in names}
    recipes: dict[str, hb.Recipe] = {}
    for i, name in enumerate(names, 1):  # translations one at a time: their times are comparable
        cuda = f"{name}-cuda"
        orig = stage(corpus, cuda, work / "orig" / name / "src")
        recipes[name] = hb.recipe_for(orig, cuda_libs=True)
        rows[name]["cuda_recipe_error"] = recipes[name].error  # no recipe: neither tool can be judged
        for tool in tools:
            src_dir = stage(corpus, cuda, work / tool / name / "src")  # siblings and layout
            out = src_dir  # the translated tree replaces the CUDA folder: only the tool's output is there
            shutil.rmtree(out)
            if tool == "xlate":
                rows[name][tool] = run_xlate(orig, out, work / "meta" / name, translate_timeout, xlate_env)
            else:
                rows[name][tool] = run_hipify(orig, out, hipify, translate_timeout)
        print(f"  translated {i}/{len(names)} {name}", file=sys.stderr, flush=True)

    def build_one(item: tuple[str, str]) -> None:
        name, tool = item
        tree = work / tool / name / "src" / f"{name}-cuda"
        res = hb.build(tree, recipes[name], work / tool / name / "build", rows[name][tool].pop("source_map"), timeout)
        rows[name][tool].update(built=res.built, first_error=res.first_error, build_seconds=res.seconds,
                                failed_steps=[s.what for s in res.steps if not s.ok])
        rows[name][tool]["root_cause"] = root_cause(rows[name][tool])
        print(f"  built {tool} {name}: {'yes' if res.built else 'no'}", file=sys.stderr, flush=True)

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(build_one, [(n, t) for n in names for t in tools]))
    return [rows[n] for n in names]


def comparable(row: dict) -> bool:
    """The CUDA Makefile gives a recipe (a program whose CUDA folder has no Makefile cannot be built the same way
    for both tools: it is listed, not counted)."""
    err = row.get("cuda_recipe_error")
    if "cuda_recipe_error" not in row:  # results written before the field existed
        err = next((row[t].get("first_error") for t in TOOLS if t in row and (row[t].get("first_error") or "").startswith("recipe:")), None)
    return not err


def totals(human: dict[str, dict], rows: list[dict], tools: list[str]) -> dict:
    t: dict = {"programs": len(human), "human_port_builds": sum(1 for h in human.values() if h["built"]),
               "comparable": sum(1 for r in rows if comparable(r)),
               "not_comparable": [r["program"] for r in rows if not comparable(r)]}
    for tool in tools:
        rs = [r[tool] for r in rows if tool in r and comparable(r)]
        t[tool] = {"built": sum(1 for r in rs if r.get("built")), "files": sum(r["files"] for r in rs),
                   "translated": sum(r["translated"] for r in rs), "diagnostics": sum(r["diagnostics"] for r in rs),
                   "seconds": round(sum(r["seconds"] for r in rs), 2),
                   "cuda_names_left": sum(r.get("cuda_names_left", 0) for r in rs)}
    return t


def yes(v: bool | None) -> str:
    return "yes" if v else "no" if v is not None else "-"


def table(doc: dict) -> str:
    tools = doc["meta"]["tools"]
    head = ["program", *[f"{t} {c}" for c in ("built", "files", "diags", "s") for t in tools]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in doc["programs"]:
        cells = [r["program"]]
        for c in ("built", "files", "diagnostics", "seconds"):
            for t in tools:
                v = r.get(t, {})
                cells.append(yes(v.get("built")) if c == "built" else
                             f"{v.get('translated')}/{v.get('files')}" if c == "files" else str(v.get(c, "-")))
        lines.append("| " + " | ".join(cells) + " |")
    tt = doc["totals"]
    cells = [f"**total** ({tt['comparable']} programs)"]
    for c in ("built", "files", "diagnostics", "seconds"):
        for t in tools:
            v = tt[t]
            cells.append(f"**{v['built']}**" if c == "built" else f"{v['translated']}/{v['files']}" if c == "files"
                         else str(v[c]))
    lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def markdown(doc: dict) -> str:
    m, tt = doc["meta"], doc["totals"]
    out = [f"# CUDA → HIP on real programs ({m['corpus_name']}, hipcc {m['hipcc']}, {m['offload_arch']})", "",
           f"`{m['command']}` on {m['date']}; xlate {m['xlate_commit']}. {tt['programs']} programs, "
           f"{tt['human_port_builds']} human HIP ports build here"
           + (f" ({', '.join(tt['not_comparable'])}: no CUDA Makefile, not counted)" if tt["not_comparable"] else "")
           + f"; on those {tt['comparable']}:", ""]
    for t in m["tools"]:
        out.append(f"- {t}: **{tt[t]['built']} / {tt['comparable']}** built, "
                   f"{tt[t]['translated']} / {tt[t]['files']} files written, {tt[t]['diagnostics']} diagnostics, "
                   f"{tt[t]['seconds']} s translating, {tt[t]['cuda_names_left']} CUDA API names left")
    out += ["", table(doc), ""]
    for t in m["tools"]:
        out += [f"## {t}: failures grouped by cause (first error of each failing program)", ""]
        for g in doc["failure_groups"][t]:
            out.append(f"- **{g['count']}** × `{g['cause']}`")
            out += [f"  - {e}" for e in g["examples"]]
        out.append("")
    out += ["## Human ports that do not build here (not counted)", ""]
    for g in doc["failure_groups"]["human"]:
        out.append(f"- **{g['count']}** × `{g['cause']}` (e.g. {g['examples'][0]})")
    return "\n".join(out) + "\n"


def print_report(doc: dict) -> None:
    print(table(doc).replace("**", ""))
    for t in doc["meta"]["tools"]:
        print(f"\n{t}: first error per failing program (root cause first where it differs)")
        for r in doc["programs"]:
            v = r.get(t, {})
            if v.get("built") is False:
                extra = f"   [build: {v.get('first_error')}]" if v.get("root_cause") != v.get("first_error") else ""
                print(f"  {r['program']}: {v.get('root_cause')}{extra}")
        print(f"{t}: failures by cause")
        for g in doc["failure_groups"][t]:
            print(f"  {g['count']:>3} × {g['cause']}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--programs", default="", help="comma-separated names or globs (default: all)")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="builds at once")
    ap.add_argument("--tools", default=",".join(TOOLS), help="xlate,hipify (either or both; none: human ports only)")
    ap.add_argument("--hipify", type=Path, default=DEFAULT_HIPIFY)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="JSON results; the .md table is written beside it")
    ap.add_argument("--human-cache", type=Path, default=DEFAULT_HUMAN_CACHE)
    ap.add_argument("--timeout", type=float, default=300, help="seconds per compile or link command")
    ap.add_argument("--translate-timeout", type=float, default=600, help="seconds per tool run on one program")
    ap.add_argument("--keep", type=Path, help="work here (kept: translated trees, logs) instead of a temp folder")
    ap.add_argument("--xlate-rev", help="run xlate as committed at this git revision (default: the working tree)")
    ap.add_argument("--update", action="store_true",
                    help="keep --out's rows of the programs not run now (same xlate revision and tools)")
    ap.add_argument("--render", type=Path, help="recompute totals, causes and the table of this results JSON only")
    args = ap.parse_args(argv)
    if args.render:
        doc = json.loads(args.render.read_text())
        write(doc, args.render)
        return 0
    tools = [t for t in args.tools.split(",") if t and t != "none"]
    if bad := [t for t in tools if t not in TOOLS]:
        ap.error(f"unknown tool(s) {bad}; choose from {TOOLS}")
    if not (args.corpus / "src").is_dir():
        ap.error(f"{args.corpus}: no src/ folder (a HeCBench-layout corpus)")
    names = programs(args.corpus, [p for p in args.programs.split(",") if p])
    hipcc = hb.hipcc_version()
    cache = HumanCache(args.human_cache, hipcc)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="xlate-realworld-") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        xlate_env, xlate_commit = xlate_rev.environment(args.xlate_rev, Path(tmp) / "xlate-src")
        print(f"building {len(names)} human HIP ports (-j {args.jobs}; cache {args.human_cache})", file=sys.stderr)
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            human = dict(zip(names, pool.map(lambda n: human_build(args.corpus, n, work, cache, args.timeout), names)))
        ok = [n for n in names if human[n]["built"]]
        print(f"{len(ok)} of {len(names)} human ports build; translating with {', '.join(tools)}", file=sys.stderr)
        rows = translate_and_build(args.corpus, ok, work, tools, args.hipify, args.jobs, args.timeout,
                                   args.translate_timeout, xlate_env)
    human_rows = [{"program": n, "human": {"built": h["built"], "first_error": h["first_error"]}}
                  for n, h in human.items()]
    commit = (args.corpus / "COMMIT").read_text().strip() if (args.corpus / "COMMIT").exists() else None
    doc = {
        "meta": {"command": "python bench/realworld_hip.py " + " ".join(argv if argv is not None else sys.argv[1:]),
                 "date": time.strftime("%Y-%m-%d %H:%M"), "corpus_name": args.corpus.name, "corpus_commit": commit,
                 "hipcc": hipcc, "offload_arch": "gfx90a", "tools": tools, "xlate_commit": xlate_commit,
                 "jobs": args.jobs, "cpus": os.cpu_count(), "machine": platform.machine(),
                 "seconds": round(time.perf_counter() - t0, 1),
                 "policy": "one recipe per program from the CUDA Makefile (make -n -B) for both tools' trees; the "
                           "human port from its own Makefile; hipcc --offload-arch=gfx90a -c per unit; names as "
                           "each tool writes them (hipify-perl keeps them, .cu compiled as HIP by hipcc)"},
        "programs": rows,
        "human": human_rows,
    }
    if args.update and args.out.exists():
        doc = merged(json.loads(args.out.read_text()), doc)
    write(doc, args.out)
    return 0


def merged(old: dict, new: dict) -> dict:
    """new's programs replace old's rows of the same name; the rest of old stays (same xlate and tools only)."""
    for k in ("xlate_commit", "tools", "hipcc"):
        if old["meta"].get(k) != new["meta"].get(k):
            raise SystemExit(f"--update: {k} differs ({old['meta'].get(k)} vs {new['meta'].get(k)}): rerun all")
    for key in ("programs", "human"):
        rows = {r["program"]: r for r in old[key]}
        rows.update({r["program"]: r for r in new[key]})
        new[key] = [rows[n] for n in sorted(rows)]
    new["meta"]["updates"] = [*old["meta"].get("updates", []), new["meta"]["command"]]
    new["meta"]["command"] = old["meta"]["command"]
    return new


def write(doc: dict, out: Path) -> None:
    """Totals and failure causes from the rows, then the JSON, the markdown table and the printed report."""
    tools = doc["meta"]["tools"]
    human = {h["program"]: h["human"] for h in doc["human"]}
    doc["totals"] = totals(human, doc["programs"], tools)
    doc["failure_groups"] = {**{t: group_failures(doc["programs"], t) for t in tools},
                             "human": group_failures(doc["human"], "human")}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1) + "\n")
    out.with_suffix(".md").write_text(markdown(doc))
    print_report(doc)
    print(f"\nwrote {out} and {out.with_suffix('.md')}", file=sys.stderr)


if __name__ == "__main__":
    raise SystemExit(main())
