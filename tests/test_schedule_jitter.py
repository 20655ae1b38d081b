"""Schedule jitter (backends/jitter.py): the rewrite is exact, builds for every corpus kernel, keeps compiler
messages on the user's lines, and the gate's repeat run uses it. Its effect (racy kernels caught) needs a GPU:
tests/test_mutation_suite_gpu.py and bench/race_detection.py."""

from __future__ import annotations

import re

import numpy as np
import pytest
from xlate.backends.base import CompileError, CompileOptions
from xlate.backends.jitter import ENTRY_CALL, JITTERED_BARRIER, PRELUDE, instrument
from xlate.backends.registry import get_backend

from tests.conftest import ROOT
from xlate.parse import parse_file, parse_string
from xlate.verify.runner import _repeat_differs

SRC = """
__device__ float helper(float* s) { __syncthreads(); return s[0]; }
__global__ void k(const float* x, float* y, int n) {
    __shared__ float s[256];
    s[threadIdx.x] = x[threadIdx.x];
    __syncthreads();
    int c = __syncthreads_count(s[0] > 0.0f);
    y[threadIdx.x] = helper(s) + c;
}
"""


def test_instrument_adds_entry_jitter_and_jittered_barriers_only():
    unit = parse_string(SRC, "k.cu", "cuda")
    out = instrument(unit, SRC)
    assert out.startswith(PRELUDE.lstrip("\n"))
    body = out[len(PRELUDE.lstrip("\n")):]
    assert body.count(ENTRY_CALL) == 1  # kernels only, not the device helper
    assert "int n) {" + ENTRY_CALL in body
    assert body.count(JITTERED_BARRIER + "()") == 2  # the kernel's and the helper's
    assert "__syncthreads_count(" in body and not re.search(r"\b__syncthreads\(\)", body)
    # nothing else changed
    assert body.replace(ENTRY_CALL, "").replace(JITTERED_BARRIER, "__syncthreads") == SRC


def test_every_corpus_kernel_builds_jittered():
    cuda = get_backend("cuda")
    built = 0
    for path in sorted((ROOT / "examples" / "kernels").glob("*.cu")):
        unit = parse_file(path)
        for k in unit.kernels:
            if k.template_params:
                continue
            art = cuda.compile(unit.text, k.name, CompileOptions(arch="sm_90", schedule_jitter=True), path=str(path))
            assert art.meta["schedule_jitter"] is True
            built += 1
    assert built >= 40


def test_jittered_build_reports_errors_on_the_users_line(tmp_path):
    broken = "__global__ void k(float* y) {\n    __syncthreads();\n    y[0] = undefined_name;\n}\n"
    logs = []
    for jitter in (False, True):
        with pytest.raises(CompileError) as exc:
            get_backend("cuda").compile(broken, "k", CompileOptions(arch="sm_90", schedule_jitter=jitter),
                                        path=str(tmp_path / "b.cu"))
        logs.append(exc.value.log)
    assert "b.cu(3)" in logs[0] and "b.cu(3)" in logs[1], logs


def test_repeat_run_uses_the_jittered_build_unless_switched_off(monkeypatch):
    from xlate.verify.runner import Side

    path = ROOT / "examples" / "kernels" / "reduce_sum_shared.cu"
    side = Side(str(path), "block_reduce_sum", arch="sm_90")
    compiled: list[bool] = []

    class Recorder:
        def compile(self, source, kernel, options, *, path):
            compiled.append(options.schedule_jitter)
            from xlate.backends.base import Artifact

            return Artifact("cuda", kernel, str(len(compiled)), "", kernel, meta={"schedule_jitter": options.schedule_jitter})

    monkeypatch.setattr("xlate.verify.runner.get_backend", lambda name: Recorder())
    # block_reduce_sum has no template parameters, so the build does not depend on the case
    art = side.artifact(None, None, {})  # type: ignore[arg-type]
    assert side.repeat_artifact(None, None, {}, art).meta["schedule_jitter"] is True  # type: ignore[arg-type]
    monkeypatch.setenv("XLATE_SCHEDULE_JITTER", "0")
    assert side.repeat_artifact(None, None, {}, art) is art  # type: ignore[arg-type]
    assert compiled == [False, True]


def test_instrument_keeps_a_stray_non_utf8_byte():
    # real sources carry Latin-1 bytes in comments (a copyright sign): read with surrogateescape, they must survive
    raw = b"// (\xa9) someone\n__global__ void k(float* y) { __syncthreads(); y[threadIdx.x] = 1.0f; }\n"
    text = raw.decode("utf-8", "surrogateescape")
    out = instrument(parse_string(text, "k.cu", "cuda"), text)
    body = out[len(PRELUDE.lstrip("\n")):].encode("utf-8", "surrogateescape")
    assert body.startswith(b"// (\xa9) someone\n") and JITTERED_BARRIER.encode() + b"()" in body


def _nan(sign: int, payload: int, dtype: str) -> np.ndarray:
    """One NaN of `dtype` with the given sign bit and low payload bits."""
    info = {"float32": ("<u4", 0x7FC00000, 31), "float64": ("<u8", 0x7FF8000000000000, 63),
            "float16": ("<u2", 0x7E00, 15)}[dtype]
    word = info[1] | payload | (sign << info[2])
    return np.array([word], dtype=info[0]).view(dtype)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_repeat_run_matches_nan_with_any_sign_or_payload(dtype):
    # The repeat run is another (jittered) build: a computed NaN's sign and payload are the instruction
    # sequence's, not a race. Numbers still compare bit for bit, and a NaN never matches a number.
    first = np.concatenate([_nan(0, 0, dtype), _nan(0, 1, dtype), np.array([1.5, 2.0], dtype=dtype)])
    last = np.concatenate([_nan(1, 0, dtype), _nan(0, 3, dtype), np.array([1.5, np.nan], dtype=dtype)])
    assert np.isnan(first[:2]).all() and (first[:2].view(f"<u{first.itemsize}") != last[:2].view(
        f"<u{first.itemsize}")).all()
    differs = _repeat_differs(first, last, np.dtype(dtype), False, None)
    assert differs.tolist() == [False, False, False, True]
    nudged = np.nextafter(first[2:3], np.array([9], dtype=dtype))
    assert _repeat_differs(first[2:3], nudged, np.dtype(dtype), False, None).tolist() == [True]


def test_repeat_run_compares_integers_bit_for_bit():
    a = np.array([1, -1, 7], dtype=np.int32)
    assert _repeat_differs(a, np.array([1, -1, 8], dtype=np.int32), a.dtype, True, lambda d: 1.0).tolist() == [
        False, False, True]
