"""Worker-side runtime for cubins on NVIDIA GPUs through CuPy (used by the CUDA and HIP-on-NVIDIA backends)."""

from __future__ import annotations

from typing import Any

import numpy as np
from xlate.backends.base import BufferArg, LaunchConfig, timed_launches

STATIC_SHARED_LIMIT = 48 * 1024


class CupyRuntime:
    def __init__(self) -> None:
        import cupy

        self.cp = cupy
        cupy.cuda.Device().use()

    def load(self, artifact: dict[str, Any]) -> Any:
        module = self.cp.RawModule(path=artifact["path"])
        return module.get_function(artifact["entry"]), module

    def is_fatal(self, exc: BaseException) -> bool:
        # Any CUDA error may leave the context unusable (illegal address is sticky): restart the worker.
        name = type(exc).__name__
        return "CUDA" in name or "cuda" in type(exc).__module__

    def run(self, handle: Any, args: list[Any], launch: LaunchConfig, bench: dict[str, int] | None = None):
        cp = self.cp
        fn, _module = handle
        device: dict[str, Any] = {}
        kargs: list[Any] = []
        for a in args:
            if isinstance(a, BufferArg):
                raw = cp.asarray(np.ascontiguousarray(a.data).view(np.uint8))
                size = a.data.dtype.itemsize
                device[a.name] = (raw, a.data)
                kargs.append(raw[a.offset * size : (a.offset + a.length) * size])
            else:
                kargs.append(_scalar(a.value, a.dtype))
        if launch.shmem > STATIC_SHARED_LIMIT:
            fn.max_dynamic_shared_size_bytes = launch.shmem
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        repeat = (bench or {}).get("repeat", 0)
        times: list[float] = []
        if repeat:
            times = timed_launches(lambda: fn(launch.grid, launch.block, tuple(kargs), shared_mem=launch.shmem),
                                   start, stop, cp.cuda.get_elapsed_time, bench or {})
        else:
            start.record()
            fn(launch.grid, launch.block, tuple(kargs), shared_mem=launch.shmem)
            stop.record()
            stop.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, stop) / 1e3)
        cp.cuda.runtime.deviceSynchronize()
        # a timing-only call (bench "discard_outputs") brings nothing back: hundreds of MB per call otherwise
        out = {} if (bench or {}).get("discard_outputs") else {
            name: cp.asnumpy(raw).view(host.dtype).reshape(host.shape) for name, (raw, host) in device.items()}
        seconds = sorted(times)[len(times) // 2]
        return out, seconds, {"times": times if repeat else []}


def _scalar(value: Any, dtype: str) -> Any:
    if dtype.startswith("record"):  # a struct of mixed fields: its bytes in C layout (xlate/specs/records.py);
        raw = np.asarray(value, dtype=np.uint8)  # the driver reads each argument at the offset the cubin gives it
        return raw.view(np.dtype((np.void, raw.nbytes)))
    if isinstance(value, list):  # float3, a struct of numbers: one by-value argument of all its bytes
        lanes = np.ascontiguousarray(np.asarray(value, dtype=np.dtype(dtype)))
        return lanes.view(np.dtype((np.void, lanes.nbytes)))  # a size-one array: CuPy passes its bytes by value
    if dtype == "bfloat16":
        import ml_dtypes

        return np.array(value, dtype=ml_dtypes.bfloat16).view(np.uint16)[()]
    return np.dtype(dtype).type(value)


