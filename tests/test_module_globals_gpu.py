"""The gate on kernels whose inputs and outputs are module variables (`__device__`, `__constant__`), on an NVIDIA
GPU: the source and its port are filled and read back by name, and compared like buffers. Each test asserts the
verdict and that the variable itself was what was compared (a counterexample names it), so none can pass by
comparing nothing. Every kernel here was written for these tests."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

# `scaled` over a __device__ array written only by the kernel (no output parameter at all), a scalar counter
# bumped by an atomic, and a __constant__ table the host fills with cudaMemcpyToSymbol.
SOURCE = """
#define N 96
#define TAPS 8
__device__ float d_out[N];
__device__ int d_count;
__constant__ float c_taps[TAPS];

__global__ void scaled(const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) {
    float v = i < n ? x[i] : 0.0f;
    d_out[i] = v * c_taps[i % TAPS] + 1.0f;
    if (v > 0.0f) atomicAdd(&d_count, 1);
  }
}

int main() {
  int n = N;
  float* x;
  float taps[TAPS] = {1, 2, 3, 4, 5, 6, 7, 8};
  cudaMalloc(&x, n * sizeof(float));
  cudaMemcpyToSymbol(c_taps, taps, sizeof(taps));
  scaled<<<(N + 31) / 32, 32>>>(x, n);
  return 0;
}
"""

CORRECT_HIP = SOURCE.replace("cudaMalloc", "hipMalloc").replace("cudaMemcpyToSymbol(c_taps,", "hipMemcpyToSymbol(HIP_SYMBOL(c_taps),")
CORRECT_HIP = "#include <hip/hip_runtime.h>\n" + CORRECT_HIP
# the port forgets the table: every tap is 1
NO_TABLE = CORRECT_HIP.replace("v * c_taps[i % TAPS] + 1.0f", "v + 1.0f")
# the port writes the array one element short (and counts as the source does)
SHORT = CORRECT_HIP.replace("d_out[i] = v * c_taps[i % TAPS] + 1.0f;", "if (i < N - 1) d_out[i] = v * c_taps[i % TAPS] + 1.0f;")
# the port counts every element, not the positive ones
COUNT_ALL = CORRECT_HIP.replace("if (v > 0.0f) atomicAdd(&d_count, 1);", "atomicAdd(&d_count, 1);")


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip())
    return str(path)


def _verify(tmp_path: Path, port: str):
    from xlate.verify.api import verify

    src = _write(tmp_path, "scaled.cu", SOURCE)
    hip = _write(tmp_path, "scaled.hip", port)
    return verify(src, hip, kernel="scaled", examples=20, seed=0)


def test_the_ports_differ_where_the_tests_say():
    assert SHORT != CORRECT_HIP and NO_TABLE != CORRECT_HIP and COUNT_ALL != CORRECT_HIP


def test_the_spec_names_the_module_variables(tmp_path):
    """CPU: what the GPU tests below rely on (inferred, not annotated)."""
    from xlate.parse import parse_file
    from xlate.specs import resolve_spec

    res = resolve_spec(parse_file(_write(tmp_path, "scaled.cu", SOURCE)), "scaled")
    assert res.complete, res.holes
    items = {k: t for k, (t, _) in res.items.items()}
    assert items["d_out"] == "d_out: global out[96] as float32"
    assert items["d_count"] == "d_count: global inout[1] as int32"
    assert items["c_taps"] == "c_taps: global in[8] as float32"


@pytest.mark.gpu
def test_a_correct_port_is_verified(tmp_path):
    verdict = _verify(tmp_path, CORRECT_HIP)
    assert verdict.status == "verified", verdict.to_dict()
    assert verdict.examples > 0


@pytest.mark.gpu
@pytest.mark.parametrize(("port", "failure", "name"), [
    (NO_TABLE, "mismatch", "d_out"),  # a port ignoring the constant table
    (SHORT, "unwritten output", "d_out"),  # a port leaving the array short
    (COUNT_ALL, None, "d_count"),  # a wrong counter
], ids=["ignores-the-table", "array-short", "wrong-counter"])
def test_a_wrong_port_is_rejected_naming_the_global(tmp_path, port, failure, name):
    verdict = _verify(tmp_path, port)
    assert verdict.status == "rejected", verdict.to_dict()
    cx = verdict.counterexample
    assert cx is not None and name in cx.message, verdict.to_dict()
    assert failure is None or cx.failure == failure, verdict.to_dict()


@pytest.mark.gpu
def test_cuda_against_itself_and_a_wrong_cuda_port(tmp_path):
    from xlate.verify.api import verify

    src = _write(tmp_path, "scaled.cu", SOURCE)
    same = _write(tmp_path, "port.cu", SOURCE)
    assert verify(src, same, kernel="scaled", examples=10, seed=1).status == "verified"
    wrong = _write(tmp_path, "wrong.cu", SOURCE.replace("+ 1.0f;", "+ 2.0f;"))
    verdict = verify(src, wrong, kernel="scaled", examples=10, seed=1)
    assert verdict.status == "rejected" and "d_out" in verdict.counterexample.message, verdict.to_dict()


@pytest.mark.gpu
def test_a_spec_length_that_is_not_the_module_s_is_never_verified(tmp_path):
    """The source's own variable holds 96 floats; a spec that says 64 is wrong, and the gate says so rather
    than comparing a part of it."""
    from xlate.verify.api import verify

    src = _write(tmp_path, "scaled.cu", SOURCE)
    port = _write(tmp_path, "scaled.hip", CORRECT_HIP)
    verdict = verify(src, port, kernel="scaled", examples=5, seed=0, spec_overrides="d_out: global out[64]")
    assert verdict.status != "verified", verdict.to_dict()
    assert "d_out" in (verdict.reason or "") + str(verdict.counterexample and verdict.counterexample.message)
    assert "384 bytes" in (verdict.reason or "") + str(verdict.counterexample and verdict.counterexample.message)
