"""CUDA -> HIP translation speed beside hipify-perl, in one run: a 100-file tree of real CUDA files, and one
generated file of N small kernels (is the time linear in the file's size?).

    python bench/hip_scale.py [--corpus ../shared/corpora/hecbench] [--files 100] [--repeat 3] [-j 2]
                              [--sizes 1000,5000,10000,25000,50000] [--timeout 600] [--skip tree|kernels]
                              [--out bench/results/hip_scale_cpu.json]

Tree: the C-family files (.cu .cuh .h .hpp .cpp ...) of the corpus's CUDA programs, whole programs in name order
until --files files, copied into a temporary tree (program folders kept). Rows, each run --repeat times
interleaved, median reported:
  xlate migrate   `xlate migrate TREE --to hip -o OUT --no-verify --fresh -j J` (one process, its own workers)
  hipify-perl     `perl hipify-perl -quiet-warnings -o=OUT/f f` once per file, one after the other (a shell loop)
  hipify-perl -j  the same, J files at once (what xargs -P J gives a user)
Kernels: one file of N generated kernels (a few shapes of small elementwise, shared-memory, atomic and warp
kernels, each renamed), `xlate port F --to hip --no-verify -o OUT` and `perl hipify-perl -quiet-warnings`; each
run has --timeout seconds, and a tool that times out at one size is not run at larger ones. Linear time shows as a
constant time per kernel.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hecbench_build as hb
import xlate_rev

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpora" / "hecbench"
DEFAULT_HIPIFY = ROOT.parent / "shared" / "tools" / "hipify-perl"
C_FAMILY = {".cu", ".cuh", ".h", ".hpp", ".cpp", ".cc", ".cxx", ".c", ".inl"}

# Small kernels in a few shapes (written for this bench); {i} makes every name unique.
KERNEL_SHAPES = [
    """__global__ void scale_{i}(float* __restrict__ out, const float* __restrict__ in, float a, int n) {{
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n) out[t] = a * in[t] + __expf(in[t]);
}}
""",
    """__global__ void block_sum_{i}(const float* in, float* out, int n) {{
  __shared__ float buf[256];
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  buf[threadIdx.x] = t < n ? in[t] : 0.0f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {{
    if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s];
    __syncthreads();
  }}
  if (threadIdx.x == 0) atomicAdd(out, buf[0]);
}}
""",
    """__global__ void warp_max_{i}(const int* in, int* out, int n) {{
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int v = t < n ? in[t] : 0;
  for (int o = 16; o > 0; o >>= 1) v = max(v, __shfl_down_sync(0xffffffff, v, o));
  if ((threadIdx.x & 31) == 0) atomicMax(out, v);
}}
""",
    """__global__ void saxpy_grid_{i}(int n, double a, const double* x, double* y) {{
  for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < n; k += blockDim.x * gridDim.x) y[k] = a * x[k] + y[k];
}}
""",
]


def kernel_file(path: Path, n: int) -> int:
    parts = ["#include <cuda_runtime.h>\n\n"]
    parts += [KERNEL_SHAPES[i % len(KERNEL_SHAPES)].format(i=i) for i in range(n)]
    text = "\n".join(parts)
    path.write_text(text)
    return len(text.encode())


def tree_of(corpus: Path, files: int, dest: Path) -> list[str]:
    """Whole CUDA programs in name order until `files` C-family files; the last program may be cut."""
    picked: list[str] = []
    for prog in sorted((corpus / "src").glob("*-cuda")):
        for p in sorted(prog.rglob("*")):
            if p.is_file() and p.suffix in C_FAMILY and len(picked) < files:
                rel = str(p.relative_to(corpus / "src"))
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                (dest / rel).write_bytes(p.read_bytes())
                picked.append(rel)
        if len(picked) >= files:
            break
    return picked


def hipify_files(hipify: Path, tree: Path, out: Path, files: list[str], jobs: int, timeout: float) -> tuple[float, int]:
    """Wall seconds for hipify-perl once per file (jobs at a time); returns (seconds, failures)."""
    for f in files:
        (out / f).parent.mkdir(parents=True, exist_ok=True)

    def one(f: str) -> int:
        return hb.run_cmd(["perl", str(hipify), "-quiet-warnings", f"-o={out / f}", str(tree / f)], tree, timeout)[0]

    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        rcs = list(pool.map(one, files))
    return time.perf_counter() - t0, sum(1 for rc in rcs if rc != 0)


def bench_tree(corpus: Path, hipify: Path, n_files: int, repeat: int, jobs: int, timeout: float, tmp: Path,
               env: dict[str, str]) -> dict:
    tree = tmp / "tree"
    files = tree_of(corpus, n_files, tree)
    size = sum((tree / f).stat().st_size for f in files)
    runs: dict[str, list[float]] = {"xlate migrate": [], "hipify-perl": [], f"hipify-perl -j {jobs}": []}
    notes: dict[str, object] = {}
    for r in range(repeat):
        out = tmp / f"xlate{r}"
        rc, output, sec = hb.run_cmd([*xlate_rev.command(), "migrate", str(tree), "--to", "hip", "-o", str(out), "--no-verify",
                                      "--fresh", "--no-progress", "-j", str(jobs)], tmp, timeout, env)
        runs["xlate migrate"].append(sec)
        report = out / "xlate-report" / "report.json"
        if report.exists():
            s = json.loads(report.read_text())["summary"]
            notes["xlate"] = {"exit_code": rc, "files": s.get("files"), "written": s.get("written"),
                              "files_by_status": s.get("files_by_status")}
        else:
            notes["xlate"] = {"exit_code": rc, "error": hb.first_error(output)}
        sec, fails = hipify_files(hipify, tree, tmp / f"hipify{r}", files, 1, timeout)
        runs["hipify-perl"].append(sec)
        sec, fails_j = hipify_files(hipify, tree, tmp / f"hipifyj{r}", files, jobs, timeout)
        runs[f"hipify-perl -j {jobs}"].append(sec)
        notes["hipify"] = {"failures": fails, "failures_parallel": fails_j}
    rows = [{"tool": k, "median_s": round(statistics.median(v), 2), "runs_s": [round(x, 2) for x in v],
             "files_per_s": round(len(files) / statistics.median(v), 1)} for k, v in runs.items()]
    return {"files": len(files), "bytes": size, "programs": len({f.split("/")[0] for f in files}), "rows": rows,
            "outcome": notes, "first_files": files[:5]}


def bench_kernels(hipify: Path, sizes: list[int], timeout: float, tmp: Path, env: dict[str, str]) -> list[dict]:
    rows: list[dict] = []
    dead: set[str] = set()
    for n in sizes:
        src = tmp / f"k{n}.cu"
        nbytes = kernel_file(src, n)
        row: dict = {"kernels": n, "bytes": nbytes}
        cmds = {"xlate port": [*xlate_rev.command(), "port", str(src), "--to", "hip", "--no-verify", "-o", str(tmp / f"k{n}.hip")],
                "hipify-perl": ["perl", str(hipify), "-quiet-warnings", f"-o={tmp / f'k{n}.hipify.cu'}", str(src)]}
        for tool, argv in cmds.items():
            if tool in dead:
                row[tool] = {"skipped": f"timed out at a smaller size (> {timeout:.0f} s)"}
                continue
            rc, output, sec = hb.run_cmd(argv, tmp, timeout, env)
            written = Path(argv[argv.index("-o") + 1] if "-o" in argv else argv[-2][3:]).exists()
            if rc == 124:
                dead.add(tool)
                row[tool] = {"timed_out": True, "seconds": f"> {timeout:.0f}"}
            else:
                row[tool] = {"exit_code": rc, "seconds": round(sec, 2), "us_per_kernel": round(sec / n * 1e6, 1)}
                prev = next((r[tool] for r in reversed(rows) if "seconds" in r[tool]
                             and not isinstance(r[tool]["seconds"], str)), None)
                if prev is not None:  # time per extra kernel since the previous size: constant when linear
                    row[tool]["marginal_us_per_kernel"] = round(
                        (sec - prev["seconds"]) / (n - next(r["kernels"] for r in rows if r[tool] is prev)) * 1e6, 1)
                if rc not in (0, 3) or not written:
                    row[tool]["error"] = hb.first_error(output) or "no output written"
        rows.append(row)
        print(f"  {n} kernels: " + ", ".join(f"{t} {row[t].get('seconds', row[t].get('skipped'))}" for t in cmds),
              file=sys.stderr, flush=True)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--hipify", type=Path, default=DEFAULT_HIPIFY)
    ap.add_argument("--files", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--sizes", default="1000,5000,10000,25000,50000", help="kernels per generated file")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per tool run")
    ap.add_argument("--skip", choices=["tree", "kernels"], help="leave one of the two benches out")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "hip_scale_cpu.json")
    ap.add_argument("--xlate-rev", help="run xlate as committed at this git revision (default: the working tree)")
    args = ap.parse_args()
    doc: dict = {"meta": {"command": "python bench/hip_scale.py " + " ".join(sys.argv[1:]),
                          "date": time.strftime("%Y-%m-%d %H:%M"), "cpus": os.cpu_count(),
                          "machine": platform.machine(), "python": platform.python_version()}}
    with tempfile.TemporaryDirectory(prefix="xlate-hip-scale-") as tmp:
        env, doc["meta"]["xlate_commit"] = xlate_rev.environment(args.xlate_rev, Path(tmp) / "xlate-src")
        if args.skip != "tree":
            if not (args.corpus / "src").is_dir():
                ap.error(f"{args.corpus}: no src/ folder")
            doc["tree"] = t = bench_tree(args.corpus, args.hipify, args.files, args.repeat, args.jobs, args.timeout,
                                         Path(tmp), env)
            print(f"{t['files']} files ({t['bytes'] / 1e6:.2f} MB, {t['programs']} programs), median of {args.repeat}:")
            for r in t["rows"]:
                print(f"  {r['tool']:<18} {r['median_s']:>8.2f} s  {r['files_per_s']:>7.1f} files/s  runs {r['runs_s']}")
            print(f"  outcome: {t['outcome']}")
            if t["outcome"].get("xlate", {}).get("error"):
                print(f"  WARNING: xlate migrate failed, its time is not a translation time: {t['outcome']['xlate']['error']}")
        if args.skip != "kernels":
            sizes = [int(x) for x in args.sizes.split(",") if x]
            doc["kernels"] = rows = bench_kernels(args.hipify, sizes, args.timeout, Path(tmp), env)
            print(f"\n{'kernels':>8} {'MB':>6} | {'xlate port s':>12} {'us/kernel':>9} {'marginal':>9} | "
                  f"{'hipify s':>9} {'us/kernel':>9} {'marginal':>9}")
            for r in rows:
                cells = []
                for tool in ("xlate port", "hipify-perl"):
                    v = r[tool]
                    cells.append(f"{v.get('seconds', 'skipped')!s:>12} {v.get('us_per_kernel', '-')!s:>9} "
                                 f"{v.get('marginal_us_per_kernel', '-')!s:>9}" + (f"  ERROR {v['error']}" if v.get("error") else ""))
                print(f"{r['kernels']:>8} {r['bytes'] / 1e6:>6.2f} | " + " | ".join(cells))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
