"""Parse + model-build throughput: tree-sitter alone vs the full KernelUnit, on the corpus and on a large
generated file (default 12 MB), in MB/s and kernels/s.

    python bench/parse_speed.py [--mb 12] [--out results.json]
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path

from xlate.parse import languages, parse_string

ROOT = Path(__file__).resolve().parents[1]


def generated_source(target_mb: float) -> tuple[str, int]:
    """The corpus kernels over and over, renamed so every definition is distinct."""
    corpus = [p.read_text() for p in sorted((ROOT / "examples" / "kernels").glob("*.cu"))]
    parts, size, copies = [], 0, 0
    while size < target_mb * 1e6:
        for i, text in enumerate(corpus):
            suffix = f"_g{copies}_{i}"
            renamed = re.sub(r"\b(__global__\s+void\s+(?:__launch_bounds__\([^)]*\)\s+)?)(\w+)", rf"\1\2{suffix}", text)
            renamed = re.sub(r"\bvoid\s+(launch_\w+)", rf"void \1{suffix}", renamed)
            renamed = re.sub(r"^#include.*$", "", renamed, flags=re.M)
            parts.append(renamed)
            size += len(renamed)
        copies += 1
    text = "#include <cuda_runtime.h>\n" + "\n".join(parts)
    return text, text.count("__global__")


def measure(text: str, repeat: int = 3) -> dict[str, float]:
    data = text.encode()
    best_ts, best_model = float("inf"), float("inf")
    kernels = 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        languages.parser("cuda").parse(data)
        best_ts = min(best_ts, time.perf_counter() - t0)
        t0 = time.perf_counter()
        unit = parse_string(text, "bench.cu", strict=False)
        best_model = min(best_model, time.perf_counter() - t0)
        kernels = len(unit.kernels)
    mb = len(data) / 1e6
    return {"mb": round(mb, 2), "kernels": kernels, "tree_sitter_s": round(best_ts, 3), "model_s": round(best_model, 3),
            "tree_sitter_mb_s": round(mb / best_ts, 1), "model_mb_s": round(mb / best_model, 2),
            "kernels_per_s": round(kernels / best_model, 1)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=12.0)
    ap.add_argument("--out")
    args = ap.parse_args()
    corpus_text = "\n".join(p.read_text() for p in sorted((ROOT / "examples" / "kernels").glob("*.cu")))
    rows = {"corpus": measure(corpus_text, repeat=5)}
    big, _ = generated_source(args.mb)
    rows[f"generated {args.mb:g} MB"] = measure(big, repeat=2)
    print(f"{'input':22s} {'MB':>7s} {'kernels':>8s} {'tree-sitter MB/s':>17s} {'model MB/s':>11s} {'kernels/s':>10s}")
    for name, r in rows.items():
        print(f"{name:22s} {r['mb']:7.2f} {r['kernels']:8d} {r['tree_sitter_mb_s']:17.1f} {r['model_mb_s']:11.2f} {r['kernels_per_s']:10.1f}")
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
