"""The benchmark of one verified kernel (`--benchmark`, `port --stats`): source and port timed on the same GPU in
the same run, at a size whose working set exceeds the L2 cache (`Plan.l2_multiple` times the L2 the device
reports), their timed calls interleaved until the port/source ratio is known within `Plan.target_spread` or a cap
is hit (xlate/migrate/benchstats.py). The result gives the ratio with its interval and spread, whether it is
within noise, and each side's bandwidth as a percentage of the device-to-device copy measured once per run
(xlate/migrate/benchdevice.py).

Both sides must time on a GPU here (e.g. a CUDA source and its HIP-on-NVIDIA or Triton port on an NVIDIA GPU);
otherwise the result says why no number exists. Sizes beyond the spec's ranges are checked before timing: the two
sides' outputs must agree there within the gate's tolerance, else the largest case within the ranges is timed."""

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
    dtypes = bench_dtypes(spec)
    probe = Case(dict(sizes), dtypes, {}, {}, 0)
    scalars: dict[str, int | float] = {}
    for p in spec.scalars:
        dtype = ctype_dtype(p.ctype, probe, spec)
        if dtype.fields is not None:  # a record by value: each field in the middle of its range, as the gate's edge cases
            from xlate.verify.strategies import record_middle

            scalars[p.name] = record_middle(p, dtype, dict(sizes))  # type: ignore[assignment]
            continue
        lo = float(expr.evaluate(p.lo, sizes)) if p.lo else None
        hi = float(expr.evaluate(p.hi, sizes)) if p.hi else None
        mid = (lo + hi) / 2 if lo is not None and hi is not None else 1.0
        one = float(mid) if is_float(dtype) else round(mid)
        scalars[p.name] = [one] * p.lanes if p.lanes > 1 else one  # float3 by value: every lane
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
    """The kernel's arguments as the gate passes them (xlate/verify/runner.py): buffers of records as their
    bytes, vectors and structs by value as their lanes or C bytes (scalar_arg_value)."""
    from xlate.verify.cases import buffer_arg, buffer_length, ctype_dtype, scalar_arg

    args: list[Any] = []
    for p in sorted((q for q in spec.params if q.position >= 0), key=lambda q: q.position):  # -1: not passed
        if p.is_buffer:
            n = buffer_length(p, env, case, spec) // max(1, p.lanes) * max(1, p.lanes)
            data = inputs[p.name].copy() if p.name in inputs else np.zeros(n, dtype=ctype_dtype(p.ctype, case, spec))
            args.append(buffer_arg(p.name, data, 0, n))
        else:
            args.append(scalar_arg(p, case, env, spec))
    from xlate.backends.base import BufferArg

    for p in spec.module_globals:  # filled before each launch and read back after, by name, as the gate does
        n = buffer_length(p, env, case, spec)
        data = inputs[p.name].copy() if p.name in inputs else np.zeros(n, dtype=ctype_dtype(p.ctype, case, spec))
        args.append(BufferArg(p.name, data, 0, n, symbol=p.name))
    return args


def bench_dtypes(spec: Any) -> dict[str, str]:
    """The dtype each axis takes in a benchmark: float32 where the kernel allows it, else its first."""
    return {name: ("float32" if "float32" in opts else opts[0]) for name, opts in spec.dtype_axes.items()}


def gpu_budget(spec: Any, l2_bytes: int, plan: Any) -> int:
    """Elements over all buffers so that bench_case's working set lands in (1, 2] x l2_multiple x L2: it halves
    the largest size until the case fits, so it keeps more than half of the budget."""
    from xlate.verify.cases import Case, ctype_dtype

    probe = Case({}, bench_dtypes(spec), {}, {}, 0)
    sizes = []
    for p in spec.buffers:
        try:
            sizes.append(ctype_dtype(p.ctype, probe, spec).itemsize)
        except Exception:
            continue
    return max(1, int(2 * plan.l2_multiple * l2_bytes) // max(1, min(sizes, default=4)))


def benchmark_kernel(source_path: str, port_text: str, port_language: str, kernel: str, *, arch: str | None = None,
                     timeout: float = 60.0, repeat: int | None = None, budget: int | None = None,
                     source_text: str | None = None, source_language: str | None = None, beyond_range: bool = True,
                     plan: Any = None, device: Any = None, copy: dict[str, Any] | None = None,
                     port_path: str | None = None, interpreter_ok: bool = False) -> dict[str, Any]:
    """Time `kernel`'s source and port (see the module's doc). `repeat`: launches per timed call instead of
    calibrated batches; `budget`: elements over all buffers instead of the L2-derived size; `device`: the
    DeviceFacts (asked here when None); `copy`: measure_copy's result for the bandwidth percentages;
    `port_path`: where the port lives (its quoted includes are found beside it); `interpreter_ok`: time CPU
    interpreters too (tests of the mechanics on a machine without a GPU)."""
    import time

    from xlate.errors import ToolchainMissing
    from xlate.migrate.benchdevice import device_facts, gpu_timing
    from xlate.migrate.benchstats import Plan
    from xlate.specs import build_spec, sidecar_overrides
    from xlate.verify.api import compares_nothing
    from xlate.verify.runner import Side, require_globals

    t0 = time.perf_counter()
    plan = plan or Plan()
    source = Side(source_path, kernel, text=source_text, language=source_language, timeout=timeout, label="source")
    port = port_side(source, port_text, port_language, arch=arch, timeout=timeout, port_path=port_path)
    for side in (source, port):
        why = gpu_timing(side.backend.name, interpreter_ok)
        if why:
            return {"status": "unavailable", "reason": why}
    facts = device or device_facts()
    spec = build_spec(source.unit, kernel, sidecar_overrides(source_path, kernel))
    if compares_nothing(spec):  # a kernel that only prints: its port may drop the work, so a ratio would mislead
        return {"status": "unavailable", "reason": "nothing to time: the spec names no out or inout buffer"}
    try:
        for side in (source, port):
            require_globals(side, spec)  # a backend that cannot fill a module variable times nothing comparable
    except ToolchainMissing as exc:
        return {"status": "unavailable", "reason": str(exc)}
    budget = budget or gpu_budget(spec, facts.l2_bytes, plan)
    note = None
    result = _timed(spec, source, port, budget, beyond_range, plan, repeat, timeout)
    if result.get("first_run") and result.get("beyond_range"):
        # the kernel may not support sizes beyond its spec (a timeout, a fault, other outputs): stay within it
        note = f"timed within the spec's ranges: at {_sizes_text(result['sizes'])} (beyond them) {result['reason']}"
        result = _timed(spec, source, port, budget, False, plan, repeat, timeout)
    if result["status"] != "ok":
        if result.get("first_run"):
            result["reason"] = f"at the benchmark case ({_sizes_text(result['sizes'])}) {result['reason']}"
        return {"status": result["status"], "reason": result["reason"], "seconds": time.perf_counter() - t0,
                **({"note": note} if note else {})}
    ws = result["working_set_bytes"]
    result.update(l2_bytes=facts.l2_bytes, working_set_over_l2=ws / facts.l2_bytes if facts.l2_bytes else None,
                  fills_gpu=ws >= plan.l2_multiple * facts.l2_bytes, device=facts.name, note=note,
                  bandwidth=_bandwidth(result, copy), seconds=time.perf_counter() - t0)
    if not result["fills_gpu"]:
        why = f"the working set ({ws / 2**20:.0f} MiB) is below {plan.l2_multiple:g}x the L2 cache ({facts.l2_bytes / 2**20:.0f} MiB)"
        result["note"] = f"{note}; {why}" if note else why
    return result


def port_side(source: Any, port_text: str, port_language: str, *, arch: str | None, timeout: float,
              port_path: str | None = None) -> Any:
    """The port as the gate built it when it verified it: from memory, its quoted includes found beside it and
    beside its source, its includer context (the macros a header takes from the file that includes it, build-file
    flags) its source's. Built as a file of its own folder, a port of a header lost that context."""
    import os

    from xlate.verify.api import name_in_candidate
    from xlate.verify.runner import Side

    dirs = [os.path.dirname(os.path.abspath(p)) for p in (port_path, source.path) if p and os.path.isfile(p)]
    port = Side("<port>", source.kernel, text=port_text, language=port_language, arch=arch, timeout=timeout,
                label="port", include_dirs=dirs, context_path=source.context_path)
    name_in_candidate(port)  # `k<float>`'s Triton launcher is `k_float_`, as the gate found it
    return port


def _sizes_text(sizes: dict[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sizes.items()) or "no sizes"


def _timed(spec: Any, source: Any, port: Any, budget: int, beyond_range: bool, plan: Any, repeat: int | None,
           timeout: float) -> dict[str, Any]:
    """One benchmark case: compile, one checked run per side, calibrate, interleaved timed rounds."""
    import statistics
    import time

    from xlate.backends.base import CompileError, LaunchConfig
    from xlate.migrate.benchstats import interleave, launches_per_batch, ratio_stats
    from xlate.verify.cases import environment, launch_dims, make_inputs

    case = bench_case(spec, budget, beyond_range)
    if case is None:
        return {"status": "unavailable", "reason": "no benchmark case satisfies the spec within the budget"}
    env = environment(spec, case)
    inputs = make_inputs(spec, case, env)
    launch = LaunchConfig(*launch_dims(spec, env, case))
    sides = {"source": source, "port": port}
    arts = {}
    for label, side in sides.items():
        try:
            arts[label] = side.artifact(case, spec, env)
        except CompileError as exc:
            return {"status": "failed", "reason": f"{label} does not compile: {exc.log.strip()[-500:]}"}
    batched = {"source": True, "port": True}
    # both sides replay CUDA graphs where both can (a short kernel is timed, not its host launcher), else neither
    graphs = {"on": True, "paths": {}}
    chosen: dict[str, Any] = {}  # a Triton port's launch configuration per launcher, as its runtime chose it

    def call(label: str, bench: dict[str, int] | None) -> Any:
        res = sides[label].backend.run(arts[label], _args(spec, case, env, inputs), launch, timeout=timeout, bench=bench)
        if res.status != "ok" or res.seconds <= 0:
            raise _RunFailed(f"{label} run: {res.status} {res.message}".strip())
        return res

    def samples(label: str, launches: int) -> list[float]:
        bench = {"warmup": 2, "repeat": launches, "discard_outputs": 1, "graph": int(graphs["on"])}
        res = call(label, bench)  # outputs were checked once
        graphs["paths"][label] = res.meta.get("launch_path") or "stream"
        if label == "port":
            chosen.update(res.meta.get("launch_configs") or {})
        times = [float(t) for t in res.meta.get("times") or []] or [float(res.seconds)]
        if len(times) < min(plan.batches, launches):  # one launch timed with the host clock (HIP on AMD, interpreters)
            batched[label] = False
        return times

    beyond = beyond_spec(spec, case.sizes)
    try:
        first = {label: call(label, None) for label in sides}
        mismatch = outputs_differ(spec, case, env, inputs, first["source"].buffers, first["port"].buffers)
    except _RunFailed as exc:
        mismatch = str(exc)
    if mismatch:
        return {"status": "failed", "reason": mismatch, "first_run": True, "sizes": dict(case.sizes), "beyond_range": beyond}

    def calibrate() -> dict[str, int]:
        probe = {label: statistics.median(samples(label, plan.batches)) for label in sides}
        return {label: repeat or launches_per_batch(probe[label], plan) * plan.batches for label in sides}

    try:
        per_call = calibrate()
        if len(set(graphs["paths"].values())) > 1:  # one side could not be captured: both from the stream
            graphs["on"] = False
            per_call = calibrate()
        rounds = interleave(lambda label: samples(label, per_call[label]), plan, time.monotonic)
    except _RunFailed as exc:
        return {"status": "failed", "reason": str(exc)}
    stats = ratio_stats(rounds, plan)
    from xlate.verify.cases import buffer_length, ctype_dtype

    working_set = sum(buffer_length(p, env, case, spec) * ctype_dtype(p.ctype, case, spec).itemsize for p in spec.buffers)
    caveats = [f"{label} ({sides[label].backend.name}) times single launches with the host clock"
               for label, ok in batched.items() if not ok]
    paths = graphs["paths"]
    if not graphs["on"]:
        caveats.append("launched one by one from the host: the " + " and ".join(
            label for label, path in paths.items() if path != "graph") + " cannot be captured as a CUDA graph, so "
            "a kernel shorter than its launcher's host latency is timed at that latency")
    return {"status": "ok", **stats, "sizes": dict(case.sizes), "dtypes": dict(case.dtypes), "beyond_range": beyond,
            "launches_per_call": per_call, "batched": batched, "caveats": caveats,
            "launch_path": "graph" if set(paths.values()) == {"graph"} else "stream",
            "platforms": {label: side.platform for label, side in sides.items()},
            "bytes_moved": _bytes_moved(spec, case, env), "working_set_bytes": working_set,
            **({"launch_configs": chosen} if chosen else {})}


class _RunFailed(Exception):
    pass


def beyond_spec(spec: Any, sizes: dict[str, int]) -> bool:
    """Whether some size exceeds the upper bound of its range in the spec."""
    for p in spec.sizes:
        if p.hi and p.name in sizes:
            try:
                if sizes[p.name] > int(expr.evaluate(p.hi, {})):
                    return True
            except Exception:
                continue
    return False


def outputs_differ(spec: Any, case: Any, env: dict[str, Any], inputs: dict[str, np.ndarray],
                   source: dict[str, np.ndarray], port: dict[str, np.ndarray]) -> str | None:
    """None when every output of the port matches the source's within the gate's tolerance; else what differs."""
    from xlate.verify.cases import ctype_dtype
    from xlate.verify.compare import compare, output_scale, tolerance
    from xlate.verify.engine import tolerance_terms

    length, scale = tolerance_terms(spec, case, env, inputs)
    for p in spec.buffers:
        if p.role == "in":
            continue
        a, b = source.get(p.name), port.get(p.name)
        if a is None or b is None or a.shape != b.shape:
            return f"'{p.name}' is missing or of another shape on one side"
        dtype = ctype_dtype(p.ctype, case, spec)
        a, b = a.reshape(-1).view(dtype), b.reshape(-1).view(dtype)
        cmp = compare(b, a, None, tolerance(spec, dtype, length, scale, output_scale(a)))
        if not cmp.ok:
            return f"'{p.name}' differs between source and port in {int(cmp.bad.sum())} of {a.size} elements"
    return None


def _bandwidth(result: dict[str, Any], copy: dict[str, Any] | None) -> dict[str, Any]:
    """Each side's achieved bandwidth (spec bytes: inputs read + outputs written) and its share of the copy's."""
    from xlate.migrate.benchstats import bandwidth

    copy_bps = copy["gbs"] * 1e9 if copy and copy.get("status") == "ok" else None
    out: dict[str, Any] = {"copy_gbs": copy["gbs"] if copy_bps else None}
    for label in ("source", "port"):
        out[label] = bandwidth(result["bytes_moved"], result[f"{label}_s"], copy_bps)
    if copy_bps is None:
        out["reason"] = (copy or {}).get("reason") or "the copy bandwidth was not measured"
    return out


def _bytes_moved(spec: Any, case: Any, env: dict[str, Any]) -> int:
    """The bytes a kernel must at least move: every buffer read or written once, inout ones both."""
    from xlate.verify.cases import buffer_length, ctype_dtype

    return sum(buffer_length(p, env, case, spec) * ctype_dtype(p.ctype, case, spec).itemsize
               * (2 if p.role == "inout" else 1) for p in spec.buffers)
