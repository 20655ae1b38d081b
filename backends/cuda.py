"""CUDA backend: NVRTC compiles the file's device slice to a cubin for a named arch; CuPy runs it."""

from __future__ import annotations

import functools
import re
from pathlib import Path

from xlate.backends import nvrtc
from xlate.backends.base import (
    Arg,
    Artifact,
    BackendDefaults,
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
    load_artifact,
    store_artifact,
)
from xlate.backends.cudakit import cuda_include_dirs, nvcc_path
from xlate.backends.jitter import parse_for_build
from xlate.backends.worker import run_in_worker

from xlate.errors import ToolchainMissing
from xlate.fsutil import atomic_write_bytes

DEFAULT_ARCH = "sm_90"


@functools.cache
def nvidia_devices() -> list[dict[str, str]]:
    """NVIDIA GPUs visible through CuPy (name, arch). Empty when CuPy or a GPU is missing."""
    try:
        import cupy

        count = cupy.cuda.runtime.getDeviceCount()
    except Exception:
        return []
    out = []
    for i in range(count):
        props = cupy.cuda.runtime.getDeviceProperties(i)
        name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
        out.append({"name": name, "arch": f"sm_{props['major']}{props['minor']}"})
    return out


@functools.cache
def cupy_version() -> str | None:
    try:
        import cupy

        return cupy.__version__
    except Exception:
        return None


@functools.lru_cache(maxsize=1)
def xlate_headers_digest() -> str:
    """What xlate's own headers hold (preludes, shims): an artifact built against older ones is not reused."""
    root = Path(__file__).resolve().parent / "include"
    files = [p for p in sorted(root.rglob("*")) if p.is_file()]
    return content_key(*[str(p.relative_to(root)) for p in files], *[p.read_bytes() for p in files])


class NvrtcCompiler:
    """Device-slice compile through NVRTC, cached by content hash; shared with the HIP-on-NVIDIA route."""

    def __init__(self, backend: str):
        self.backend = backend

    def compile(self, device_source: str, kernel: str, options: CompileOptions, *, path: str, extra: list[str],
                name_expression: str | None = None, global_expressions: dict[str, str] | None = None) -> Artifact:
        arch = options.arch or (nvidia_devices()[0]["arch"] if nvidia_devices() else DEFAULT_ARCH)
        expr = name_expression or kernel + (f"<{', '.join(options.template_args)}>" if options.template_args else "")
        # module variables the gate fills by name (`&d_cost`): NVRTC keeps them and gives their symbols
        variables = dict(global_expressions or {})
        exprs = [expr, *variables.values()]
        flags = [*(f"-D{k}={v}" for k, v in options.defines.items()), *extra, *options.extra]
        version = nvrtc.nvrtc_version()
        if version is None:
            raise ToolchainMissing(
                "NVRTC is not installed", "pip install 'xlate[cuda]' (cuda-bindings and the nvidia-cuda-* wheels)"
            )
        key = content_key(self.backend, device_source, expr, arch, flags, version, nvrtc.include_options(),
                          xlate_headers_digest(), *([sorted(variables.items())] if variables else []))
        cached = load_artifact(self.backend, key)
        if cached is not None:
            return cached
        out = nvrtc.compile_nvrtc(device_source, name=Path(path).name, arch=arch, name_expressions=exprs, options=flags)
        if not out.ok:
            # nvcc would compile the whole file too, but the gate checks one kernel: what NVRTC cannot build in
            # the rest of the file (another kernel's thrust::sort, a host struct of std::string) need not stop
            # it. Its closure (xlate/parse/kernel_closure.py) is built instead; the first error stands if that
            # fails as well.
            from xlate.parse.kernel_closure import kernel_closure

            closure = kernel_closure(device_source, kernel.rsplit("::", 1)[-1])
            retry = None if closure is None else nvrtc.compile_nvrtc(
                closure, name=Path(path).name, arch=arch, name_expressions=exprs, options=flags)
            if retry is None or not retry.ok:
                raise CompileError(self.backend, _relabel(out.log, path), path)
            out = retry
        cubin = compile_cache_dir(self.backend) / f"{key}.cubin"
        atomic_write_bytes(cubin, out.cubin)
        artifact = Artifact(
            backend=self.backend,
            kernel=kernel,
            key=key,
            path=str(cubin),
            entry=out.lowered[expr],
            meta={"arch": arch, "name_expression": expr, "nvrtc": version, "log": out.log,
                  **({"globals": {name: out.lowered[e] for name, e in variables.items()}} if variables else {})},
            compile=CompileResult(True, out.log, out.seconds, False),
        )
        store_artifact(artifact)
        return artifact


def _relabel(log: str, path: str) -> str:
    """NVRTC names the program by its basename; point messages at the user's path instead."""
    name = Path(path).name
    if name == path:
        return log
    return re.sub(rf"(?m)^{re.escape(name)}\(", lambda _: f"{path}(", log)  # #line names are already whole


class CudaBackend(BackendDefaults):
    name = "cuda"
    languages = ("cuda",)
    capabilities: frozenset[Capability] = frozenset({"grid_launch", "schedule_jitter", "sanitizer", "timing",
                                                     "module_globals"})

    def __init__(self) -> None:
        self._compiler = NvrtcCompiler(self.name)

    def detect(self) -> ToolchainInfo:
        version = nvrtc.nvrtc_version()
        devices = nvidia_devices()
        info = ToolchainInfo(
            backend=self.name,
            found=version is not None or nvcc_path() is not None,
            can_compile=version is not None,
            can_run=version is not None and bool(devices) and cupy_version() is not None,
            platform=f"nvidia {devices[0]['arch']}" if devices else None,
            devices=[f"{d['name']} ({d['arch']})" for d in devices],
        )
        if version:
            info.versions["nvrtc"] = version
        if nvcc_path():
            info.paths["nvcc"] = nvcc_path() or ""
        if cuda_include_dirs():
            info.paths["cuda_include"] = cuda_include_dirs()[0]
        if cupy_version():
            info.versions["cupy"] = cupy_version() or ""
        if version is None:
            info.missing.append("NVRTC (cuda-bindings + nvidia-cuda-nvrtc)")
        if not cuda_include_dirs():
            info.missing.append("CUDA headers (cuda_fp16.h, cooperative_groups.h)")
        if cupy_version() is None:
            info.missing.append("CuPy")
        if not devices:
            info.missing.append("an NVIDIA GPU")
        if not info.can_compile:
            info.remedy = "pip install 'xlate[cuda]'"
        elif not info.can_run:
            info.remedy = "run on a machine with an NVIDIA GPU and pip install 'xlate[gpu]' (CuPy)"
        return info

    def compile(self, source: str, kernel: str, options: CompileOptions, *, path: str = "<source>.cu") -> Artifact:
        from xlate.parse.slice import device_slice

        name = path if path.endswith((".cu", ".cuh")) else path + ".cu"
        unit, source = parse_for_build(source, name, "cuda", options.schedule_jitter)
        sliced = device_slice(unit, source, include_dirs=options.include_dirs,
                              system_dirs=nvrtc.system_include_dirs(), context_path=options.context_path, path=path)
        # a CUDA source was written for nvcc, which defines __NVCC__: xlate_nvcc_env.h defines it on this flag,
        # once libcu++ has taken NVRTC for NVRTC (a HIP port, built by the same compiler, does not get it)
        art = self._compiler.compile(sliced, kernel, options, path=path, extra=["-DXLATE_NVCC_SOURCE"],
                                     name_expression=nvrtc.name_expression(unit, source, kernel, options.template_args,
                                                                           compiled=sliced),
                                     global_expressions=nvrtc.global_expressions(source, options.module_globals))
        art.meta["schedule_jitter"] = options.schedule_jitter
        return art

    def run(self, artifact: Artifact, args: list[Arg], launch: LaunchConfig, *, timeout: float = 60.0,
            bench: dict[str, int] | None = None, wrapper: list[str] | None = None) -> RunResult:
        if not self.detect().can_run:
            raise ToolchainMissing("no NVIDIA GPU with CuPy here to run CUDA kernels", self.detect().remedy)
        return run_in_worker(artifact, args, launch, timeout=timeout, bench=bench, wrapper=wrapper)

    def worker_runtime(self) -> WorkerRuntime:
        from xlate.backends.cupy_runtime import CupyRuntime

        return CupyRuntime()
