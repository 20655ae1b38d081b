"""Template value parameters the host picks at run time: a dispatch macro that declares `constexpr static bool
FLAG = true/false` in the branches of a test and calls the lambda it gets (BOOL_SWITCH and friends), and a
launcher the file instantiates explicitly for several values (also through a macro). Each becomes an axis of
instantiations (`kWhole: choice(1|0)`), the branch condition of each value a `where`, and the gate draws both
values, builds one instantiation per value (`true`/`false` for a bool) and never draws sizes the program would
not launch a value with."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from xlate.parse import parse_string
from xlate.specs import build_spec, resolve_spec
from xlate.verify.cases import environment
from xlate.verify.runner import template_arguments
from xlate.verify.strategies import cases, explicit_cases

SWITCHED = """
#include <cstdlib>
#define WHEN_ELSE(TEST, FLAG, ...)              \\
  [&] {                                         \\
    if (TEST) {                                 \\
      constexpr static bool FLAG = true;        \\
      return __VA_ARGS__();                     \\
    } else {                                    \\
      constexpr static bool FLAG = false;       \\
      return __VA_ARGS__();                     \\
    }                                           \\
  }()

template <int kBlock, bool kWhole>
__global__ void shift_add(const float* src, float* dst, int len, float bias) {
  int i = blockIdx.x * kBlock + threadIdx.x;
  if (kWhole) dst[i] = src[i] + bias;
  else if (i < len) dst[i] = src[i] + bias;
}

void shift_add_all(const float* src, float* dst, int len, float bias) {
  constexpr int kBlock = 64;
  WHEN_ELSE(len % kBlock == 0, kWhole, [&] {
    shift_add<kBlock, kWhole><<<(len + kBlock - 1) / kBlock, kBlock>>>(src, dst, len, bias);
  });
}

int main(int argc, char** argv) {
  int len = atoi(argv[1]);
  float *src, *dst;
  cudaMalloc(&src, len * sizeof(float));
  cudaMalloc(&dst, len * sizeof(float));
  shift_add_all(src, dst, len, 0.5f);
  return 0;
}
"""

SWITCHED_SPEC = ("src: in[len], dst: out[len], len: size(1..4096), bias: scalar(0.25..1), kBlock: 64, "
                 "kWhole: choice(1|0), grid: cdiv(len, 64), block: 64, "
                 "where: (kWhole != 1 || len % 64 == 0) and (kWhole != 0 || len % 64 != 0)")

TWO_FLAGS = """
#include <cstdlib>
#define PICK(TEST, FLAG, ...) [&] { if (TEST) { static constexpr bool FLAG = true; return __VA_ARGS__(); } \\
                                  else { static constexpr bool FLAG = false; return __VA_ARGS__(); } }()

template <bool kNeg, bool kTwice>
__global__ void signed_copy(const float* a, float* b, int m) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= m) return;
  float v = kNeg ? -a[j] : a[j];
  b[j] = kTwice ? 2.0f * v : v;
}

void signed_copy_all(const float* a, float* b, int m, int neg, int twice) {
  PICK(neg != 0, kNeg, [&] {
    PICK(twice > 1, kTwice, [&] {
      signed_copy<kNeg, kTwice><<<(m + 127) / 128, 128>>>(a, b, m);
    });
  });
}

int main(int argc, char** argv) {
  int m = atoi(argv[1]);
  float *a, *b;
  cudaMalloc(&a, m * sizeof(float));
  cudaMalloc(&b, m * sizeof(float));
  signed_copy_all(a, b, m, atoi(argv[2]), atoi(argv[3]));
  return 0;
}
"""

INSTANTIATED = """
template <int kWidth>
__global__ void row_sum(const float* rows, float* sums, int count) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= count) return;
  float acc = 0.f;
  for (int k = 0; k < kWidth; ++k) acc += rows[r] * (k + 1);
  sums[r] = acc;
}

template <int kWidth>
void row_sum_all(const float* rows, float* sums, int count) {
  row_sum<kWidth><<<(count + 255) / 256, 256>>>(rows, sums, count);
}

template void row_sum_all<3>(const float*, float*, int);
#define ROWS_FOR(W) template void row_sum_all<W>(const float*, float*, int);
ROWS_FOR(5)
ROWS_FOR(8)
"""


def unit_of(tmp_path: Path, text: str):
    path = tmp_path / "main.cu"
    path.write_text(textwrap.dedent(text).lstrip())
    return parse_string(path.read_text(), str(path), "cuda")


def test_a_bool_switch_makes_an_axis_with_its_branch_condition(tmp_path):
    res = resolve_spec(unit_of(tmp_path, SWITCHED), "shift_add")
    assert res.complete, res.holes
    assert res.annotation() == SWITCHED_SPEC
    assert res.spec is not None and res.spec.axes == {"kWhole": [1, 0]} and "kWhole" not in res.spec.value_params


def test_an_open_flag_keeps_the_reach_of_every_instantiation(tmp_path):
    """The kernel is read with the flag open: the unguarded branch's reach counts for the buffer's length."""
    res = resolve_spec(unit_of(tmp_path, SWITCHED.replace("if (kWhole) dst[i] = src[i] + bias;",
                                                          "if (kWhole) dst[i] = src[i + 3] + bias;")), "shift_add")
    assert res.complete and res.spec is not None
    assert res.spec.param("src").dims == ["max(len, 64 * cdiv(len, 64) + 3)"]


def test_nested_switches_give_two_independent_axes(tmp_path):
    res = resolve_spec(unit_of(tmp_path, TWO_FLAGS), "signed_copy")
    assert res.complete, res.holes
    assert res.spec is not None and res.spec.axes == {"kNeg": [1, 0], "kTwice": [1, 0]}
    # the conditions read run-time values that no size or parameter of the kernel stands for: no where
    assert res.annotation() == ("a: in[m], b: out[m], m: size(1..4096), kNeg: choice(1|0), kTwice: choice(1|0), "
                                "grid: cdiv(m, 128), block: 128")


def test_a_combination_the_program_never_launches_is_no_axis(tmp_path):
    one_sided = TWO_FLAGS.replace("""  PICK(neg != 0, kNeg, [&] {
    PICK(twice > 1, kTwice, [&] {
      signed_copy<kNeg, kTwice><<<(m + 127) / 128, 128>>>(a, b, m);
    });
  });""", """  PICK(neg != 0, kNeg, [&] {
      signed_copy<kNeg, kNeg><<<(m + 127) / 128, 128>>>(a, b, m);
  });""")
    res = resolve_spec(unit_of(tmp_path, one_sided), "signed_copy")
    assert res.spec is not None
    # the two move together: neither varies alone, so the launch followed stands, one instantiation the program
    # makes (an axis each would build <1, 0> and <0, 1>, which it never does)
    assert res.spec.axes == {} and res.spec.value_params == {"kNeg": "1", "kTwice": "1"}


def test_explicit_instantiations_give_the_launchers_values(tmp_path):
    res = resolve_spec(unit_of(tmp_path, INSTANTIATED), "row_sum")
    assert res.complete, res.holes
    assert res.spec is not None and res.spec.axes == {"kWidth": [3, 5, 8]}
    assert res.annotation() == ("rows: in[count], sums: out[count], count: size(1..4096), kWidth: choice(3|5|8), "
                                "grid: cdiv(count, 256), block: 256")


def test_the_gate_draws_every_value_inside_its_condition(tmp_path):
    unit = unit_of(tmp_path, SWITCHED)
    spec = build_spec(unit, "shift_add", SWITCHED_SPEC)
    edge = explicit_cases(spec, 1 << 16, 4096)
    assert {c.sizes["kWhole"] for c in edge} == {0, 1}
    drawn: list = []

    @settings(max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(cases(spec, 1 << 16, 4096))
    def draw(case):
        drawn.append(case)

    draw()
    for case in edge + drawn:
        env = environment(spec, case)
        assert env["len"] % 64 == 0 if case.sizes["kWhole"] == 1 else env["len"] % 64 != 0, case.sizes
    assert {c.sizes["kWhole"] for c in drawn} == {0, 1}
    whole = [c for c in drawn if c.sizes["kWhole"] == 1]
    assert len(whole) >= 5  # drawn as multiples of 64, not filtered out one draw in 64

    def targs(case):
        env = environment(spec, case)
        return template_arguments(unit, "shift_add", "cuda", lambda t: "float32", lambda t: str(env[t.name]))

    assert targs(whole[0]) == ["64", "true"]
    assert targs(next(c for c in drawn if c.sizes["kWhole"] == 0)) == ["64", "false"]


def test_a_template_value_axis_needs_no_default(tmp_path):
    spec = build_spec(unit_of(tmp_path, INSTANTIATED), "row_sum",
                      "rows: in[count], sums: out[count], count: size(1..999), kWidth: choice(3|5), "
                      "grid: cdiv(count, 256), block: 256")
    assert spec.axes == {"kWidth": [3, 5]} and spec.value_params == {}


@pytest.mark.gpu
def test_the_gate_verifies_each_instantiation(tmp_path):
    """On a GPU: the source against a copy whose third instantiation sums one column short is rejected on a
    case that draws it; against itself it is verified."""
    from xlate.verify.api import verify

    src = tmp_path / "main.cu"
    src.write_text(textwrap.dedent(INSTANTIATED).lstrip())
    same = tmp_path / "same.cu"
    same.write_text(src.read_text())
    assert verify(str(src), str(same), kernel="row_sum", examples=12, seed=3).status == "verified"
    short = tmp_path / "short.cu"
    short.write_text(src.read_text().replace("for (int k = 0; k < kWidth; ++k)",
                                             "for (int k = 0; k < (kWidth == 8 ? 7 : kWidth); ++k)"))
    verdict = verify(str(src), str(short), kernel="row_sum", examples=12, seed=3)
    assert verdict.status == "rejected", verdict.to_dict()
    assert verdict.counterexample is not None and verdict.counterexample.sizes.get("kWidth") == 8



def test_a_candidate_compiled_alone_gets_the_axis_first_value(tmp_path, monkeypatch):
    """A port compiled without a run (no GPU here) is instantiated as the gate would first: kWhole true."""
    from xlate.verdict import Verdict
    from xlate.verify import candidate

    src = tmp_path / "main.cu"
    src.write_text(textwrap.dedent(SWITCHED).lstrip())
    seen: list[list[str]] = []

    class Recorder:
        def compile(self, text, kernel, options, path=None):
            seen.append(list(options.template_args))

    monkeypatch.setattr(candidate, "get_backend", lambda name: Recorder())
    verdict = Verdict("unverified", "shift_add")
    _, status, _ = candidate._compile_alone(verdict, str(src), "shift_add", "hip", src.read_text(),
                                           candidate.VerifyOptions())
    assert status == "ok" and seen == [["64", "true"]]
