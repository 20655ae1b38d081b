"""`--sanitize`: run a few cases of each side under NVIDIA's compute-sanitizer (memcheck, racecheck), which sees
what output comparison cannot: out-of-bounds reads, shared-memory races that happen not to change the result."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from xlate.backends.base import LaunchConfig
from xlate.backends.worker import finish_worker
from xlate.specs import KernelSpec
from xlate.verify.cases import (
    Case,
    buffer_arg,
    buffer_length,
    ctype_dtype,
    environment,
    launch_dims,
    make_inputs,
    scalar_arg,
)
from xlate.verify.runner import Side, byte_copy, guard_elements, poison

TOOLS = ("memcheck", "racecheck")
SUMMARY = re.compile(r"(ERROR SUMMARY|RACECHECK SUMMARY):\s*(\d+)\s+(?:errors?|hazards?)", re.I)


@dataclass
class SanitizerFinding:
    side: str
    tool: str
    errors: int
    report: str  # the first lines of the sanitizer's report


def sanitizer_path() -> str | None:
    return shutil.which("compute-sanitizer") or next(
        (p for p in ("/usr/local/cuda/bin/compute-sanitizer",) if os.path.exists(p)), None
    )


def _args(spec: KernelSpec, case: Case, env: dict, inputs: dict[str, np.ndarray]):
    args = []
    for p in sorted((q for q in spec.params if q.position >= 0), key=lambda q: q.position):  # -1: not passed
        if p.is_buffer:
            dtype = ctype_dtype(p.ctype, case, spec)
            n = buffer_length(p, env, case, spec)
            g = guard_elements(dtype)
            data = byte_copy(poison(dtype, 0, n + 2 * g))
            if p.role != "out":
                data[g : g + n] = inputs[p.name]
            args.append(buffer_arg(p.name, data, g, n))
        else:
            args.append(scalar_arg(p, case, env, spec))
    for p in spec.module_globals:  # module variables: filled by name (a backend without them is refused earlier)
        from xlate.backends.base import BufferArg

        n = buffer_length(p, env, case, spec)
        data = byte_copy(poison(ctype_dtype(p.ctype, case, spec), 0, n))
        if p.role != "out":
            data[:] = inputs[p.name]
        args.append(BufferArg(p.name, data, 0, n, symbol=p.name))
    return args


def sanitize(side: Side, spec: KernelSpec, cases: list[Case]) -> list[SanitizerFinding]:
    """Run `cases` on `side` under each tool; return the tools that reported errors (empty: clean)."""
    tool_path = sanitizer_path()
    if tool_path is None or "sanitizer" not in side.backend.capabilities:
        return []
    with tempfile.TemporaryDirectory(prefix="xlate-sanitize-") as tmp:
        return [f for tool in TOOLS if (f := _run_tool(tool_path, tool, side, spec, cases, Path(tmp))) is not None]


def _run_tool(tool_path: str, tool: str, side: Side, spec: KernelSpec, cases: list[Case],
              tmp: Path) -> SanitizerFinding | None:
    # The report goes to a file: on the worker's stdout it would corrupt the reply stream.
    log = tmp / f"{tool}.log"
    wrapper = [tool_path, "--tool", tool, "--print-limit", "10", "--error-exitcode", "0", "--log-file", str(log)]
    art = None
    for case in cases:
        env = environment(spec, case)
        art = side.artifact(case, spec, env)
        if art.meta.get("platform") not in (None, "nvidia"):
            return None  # compute-sanitizer runs on NVIDIA devices only
        grid, block, shmem = launch_dims(spec, env, case)
        if 0 in grid or 0 in block:
            continue
        side.backend.run(art, _args(spec, case, env, make_inputs(spec, case, env)), LaunchConfig(grid, block, shmem),
                         timeout=max(side.timeout, 300.0), wrapper=wrapper)
    if art is None:
        return None
    env_vars = side.backend.worker_env(art)
    text = finish_worker(art.backend, env_vars, wrapper)
    if log.exists():
        text = log.read_text(errors="replace") + "\n" + text
    errors = sum(int(m.group(2)) for m in SUMMARY.finditer(text))
    if not errors:
        return None
    lines = [ln for ln in text.splitlines() if ln.startswith("========")][:12]
    return SanitizerFinding(side.label, tool, errors, "\n".join(lines))
