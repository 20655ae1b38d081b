"""Worker-side runtime for cubins on NVIDIA GPUs through CuPy (used by the CUDA and HIP-on-NVIDIA backends)."""

from __future__ import annotations

from typing import Any

import numpy as np
from xlate.backends.base import NULL_POINTER, BufferArg, LaunchConfig, fill_slots, timed_launches

STATIC_SHARED_LIMIT = 48 * 1024


class CupyRuntime:
    def __init__(self) -> None:
        import cupy

        self.cp = cupy
        cupy.cuda.Device().use()

    def load(self, artifact: dict[str, Any]) -> Any:
        module = self.cp.RawModule(path=artifact["path"])
        symbols = dict((artifact.get("meta") or {}).get("globals") or {})  # module variable -> its symbol
        return module.get_function(artifact["entry"]), module, symbols

    def is_fatal(self, exc: BaseException) -> bool:
        # Any CUDA error may leave the context unusable (illegal address is sticky): restart the worker.
        name = type(exc).__name__
        return "CUDA" in name or "cuda" in type(exc).__module__

    def run(self, handle: Any, args: list[Any], launch: LaunchConfig, bench: dict[str, int] | None = None):
        cp = self.cp
        fn, module, symbols = handle  # load(): the kernel, its module, module variable -> symbol
        device: dict[str, Any] = {}
        kargs: list[Any] = []
        variables: dict[str, tuple[Any, np.ndarray, int, int]] = {}
        views: dict[str, Any] = {}
        for a in args:  # every buffer on the device first: a record's pointer fields take their addresses
            if isinstance(a, BufferArg) and a.symbol is None:
                raw = cp.asarray(np.ascontiguousarray(a.data).view(np.uint8))
                size = a.data.dtype.itemsize
                device[a.name] = (raw, a.data)
                views[a.name] = raw[a.offset * size : (a.offset + a.length) * size]
        for a in fill_slots(args, lambda b: int(views[b.name].data.ptr)):
            if isinstance(a, BufferArg) and a.symbol is not None:  # a module variable: filled, passed nothing
                variables[a.name] = (_fill_global(module, symbols.get(a.symbol, a.symbol), a), a.data, a.offset, a.length)
                continue
            if isinstance(a, BufferArg):
                kargs.append(views[a.name])
            else:
                kargs.append(_scalar(a.value, a.dtype))
        if launch.shmem > STATIC_SHARED_LIMIT:
            fn.max_dynamic_shared_size_bytes = launch.shmem
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        repeat = (bench or {}).get("repeat", 0)
        times: list[float] = []
        path = "single"
        if repeat:
            times, path = timed_launches(lambda: fn(launch.grid, launch.block, tuple(kargs), shared_mem=launch.shmem),
                                         start, stop, cp.cuda.get_elapsed_time, bench or {}, self.capture)
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
        if not (bench or {}).get("discard_outputs"):
            for name, (ptr, host, offset, length) in variables.items():
                after = host.copy()
                part = np.empty(length, dtype=host.dtype)
                ptr.copy_to_host(part)
                after[offset : offset + length] = part
                out[name] = after
        seconds = sorted(times)[len(times) // 2]
        return out, seconds, {"times": times if repeat else [], "launch_path": path}

    def capture(self, launch: Any, n: int) -> Any:
        """`n` launches captured as one CUDA graph on a stream of their own; its replay on the current stream
        (where the timing events are recorded). None where capturing fails."""
        cp = self.cp
        stream = cp.cuda.Stream(non_blocking=True)
        try:
            with stream:
                stream.begin_capture()
                try:
                    for _ in range(n):
                        launch()
                finally:
                    graph = stream.end_capture()
        except Exception:  # CuPy without graphs, or a launch that cannot be captured
            return None
        return lambda: graph.launch(cp.cuda.get_current_stream())


def _global_address(module: Any, symbol: str) -> tuple[int, int | None]:
    """(device address, size in bytes) of the module variable `symbol`: cuModuleGetGlobal through the driver
    library (CuPy's RawModule.get_global does not give the size); the size is None where that library cannot
    be called."""
    import ctypes

    try:
        lib = ctypes.CDLL("libcuda.so.1")
        fn = lib.cuModuleGetGlobal_v2
        handle = int(module.module.ptr)  # the loaded CUmodule (RawModule.module: cupy.cuda.function.Module)
    except (OSError, AttributeError):
        return int(module.get_global(symbol).ptr), None
    fn.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_size_t), ctypes.c_void_p, ctypes.c_char_p]
    fn.restype = ctypes.c_int
    address, size = ctypes.c_uint64(), ctypes.c_size_t()
    rc = fn(ctypes.byref(address), ctypes.byref(size), ctypes.c_void_p(handle), symbol.encode())
    if rc != 0:
        raise LookupError(f"cuModuleGetGlobal failed with CUresult {rc}")
    return int(address.value), int(size.value)


class _Global:
    """A module variable's device bytes, filled from and read back into host arrays."""

    def __init__(self, cp: Any, address: int) -> None:
        self.cp = cp
        self.address = address

    def copy_from_host(self, host: np.ndarray) -> None:
        if host.nbytes:
            self.cp.cuda.runtime.memcpy(self.address, host.ctypes.data, host.nbytes, 1)  # host to device

    def copy_to_host(self, host: np.ndarray) -> None:
        if host.nbytes:
            self.cp.cuda.runtime.memcpy(host.ctypes.data, self.address, host.nbytes, 2)  # device to host


def _fill_global(module: Any, symbol: str, a: BufferArg) -> _Global:
    """The module variable `symbol` filled with the argument's elements; it must hold exactly their bytes (a spec
    that gives it another length does not describe this module)."""
    import cupy

    try:
        address, size = _global_address(module, symbol)
    except Exception as exc:
        raise LookupError(f"the module has no variable '{a.symbol}' ({symbol}): {exc}") from None
    part = np.ascontiguousarray(a.data[a.offset : a.offset + a.length])
    if size is not None and size != part.nbytes:
        raise ValueError(f"module variable '{a.symbol}' holds {size} bytes, but the spec gives it {a.length} elements "
                         f"of {part.dtype.itemsize} bytes ({part.nbytes} bytes): its length in the spec is wrong")
    var = _Global(cupy, address)
    var.copy_from_host(part)
    return var


def _scalar(value: Any, dtype: str) -> Any:
    if dtype == NULL_POINTER:  # a pointer parameter passed as nullptr: its 8 bytes, all zero
        return np.uint64(0)
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


