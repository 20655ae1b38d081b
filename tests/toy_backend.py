"""A fifth target from outside xlate, for tests/test_toy_backend.py: "npy", a toy kernel language of plain Python
and NumPy (a jit-decorated function launched as `kernel[grid](...)` by a launcher), run by a NumPy worker.

It is what a third-party package would ship: a target entry (`TARGET`, entry point group xlate.targets), a
backend (`ToyBackend`, group xlate.backends) and a translator (`ToyTranslator`, group xlate.translators: it
knows one kernel, saxpy). Nothing in xlate names it.
"""

from __future__ import annotations

import importlib.util
import time
from typing import Any

import numpy as np
from xlate.backends import base
from xlate.backends.worker import run_in_worker

from xlate.translate.base import Translation

SAXPY = '''import numpy as np


def jit(fn):
    class Launchable:
        def __getitem__(self, grid):
            return fn
    return Launchable()


@jit
def _saxpy(n, a, x, y):
    y[:] = np.float32(a) * x + y


def saxpy(n, a, x, y):
    _saxpy[(1,)](n, a, x, y)
'''

TARGET = {
    "title": "NumPy toy", "language": "npy", "port_suffix": "_npy.py", "file_suffix": ".py", "source_suffixes": [],
    "comment": "#", "fence": "python", "grammar": "python", "default_arch": None, "c_spelling": None,
    "backend": "toy", "missing_kernel": "{path}: error: no launcher '{kernel}' (functions: {names})",
}


class ToyBackend(base.BackendDefaults):
    name = "toy"
    languages = ("npy",)
    capabilities: frozenset[base.Capability] = frozenset({"timing"})  # its launchers compute their own launch

    def detect(self) -> base.ToolchainInfo:
        return base.ToolchainInfo(self.name, True, True, True, platform="cpu (numpy)", interpreter=True,
                             versions={"numpy": np.__version__})

    def compile(self, source: str, kernel: str, options: base.CompileOptions, *,
                path: str = "<source>.py") -> base.Artifact:
        t0 = time.perf_counter()
        try:
            compile(source, path, "exec")  # syntax only: the worker runs it
        except SyntaxError as exc:
            raise base.CompileError(self.name, f"{path}:{exc.lineno}:{exc.offset}: error: {exc.msg}", path) from None
        key = base.content_key(self.name, source, kernel)
        module = base.compile_cache_dir(self.name) / f"{key}.py"
        module.write_text(source)
        art = base.Artifact(self.name, kernel, key, str(module), kernel,
                            compile=base.CompileResult(True, "", time.perf_counter() - t0))
        base.store_artifact(art)
        return art

    def run(self, artifact: base.Artifact, args: list[base.Arg], launch: base.LaunchConfig, *, timeout: float = 60.0,
            bench: dict[str, int] | None = None, wrapper: list[str] | None = None) -> base.RunResult:
        return run_in_worker(artifact, args, launch, timeout=timeout, env=self.worker_env(artifact), bench=bench,
                             wrapper=wrapper)

    def worker_runtime(self) -> ToyRuntime:
        return ToyRuntime()


class ToyRuntime:
    """In the worker: the launcher is called with NumPy views of the buffers (writes land in the allocations)."""

    def load(self, artifact: dict[str, Any]) -> Any:
        spec = importlib.util.spec_from_file_location(f"toy_{artifact['key']}", artifact["path"])
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return getattr(module, artifact["entry"])

    def run(self, handle: Any, args: list[base.Arg], launch: base.LaunchConfig,
            bench: dict[str, int] | None = None) -> tuple[dict[str, np.ndarray], float, dict[str, Any]]:
        whole = {a.name: a.data for a in args if isinstance(a, base.BufferArg)}
        # a record's pointer fields hold their buffers' host addresses here (the worker's own memory)
        passed = base.fill_slots(args, lambda b: b.data.ctypes.data + b.offset * b.data.dtype.itemsize)
        call = [a.data[a.offset : a.offset + a.length] if isinstance(a, base.BufferArg) else a.value for a in passed]
        t0 = time.perf_counter()
        handle(*call)
        return whole, time.perf_counter() - t0, {}

    def is_fatal(self, exc: BaseException) -> bool:
        return False


class ToyTranslator:
    """CUDA -> npy for one kernel: enough to take `xlate port` through a target xlate does not ship."""

    name = "cuda->npy toy rules"
    source_languages = ("cuda",)
    target = "npy"

    def translate(self, unit: Any, text: str, options: Any) -> Translation:
        names = list(options.kernels) or unit.kernel_names()
        known = [k for k in names if k == "saxpy"]
        return Translation(unit.path, unit.language, self.target, "rules", SAXPY if known else "", known,
                           needs_llm=[k for k in names if k not in known])
