"""Array payloads between xlate and its workers travel through shared memory (backends/arena.py), the pipe only
carries small headers; a worker that cannot map the memory falls back to the pipe with the same results."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from xlate.backends import sandbox
from xlate.backends.arena import Arena
from xlate.backends.base import BufferArg, CompileOptions, LaunchConfig, ScalarArg
from xlate.backends.registry import get_backend
from xlate.backends.worker import finish_worker, get_worker, read_frame, write_frame

ROOT = Path(__file__).resolve().parents[1]
RELU = (ROOT / "examples/triton/relu.py").read_text()


def _arrays(rng: np.random.Generator) -> list[np.ndarray]:
    return [
        rng.standard_normal(100_003).astype(np.float32),
        rng.integers(-5, 5, size=(7, 13), dtype=np.int64),
        rng.standard_normal(33).astype(ml_dtypes.bfloat16),
        np.zeros(0, np.float16),
        np.arange(5, dtype=np.uint8),
    ]


def test_frames_place_arrays_in_shared_memory_and_only_headers_in_the_stream():
    rng = np.random.default_rng(1)
    arrays = _arrays(rng)
    arena = Arena.create(1 << 21)
    try:
        stream = io.BytesIO()
        write_frame(stream, {"op": "run"}, arrays, arena, base=512)
        assert len(stream.getvalue()) < 2000  # 400 KB of arrays, a header of a few hundred bytes
        stream.seek(0)
        header, back = read_frame(stream, arena)
        assert header["op"] == "run"
        for a, b in zip(arrays, back, strict=True):
            assert a.dtype == b.dtype and a.shape == b.shape
            assert np.array_equal(a.view(np.uint8), b.view(np.uint8))
        arrays[0][:] = 0  # what was read is a copy, not a view of the sender's array or the shared memory
        assert np.any(back[0] != 0)
    finally:
        arena.close()


def test_arrays_that_do_not_fit_go_through_the_stream():
    rng = np.random.default_rng(2)
    arrays = _arrays(rng)
    arena = Arena.create(1 << 16)  # too small for the 400 KB array, big enough for the others
    try:
        stream = io.BytesIO()
        write_frame(stream, {}, arrays, arena)
        assert len(stream.getvalue()) > arrays[0].nbytes
        stream.seek(0)
        _, back = read_frame(stream, arena)
        assert all(np.array_equal(a.view(np.uint8), b.view(np.uint8)) for a, b in zip(arrays, back, strict=True))
    finally:
        arena.close()


def _relu_run(n: int, wrapper: list[str] | None = None):
    backend = get_backend("triton")
    art = backend.compile(RELU, "relu", CompileOptions(), path="relu.py")
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n + 128).astype(np.float32)
    y = np.full(n + 128, np.nan, np.float32)
    args = [BufferArg("x", x, 64, n), BufferArg("y", y, 64, n), ScalarArg("n", n, "int32")]
    res = backend.run(art, args, LaunchConfig(), timeout=300, wrapper=wrapper)
    assert res.status == "ok", res.message + res.stderr
    expected = y.copy()
    expected[64 : 64 + n] = np.maximum(x[64 : 64 + n], 0)
    assert np.array_equal(res.buffers["y"], expected, equal_nan=True)  # guard bands untouched
    assert np.array_equal(res.buffers["x"], x)
    return get_worker("triton", backend.worker_env(), wrapper, sandboxed=sandbox.decide())


@pytest.mark.parametrize("n", [1, 40_001])
def test_a_worker_moves_buffers_through_shared_memory(n):
    worker = _relu_run(n)
    assert worker.arena is not None and worker.arena.size >= 2 * 2 * (n + 128) * 4


def test_a_worker_that_cannot_map_the_shared_memory_uses_the_pipe():
    # a wrapping tool that closes every inherited descriptor (some profilers do)
    closer = [sys.executable, "-c", "import os, sys; os.closerange(3, 65536); os.execvp(sys.argv[1], sys.argv[1:])"]
    try:
        worker = _relu_run(5_000, closer)
        assert worker.alive() and worker.arena is None
    finally:
        finish_worker("triton", get_backend("triton").worker_env(), closer)


def test_a_sandboxed_worker_maps_the_shared_memory():
    if not sandbox.available():
        pytest.skip(f"no sandbox here: {sandbox.detect().reason}")
    with sandbox.untrusted():
        worker = _relu_run(3_001)
    assert worker.sandboxed and worker.arena is not None
