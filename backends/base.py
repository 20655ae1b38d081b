"""The Backend protocol and the plain data that crosses it.

A backend compiles a source for one kernel into an `Artifact` (cached on disk by content hash) and runs it in
a worker subprocess (see `worker.py`), so a crash or a hang becomes a `RunResult`, never a dead xlate.
Backends are found through the `xlate.backends` entry-point group; the core never imports one by name.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np

from xlate.diagnostics import Diagnostic
from xlate.errors import ToolchainMissing
from xlate.hashing import content_key  # noqa: F401 (the backends' name for it; the core's key needs no NumPy)

RunStatus = Literal["ok", "crash", "timeout", "error"]


@dataclass
class ToolchainInfo:
    """What `detect()` found. `missing` names exactly what is absent; `remedy` is the one line to act on."""

    backend: str
    found: bool
    can_compile: bool
    can_run: bool
    platform: str | None = None  # where kernels run: "nvidia sm_90", "amd gfx90a", "cpu (triton interpreter)"
    # Kernels run on the CPU through an interpreter: orders of magnitude slower, so the gate fuzzes smaller cases.
    interpreter: bool = False
    devices: list[str] = field(default_factory=list)
    versions: dict[str, str] = field(default_factory=dict)
    paths: dict[str, str] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    remedy: str | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class CompileOptions:
    arch: str | None = None  # sm_90, gfx90a, ...; None: the detected device's, else the backend default
    template_args: list[str] = field(default_factory=list)  # C++ template arguments for `kernel<...>`
    defines: dict[str, str] = field(default_factory=dict)
    extra: list[str] = field(default_factory=list)
    compile_only: bool = False  # check that it compiles; do not prepare anything for running
    # Delay warps pseudo-randomly at kernel entry and after each barrier (backends/jitter.py) so that missing
    # barriers change results; honoured by the NVIDIA routes (CUDA, HIP-on-NVIDIA), ignored elsewhere.
    schedule_jitter: bool = False
    # Folders whose headers the source includes with quotes (its own folder is always searched): inlined into
    # the text a device compiler gets (xlate/parse/bundle.py), so no compiler needs the user's files.
    include_dirs: list[str] = field(default_factory=list)
    # The source file whose includer gives a header its context (xlate/parse/bundle.py: includer_preamble); a
    # port is compiled in its source's context.
    context_path: str | None = None
    # Module-scope variables (`__device__`, `__constant__`) the run fills and reads back by name (BufferArg.symbol):
    # the compile keeps them reachable and records their symbols (Artifact.meta["globals"]: name -> symbol).
    module_globals: list[str] = field(default_factory=list)

    def key(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class CompileResult:
    ok: bool
    log: str = ""
    seconds: float = 0.0
    cached: bool = False


@dataclass
class Artifact:
    """A compiled kernel: files in the compile cache plus what the worker needs to load it."""

    backend: str
    kernel: str
    key: str  # content hash of (source, kernel, options, toolchain version)
    path: str  # main file (cubin, code object, python module, ...)
    entry: str  # symbol to launch (lowered C++ name, launcher function, ...)
    meta: dict[str, Any] = field(default_factory=dict)
    compile: CompileResult = field(default_factory=lambda: CompileResult(True))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class BufferArg:
    """A device buffer. `data` is the whole allocation (guard bands included); the kernel sees
    `data[offset : offset + length]`."""

    name: str
    data: np.ndarray
    offset: int
    length: int
    # A module-scope variable of this name rather than a kernel argument: the runtime copies
    # `data[offset : offset + length]` into it before the launch and reads it back after (it must hold exactly
    # that many bytes), and passes nothing to the kernel for it.
    symbol: str | None = None
    # A pointer field of a record argument rather than an argument of its own: (the record argument's name, the
    # field's byte offset). The runtime allocates it like any buffer, passes nothing for it, and writes its
    # device address (of `data[offset]`) into those 8 bytes of the record (fill_slots).
    slot: tuple[str, int] | None = None


@dataclass
class ScalarArg:
    name: str
    value: int | float
    dtype: str  # numpy dtype name the kernel parameter has, or NULL_POINTER


# The dtype of a ScalarArg that is a pointer parameter passed as the null pointer (a spec's `bias: null`): CUDA and
# HIP get an 8-byte zero, a Triton launcher gets None.
NULL_POINTER = "nullptr"


Arg = BufferArg | ScalarArg


def fill_slots(args: list[Arg], address: Callable[[BufferArg], int]) -> list[Arg]:
    """The arguments the kernel receives: slot buffers dropped, and each record argument's bytes with its pointer
    fields set to their buffers' device addresses (`address(a)`: where the kernel's view of `a` starts),
    little-endian as on every GPU the gate drives."""
    fills: dict[str, list[tuple[int, int]]] = {}
    for a in args:
        if isinstance(a, BufferArg) and a.slot is not None:
            fills.setdefault(a.slot[0], []).append((a.slot[1], address(a)))
    out: list[Arg] = []
    for a in args:
        if isinstance(a, BufferArg) and a.slot is not None:
            continue
        if isinstance(a, ScalarArg) and a.name in fills:
            if not a.dtype.startswith("record"):
                raise TypeError(f"argument '{a.name}' holds pointer fields but is not passed as a record")
            raw = np.asarray(a.value, dtype=np.uint8).copy()
            for offset, addr in fills[a.name]:
                raw[offset : offset + 8] = np.frombuffer(np.uint64(addr).astype("<u8").tobytes(), dtype=np.uint8)
            a = ScalarArg(a.name, raw.tolist(), a.dtype)  # type: ignore[arg-type]
        out.append(a)
    return out


@dataclass
class LaunchConfig:
    grid: tuple[int, int, int] = (1, 1, 1)
    block: tuple[int, int, int] = (1, 1, 1)
    shmem: int = 0


@dataclass
class RunResult:
    status: RunStatus
    buffers: dict[str, np.ndarray] = field(default_factory=dict)  # whole allocations after the run
    message: str = ""
    seconds: float = 0.0  # kernel time as the worker measured it
    stderr: str = ""
    meta: dict[str, Any] = field(default_factory=dict)  # e.g. triton compile counts


# What a backend can do beyond compile and run (its `capabilities`):
#   grid_launch      kernels are launched with the spec's grid and block; a case whose grid or block is empty is
#                    not launched (a device would refuse it). Without it the artifact's entry computes its own
#                    launch (a Triton launcher) and is always called.
#   schedule_jitter  compile() honours CompileOptions.schedule_jitter (backends/jitter.py)
#   sanitizer        its worker can run under compute-sanitizer (`run(wrapper=...)`, NVIDIA devices)
#   timing           run(bench=...) returns kernel times from device events
#   file_check       check_file() compile-checks a whole translation unit, host code included
#   module_globals   run() fills and reads back module-scope variables (BufferArg.symbol, CompileOptions.module_globals)
#   launch_builds    a kernel is built at its first launch (a JIT): that run takes its build time too
Capability = Literal["grid_launch", "schedule_jitter", "sanitizer", "timing", "file_check", "module_globals",
                     "launch_builds"]
CAPABILITIES: tuple[Capability, ...] = ("grid_launch", "schedule_jitter", "sanitizer", "timing", "file_check",
                                        "module_globals", "launch_builds")


@dataclass
class StaticCheck:
    """What a backend's static checker found in a source before any compiler sees it (`check_source`): coded
    findings, and one line per check that ran. Empty: the backend has no such checker."""

    findings: list[Diagnostic] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.findings if d.severity == "error"]


@runtime_checkable
class WorkerRuntime(Protocol):
    """The backend's half that lives in the worker subprocess (backends/worker.py), next to the device."""

    def load(self, artifact: dict[str, Any]) -> Any:
        """Load a compiled artifact (its to_dict() form, path as the worker sees it); returns a handle."""
        ...

    def run(self, handle: Any, args: list[Arg], launch: LaunchConfig,
            bench: dict[str, int] | None = None) -> tuple[dict[str, np.ndarray], float, dict[str, Any]]:
        """Launch once (or `bench["repeat"]` timed times): (whole buffers after the run, seconds, meta)."""
        ...

    def is_fatal(self, exc: BaseException) -> bool:
        """The exception left the device unusable (a lost context): the worker is restarted."""
        ...


@runtime_checkable
class Backend(Protocol):
    """What xlate calls on a backend; every registered backend satisfies it (tests/test_backend_protocol.py).
    `BackendDefaults` supplies the parts a backend without those abilities needs."""

    name: str  # "cuda", "hip", "triton", "ascendc"
    languages: tuple[str, ...]  # source languages it compiles
    capabilities: frozenset[Capability]

    def detect(self) -> ToolchainInfo: ...

    def compile(self, source: str, kernel: str, options: CompileOptions, *, path: str = "<source>") -> Artifact:
        """Compile `kernel` of `source`; raise CompileError with the compiler log on failure and
        xlate.errors.ToolchainMissing when this machine cannot compile for the backend."""
        ...

    def run(self, artifact: Artifact, args: list[Arg], launch: LaunchConfig, *, timeout: float = 60.0,
            bench: dict[str, int] | None = None, wrapper: list[str] | None = None) -> RunResult:
        """Run in the backend's worker subprocess; raise ToolchainMissing when nothing here can run it. `bench`:
        {"warmup", "repeat"} for timed launches ("timing"); `wrapper`: a command the worker runs under
        ("sanitizer")."""
        ...

    def worker_runtime(self) -> WorkerRuntime:
        """Called inside the worker subprocess (on its first load)."""
        ...

    def worker_env(self, artifact: Artifact | None = None) -> dict[str, str]:
        """Environment variables the worker that runs `artifact` needs (set before it imports anything)."""
        ...

    def check_file(self, source: str, arch: str, path: str) -> CompileResult:
        """Compile-check a whole translation unit for `arch` ("file_check"); raise CompileError on errors and
        ToolchainMissing where this backend has no such check or its compiler is missing."""
        ...

    def check_source(self, source: str, path: str, arch: str | None) -> StaticCheck:
        """Static checks of a source in this backend's language, run everywhere (no toolchain needed); errors
        mean the source is wrong or will not build. `arch`: the target chip (None: the target's default)."""
        ...

    def globals_refusal(self, source: str, kernel: str, variables: list[str], positional: int) -> str | None:
        """Why `kernel` of `source` cannot be given the module variables `variables` ("module_globals"), the
        run passing `positional` arguments by position; None where it can (or its compiler will say). Asked
        before anything runs, so that such a port is never run (could not verify)."""
        ...


class BackendDefaults:
    """The protocol's parts for a backend that needs no worker environment, has no whole-file check or static
    checker, and whose sources declare their module variables themselves (a compile finds any missing)."""

    name: str

    def worker_env(self, artifact: Artifact | None = None) -> dict[str, str]:
        return {}

    def check_file(self, source: str, arch: str, path: str) -> CompileResult:
        raise ToolchainMissing(f"the {self.name} backend has no whole-file compile check", None)

    def check_source(self, source: str, path: str, arch: str | None) -> StaticCheck:
        return StaticCheck()

    def globals_refusal(self, source: str, kernel: str, variables: list[str], positional: int) -> str | None:
        return None


def first_error(log: str) -> str:
    """A compiler log's first error line (not a warning printed before it), else its first line."""
    for line in log.splitlines():
        if "error" in line.lower():
            return line.strip()[:300]
    return (log.strip().splitlines() or ["(no compiler output)"])[0][:300]


class CompileError(Exception):
    def __init__(self, backend: str, log: str, path: str = "<source>"):
        super().__init__(f"{backend}: compile failed for {path}")
        self.backend = backend
        self.log = log
        self.path = path


def batches(repeat: int, rounds: int = 5) -> list[int]:
    """Split `repeat` timed launches into up to `rounds` batches (see timed_launches)."""
    rounds = max(1, min(rounds, repeat))
    return [repeat // rounds + (1 if i < repeat % rounds else 0) for i in range(rounds)]


# captures `batch` launches as one CUDA graph; returns its replay, or None where the launches cannot be captured
GraphCapture = Callable[[Callable[[], Any], int], "Callable[[], Any] | None"]


def timed_launches(launch: Callable[[], Any], start: Any, stop: Any, elapsed_ms: Callable[[Any, Any], float],
                   bench: dict[str, int], capture: GraphCapture | None = None) -> tuple[list[float], str]:
    """(seconds per launch, one sample per batch; how the batches were launched), after `bench["warmup"]` untimed
    launches. `start`/`stop` are the runtime's GPU events (anything with record() and synchronize()),
    `elapsed_ms` their difference.

    Each batch runs back to back between two events, so the median of the samples rejects an outlier batch.
    Launched one by one from the host ("stream"), a kernel shorter than its launcher's host latency (Triton's
    Python launcher: tens of microseconds) leaves the GPU waiting and the host's time is measured, not the
    kernel's. With `bench["graph"]` and a runtime that can `capture`, each batch is captured once as a CUDA graph
    and replayed ("graph"): only the GPU's time between the kernels remains. A launcher that cannot be captured
    (it synchronises or copies to the host) is timed from the stream."""
    for _ in range(bench.get("warmup", 3)):
        launch()
    sizes = batches(bench["repeat"])
    graphs: dict[int, Callable[[], Any]] = {}
    if bench.get("graph") and capture is not None:
        for n in sorted(set(sizes)):
            replay = capture(launch, n)
            if replay is None:
                graphs.clear()
                break
            graphs[n] = replay
    times: list[float] = []
    for batch in sizes:
        start.record()
        if graphs:
            graphs[batch]()
        else:
            for _ in range(batch):
                launch()
        stop.record()
        stop.synchronize()
        times.append(elapsed_ms(start, stop) / 1e3 / batch)
    return times, "graph" if graphs else "stream"


def compile_cache_dir(backend: str) -> Path:
    from xlate.resources import cache_dir

    path = cache_dir() / "compile" / backend
    path.mkdir(parents=True, exist_ok=True)
    return path


def store_artifact(artifact: Artifact) -> None:
    """Write the artifact's manifest beside its files (atomically), so a later process finds it by key."""
    from xlate.fsutil import atomic_write_text

    manifest = compile_cache_dir(artifact.backend) / f"{artifact.key}.json"
    atomic_write_text(manifest, json.dumps(artifact.to_dict(), default=str))


def load_artifact(backend: str, key: str) -> Artifact | None:
    manifest = compile_cache_dir(backend) / f"{key}.json"
    if not manifest.exists():
        return None
    try:
        d = json.loads(manifest.read_text())
        d["compile"] = CompileResult(**d["compile"])
        art = Artifact(**d)
    except (ValueError, TypeError, KeyError):
        return None
    if not Path(art.path).exists():
        return None
    art.compile.cached = True
    return art
