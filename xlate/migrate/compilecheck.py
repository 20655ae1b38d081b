"""The compile stage (`--compile-check`): compile each port for its target without running it, so that a machine
that cannot verify (HIP ports on a CPU-only host) still learns whether the port builds.

A port's project headers are inlined for the check (each translated by the rules here, once, like #pragma once),
so the check needs neither an include path nor the header tasks to have finished."""

from __future__ import annotations

import os
import re
import time
from typing import Any

from xlate.migrate import includes

LOG_LIMIT = 4000
PRAGMA_ONCE = re.compile(r"^[ \t]*#[ \t]*pragma[ \t]+once[^\n]*\n?", re.M)  # `seen` does its job when inlined


def inline_headers(text: str, including_rel: str, headers: dict[str, dict[str, Any]], target: str, options: Any,
                   seen: set[str] | None = None) -> str:
    """Replace each `#include` of a project header by the header's rule translation (recursively)."""
    from xlate.parse import parse_file
    from xlate.translate.registry import rule_translator

    seen = set() if seen is None else seen
    info = headers.get(including_rel, {})
    by_written = {**{name: rel for name, rel in info.get("includes", {}).items()},
                  **{new: info["includes"][old] for old, new in info.get("rewrites", {}).items() if old in info.get("includes", {})}}
    out = []
    for line in text.splitlines(keepends=True):
        m = includes.INCLUDE.match(line)
        rel = by_written.get(m["name"]) if m else None
        if rel is None or rel not in headers:
            out.append(line)
            continue
        if rel in seen:
            out.append(f"// (xlate compile check: {m['name']} already included)\n")
            continue
        seen.add(rel)
        unit = parse_file(headers[rel]["path"], headers[rel].get("language"), strict=False)
        from xlate.targets import target as target_of

        text_of = unit.text if unit.language == target_of(target).language else \
            rule_translator(unit.language, target).translate(unit, unit.text, options).text  # else: already ported
        body = PRAGMA_ONCE.sub("", inline_headers(text_of, rel, headers, target, options, seen))
        out.append(f"// ---- begin {m['name']} (inlined by the xlate compile check)\n{body}\n// ---- end {m['name']}\n")
    return "".join(out)


def amd_target(arch: str | None) -> str:
    """The gfx target of a HIP compile check or build file (--arch, default gfx90a)."""
    from xlate.arch import compiler_target

    amd = compiler_target(arch, "hip") if arch else None
    return amd if amd and amd.startswith("gfx") else "gfx90a"


def compile_port(target: str, text: str, kernel: str, arch: str | None, path: str) -> dict[str, Any]:
    """{"ok": True|False, "seconds", "log", "compiler"} or {"ok": None, "reason"} when nothing here compiles it.

    HIP: hipcc for AMD, named with its ROCm release ("hipcc (ROCm 5.2) for gfx90a"). HIP names the local ROCm
    does not have yet are `not_checkable` ({name, rocm, line}); a compile that fails only on them is ok None
    ("not checkable here"), never a failure of the port."""
    from xlate.backends.base import CompileError, CompileOptions
    from xlate.backends.registry import get_backend
    from xlate.errors import ToolchainMissing

    t0 = time.perf_counter()
    compiler = target
    extra: dict[str, Any] = {}
    try:
        if target == "hip":
            from xlate.migrate.rocmcheck import local_rocm, newer_constructs

            gfx = amd_target(arch)
            rocm = local_rocm()
            compiler = f"hipcc (ROCm {rocm}) for {gfx}" if rocm else f"hipcc for {gfx}"
            extra = {"rocm": rocm, "offload_arch": gfx, "not_checkable": newer_constructs(text, rocm)}
            res = get_backend("hip").check_file(text, gfx, path)
            return {"ok": True, "seconds": time.perf_counter() - t0, "log": res.log[-LOG_LIMIT:], "cached": res.cached,
                    "compiler": compiler, **extra, "not_checkable": []}  # it compiled: nothing was beyond it
        art = get_backend(target).compile(text, kernel, CompileOptions(arch=arch, compile_only=True), path=path)
        return {"ok": True, "seconds": time.perf_counter() - t0, "log": art.compile.log[-LOG_LIMIT:],
                "cached": art.compile.cached, "compiler": compiler}
    except CompileError as exc:
        out = {"ok": False, "seconds": time.perf_counter() - t0, "log": exc.log[-LOG_LIMIT:], "compiler": compiler, **extra}
        if extra.get("not_checkable"):
            from xlate.migrate.rocmcheck import split_errors

            own, _newer = split_errors(exc.log, text, extra["not_checkable"])
            out["errors"] = own[:20]
            if not own:
                out["ok"] = None
                out["reason"] = (f"not checkable here: uses {len(extra['not_checkable'])} HIP name(s) newer than the "
                                 f"local ROCm {extra['rocm']}")
        return out
    except ToolchainMissing as exc:
        return {"ok": None, "reason": exc.message, "compiler": compiler}


def display_path(task: Any) -> str:
    return task.output or os.path.join(task.src_root, task.rel)
