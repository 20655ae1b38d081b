"""A size the host computes as a power of two of another value it passes (`n = 1 << lg`, the kernel handed
`lg`): the spec keeps n = 1 << lg instead of drawing n apart from lg (a bit reversal over lg bits then wrote past a
domain drawn smaller). A power of a macro stays the program's fixed number. Each program is written for its test
(host and kernel), with the exact spec inferred."""

from __future__ import annotations

import textwrap
from pathlib import Path

from hypothesis import HealthCheck, given, settings

from tests.spec_inference import usable
from xlate.parse import parse_string
from xlate.specs import resolve_spec
from xlate.verify.strategies import cases

REVERSE = """
__device__ unsigned reverse_bits(unsigned v, unsigned bits) {
  return __brev(v) >> (32 - bits);
}
__global__ void scatter_rev(float* out, const float* in, unsigned lg) {
  unsigned i = threadIdx.x + blockIdx.x * blockDim.x;
  out[reverse_bits(i, lg)] = 2.0f * in[i];
}
static void run(unsigned lg) {
  size_t n = (size_t)1 << lg;
  float *out, *in;
  cudaMalloc(&out, n * sizeof(float));
  cudaMalloc(&in, n * sizeof(float));
  scatter_rev<<<n / 64, 64>>>(out, in, lg);
}
int main() {
  run(9);
  run(12);
  return 0;
}
"""


def resolve(tmp_path: Path, program: str, kernel: str):
    path = tmp_path / "prog.cu"
    path.write_text(textwrap.dedent(program).lstrip())
    res = resolve_spec(parse_string(path.read_text(), str(path), "cuda"), kernel)
    usable(res)
    return res


def test_a_length_that_is_a_power_of_two_of_an_argument_stays_tied_to_it(tmp_path):
    # before: `lg: scalar(9..9)` beside `n: size(1..512)`, so reverse_bits(i, 9) wrote up to 511 into n < 512
    res = resolve(tmp_path, REVERSE, "scatter_rev")
    assert res.annotation() == ("out: out[(1 << lg)], in: in[(1 << lg)], lg: size(1..9), grid: (1 << lg) / 64, "
                                "block: 64, where: ((1 << lg)) % 64 == 0")


def test_every_drawn_case_keeps_the_reversed_index_inside_the_domain(tmp_path):
    # the kernel's own arithmetic (a reversal of lg bits) over every thread of every drawn case
    res = resolve(tmp_path, REVERSE, "scatter_rev")
    seen: list[int] = []

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(cases(res.spec, 1 << 16, 1 << 12))
    def run(case):
        lg = case.sizes["lg"]
        n = 1 << lg
        seen.append(lg)
        threads = (n // 64) * 64
        assert threads == n
        for i in range(threads):
            rev = int(f"{i:0{lg}b}"[::-1], 2)
            assert rev < n

    run()
    assert len(set(seen)) > 1


def test_a_power_of_a_macro_stays_the_programs_number(tmp_path):
    # the kernel hashes into a table of 1 << TABLE_BITS words by its own mask: the table is the program's size
    res = resolve(tmp_path, """
    #define TABLE_BITS 9
    __global__ void probe(int* hits, const unsigned* table, const unsigned* keys, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) hits[i] = table[keys[i] & 511u] & 1u;
    }
    int main() {
      int n = 1000;
      int* hits; unsigned *table, *keys;
      cudaMalloc(&hits, n * sizeof(int));
      cudaMalloc(&table, (1 << TABLE_BITS) * sizeof(unsigned));
      cudaMalloc(&keys, n * sizeof(unsigned));
      probe<<<(n + 127) / 128, 128>>>(hits, table, keys, n);
      return 0;
    }
    """, "probe")
    assert res.annotation() == ("hits: out[n], table: in[512], keys: in[n], n: size(1..1000), grid: cdiv(n, 128), "
                                "block: 128")
