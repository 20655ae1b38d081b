"""The front end reports the atomics a kernel performs through the device functions it calls and the statement
macros it uses (issue #15): the gate tolerates order-dependent float sums only for kernels with atomics
(`tolerant_repeat`), and a spec gets `op: atomic` from them. Each program is written for its test."""

from __future__ import annotations

import textwrap

from xlate.parse import parse_string
from xlate.specs import resolve_spec

PROGRAM = """
#define TALLY(slot, v) do { atomicAdd(slot, v); } while (0)
#define TALLY_TWICE(slot, v) do { TALLY(slot, v); TALLY(slot, v); } while (0)
__device__ void add_to(float* s, float v) { atomicAdd(s, v); }
__device__ void add_via(float* s, float v) { add_to(s, 2.0f * v); }
__global__ void sum_direct(const float* x, float* s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(s, x[i]);
}
__global__ void sum_nested(const float* x, float* s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) add_via(s, x[i]);
}
__global__ void sum_macro(const float* x, float* s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) TALLY_TWICE(s, x[i]);
}
__global__ void copy(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i];
}
int main() {
  int n = 1000;
  float *x, *s, *y;
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&y, n * sizeof(float));
  cudaMalloc(&s, sizeof(float));
  sum_direct<<<(n + 255) / 256, 256>>>(x, s, n);
  sum_nested<<<(n + 255) / 256, 256>>>(x, s, n);
  sum_macro<<<(n + 255) / 256, 256>>>(x, s, n);
  copy<<<(n + 255) / 256, 256>>>(x, y, n);
  return 0;
}
"""


def test_atomics_in_called_device_functions_and_macros_belong_to_the_kernel(tmp_path):
    unit = parse_string(textwrap.dedent(PROGRAM), str(tmp_path / "prog.cu"), "cuda")
    got = {k.name: [(a.name, a.function) for a in k.atomics] for k in unit.kernels}
    assert got == {
        "sum_direct": [("atomicAdd", "sum_direct")],
        "sum_nested": [("atomicAdd", "add_to")],  # two calls deep, named with the function it is in
        "sum_macro": [("atomicAdd", "sum_macro")],  # through a macro that uses another macro
        "copy": [],
    }
    via = next(f for f in unit.device_functions if f.name == "add_via")
    assert [(a.name, a.function) for a in via.atomics] == [("atomicAdd", "add_to")]


def test_a_kernel_summing_through_a_device_function_is_an_atomic_op(tmp_path):
    unit = parse_string(textwrap.dedent(PROGRAM), str(tmp_path / "prog.cu"), "cuda")
    for name in ("sum_direct", "sum_nested", "sum_macro"):
        assert resolve_spec(unit, name).spec.op == "atomic", name
    assert resolve_spec(unit, "copy").spec.op != "atomic"
