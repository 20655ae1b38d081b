"""Synthetic kernel libraries for the migration benchmark and tests: copies of a corpus (examples/kernels) with
renamed files and kernels and semantics-preserving variations, spread over sub-folders, some including a shared
header, and an xlate.toml that points each renamed kernel at the corpus's NumPy reference."""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

COMMON_HEADER = """\
// Shared helpers of the generated library (included by some kernels; ported once).
#pragma once
#include <cuda_runtime.h>

#define XL_LIB_BLOCK 256

__device__ __forceinline__ float xl_lib_square(float v) { return v * v; }
"""


@dataclass
class GeneratedLibrary:
    root: str
    kernels: int
    files: list[str] = field(default_factory=list)  # relative paths of the translation units
    kernel_names: dict[str, list[str]] = field(default_factory=dict)  # rel -> kernels


def _kernels(path: Path) -> list[str]:
    from xlate.parse import parse_file

    return [k.name for k in parse_file(path).kernels]


def _vary(text: str, copy: int) -> str:
    """Variations that keep what the kernels compute: a banner, and re-indentation on every other copy."""
    banner = f"// generated variant {copy} of this corpus kernel (xlate migrate benchmark)\n"
    if copy % 2 == 1:
        text = re.sub(r"(?m)^((?:    )+)", lambda m: "  " * (len(m.group(1)) // 4), text)
    return banner + text


def make_library(dest: str | os.PathLike[str], n_kernels: int, corpus: str | os.PathLike[str], references: str | os.PathLike[str],
                 *, only: tuple[str, ...] = (), exclude: tuple[str, ...] = (), header_every: int = 3,
                 per_folder: int = 25) -> GeneratedLibrary:
    """Write a library of exactly `n_kernels` kernels under `dest` (created; must not exist), from the corpus
    files named in `only` (default: all) less `exclude`."""
    corpus, references, root = Path(corpus), Path(references), Path(dest)
    root.mkdir(parents=True)
    shutil.copytree(references, root / "refs", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "common").mkdir()
    (root / "common" / "xl_lib.cuh").write_text(COMMON_HEADER)
    stems = [(p, _kernels(p)) for p in sorted(corpus.glob("*.cu"))
             if p.stem not in exclude and (not only or p.stem in only)]
    stems = [(p, ks) for p, ks in stems if ks]
    if not stems:
        raise ValueError(f"no kernels in {corpus}")
    lib = GeneratedLibrary(str(root), 0)
    toml = ["# Oracles of the generated library: each renamed kernel -> the corpus reference it was copied from."]
    copy, index = 0, 0
    while lib.kernels < n_kernels:
        before = lib.kernels
        for path, names in stems:
            remaining = n_kernels - lib.kernels
            if remaining <= 0:
                break
            if len(names) > remaining:
                continue
            folder = f"part{index // per_folder:03d}" + ("/ops" if index % 5 == 4 else "")
            rel = f"{folder}/{path.stem}_v{copy}.cu"
            text = path.read_text(encoding="utf-8")
            for k in names:
                text = re.sub(rf"\b{re.escape(k)}\b", f"{k}_v{copy}", text)
            text = _vary(text, copy)
            if index % header_every == 0:
                depth = rel.count("/")
                text = f'#include "{"../" * depth}common/xl_lib.cuh"\n' + text
            out = root / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text, encoding="utf-8")
            renamed = [f"{k}_v{copy}" for k in names]
            lib.files.append(rel)
            lib.kernel_names[rel] = renamed
            lib.kernels += len(names)
            if (references / f"{path.stem}.py").exists():
                for k, new in zip(names, renamed):
                    toml += [f"[kernels.{new}]", f'reference = "refs/{path.stem}.py:{k}"']
            index += 1
        if lib.kernels == before:
            raise ValueError(f"cannot make exactly {n_kernels} kernels from the files of {corpus}")
        copy += 1
    (root / "xlate.toml").write_text("\n".join(toml) + "\n")
    return lib
