"""Triton backend: a Python module with @triton.jit kernels and a launcher, run on an NVIDIA GPU or, on CPU
machines, under the Triton interpreter (TRITON_INTERPRET=1, set in the worker before triton is imported).

The module is only parsed in the xlate process (never imported); the worker imports and runs it.
"""

from __future__ import annotations

import functools
import importlib.util
import inspect
import os
import time
from typing import Any

import numpy as np
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
    compile_cache_dir,
    content_key,
    load_artifact,
    store_artifact,
    timed_launches,
)
from xlate.backends.triton_jit import SPECIALISE_VARIABLE, unspecialised
from xlate.backends.worker import run_in_worker

from xlate.errors import ToolchainMissing
from xlate.fsutil import atomic_write_text


@functools.cache  # importlib.metadata reads the dist-info on every call (2 ms; the gate asks per launch)
def _version(module: str) -> str | None:
    try:
        from importlib.metadata import version

        return version(module)
    except Exception:
        return None


@functools.cache
def gpu_present() -> bool:
    from xlate.backends.cuda import nvidia_devices

    return bool(nvidia_devices()) or os.path.exists("/dev/nvidiactl")


def interpret_mode() -> bool:
    forced = os.environ.get("XLATE_TRITON_INTERPRET")
    if forced is not None:
        return forced == "1"
    return not gpu_present()


class TritonBackend(BackendDefaults):
    name = "triton"
    languages = ("triton",)
    # the launcher computes its own grid, or takes the launch's (grid=); module variables are its keyword arguments
    capabilities: frozenset[Capability] = frozenset({"timing", "module_globals", "launch_builds"})

    def detect(self) -> ToolchainInfo:
        triton_v, torch_v = _version("triton"), _version("torch")
        interpret = interpret_mode()
        info = ToolchainInfo(
            backend=self.name,
            found=triton_v is not None,
            can_compile=triton_v is not None and torch_v is not None,
            can_run=triton_v is not None and torch_v is not None,
            platform=("cpu (triton interpreter)" if interpret else "nvidia gpu") if triton_v else None,
            interpreter=interpret and triton_v is not None,
        )
        if triton_v:
            info.versions["triton"] = triton_v
        if torch_v:
            info.versions["torch"] = torch_v
        if triton_v is None:
            info.missing.append("triton")
        if torch_v is None:
            info.missing.append("torch")
        if interpret and triton_v:
            info.notes.append("no GPU: kernels run in the Triton interpreter (numerics of the interpreter, no timings)")
        if not info.can_run:
            info.remedy = "pip install 'xlate[triton]' (with the torch build for your machine)"
        return info

    def compile(self, source: str, kernel: str, options: CompileOptions, *, path: str = "<source>.py") -> Artifact:
        if _version("triton") is None:
            raise ToolchainMissing("triton is not installed", "pip install 'xlate[triton]'")
        key = content_key(self.name, source, kernel, _version("triton"), _version("torch"), ARTIFACT_SCHEMA)
        cached = load_artifact(self.name, key)
        if cached is not None:
            return cached
        t0 = time.perf_counter()
        try:
            compile(source, path, "exec")  # syntax only: nothing is executed here
        except SyntaxError as exc:
            raise CompileError(self.name, f"{path}:{exc.lineno}:{exc.offset}: error: {exc.msg}", path) from None
        from xlate.parse import parse_string

        unit = parse_string(source, path if path.endswith(".py") else path + ".py", "triton", strict=False)
        names = {f.name for f in unit.py_functions}
        if kernel not in names:
            raise CompileError(self.name, f"{path}: error: no launcher function '{kernel}' (module defines: {', '.join(sorted(names)) or 'none'})", path)
        if not unit.triton_kernels:
            raise CompileError(self.name, f"{path}: error: no @triton.jit kernel in the module", path)
        module_path = compile_cache_dir(self.name) / f"{key}.py"
        atomic_write_text(module_path, source)
        artifact = Artifact(self.name, kernel, key, str(module_path), kernel,
                            meta={"jit_kernels": [k.name for k in unit.triton_kernels],
                                  "launcher": launcher_parameters(source, kernel)},
                            compile=CompileResult(True, "", time.perf_counter() - t0))
        store_artifact(artifact)
        return artifact

    def worker_env(self, artifact: Artifact | None = None) -> dict[str, str]:
        """The gate's workers: the interpreter on CPU machines; kernels built without value specialisation
        (backends/triton_jit.py). A timed run gets a worker of its own (`run`)."""
        return {**({"TRITON_INTERPRET": "1"} if interpret_mode() else {}), SPECIALISE_VARIABLE: "0"}

    def run(self, artifact: Artifact, args: list[Arg], launch: LaunchConfig, *, timeout: float = 120.0,
            bench: dict[str, int] | None = None, wrapper: list[str] | None = None) -> RunResult:
        variables = [a.symbol for a in args if isinstance(a, BufferArg) and a.symbol is not None]
        refuse_globals(artifact, variables, sum(1 for a in args if not isinstance(a, BufferArg) or a.symbol is None))
        fields = [a.name for a in args if isinstance(a, BufferArg) and a.slot is not None]
        if fields:  # a launcher has no struct arguments to hold them (port such kernels to CUDA or HIP)
            raise ToolchainMissing(f"a Triton launcher cannot take a struct holding pointers ({', '.join(fields)}): "
                                   "port the kernel to CUDA or HIP, or pass the fields as parameters of their own", None)
        if not self.detect().can_run:
            raise ToolchainMissing("triton/torch missing", self.detect().remedy)
        # timed runs go to workers of their own, which build the port as a user's run of it does
        env = {**self.worker_env(), SPECIALISE_VARIABLE: "1"} if bench else self.worker_env()
        return run_in_worker(artifact, args, launch, timeout=timeout, env=env, bench=bench, wrapper=wrapper)

    def globals_refusal(self, source: str, kernel: str, variables: list[str], positional: int) -> str | None:
        try:
            params = launcher_parameters(source, kernel)
        except SyntaxError:
            return None  # the compile reports it
        return globals_refusal(params, kernel, variables, positional)

    def worker_runtime(self) -> TritonRuntime:
        return TritonRuntime()


ARTIFACT_SCHEMA = "launcher-1"  # what the artifact's meta holds: a cached one without "launcher" is rebuilt


@functools.lru_cache(maxsize=64)
def launcher_parameters(source: str, launcher: str) -> dict[str, Any]:
    """How the module's top-level function `launcher` takes arguments: its positional parameters (in order),
    its keyword-only ones, and whether it takes any keyword (**kwargs). Cached: the gate asks for every case
    (runner.require_globals); callers only read it."""
    import ast

    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name == launcher:
            return {"positional": [a.arg for a in node.args.args], "keyword_only": [a.arg for a in node.args.kwonlyargs],
                    "any_keyword": node.args.kwarg is not None}
    return {"positional": [], "keyword_only": [], "any_keyword": False}


def globals_refusal(params: dict[str, Any], launcher: str, variables: list[str], positional: int = 0) -> str | None:
    """A Triton module holds no device variables: its launcher receives each module variable the spec lists as
    the keyword argument of its name (a tensor filled before the launch and read back after), after the
    `positional` kernel arguments. Why a launcher of parameters `params` (launcher_parameters) cannot take them,
    or None."""
    if params["any_keyword"]:
        return None
    takes = set(params["keyword_only"]) | set(params["positional"][positional:])
    missing = [v for v in variables if v not in takes]
    if not missing:
        return None
    return (f"the triton port does not accept the module globals {', '.join(missing)}: its launcher '{launcher}' has "
            "no keyword parameter of that name (a Triton port takes each __device__/__constant__ variable its spec "
            "lists as a keyword argument, a tensor)")


def refuse_globals(artifact: Artifact, variables: list[str], positional: int = 0) -> None:
    """Never run a port that cannot be given the module variables (ToolchainMissing: could not verify)."""
    params = artifact.meta.get("launcher") or {"positional": [], "keyword_only": [], "any_keyword": False}
    why = globals_refusal(params, artifact.entry, variables, positional)
    if why:
        raise ToolchainMissing(why, None)


TUNE_VARIABLE = "XLATE_TRITON_TUNE"  # read by the ports' launch runtime (templates/triton/launch_runtime.py)

TORCH_DTYPES = {
    "float16": "float16", "float32": "float32", "float64": "float64", "bfloat16": "bfloat16",
    "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64", "uint8": "uint8",
    "uint16": "uint16", "uint32": "uint32", "uint64": "uint64", "bool": "bool",
}


def boolean_interpreter_masks() -> None:
    """Make the Triton interpreter take a mask whose data is not bool. Its comparison of a boolean with an integer
    (`(pid >= n) == 0`, the ports' form of `if (blockIdx.x >= n) return;`) is typed int1 but holds int32 data
    (Triton 3.9), and its loads and stores then fail with "mask has unsupported dtype" where the compiled kernel
    runs. The data is made bool before each masked load and store; nothing else of the interpreter changes."""
    from triton.runtime import interpreter

    builder = interpreter.InterpreterBuilder
    if getattr(builder, "_xlate_bool_masks", False):
        return
    load, store = builder.create_masked_load, builder.create_masked_store

    def as_bool(mask: Any) -> Any:
        if mask is None or np.asarray(mask.data).dtype == np.bool_:
            return mask
        return interpreter.TensorHandle(np.asarray(mask.data).astype(np.bool_), mask.dtype)

    def masked_load(self: Any, ptrs: Any, mask: Any, *rest: Any) -> Any:
        return load(self, ptrs, as_bool(mask), *rest)

    def masked_store(self: Any, ptrs: Any, value: Any, mask: Any, *rest: Any) -> Any:
        return store(self, ptrs, value, as_bool(mask), *rest)

    builder.create_masked_load, builder.create_masked_store = masked_load, masked_store
    builder._xlate_bool_masks = True


class TritonRuntime:
    def __init__(self) -> None:
        import torch
        import triton  # noqa: F401  (imported after TRITON_INTERPRET is in the environment)

        self.torch = torch
        self.interpret = os.environ.get("TRITON_INTERPRET") == "1"
        if self.interpret:
            boolean_interpreter_masks()
        self.device = "cpu" if self.interpret else "cuda"
        self.tune = os.environ.get(TUNE_VARIABLE) != "0"  # the user's XLATE_TRITON_TUNE=0 holds for timed runs too
        self.specialise = os.environ.get(SPECIALISE_VARIABLE) != "0"

    def is_fatal(self, exc: BaseException) -> bool:
        return not self.interpret and ("CUDA" in str(exc) or "illegal" in str(exc).lower())

    def load(self, artifact: dict[str, Any]) -> Any:
        spec = importlib.util.spec_from_file_location(f"xlate_triton_{artifact['key']}", artifact["path"])
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        if not self.interpret and not self.specialise:
            unspecialised(module)
        return module, getattr(module, artifact["entry"])

    def _tensor(self, a: np.ndarray):
        torch = self.torch
        if a.dtype.name == "bfloat16":
            t = torch.from_numpy(np.ascontiguousarray(a).view(np.int16)).view(torch.bfloat16)
        else:
            t = torch.from_numpy(np.ascontiguousarray(a).copy())
        return t.to(self.device) if self.device != "cpu" else t

    def _numpy(self, t, like: np.ndarray) -> np.ndarray:
        t = t.detach().cpu()
        if like.dtype.name == "bfloat16":
            return t.view(self.torch.int16).numpy().view(like.dtype)
        return t.numpy()

    def compiles(self, module: Any) -> int:
        count = 0
        for value in vars(module).values():
            caches = getattr(value, "device_caches", None)
            if isinstance(caches, dict):
                for entry in caches.values():
                    cache = entry[0] if isinstance(entry, tuple) else entry
                    count += len(cache) if hasattr(cache, "__len__") else 0
        return count

    def run(self, handle: Any, args: list[Any], launch: LaunchConfig, bench: dict[str, int] | None = None):
        module, fn = handle
        torch = self.torch
        full: dict[str, Any] = {}
        call: list[Any] = []
        kw: dict[str, Any] = {}
        likes: dict[str, np.ndarray] = {}
        for a in args:
            if isinstance(a, BufferArg):
                t = self._tensor(a.data)
                full[a.name] = t
                likes[a.name] = a.data
                if a.symbol is not None:  # a module variable: the launcher's keyword of its name
                    kw[a.symbol] = t[a.offset : a.offset + a.length]
                else:
                    call.append(t[a.offset : a.offset + a.length])
            else:
                call.append(None if a.dtype == NULL_POINTER else a.value)  # a null pointer: None, as torch spells it
        # a launcher whose grid its parameters cannot give takes CUDA's gridDim as `grid=` (the gate's LaunchConfig)
        if _takes_grid(fn):
            kw["grid"] = tuple(launch.grid)
        # A port with several launch configurations (_XL_CONFIGS) picks one by timing them at first use: only when
        # this run is timed (what users get); a gate run launches the first, the one the verdict is about.
        os.environ[TUNE_VARIABLE] = "1" if bench and self.tune else "0"
        sync = torch.cuda.synchronize if self.device == "cuda" else (lambda: None)
        repeat = (bench or {}).get("repeat", 0)
        times: list[float] = []
        path = "single"
        if repeat and self.device == "cuda":
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            times, path = timed_launches(lambda: fn(*call, **kw), start, stop, lambda a, b: a.elapsed_time(b),
                                         bench or {}, _torch_graph)
        else:
            t0 = time.perf_counter()
            fn(*call, **kw)
            sync()
            times.append(time.perf_counter() - t0)
        # a timing-only call (bench "discard_outputs") brings nothing back: hundreds of MB per call otherwise
        out = {} if (bench or {}).get("discard_outputs") else {name: self._numpy(t, likes[name]) for name, t in full.items()}
        meta = {"compiles": self.compiles(module), "interpreter": self.interpret, "times": times if repeat else [],
                "launch_path": path}
        for attr, key in (("_XL_CHOSEN", "launch_configs"), ("_XL_TIMINGS", "launch_timings")):
            found = getattr(module, attr, None)  # launcher -> the configuration it ran; -> what its timing measured
            if isinstance(found, dict) and found:
                meta[key] = {str(k): v for k, v in found.items()}
        return out, sorted(times)[len(times) // 2], meta


def _torch_graph(launch: Any, n: int) -> Any:
    """`n` launches of a port's launcher captured as one CUDA graph (Triton launches on torch's current stream,
    the capture's); its replay, or None where the launcher cannot be captured (it reads a result back)."""
    import torch

    graph = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(graph):
            for _ in range(n):
                launch()
    except Exception:
        torch.cuda.synchronize()
        return None
    return graph.replay


def _takes_grid(fn: Any) -> bool:
    """Whether the launcher takes the grid as the keyword-only `grid` (xlate.translate.triton: GRID_KEYWORD)."""
    try:
        p = inspect.signature(fn).parameters.get("grid")
    except (TypeError, ValueError):
        return False
    return p is not None and p.kind is inspect.Parameter.KEYWORD_ONLY
