"""The optional benchmark step (`--benchmark`): after a kernel is verified, time the source and the port on one
large case on their backends and report the speed ratio source_seconds / port_seconds (> 1: the port is faster).

Both sides must run on this machine (e.g. CUDA source and HIP-on-NVIDIA or Triton port on an NVIDIA GPU);
otherwise the result says why no number exists. CPU interpreter timings are labelled as such by the platform."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from xlate.specs import expr

DEFAULT_BUDGET = 1 << 22  # elements over all buffers
MAX_GRID = 1 << 20


def bench_case(spec: Any, budget: int = DEFAULT_BUDGET, beyond_range: bool = False) -> Any | None:
    """The largest case within the spec's ranges, its `where` constraints and `budget`; None if none is found.

    `beyond_range`: sizes may exceed the spec's upper bounds (which bound what fuzzing explores, not what the
    kernel supports), so that a benchmark can fill a GPU rather than its L2 cache."""
    from xlate.verify.cases import Case, buffer_length, ctype_dtype, environment, is_float

    sizes: dict[str, int] = {}
    for p in spec.sizes:
        lo = int(expr.evaluate(p.lo or "0", {}))
        hi = budget if beyond_range else int(expr.evaluate(p.hi or "4096", {}))
        sizes[p.name] = max(lo, min(hi, budget))
    dtypes = {name: ("float32" if "float32" in opts else opts[0]) for name, opts in spec.dtype_axes.items()}
    probe = Case(dict(sizes), dtypes, {}, {}, 0)
    scalars: dict[str, int | float] = {}
    for p in spec.scalars:
        dtype = ctype_dtype(p.ctype, probe, spec)
        lo = float(expr.evaluate(p.lo, sizes)) if p.lo else None
        hi = float(expr.evaluate(p.hi, sizes)) if p.hi else None
        mid = (lo + hi) / 2 if lo is not None and hi is not None else 1.0
        scalars[p.name] = float(mid) if is_float(dtype) else round(mid)
    profiles = {p.name: "uniform" for p in spec.buffers if p.role != "out"}
    for _ in range(240):
        case = Case(dict(sizes), dtypes, scalars, profiles, 0, "benchmark")
        try:
            env = environment(spec, case)
            ok = all(bool(expr.evaluate(w, env)) for w in spec.where)
            total = sum(buffer_length(p, env, case, spec) for p in spec.buffers)
            grid = 1
            for g in spec.grid:
                v = expr.evaluate(g, env)
                grid *= math.prod(v) if isinstance(v, tuple) else max(0, int(v))
        except Exception:
            ok, total, grid = False, budget + 1, 0
        if ok and total <= budget and grid <= MAX_GRID:
            return case
        if not sizes:
            return None
        name = max(sizes, key=lambda k: sizes[k])
        lo = int(expr.evaluate(next(p for p in spec.sizes if p.name == name).lo or "0", {}))
        if sizes[name] <= max(lo, 1):
            return None
        sizes[name] = max(lo, sizes[name] // 2)
    return None


def _args(spec: Any, case: Any, env: dict[str, Any], inputs: dict[str, np.ndarray]) -> list[Any]:
    from xlate.backends.base import BufferArg, ScalarArg
    from xlate.verify.cases import buffer_length, ctype_dtype, is_float

    args: list[Any] = []
    for p in sorted((q for q in spec.params if q.position >= 0), key=lambda q: q.position):  # -1: not passed
        if p.is_buffer:
            dtype = ctype_dtype(p.ctype, case, spec)
            n = buffer_length(p, env, case, spec)
            data = inputs[p.name].copy() if p.name in inputs else np.zeros(n, dtype=dtype)
            args.append(BufferArg(p.name, data, 0, n))
        else:
            value = case.sizes.get(p.name, case.scalars.get(p.name, env.get(p.name)))
            dtype = ctype_dtype(p.ctype, case, spec) if p.ctype else np.dtype("int64" if isinstance(value, int) else "float32")
            args.append(ScalarArg(p.name, float(value) if is_float(dtype) else int(value), dtype.name))
    return args


def benchmark_kernel(source_path: str, port_text: str, port_language: str, kernel: str, *, arch: str | None = None,
                     timeout: float = 60.0, repeat: int = 20, budget: int = DEFAULT_BUDGET,
                     source_text: str | None = None, source_language: str | None = None,
                     beyond_range: bool = False) -> dict[str, Any]:
    from xlate.backends.base import CompileError, LaunchConfig
    from xlate.specs import build_spec, sidecar_overrides
    from xlate.verify.cases import environment, launch_dims, make_inputs
    from xlate.verify.runner import Side

    source = Side(source_path, kernel, text=source_text, language=source_language, timeout=timeout, label="source")
    port = Side("<port>", kernel, text=port_text, language=port_language, arch=arch, timeout=timeout, label="port")
    for side in (source, port):
        info = side.backend.detect()
        if not info.can_run:
            return {"status": "unavailable", "reason": f"cannot run {side.language} here: " + "; ".join(info.missing)}
    spec = build_spec(source.unit, kernel, sidecar_overrides(source_path, kernel))
    case = bench_case(spec, budget, beyond_range)
    if case is None:
        return {"status": "unavailable", "reason": "no benchmark case satisfies the spec within the budget"}
    env = environment(spec, case)
    inputs = make_inputs(spec, case, env)
    grid, block, shmem = launch_dims(spec, env, case)
    seconds: dict[str, float] = {}
    platforms: dict[str, str | None] = {}
    for label, side in (("source", source), ("port", port)):
        try:
            art = side.artifact(case, spec, env)
        except CompileError as exc:
            return {"status": "failed", "reason": f"{label} does not compile: {exc.log.strip()[-500:]}"}
        res = side.backend.run(art, _args(spec, case, env, inputs), LaunchConfig(grid, block, shmem), timeout=timeout,
                               bench={"warmup": 3, "repeat": repeat})
        if res.status != "ok" or res.seconds <= 0:
            return {"status": "failed", "reason": f"{label} run: {res.status} {res.message}".strip()}
        seconds[label] = float(res.seconds)
        platforms[label] = side.platform
    moved = _bytes_moved(spec, case, env)
    return {"status": "ok", "source_s": seconds["source"], "port_s": seconds["port"],
            "ratio": seconds["source"] / seconds["port"], "sizes": case.sizes, "repeat": repeat, "platforms": platforms,
            "bytes_moved": moved}


def _bytes_moved(spec: Any, case: Any, env: dict[str, Any]) -> int:
    """The bytes a kernel must at least move: every buffer read or written once, inout ones both."""
    from xlate.verify.cases import buffer_length, ctype_dtype

    return sum(buffer_length(p, env, case, spec) * ctype_dtype(p.ctype, case, spec).itemsize
               * (2 if p.role == "inout" else 1) for p in spec.buffers)
