"""What the OS sandbox (backends/sandbox.py) costs: per fuzz run, per worker start, per launch, per compile.

    python bench/sandbox_overhead.py [--repeat 5] [--examples 20] [--out bench/results/sandbox_overhead_<where>.json]

Each measurement runs the same work directly (no policy: how xlate runs its own code) and under
`sandbox.untrusted()` (how it runs model output and fuzz inputs), alternating, and reports medians:
  start     a bare `python -c pass` (bwrap's own cost: namespaces, mounts, prlimit)
  worker    a fresh worker: start, import the runtime, load a kernel, first launch
  launch    one warm round trip (send buffers, launch, return buffers)
  fuzz      one whole `verify()` with fresh workers: the cost a user sees per `xlate fuzz` run
  compile   hipcc (a subprocess in the sandbox) and NVRTC (in-process vs in the sandboxed worker), cold
Rows that need what this machine lacks (a GPU, hipcc, NVRTC) say so instead. On a GPU machine the worker, launch
and fuzz rows also run the CUDA backend (relu.cu against its Triton port), with the device nodes in the sandbox.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RELU_CU = ROOT / "examples" / "kernels" / "relu.cu"
RELU_PY = ROOT / "examples" / "triton" / "relu.py"
RELU_REF = f"{ROOT / 'examples' / 'references' / 'relu.py'}:relu"


def _fresh_workers() -> None:
    from xlate.backends import worker

    for w in worker._POOL.values():
        w.stop()
    worker._POOL.clear()


def _pair(fn: Callable[[], object], repeat: int) -> dict:
    """Median seconds of fn() directly and inside untrusted(), alternating so drift hits both alike."""
    from xlate.backends import sandbox

    direct, boxed = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        direct.append(time.perf_counter() - t0)
        with sandbox.untrusted(require=True) as policy:
            t0 = time.perf_counter()
            fn()
            boxed.append(time.perf_counter() - t0)
        assert policy.label() == "sandboxed", policy.label()
    d, b = statistics.median(direct), statistics.median(boxed)
    return {"direct_s": round(d, 4), "sandboxed_s": round(b, 4), "overhead_s": round(b - d, 4),
            "ratio": round(b / d, 3) if d else None, "repeat": repeat}


def bench_start(repeat: int) -> dict:
    from xlate.backends import sandbox

    def run(cmd: list[str]) -> float:
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        return time.perf_counter() - t0

    argv = [sys.executable, "-P", "-c", "pass"]
    direct = [run(argv) for _ in range(repeat)]
    boxed = [run(sandbox.build(argv)) for _ in range(repeat)]
    d, b = statistics.median(direct), statistics.median(boxed)
    return {"direct_s": round(d, 4), "sandboxed_s": round(b, 4), "overhead_s": round(b - d, 4), "repeat": repeat}


def _relu_args(n: int = 4096):
    from xlate.backends.base import BufferArg, ScalarArg

    g = 64
    x = np.zeros(n + 2 * g, np.float32)
    x[g : g + n] = np.random.default_rng(0).standard_normal(n)
    return [BufferArg("x", x, g, n), BufferArg("y", np.zeros_like(x), g, n), ScalarArg("n", n, "int32")]


def _launch(backend: str):
    from xlate.backends.base import CompileOptions, LaunchConfig
    from xlate.backends.registry import get_backend

    b = get_backend(backend)
    path = RELU_PY if backend == "triton" else RELU_CU
    art = b.compile(path.read_text(), "relu", CompileOptions(), path=str(path))
    launch = LaunchConfig((16, 1, 1), (256, 1, 1))

    def once() -> None:
        res = b.run(art, _relu_args(), launch, timeout=300)
        assert res.status == "ok", res.message + res.stderr

    return once


def bench_worker(backend: str, repeat: int) -> dict:
    once = _launch(backend)

    def cold() -> None:
        _fresh_workers()
        once()

    return _pair(cold, repeat)


def bench_launch(backend: str, repeat: int) -> dict:
    from xlate.backends import sandbox

    once = _launch(backend)
    once()  # warm the direct worker
    with sandbox.untrusted():
        once()  # and the sandboxed one
    return _pair(once, max(repeat, 20))


def bench_fuzz(candidate: Path, source: Path | None, examples: int, repeat: int) -> dict:
    from xlate.verify.api import verify

    def run() -> None:
        _fresh_workers()
        if source is None:
            v = verify(str(candidate), None, kernel="relu", reference=RELU_REF, examples=examples)
        else:
            v = verify(str(source), str(candidate), kernel="relu", examples=examples)
        assert v.status == "verified", v.summary()

    row = _pair(run, repeat)
    row.update(examples=examples, what=f"{candidate.name} vs {source.name if source else 'reference'}")
    return row


def bench_compile(repeat: int) -> dict:
    from xlate.backends import nvrtc
    from xlate.backends.hip import hipcc_path

    rows: dict = {}
    src = RELU_CU.read_text().split("void launch_relu")[0]
    if hipcc_path():
        from xlate.backends.registry import get_backend

        hip = get_backend("hip")
        hip_src = src.replace("#include <cuda_runtime.h>", "#include <hip/hip_runtime.h>")
        # a fresh comment per compile: the hipcc check is cached by content
        rows["hipcc"] = _pair(lambda: hip.check_file(hip_src + f"// {uuid.uuid4()}\n", "gfx90a", "k.hip"), repeat)
    else:
        rows["hipcc"] = {"note": "hipcc not installed"}
    if nvrtc.nvrtc_version():
        def one() -> None:
            out = nvrtc.compile_nvrtc(src + f"// {uuid.uuid4()}\n", name="k.cu", arch="sm_90", name_expressions=["relu"])
            assert out.ok, out.log

        from xlate.backends import sandbox

        with sandbox.untrusted():
            one()  # the sandboxed worker's start is not a compile's cost
        rows["nvrtc"] = _pair(one, max(repeat, 10))
    else:
        rows["nvrtc"] = {"note": "NVRTC not installed"}
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--examples", type=int, default=20)
    ap.add_argument("--out")
    args = ap.parse_args()
    from xlate.backends import sandbox
    from xlate.backends.cuda import nvidia_devices

    det = sandbox.detect()
    if det.mechanism is None:
        sys.exit(f"no sandbox here: {det.reason}")
    gpu = bool(nvidia_devices())
    with tempfile.TemporaryDirectory() as cache:
        os.environ.setdefault("XLATE_CACHE_DIR", cache)
        result: dict = {"host": platform.node(), "machine": platform.machine(), "cpus": os.cpu_count(),
                        "gpu": [d["name"] for d in nvidia_devices()], "sandbox": det.to_dict(),
                        "start": bench_start(args.repeat * 4)}
        backends = ["triton", "cuda"] if gpu else ["triton"]
        result["worker"] = {b: bench_worker(b, args.repeat) for b in backends}
        result["launch"] = {b: bench_launch(b, args.repeat) for b in backends}
        result["fuzz"] = {"triton_vs_reference": bench_fuzz(RELU_PY, None, args.examples, args.repeat)}
        if gpu:
            result["fuzz"]["cuda_vs_triton"] = bench_fuzz(RELU_PY, RELU_CU, args.examples, args.repeat)
        result["compile"] = bench_compile(args.repeat)
        _fresh_workers()
    where = "h200" if any("H200" in g for g in result["gpu"]) else ("gpu" if gpu else "cpu")
    out = Path(args.out or ROOT / "bench" / "results" / f"sandbox_overhead_{where}.json")
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"sandbox: {det.reason}")
    print(f"{'measurement':34} {'direct s':>10} {'sandboxed s':>12} {'overhead s':>11}")
    for group in ("worker", "launch", "fuzz", "compile"):
        for name, row in result[group].items():
            if "direct_s" in row:
                print(f"{group + ' ' + name:34} {row['direct_s']:>10.4f} {row['sandboxed_s']:>12.4f} {row['overhead_s']:>11.4f}")
            else:
                print(f"{group + ' ' + name:34} {row.get('note', '')}")
    s = result["start"]
    print(f"{'start python -c pass':34} {s['direct_s']:>10.4f} {s['sandboxed_s']:>12.4f} {s['overhead_s']:>11.4f}")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
