"""Vectors and structs of numbers passed by value (`float3 w`, `struct { float m[9]; }`, `std::pair<u64, u64>`):
inferred as scalars of several lanes when the kernel uses their fields as data only, drawn lane by lane by the
gate and handed to CUDA as one by-value argument of all their bytes. Kernels written for these tests."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings

from xlate.parse import parse_string
from xlate.specs import resolve_spec
from xlate.verify.strategies import cases, explicit_cases

KERNELS = """
#include <utility>
struct Mat { float m[9]; };
struct Range { int lo, hi; };
__global__ void rotate(int n, const float3 w, float3* d, Mat rm, std::pair<unsigned long long, unsigned long long> seeds) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float3 v = d[i];
  d[i].x = w.x * v.x * rm.m[0] + (float)(seeds.first % 3);
}
__global__ void window(int n, Range r, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && i >= r.lo) out[i - r.lo] = 1.0f;
}
"""


def resolve(tmp_path: Path, kernel: str):
    path = tmp_path / "k.cu"
    path.write_text(textwrap.dedent(KERNELS).lstrip())
    return resolve_spec(parse_string(path.read_text(), str(path), "cuda"), kernel)


def test_vectors_and_structs_of_numbers_by_value_are_scalars_with_lanes(tmp_path):
    res = resolve(tmp_path, "rotate")
    assert res.complete
    assert res.annotation() == ("n: size(1..4096), w: scalar, d: inout[n], rm: scalar, seeds: scalar, "
                                "grid: cdiv(n, 256), block: 256")
    assert res.spec is not None
    lanes = {p.name: (p.role, p.ctype, p.lanes) for p in res.spec.params}
    assert lanes["w"] == ("scalar", "float", 3)
    assert lanes["rm"] == ("scalar", "float", 9)
    assert lanes["seeds"] == ("scalar", "unsigned long long", 2)
    assert "passed by value" in res.items["rm"][1].detail


def test_a_struct_whose_fields_index_is_a_hole(tmp_path):
    res = resolve(tmp_path, "window")
    assert not res.complete
    assert "r.lo" in res.holes["r"] and "index buffers" in res.holes["r"]


def test_the_gate_draws_every_lane(tmp_path):
    spec = resolve(tmp_path, "rotate").spec
    assert spec is not None
    edge = explicit_cases(spec, 1 << 16, 64)
    assert edge and all(len(c.scalars["w"]) == 3 and len(c.scalars["seeds"]) == 2 for c in edge)
    seen: list[dict] = []

    @settings(max_examples=20, suppress_health_check=list(HealthCheck), database=None)
    @given(cases(spec, 1 << 16, 64))
    def draw(case):
        seen.append(case.scalars)

    draw()
    assert seen
    for s in seen:
        assert len(s["w"]) == 3 and all(-4.0 <= v <= 4.0 for v in s["w"])
        assert len(s["rm"]) == 9 and len(s["seeds"]) == 2 and all(0 <= v <= 100 for v in s["seeds"])


def test_cuda_receives_one_argument_of_all_the_lanes_bytes():
    from xlate.backends.cupy_runtime import _scalar

    w = _scalar([1.5, 2.0, -3.0], "float32")
    assert w.shape == (1,) and w.itemsize == 12  # CuPy passes a size-one array's bytes by value
    assert w.view(np.float32).tolist() == [1.5, 2.0, -3.0]
    assert _scalar([7, 9], "uint64").view(np.uint64).tolist() == [7, 9]
