"""HIP backend.

Compile: always hipcc for an AMD target (`HIP_PLATFORM=amd hipcc --offload-arch=ARCH -c`), where hipcc exists:
that is the check that the port builds for AMD. Run, by what the machine has:
  amd    - an AMD GPU with ROCm and hip-python: hiprtc code object, launched with hipModuleLaunchKernel.
  nvidia - an NVIDIA GPU: the device slice through NVRTC with a HIP device-language prelude
           (backends/include/xlate_hip_on_nvidia.h), run with CuPy. Warps are 32 wide there, so this route
           cannot show wavefront-64 bugs; every verdict says so.
XLATE_HIP_PLATFORM=amd|nvidia forces a route.
"""

from __future__ import annotations

import ctypes
import functools
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from xlate.backends import nvrtc, sandbox
from xlate.backends.base import (
    NULL_POINTER,
    Arg,
    Artifact,
    BackendDefaults,
    BufferArg,
    Capability,
    CompileError,
    CompileOptions,
    CompileResult,
    LaunchConfig,
    RunResult,
    ToolchainInfo,
    WorkerRuntime,
    compile_cache_dir,
    content_key,
    fill_slots,
    load_artifact,
    store_artifact,
)
from xlate.backends.cuda import NvrtcCompiler, cupy_version, nvidia_devices
from xlate.backends.jitter import parse_for_build
from xlate.backends.sandbox import run_tool
from xlate.backends.worker import run_in_worker

from xlate.errors import ToolchainMissing
from xlate.fsutil import atomic_write_bytes
from xlate.parse.bundle import bundle
from xlate.parse.source import to_bytes

DEFAULT_AMD_ARCH = "gfx90a"
# HIP's unmasked warp votes, renamed in the port's own code for the NVIDIA route (the prelude defines the new
# names): CUDA still declares 32-bit __ballot/__any/__all, and libcu++ has types of those names, so neither
# definitions nor macros of HIP's spellings can stand there.
HIP_VOTES = re.compile(r"(?<![\w.>:])(__ballot|__any|__all)(?=\s*\()")
NVIDIA_CAVEAT = "HIP ran on NVIDIA (32-wide warps): wavefront-64 bugs cannot show here"


@functools.cache
def hipcc_path() -> str | None:
    return shutil.which("hipcc") or next((p for p in ("/opt/rocm/bin/hipcc",) if os.path.exists(p)), None)


@functools.cache
def hipcc_version() -> str | None:
    path = hipcc_path()
    if path is None:
        return None
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60,
                             env={**os.environ, "HIP_PLATFORM": "amd"}).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in out.splitlines():
        if line.startswith("HIP version:"):
            return line.split(":", 1)[1].strip()
    return out.strip().splitlines()[0] if out.strip() else "unknown"


@functools.cache
def amd_devices() -> list[dict[str, str]]:
    """AMD GPUs through hip-python (needs ROCm's runtime and /dev/kfd)."""
    if not os.path.exists("/dev/kfd"):
        return []
    try:
        from hip import hip

        err, count = hip.hipGetDeviceCount()
        if int(err) != 0:
            return []
        out = []
        for i in range(count):
            props = hip.hipDeviceProp_t()
            hip.hipGetDeviceProperties(props, i)
            out.append({"name": props.name.decode(), "arch": props.gcnArchName.decode().split(":")[0]})
        return out
    except Exception:
        return []


def run_platform() -> str | None:
    forced = os.environ.get("XLATE_HIP_PLATFORM")
    if forced in ("amd", "nvidia"):
        return forced
    if amd_devices():
        return "amd"
    if nvidia_devices() and cupy_version():
        return "nvidia"
    return None


class HipBackend(BackendDefaults):
    name = "hip"
    languages = ("hip",)
    # schedule jitter and compute-sanitizer on the NVIDIA route only (see CompileOptions.schedule_jitter)
    # module_globals: on the NVIDIA route (CuPy) and through hipModuleGetGlobal on AMD
    capabilities: frozenset[Capability] = frozenset({"grid_launch", "schedule_jitter", "sanitizer", "timing",
                                                     "file_check", "module_globals"})

    def __init__(self) -> None:
        self._nvrtc = NvrtcCompiler(self.name)

    def detect(self) -> ToolchainInfo:
        platform = run_platform()
        amd = amd_devices()
        nv = nvidia_devices()
        info = ToolchainInfo(
            backend=self.name,
            found=hipcc_path() is not None,
            can_compile=hipcc_path() is not None,
            can_run=platform is not None,
            platform=(f"amd {amd[0]['arch']}" if platform == "amd" and amd else
                      f"nvidia {nv[0]['arch']} (HIP-on-NVIDIA prelude)" if platform == "nvidia" and nv else None),
            devices=[f"{d['name']} ({d['arch']})" for d in (amd if platform == "amd" else nv)],
        )
        if hipcc_path():
            info.paths["hipcc"] = hipcc_path() or ""
            info.versions["hip"] = hipcc_version() or "unknown"
        else:
            info.missing.append("hipcc")
        if platform == "nvidia":
            info.notes.append(NVIDIA_CAVEAT)
        if not amd:
            info.missing.append("an AMD GPU with ROCm and hip-python (for wavefront-64 runs)")
        if platform is None:
            info.missing.append("any GPU to run HIP on (AMD, or NVIDIA with CuPy)")
        if not info.can_compile:
            info.remedy = "apt-get install hipcc libamdhip64-dev (Debian), or install ROCm"
        elif not info.can_run:
            info.remedy = "run on an AMD GPU with ROCm (+ pip install hip-python) or an NVIDIA GPU with CuPy"
        return info

    # -- compile ---------------------------------------------------------------------------------------------
    def check_file(self, source: str, arch: str, path: str) -> CompileResult:
        """hipcc for AMD, whole file, object only; cached by content."""
        hipcc = hipcc_path()
        if hipcc is None:
            raise ToolchainMissing("hipcc not found", "apt-get install hipcc libamdhip64-dev")
        key = content_key("hipcc", source, arch, hipcc_version())
        marker = compile_cache_dir(self.name) / f"{key}.hipcc.log"
        if marker.exists():
            return CompileResult(True, marker.read_text(), 0.0, True)
        t0 = time.perf_counter()
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / (Path(path).stem + ".hip")
            src.write_bytes(to_bytes(source))
            # inside the sandbox when the source is untrusted (backends/sandbox.py), as before otherwise
            proc = run_tool([hipcc, f"--offload-arch={arch}", "-c", str(src), "-o", str(Path(tmp) / "k.o")],
                            workdir=tmp, extra_env={"HIP_PLATFORM": "amd"}, timeout=600)
        log = (proc.stdout + proc.stderr).replace(str(src), path)
        if proc.returncode != 0:
            raise CompileError(self.name, log, path)
        atomic_write_bytes(marker, log.encode())
        return CompileResult(True, log, time.perf_counter() - t0, False)

    def compile(self, source: str, kernel: str, options: CompileOptions, *, path: str = "<source>.hip") -> Artifact:
        amd_arch = options.arch if options.arch and options.arch.startswith("gfx") else DEFAULT_AMD_ARCH
        whole = bundle(source, path, options.include_dirs)  # the project's headers inlined: no -I needed
        check = self.check_file(whole, amd_arch, path) if hipcc_path() else None
        platform = None if options.compile_only else run_platform()
        if platform == "nvidia":
            from xlate.parse.slice import device_slice

            name = path if path.endswith(".hip") else path + ".hip"
            # a port compiled from memory includes its source's headers (`#define GLOBAL __global__` in cu.h):
            # read with their qualifier macros, or its kernels look like host functions
            unit, source = parse_for_build(source, name, "hip", options.schedule_jitter, tuple(options.include_dirs))
            nv_options = CompileOptions(None, options.template_args, options.defines, options.extra,
                                        module_globals=list(options.module_globals))
            sliced = device_slice(unit, source, hip=True, include_dirs=options.include_dirs,
                                  system_dirs=nvrtc.system_include_dirs(), context_path=options.context_path,
                                  path=path)
            sliced = HIP_VOTES.sub(lambda m: "xlate_hip_" + m.group(1)[2:], sliced)
            # named as the CUDA route names it (namespaces, overloads told apart by their parameter types)
            art = self._nvrtc.compile(sliced, kernel, nv_options, path=path, extra=["-include", "xlate_hip_on_nvidia.h"],
                                      name_expression=nvrtc.name_expression(unit, source, kernel, options.template_args,
                                                                            compiled=sliced),
                                      global_expressions=nvrtc.global_expressions(source, options.module_globals))
            art.meta.update(platform="nvidia", caveat=NVIDIA_CAVEAT, amd_arch=amd_arch, schedule_jitter=options.schedule_jitter,
                            hipcc=bool(check), hipcc_log=check.log if check else None)
            return art
        if platform == "amd":
            return self._compile_amd(whole, kernel, options, amd_arch, path, check)
        if check is None:
            raise ToolchainMissing("hipcc not found and no GPU to compile HIP for", self.detect().remedy)
        key = content_key(self.name, "check", source, kernel, amd_arch, hipcc_version())
        return Artifact(self.name, kernel, key, "", kernel,
                        meta={"platform": None, "amd_arch": amd_arch, "hipcc": True, "compile_only": True}, compile=check)

    def _compile_amd(self, source: str, kernel: str, options: CompileOptions, arch: str, path: str,
                     check: CompileResult | None) -> Artifact:
        expr = kernel + (f"<{', '.join(options.template_args)}>" if options.template_args else "")
        key = content_key(self.name, "amd", source, expr, arch, hipcc_version())
        cached = load_artifact(self.name, key)
        if cached is not None:
            return cached
        t0 = time.perf_counter()
        if sandbox.decide():  # untrusted text: hiprtc runs in the sandboxed worker
            from xlate.backends.worker import remote_compile

            res = HiprtcOutput(**remote_compile("hiprtc", source=source, name=Path(path).name, expr=expr, arch=arch))
        else:
            res = hiprtc_compile(source, Path(path).name, expr, arch)
        if not res.ok:
            raise CompileError(self.name, res.log, path)
        out = compile_cache_dir(self.name) / f"{key}.co"
        atomic_write_bytes(out, res.code)
        art = Artifact(self.name, kernel, key, str(out), res.lowered,
                       meta={"platform": "amd", "amd_arch": arch, "hipcc": bool(check)},
                       compile=CompileResult(True, res.log, time.perf_counter() - t0))
        store_artifact(art)
        return art

    # -- run -------------------------------------------------------------------------------------------------
    def run(self, artifact: Artifact, args: list[Arg], launch: LaunchConfig, *, timeout: float = 60.0,
            bench: dict[str, int] | None = None, wrapper: list[str] | None = None) -> RunResult:
        platform = artifact.meta.get("platform")
        if not platform:
            raise ToolchainMissing("no GPU here to run HIP kernels (compiled for AMD with hipcc only)", self.detect().remedy)
        result = run_in_worker(artifact, args, launch, timeout=timeout, env=self.worker_env(artifact), bench=bench,
                               wrapper=wrapper)
        result.meta["platform"] = platform
        if platform == "nvidia":
            result.meta["caveat"] = NVIDIA_CAVEAT
        return result

    def worker_env(self, artifact: Artifact | None = None) -> dict[str, str]:
        return {"XLATE_HIP_RUNTIME": (artifact.meta.get("platform") if artifact else None) or "nvidia"}

    def worker_runtime(self) -> WorkerRuntime:
        if os.environ.get("XLATE_HIP_RUNTIME") == "amd":
            return HipAmdRuntime()
        from xlate.backends.cupy_runtime import CupyRuntime

        return CupyRuntime()


@dataclass
class HiprtcOutput:
    ok: bool
    log: str
    code: bytes = b""
    lowered: str = ""


def hiprtc_compile(source: str, name: str, expr: str, arch: str) -> HiprtcOutput:
    """hiprtc, in this process (the sandboxed worker's, for untrusted text)."""
    from hip import hiprtc

    _, prog = hiprtc.hiprtcCreateProgram(source.encode(), name.encode(), 0, [], [])
    hiprtc.hiprtcAddNameExpression(prog, expr.encode())
    opts = [f"--offload-arch={arch}".encode(), b"-std=c++17"]
    (res,) = hiprtc.hiprtcCompileProgram(prog, len(opts), opts)
    _, size = hiprtc.hiprtcGetProgramLogSize(prog)
    log = bytearray(size)
    hiprtc.hiprtcGetProgramLog(prog, log)
    if int(res) != 0:
        return HiprtcOutput(False, log.decode(errors="replace"))
    _, size = hiprtc.hiprtcGetCodeSize(prog)
    code = bytearray(size)
    hiprtc.hiprtcGetCode(prog, code)
    _, lowered = hiprtc.hiprtcGetLoweredName(prog, expr.encode())
    return HiprtcOutput(True, log.decode(errors="replace"), bytes(code),
                        lowered.decode() if isinstance(lowered, bytes) else str(lowered))


class HipAmdRuntime:
    """Worker-side runtime on AMD GPUs through hip-python. Written for ROCm machines; none exists here."""

    def __init__(self) -> None:
        from hip import hip

        self.hip = hip

    def _ok(self, result: Any) -> Any:
        """hip-python returns (err, values...): raise on error, return the value(s)."""
        err, *rest = result if isinstance(result, tuple) else (result,)
        if int(err) != 0:
            raise RuntimeError(f"HIP error {err}")
        return rest[0] if len(rest) == 1 else (tuple(rest) or None)

    def is_fatal(self, exc: BaseException) -> bool:
        return "HIP error" in str(exc)

    def load(self, artifact: dict[str, Any]) -> Any:
        code = Path(artifact["path"]).read_bytes()
        module = self._ok(self.hip.hipModuleLoadData(code))
        return self._ok(self.hip.hipModuleGetFunction(module, artifact["entry"].encode())), module

    def run(self, handle: Any, args: list[Any], launch: LaunchConfig, bench: dict[str, int] | None = None):
        hip = self.hip
        fn, module = handle
        device: dict[str, Any] = {}
        extra: list[Any] = []
        variables: dict[str, tuple[Any, np.ndarray, int, int]] = {}
        addresses: dict[str, int] = {}
        for a in args:  # every buffer on the device first: a record's pointer fields take their addresses
            if isinstance(a, BufferArg) and a.symbol is None:
                host = np.ascontiguousarray(a.data)
                ptr = self._ok(hip.hipMalloc(max(host.nbytes, 1)))
                self._ok(hip.hipMemcpy(ptr, host, host.nbytes, hip.hipMemcpyKind.hipMemcpyHostToDevice))
                device[a.name] = (ptr, host)
                addresses[a.name] = int(ptr) + a.offset * host.dtype.itemsize
        for a in fill_slots(args, lambda b: addresses[b.name]):
            if isinstance(a, BufferArg) and a.symbol is not None:  # a module variable (untested: no AMD GPU here)
                ptr, size = self._ok(hip.hipModuleGetGlobal(module, a.symbol.encode()))
                part = np.ascontiguousarray(a.data[a.offset : a.offset + a.length])
                if int(size) != part.nbytes:
                    raise ValueError(f"module variable '{a.symbol}' holds {int(size)} bytes, but the spec gives it "
                                     f"{a.length} elements ({part.nbytes} bytes): its length in the spec is wrong")
                if part.nbytes:
                    self._ok(hip.hipMemcpy(ptr, part, part.nbytes, hip.hipMemcpyKind.hipMemcpyHostToDevice))
                variables[a.name] = (ptr, a.data, a.offset, a.length)
                continue
            if isinstance(a, BufferArg):
                extra.append(ctypes.c_void_p(addresses[a.name]))
            else:
                extra.append(_ctype(a.value, a.dtype))
        t0 = time.perf_counter()
        self._ok(hip.hipModuleLaunchKernel(fn, *launch.grid, *launch.block, sharedMemBytes=launch.shmem,
                                           stream=None, kernelParams=None, extra=tuple(extra)))
        self._ok(hip.hipDeviceSynchronize())
        seconds = time.perf_counter() - t0
        out = {}
        for name, (ptr, host) in device.items():
            result = np.empty_like(host)
            self._ok(hip.hipMemcpy(result, ptr, host.nbytes, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
            self._ok(hip.hipFree(ptr))
            out[name] = result
        for name, (ptr, host, offset, length) in variables.items():
            part = np.empty(length, dtype=host.dtype)
            if part.nbytes:
                self._ok(hip.hipMemcpy(part, ptr, part.nbytes, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
            result = host.copy()
            result[offset : offset + length] = part
            out[name] = result
        return out, seconds, {}


def _ctype(value: Any, dtype: str) -> Any:
    if dtype == NULL_POINTER:  # a pointer parameter passed as nullptr
        return ctypes.c_void_p(None)
    if dtype.startswith("record") or isinstance(value, list):  # a by-value struct: its bytes, aligned as C aligns it
        raw = np.asarray(value, dtype=np.uint8) if dtype.startswith("record") else np.ascontiguousarray(
            np.asarray(value, dtype=np.dtype(dtype))).view(np.uint8)
        align = int(dtype[len("record"):] or 1) if dtype.startswith("record") else np.dtype(dtype).itemsize
        word = {1: ctypes.c_uint8, 2: ctypes.c_uint16, 4: ctypes.c_uint32}.get(align, ctypes.c_uint64)
        count = -(-raw.nbytes // ctypes.sizeof(word))
        padded = np.zeros(count * ctypes.sizeof(word), dtype=np.uint8)
        padded[: raw.nbytes] = raw
        return (word * count).from_buffer_copy(padded.tobytes())
    table = {
        "int8": ctypes.c_int8, "int16": ctypes.c_int16, "int32": ctypes.c_int32, "int64": ctypes.c_int64,
        "uint8": ctypes.c_uint8, "uint16": ctypes.c_uint16, "uint32": ctypes.c_uint32, "uint64": ctypes.c_uint64,
        "float32": ctypes.c_float, "float64": ctypes.c_double, "bool": ctypes.c_bool,
    }
    if dtype in table:
        return table[dtype](value)
    if dtype == "float16":
        return ctypes.c_uint16(int(np.array(value, np.float16).view(np.uint16)))
    raise TypeError(f"cannot pass a {dtype} scalar to a HIP kernel")
