"""What `--benchmark` needs to know about the GPU it times on: its L2 cache size (asked from the device, so that
benchmark sizes exceed it), and the device-to-device copy bandwidth measured once per run on that GPU (the
ceiling a streaming kernel is compared with)."""

from __future__ import annotations

import functools
import math
import statistics
from dataclasses import asdict, dataclass
from typing import Any

from xlate.migrate.benchstats import Plan, launches_per_batch, spread

ASSUMED_L2 = 64 << 20  # when neither the device nor an architecture table says (bigger than any L2 in templates/arch)
COPY_KERNEL = "xlate_copy"
COPY_FILES = {"triton": "copy.py", "hip": "copy.hip"}  # other backends: copy.cu


@dataclass(frozen=True)
class DeviceFacts:
    name: str | None
    l2_bytes: int
    l2_origin: str  # "device", "arch table (h200)", "assumed"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _from_cupy() -> tuple[str, int] | None:
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() < 1:
            return None
        props = cupy.cuda.runtime.getDeviceProperties(0)
    except Exception:
        return None
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    return name, int(props.get("l2CacheSize") or 0)


def _from_torch() -> tuple[str, int] | None:
    try:
        import torch

        if not torch.cuda.is_available():
            return None
        props = torch.cuda.get_device_properties(0)
    except Exception:
        return None
    return str(props.name), int(getattr(props, "L2_cache_size", 0) or 0)


@functools.cache
def device_facts() -> DeviceFacts:
    """Device 0 as the backend workers see it (they inherit CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES). The L2
    size comes from the device (CuPy, else torch), else from the architecture table for its name, else
    ASSUMED_L2."""
    found = _from_cupy() or _from_torch()
    name = found[0] if found else None
    if found and found[1] > 0:
        return DeviceFacts(name, found[1], "device")
    if name:
        from xlate.arch import all_specs

        for key, spec in all_specs().items():
            names = [str(spec.get("name", "")), *map(str, spec.get("aliases") or [])]
            if spec.get("l2_cache_bytes") and any(n and n.lower() in name.lower().split() for n in names):
                return DeviceFacts(name, int(spec["l2_cache_bytes"]), f"arch table ({key})")
    return DeviceFacts(name, ASSUMED_L2, "assumed")


def gpu_timing(backend_name: str, interpreter_ok: bool = False) -> str | None:
    """None when `backend_name` can time kernels on a GPU here; otherwise why not, in words."""
    from xlate.backends.registry import get_backend

    backend = get_backend(backend_name)
    info = backend.detect()
    if not info.can_run:
        return f"cannot run {backend_name} here: missing " + ("; ".join(info.missing) or "a toolchain or device")
    if "timing" not in backend.capabilities:
        return f"the {backend_name} backend cannot time kernels"
    if info.interpreter and not interpreter_ok:
        return f"no GPU here: {backend_name} runs on {info.platform} (its times say nothing about a GPU)"
    return None


def copy_source(backend_name: str) -> tuple[str, str]:
    """(text, file name) of the copy kernel for a backend."""
    from xlate.resources import templates_dir

    name = COPY_FILES.get(backend_name, "copy.cu")
    return (templates_dir() / "bench" / name).read_text(), f"xlate_{name}"


def measure_copy(backend_name: str, facts: DeviceFacts, plan: Plan, *, timeout: float = 120.0,
                 elements: int | None = None, calls: int = 3, interpreter_ok: bool = False) -> dict[str, Any]:
    """Device-to-device copy bandwidth (bytes read + written per second) of a 128-bit-per-thread copy kernel
    over `plan.l2_multiple` times the L2 cache, on `backend_name`'s worker: the median of `calls` timed calls of
    `plan.batches` batches each. {"status": "ok", "gbs", ...} or {"status": "unavailable", "reason"}.
    `elements` and `interpreter_ok` exist for tests on a machine without a GPU."""
    import numpy as np

    from xlate.backends.base import BufferArg, CompileError, CompileOptions, LaunchConfig, ScalarArg
    from xlate.backends.registry import get_backend

    why = gpu_timing(backend_name, interpreter_ok)
    if why:
        return {"status": "unavailable", "reason": why}
    backend = get_backend(backend_name)
    text, path = copy_source(backend_name)
    try:
        art = backend.compile(text, COPY_KERNEL, CompileOptions(), path=path)
    except CompileError as exc:
        return {"status": "unavailable", "reason": f"the copy kernel does not compile on {backend_name}: {exc.log[-300:]}"}
    n = elements or int(plan.l2_multiple * facts.l2_bytes) // 4
    src = np.arange(n, dtype=np.float32)
    launch = LaunchConfig((math.ceil(n / (4 * 256)), 1, 1), (256, 1, 1), 0)  # four floats per thread (C kernels)

    def call(repeat: int) -> list[float]:
        args = [BufferArg("src", src, 0, n), BufferArg("dst", np.zeros(n, np.float32), 0, n), ScalarArg("n", n, "int64")]
        res = backend.run(art, args, launch, timeout=timeout, bench={"warmup": 2, "repeat": repeat})
        if res.status != "ok":
            raise RuntimeError(f"{res.status}: {res.message}".strip())
        if not np.array_equal(res.buffers["dst"], src):
            raise RuntimeError("the copy kernel did not copy")
        return [float(t) for t in res.meta.get("times") or [res.seconds]]

    try:
        per_launch = statistics.median(call(plan.batches))
        repeat = launches_per_batch(per_launch, plan) * plan.batches
        samples = [t for _ in range(calls) for t in call(repeat)]
    except RuntimeError as exc:
        return {"status": "unavailable", "reason": f"the copy kernel failed on {backend_name}: {exc}"}
    s = spread(samples)
    return {"status": "ok", "gbs": 2 * 4 * n / s.median / 1e9, "bytes_per_copy": 2 * 4 * n, "backend": backend_name,
            "samples": s.n, "spread": s.rel_iqr, "kernel": "four floats per thread, 128-bit loads (templates/bench)"}
