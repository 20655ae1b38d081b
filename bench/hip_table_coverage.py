"""How much of a CUDA code base the CUDA -> HIP tables and rules know.

    python bench/hip_table_coverage.py [--corpus ../shared/corpora/hecbench] [--rocm 6.4] [--roc]
                                       [--top 40] [--out bench/results/hip_table_coverage.json]

Every C-family file of every `src/*-cuda` program is tokenized (comments, strings and #include lines skipped).
A CUDA name is an identifier shaped like a vendor API name: `cuda[A-Z]...`, `cu<library>...` and
`cu[A-Z]...`, `CU[A-Z_]...`, and the double-underscore device names (`__syncthreads`, `__ldg`,
`__nv_bfloat16`, `__CUDA_ARCH__`), less the host compiler's own (`__builtin_*`, `__attribute__`, ...).
Names a program defines itself (#define, functions, types) are not CUDA names of that program.
(variables and parameters too, by a declaration heuristic). A name is mapped when the translator rewrites or keeps it on purpose for the chosen ROCm (a table entry with a
HIP name not newer than --rocm, a structural rule, or a kept keyword); entries with no HIP equivalent and
entries newer than --rocm count as unmapped. Prints unique-name and use-weighted coverage and the most
frequent unmapped names.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

EXTS = {".cu", ".cuh", ".h", ".hpp", ".hh", ".cpp", ".cc", ".cxx", ".c", ".inl"}
CUDA_NAME = re.compile(
    r"^(?:cuda[A-Z_]\w*|cu(?:blas|blasLt|rand|fft|sparse|solver|dnn|tensor|File|Complex|Cabs|Cadd|Cmul|Csub|Cdiv"
    r"|Conj|Creal|Cimag|Fma)\w*|cu[A-Z]\w*|CU[A-Z_]\w*|__[a-z]\w*|__CUDA\w*|__NV\w*|__CUDACC\w*)$")
HOST_ONLY = re.compile(
    r"^__(?:builtin_\w*|attribute__|restrict|inline__|inline|asm__|asm|volatile__|typeof__|typeof|func__|int128\w*"
    r"|has_include\w*|declspec|extension__|thread|sync_\w*|atomic_\w*|m64|m128\w*|m256\w*|m512\w*|cpuid\w*|rdtsc\w*"
    r"|alignof__|const|signed__|uint128_t|float128|fp16|bf16|forceinline|noinline|cdecl|stdcall|fastcall"
    r"|gnu_\w*|glibc\w*|x86_64__|linux__|unix__|clang\w*|gcc\w*|ptr32|ptr64|unaligned|int8|int16|int32|int64"
    r"|label__|real__|imag__|auto_type|is_\w*|has_\w*|underlying_type|assume|debugbreak|popcnt\w*|lzcnt\w*"
    r"|cplusplus|aligned__|ext_vector_type__|noreturn__|unused__|deprecated__|packed__|may_alias__)$")
DEFINES = re.compile(
    rb"#\s*define\s+(\w+)|\b(?:struct|class|union|enum(?:\s+class)?|namespace|typename)\s+(\w+)"
    rb"|\btypedef\b[^;{]*?(\w+)\s*(?:\[[^\]]*\]\s*)?;|\busing\s+(\w+)\s*="
    rb"|(\w+)\s*\([^;{}()]*(?:\([^()]*\)[^;{}()]*)*\)\s*(?:const\s*)?\{"
    # variables and parameters: `Type name =`, `Type *name;`, `Type name[`, `(Type name,` (not after a keyword)
    rb"|(?<!return)(?<!case)(?<!else)(?<!sizeof)(?<!throw)(?<!goto)(?<!delete)\b[A-Za-z_]\w*[\s*&]+(\w+)\s*(?=[=;,\[)])")


def program_files(corpus: Path) -> dict[str, list[Path]]:
    out: dict[str, list[Path]] = {}
    for prog in sorted((corpus / "src").glob("*-cuda")):
        files = [p for p in sorted(prog.rglob("*")) if p.is_file() and p.suffix.lower() in EXTS]
        if files:
            out[prog.name] = files
    return out


def names_in(data: bytes) -> collections.Counter[str]:
    from xlate.translate.hip.ctokens import tokenize

    counts: collections.Counter[str] = collections.Counter()
    lines = data.split(b"\n")
    data = b"\n".join(b"" if re.match(rb"\s*#\s*include", ln) else ln for ln in lines)
    for t in tokenize(data):
        if t.kind == "ident" and CUDA_NAME.match(t.text) and not HOST_ONLY.match(t.text):
            counts[t.text] += 1
    return counts


def defined_in(data: bytes) -> set[str]:
    out = set()
    for m in DEFINES.finditer(data):
        for g in m.groups():
            if g:
                out.add(g.decode("utf-8", "replace"))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default=str(ROOT.parent / "shared" / "corpora" / "hecbench"))
    ap.add_argument("--rocm", default=None, help="target ROCm (default: the newest the tables know)")
    ap.add_argument("--roc", action="store_true", help="roc* library targets (HIPIFY's --roc)")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--out", default=None, help="write the JSON summary here")
    args = ap.parse_args(argv)
    corpus = Path(args.corpus)
    if not (corpus / "src").is_dir():
        print(f"no corpus at {corpus}", file=sys.stderr)
        return 2
    from xlate.translate.hip.coverage import classifier

    status_of = classifier(rocm=args.rocm, roc=args.roc)
    uses: collections.Counter[str] = collections.Counter()
    programs_using: collections.Counter[str] = collections.Counter()
    for _, files in program_files(corpus).items():
        datas = [f.read_bytes() for f in files]
        defined: set[str] = set()
        for d in datas:
            defined |= defined_in(d)
        found: collections.Counter[str] = collections.Counter()
        for d in datas:
            found.update(names_in(d))
        for name, n in found.items():
            if name in defined:
                continue
            uses[name] += n
            programs_using[name] += 1
    by_status: dict[str, list[str]] = collections.defaultdict(list)
    for name in uses:
        by_status[status_of(name)].append(name)
    mapped = len(by_status["mapped"])
    total = len(uses)
    mapped_uses = sum(uses[n] for n in by_status["mapped"])
    unmapped = sorted((n for n in uses if status_of(n) != "mapped"), key=lambda n: (-programs_using[n], -uses[n], n))
    summary = {
        "corpus": str(corpus), "rocm": status_of.rocm, "roc": args.roc,  # type: ignore[attr-defined]
        "unique_names": total, "unique_mapped": mapped, "unique_fraction": round(mapped / total, 4) if total else None,
        "uses": sum(uses.values()), "uses_mapped": mapped_uses,
        "use_fraction": round(mapped_uses / sum(uses.values()), 4) if uses else None,
        "by_status": {k: len(v) for k, v in sorted(by_status.items())},
        "top_unmapped": [{"name": n, "status": status_of(n), "programs": programs_using[n], "uses": uses[n]}
                         for n in unmapped[: args.top]],
    }
    print(f"CUDA names in {corpus}/src/*-cuda: {total} unique, {mapped} mapped "
          f"({100 * mapped / max(total, 1):.1f} %); uses {mapped_uses}/{sum(uses.values())} "
          f"({100 * mapped_uses / max(sum(uses.values()), 1):.1f} %); target ROCm {summary['rocm']}"
          f"{' --roc' if args.roc else ''}")
    print("by status:", ", ".join(f"{k} {v}" for k, v in summary["by_status"].items()))
    print("most frequent unmapped (programs, uses):")
    for row in summary["top_unmapped"]:
        print(f"  {row['name']:<40} {row['status']:<14} {row['programs']:>4} {row['uses']:>6}")
    if args.out:
        Path(args.out).write_text(json.dumps(summary, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
