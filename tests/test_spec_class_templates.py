"""A kernel's template type parameter bound to a class of the program (`kernel<T, Gen>` launched with
`using gen_t = Lcg<data_t>`): the spec item `Gen: type(Lcg<unsigned int>)`, read through the launcher's local
`using` aliases, and the gate's build instantiating the kernel with that class as the program spells it. Before,
such a kernel was a hole (the gate draws number types, and a float32 `Gen` does not compile)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from xlate.backends.base import CompileOptions
from xlate.backends.nvrtc import nvrtc_version
from xlate.backends.registry import get_backend

from xlate.errors import SpecError
from xlate.parse import parse_string
from xlate.specs import build_spec, resolve_spec
from xlate.specs.language import spec_items
from xlate.verify.runner import template_arguments

PROGRAM = """
#include <cstdint>
namespace gen {
template <typename U>
struct Lcg {
  U s;
  __device__ explicit Lcg(U seed) : s(seed * 2654435761u + 1u) {}
  template <typename R> __device__ R next() { s = s * 1664525u + 1013904223u; return static_cast<R>(s >> 3); }
};
}
template <typename T, class Gen>
__global__ void fill(T* out, int n, unsigned seed) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  Gen g{seed + i};
  if (i < n) out[i] = g.template next<T>();
}
template <typename T, class Gen>
void launch(T* out, int n, unsigned seed) {
  fill<T, Gen><<<(n + 127) / 128, 128>>>(out, n, seed);
}
int main(int argc, char** argv) {
  using data_t = std::uint32_t;
  using gen_t = gen::Lcg<data_t>;
  int n = atoi(argv[1]);
  data_t* d;
  cudaMalloc(&d, n * sizeof(data_t));
  launch<data_t, gen_t>(d, n, 7);
  return 0;
}
"""


def unit_of(tmp_path: Path, text: str):
    path = tmp_path / "main.cu"
    path.write_text(textwrap.dedent(text).lstrip())
    return parse_string(path.read_text(), str(path), "cuda")


def test_a_class_bound_through_local_aliases_is_a_type_item(tmp_path):
    res = resolve_spec(unit_of(tmp_path, PROGRAM), "fill")
    assert res.complete
    assert res.annotation() == ("out: out[n], n: size(1..4096), seed: scalar(0..14), T: uint32, "
                                "Gen: type(gen::Lcg<uint32_t>), grid: cdiv(n, 128), block: 128")
    assert res.spec is not None and res.spec.type_params == {"Gen": "gen::Lcg<uint32_t>"}
    assert "Gen" not in res.spec.dtype_axes  # not drawn: the same class on both sides
    if nvrtc_version() is None:
        pytest.skip("NVRTC not installed")
    unit = unit_of(tmp_path, PROGRAM)  # the spelling inference wrote compiles where the kernel is
    args = template_arguments(unit, "fill", "cuda", lambda t: "uint32", lambda t: "", res.spec.type_params)
    art = get_backend("cuda").compile(unit.text, "fill", CompileOptions(compile_only=True, template_args=args),
                                      path=str(tmp_path / "main.cu"))
    assert art.compile.ok


def test_the_gate_instantiates_the_kernel_with_the_class(tmp_path):
    unit = unit_of(tmp_path, PROGRAM)
    spec = build_spec(unit, "fill", "n: size(1..300), out: out[n], seed: scalar(0..9), T: uint32, "
                                    "Gen: type(gen::Lcg< std::uint32_t >), grid: cdiv(n, 128), block: 128")
    assert spec.type_params == {"Gen": "gen::Lcg< std::uint32_t >"}
    assert ("Gen", "Gen: type(gen::Lcg< std::uint32_t >)") in spec_items(spec)
    args = template_arguments(unit, "fill", "cuda", lambda t: "uint32", lambda t: "", spec.type_params)
    assert args[1] == "gen::Lcg< std::uint32_t >" and args[0] in ("unsigned int", "uint32_t", "std::uint32_t")
    if nvrtc_version() is None:
        pytest.skip("NVRTC not installed")
    art = get_backend("cuda").compile(unit.text, "fill", CompileOptions(compile_only=True, template_args=args),
                                      path=str(tmp_path / "main.cu"))
    assert art.compile.ok


def test_type_needs_a_cxx_type(tmp_path):
    unit = unit_of(tmp_path, PROGRAM)
    with pytest.raises(SpecError, match=r"type\(\) of Gen needs a C\+\+ type"):
        build_spec(unit, "fill", "n: size(1..300), out: out[n], seed: scalar(0..9), T: uint32, Gen: type(), "
                                 "grid: cdiv(n, 128), block: 128")


POLICY_PROGRAM = """
struct Cut {
  float k;
  int sign;
  __host__ __device__ Cut(float k_, int s) : k(k_), sign(s) {}
  __device__ int test(float v) const { return sign * (v > k); }
};
template <class Pred>
__global__ void mark(const float* x, int* hit, int n, Pred pred) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) hit[i] = pred.test(x[i]);
}
template <class Pred>
void mark_all(const float* x, int* hit, int n, const Pred& pred) {
  mark<<<(n + 255) / 256, 256>>>(x, hit, n, pred);
}
int main(int argc, char** argv) {
  int n = atoi(argv[1]);
  float* x; int* h;
  cudaMalloc((void**)&x, n * sizeof(float));
  cudaMalloc((void**)&h, n * sizeof(int));
  mark_all(x, h, n, Cut(0.5f, -1));
  return 0;
}
"""


def test_an_object_passed_by_value_is_a_record_of_its_class(tmp_path):
    # `mark_all(..., Cut(0.5f, -1))` deduces Pred from a temporary of the program's class; the kernel's `pred`
    # is that object, passed by value: a record of Cut's data members (its constructor and method take no bytes)
    unit = unit_of(tmp_path, POLICY_PROGRAM)
    res = resolve_spec(unit, "mark")
    assert res.complete
    assert res.annotation() == ("x: in[n], hit: out[n], n: size(1..4096), pred: scalar as {k: float32, sign: int32}, "
                                "Pred: type(Cut), grid: cdiv(n, 256), block: 256")
    if nvrtc_version() is None:
        pytest.skip("NVRTC not installed")
    args = template_arguments(unit, "mark", "cuda", lambda t: "float32", lambda t: "", res.spec.type_params)
    art = get_backend("cuda").compile(unit.text, "mark", CompileOptions(compile_only=True, template_args=args),
                                      path=str(tmp_path / "main.cu"))
    assert args == ["Cut"] and art.compile.ok
