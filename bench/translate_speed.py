"""CUDA -> HIP translation speed: xlate's rule translator against regex renamers, on one generated corpus.

    python bench/translate_speed.py [--files 2000] [--mb 20] [--seed 0] [--out bench/results/translate_speed.json]

The corpus is built from examples/kernels/*.cu: each generated file concatenates corpus files until it reaches
its share of --mb, with every function, kernel and macro the pieces define renamed (suffix _g<i>_<j>) so no
two files are alike. Rows (same files, one process each):
  xlate port --no-verify  parse (KernelUnit) + CudaToHip + write the port, as `xlate port --no-verify` does
  xlate translate         CudaToHip alone (one extra tree-sitter parse inside, the model given)
  regex, one pass         one scan for identifier-shaped words, each looked up in the table: a plain fast renamer
  regex, per name         one \\bname\\b substitution per table entry, as hipify-perl does (on --naive-files
                          files only when that is fewer, and extrapolated; the row says so)
Plus a scaling check on single files of 0.25 to 2 MB: seconds per MB must not grow with the size.
The regex renamers do none of what xlate checks (strings, comments, members, masks, wavefront hazards).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def generate(out: Path, files: int, mb: float, seed: int) -> list[Path]:
    from xlate.parse import parse_file

    rng = random.Random(seed)
    sources = sorted((ROOT / "examples" / "kernels").glob("*.cu"))
    pieces = []
    for path in sources:
        unit = parse_file(path)
        names = {f.name for f in unit.functions} | {h.name for h in unit.host_functions} | {m.name for m in unit.macros}
        pieces.append((path.read_text(), re.compile(r"\b(" + "|".join(map(re.escape, sorted(names))) + r")\b") if names else None))
    per_file = mb * 1e6 / files
    paths = []
    for i in range(files):
        parts, size, j = [], 0, 0
        while size < per_file or not parts:
            text, rx = rng.choice(pieces)
            if rx is not None:
                text = rx.sub(lambda m, i=i, j=j: f"{m.group(1)}_g{i}_{j}", text)
            parts.append(text)
            size += len(text)
            j += 1
        p = out / f"gen_{i:05d}.cu"
        p.write_text("\n".join(parts))
        paths.append(p)
    return paths


def table_pairs() -> dict[str, str]:
    from xlate.translate.hip.tables import builtin_tables

    tables = builtin_tables("cuda->hip")
    out = {}
    for name in tables.names("identifier"):
        m = tables.lookup("identifier", name)
        if m is not None and m.target and m.target != name:
            out[name] = m.target
    return out


def run_xlate_port(paths: list[Path], outdir: Path) -> float:
    from xlate.parse import parse_file
    from xlate.translate.base import TranslateOptions
    from xlate.translate.hip import CudaToHip

    tr = CudaToHip()
    t0 = time.perf_counter()
    for p in paths:
        unit = parse_file(p)
        out = tr.translate(unit, unit.text, TranslateOptions(arch="gfx90a"))
        (outdir / (p.stem + ".hip")).write_text(out.text)
    return time.perf_counter() - t0


def run_xlate_translate(paths: list[Path]) -> float:
    from xlate.parse import parse_file
    from xlate.translate.base import TranslateOptions
    from xlate.translate.hip import CudaToHip

    units = [parse_file(p) for p in paths]
    tr = CudaToHip()
    t0 = time.perf_counter()
    for u in units:
        tr.translate(u, u.text, TranslateOptions(arch="gfx90a"))
    return time.perf_counter() - t0


def run_regex_one_pass(paths: list[Path], pairs: dict[str, str], outdir: Path) -> float:
    """Every identifier-shaped word looked up in the table: the fastest plain regex renamer (a Python
    alternation of thousands of names is far slower, the engine tries them one by one)."""
    t0 = time.perf_counter()
    rx = re.compile(r"\b[A-Za-z_]\w*")
    get = pairs.get
    for p in paths:
        text = rx.sub(lambda m: get(m.group(0), m.group(0)), p.read_text())
        (outdir / (p.stem + ".hip")).write_text(text)
    return time.perf_counter() - t0


def run_regex_per_name(paths: list[Path], pairs: dict[str, str], outdir: Path) -> float:
    t0 = time.perf_counter()
    subs = [(re.compile(r"\b" + re.escape(n) + r"\b"), t) for n, t in pairs.items()]
    for p in paths:
        text = p.read_text()
        for rx, target in subs:
            text = rx.sub(target, text)
        (outdir / (p.stem + ".hip")).write_text(text)
    return time.perf_counter() - t0


def scaling(seed: int) -> list[dict[str, float]]:
    from xlate.parse import parse_string
    from xlate.translate.base import TranslateOptions
    from xlate.translate.hip import CudaToHip

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for mb in (0.25, 0.5, 1.0, 2.0):
            (path,) = generate(Path(tmp), 1, mb, seed)
            text = path.read_text()
            unit = parse_string(text, path.name, "cuda", strict=False)
            t0 = time.perf_counter()
            CudaToHip().translate(unit, text, TranslateOptions(arch="gfx90a"))
            dt = time.perf_counter() - t0
            rows.append({"mb": round(len(text.encode()) / 1e6, 3), "seconds": round(dt, 3),
                         "s_per_mb": round(dt / (len(text.encode()) / 1e6), 3)})
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--mb", type=float, default=20.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--naive-files", type=int, default=200, help="files for the per-name regex row (it is slow)")
    ap.add_argument("--out", help="write the results as JSON here")
    args = ap.parse_args()

    pairs = table_pairs()
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "src", Path(tmp) / "out"
        src.mkdir()
        out.mkdir()
        t0 = time.perf_counter()
        paths = generate(src, args.files, args.mb, args.seed)
        total_mb = sum(p.stat().st_size for p in paths) / 1e6
        print(f"corpus: {len(paths)} files, {total_mb:.1f} MB (generated in {time.perf_counter() - t0:.1f}s); "
              f"{len(pairs)} table renames", file=sys.stderr)
        rows = []

        def row(tool: str, seconds: float, files: int, mb: float, note: str = "") -> None:
            rows.append({"tool": tool, "files": files, "mb": round(mb, 2), "seconds": round(seconds, 2),
                         "files_per_s": round(files / seconds, 3), "mb_per_s": round(mb / seconds, 4), "note": note})
            print(f"  {tool:24s} {seconds:8.2f}s  {files / seconds:8.2f} files/s  {mb / seconds:7.3f} MB/s  {note}",
                  file=sys.stderr)

        row("xlate port --no-verify", run_xlate_port(paths, out), len(paths), total_mb)
        row("xlate translate", run_xlate_translate(paths), len(paths), total_mb, "model given")
        row("regex, one pass", run_regex_one_pass(paths, pairs, out), len(paths), total_mb)
        sample = paths[: min(len(paths), args.naive_files)]
        sample_mb = sum(p.stat().st_size for p in sample) / 1e6
        dt = run_regex_per_name(sample, pairs, out)
        note = "" if len(sample) == len(paths) else f"measured on {len(sample)} files, {sample_mb:.1f} MB"
        row("regex, per name", dt, len(sample), sample_mb, note)
    scale = scaling(args.seed)
    print("scaling (one file): " + ", ".join(f"{r['mb']} MB {r['s_per_mb']} s/MB" for r in scale), file=sys.stderr)
    from xlate.translate.hip.tables import table_files

    result = {"schema": "xlate.bench.translate_speed/1", "files": args.files, "mb": args.mb, "seed": args.seed,
              "table_renames": len(pairs), "tables": [str(p) for p in table_files()],
              "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
              "rows": rows, "scaling": scale}
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
