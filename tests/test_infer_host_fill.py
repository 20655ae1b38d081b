"""Spec inference of what the host writes into a buffer before a launch: a constant over the whole buffer
(`cudaMemset`, `thrust::fill_n`, a host array filled and copied) that every launch of the kernel finds is drawn as
that constant (`inout[n](c..c)`); a hash table probed in an unbounded loop is fuzzable only when the program empties
it before every launch and, for an insert, keeps the inserting threads within its capacity. Each test is a small
program written for it, with the exact spec; sizes are not multiples of the block size."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings

from xlate.parse import parse_string
from xlate.specs import build_spec, resolve_spec
from xlate.verify.cases import environment, make_inputs
from xlate.verify.strategies import cases


def resolve(tmp_path: Path, text: str, kernel: str, name: str = "main.cu"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip())
    unit = parse_string(path.read_text(), str(path), "cuda")
    return resolve_spec(unit, kernel)


COUNTS = """
#include <cstdint>
__global__ void tally(const float* x, float* sum, int* owner, uint32_t* seen, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    sum[i] += x[i];
    if (owner[i] < 0) owner[i] = i;
    seen[i] = seen[i] & 7u;
  }
}
int main() {
  int n = 1000;
  float *x, *sum; int* owner; uint32_t* seen;
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&sum, n * sizeof(float));
  cudaMalloc(&owner, n * sizeof(int));
  cudaMalloc(&seen, n * sizeof(uint32_t));
  cudaMemset(sum, 0, n * sizeof(float));
  cudaMemset(owner, 0xff, n * sizeof(int));
  cudaMemset(seen, -1, n * sizeof(uint32_t));
  tally<<<(n + 95) / 96, 96>>>(x, sum, owner, seen, n);
}
"""


def test_memset_gives_the_constant_read_as_the_element_type(tmp_path):
    res = resolve(tmp_path, COUNTS, "tally")
    assert res.complete
    assert res.annotation() == ("x: in[n], sum: inout[n](0..0), owner: inout[n](-1..-1), "
                                "seen: inout[n](4294967295..4294967295), n: size(1..1000), grid: cdiv(n, 96), "
                                "block: 96")
    assert res.items["owner"][1].kind == "host" and res.items["owner"][1].where.endswith("main.cu:18")


def test_drawn_cases_hold_exactly_the_constant(tmp_path):
    spec = build_spec(parse_string("// xlate: x: in[n], sum: inout[n](0..0), owner: inout[n](-1..-1), "
                                   "seen: inout[n](4294967295..4294967295), n: size(1..1000), grid: cdiv(n, 96), "
                                   "block: 96\n" + textwrap.dedent(COUNTS).split("int main", 1)[0].lstrip(), "k.cu"),
                      "tally")

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @given(cases(spec, 1 << 16, 1 << 12))
    def check(case):
        inputs = make_inputs(spec, case, environment(spec, case))
        n = case.sizes["n"]
        assert inputs["owner"].dtype == np.int32 and inputs["owner"].size == n
        assert (inputs["owner"] == -1).all()
        assert inputs["seen"].dtype == np.uint32 and (inputs["seen"] == np.uint32(0xFFFFFFFF)).all()
        assert inputs["sum"].dtype == np.float32
        finite = np.isfinite(inputs["sum"])  # the `special` profile still mixes in inf and NaN
        assert (inputs["sum"][finite] == 0).all()

    check()


def test_no_fact_where_a_launch_may_see_something_else(tmp_path):
    # `a`: a loop's second round sees what its first launch wrote; `b`: another kernel writes it in between;
    # `c`: only part of it is set; `d`: set on one path only; `e`: set again before every round (a fact)
    res = resolve(tmp_path, """
    __global__ void bump(int* a, int* b, int* c, int* d, int* e, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) { a[i] += 1; b[i] += 1; c[i] += 1; d[i] += 1; e[i] += 1; }
    }
    __global__ void seed(int* b, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) b[i] = i;
    }
    int main(int argc, char** argv) {
      int n = 700;
      int *a, *b, *c, *d, *e;
      cudaMalloc(&a, n * sizeof(int));
      cudaMalloc(&b, n * sizeof(int));
      cudaMalloc(&c, n * sizeof(int));
      cudaMalloc(&d, n * sizeof(int));
      cudaMalloc(&e, n * sizeof(int));
      cudaMemset(a, 0, n * sizeof(int));
      cudaMemset(b, 0, n * sizeof(int));
      cudaMemset(c + 1, 0, (n - 1) * sizeof(int));
      if (argc > 2) cudaMemset(d, 0, n * sizeof(int));
      seed<<<(n + 127) / 128, 128>>>(b, n);
      for (int r = 0; r < 3; r++) {
        cudaMemset(e, 0, n * sizeof(int));
        bump<<<(n + 127) / 128, 128>>>(a, b, c, d, e, n);
      }
    }
    """, "bump")
    assert res.complete
    assert res.annotation() == ("a: inout[n], b: inout[n], c: inout[n], d: inout[n], e: inout[n](0..0), "
                                "n: size(1..700), grid: cdiv(n, 128), block: 128")


def test_host_array_filled_and_copied_and_thrust_fill_n(tmp_path):
    res = resolve(tmp_path, """
    #include <algorithm>
    #include <thrust/fill.h>
    __global__ void relax(const int* w, int* dist, long* best, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) { dist[i] = min(dist[i], w[i]); best[i] = max(best[i], (long)w[i]); }
    }
    int main() {
      int n = 333;
      int* h = (int*)malloc(n * sizeof(int));
      std::fill(h, h + n, 1 << 20);
      int *w, *dist; long* best;
      cudaMalloc(&w, n * sizeof(int));
      cudaMalloc(&dist, n * sizeof(int));
      cudaMalloc(&best, n * sizeof(long));
      cudaMemcpy(dist, h, n * sizeof(int), cudaMemcpyHostToDevice);
      thrust::fill_n(best, n, -5);
      relax<<<(n + 63) / 64, 64>>>(w, dist, best, n);
    }
    """, "relax")
    assert res.complete
    assert res.annotation() == ("w: in[n], dist: inout[n](1048576..1048576), best: inout[n](-5..-5), "
                                "n: size(1..333), grid: cdiv(n, 64), block: 64")


TABLE = """
#include <cstdint>
#define EMPTY 0xffffffffu
__device__ uint32_t mix(uint32_t k) { k ^= k >> 15; k *= 0x2c1b3c6du; return k ^ (k >> 12); }
__global__ void put(uint32_t* slots, uint32_t* vals, const uint32_t* keys, int len, int cap) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= len) return;
  uint32_t k = keys[i], at = mix(k) % cap;
  while (true) {
    uint32_t prev = atomicCAS(&slots[at], EMPTY, k);
    if (prev == EMPTY || prev == k) { vals[at] = i; return; }
    at = (at + 1) % cap;
  }
}
__global__ void get(const uint32_t* slots, const uint32_t* vals, const uint32_t* keys, uint32_t* out, int len,
                    int cap) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= len) return;
  uint32_t k = keys[i], at = mix(k) % cap;
  for (;;) {
    if (slots[at] == k) { out[i] = vals[at]; return; }
    if (slots[at] == EMPTY) { out[i] = EMPTY; return; }
    at = (at + 1) % cap;
  }
}
"""


def test_hash_insert_into_a_table_the_program_empties_and_sizes_from_the_count(tmp_path):
    res = resolve(tmp_path, TABLE + """
    const double LOAD = 0.4;
    int main(int argc, char** argv) {
      int n = atoi(argv[1]);
      int cap = (int)(n / LOAD);
      uint32_t *slots, *vals, *keys, *out;
      cudaMalloc(&slots, cap * sizeof(uint32_t));
      cudaMalloc(&vals, cap * sizeof(uint32_t));
      cudaMalloc(&keys, n * sizeof(uint32_t));
      cudaMalloc(&out, n * sizeof(uint32_t));
      cudaMemset(slots, 0xff, cap * sizeof(uint32_t));
      put<<<(n + 127) / 128, 128>>>(slots, vals, keys, n, cap);
      get<<<(n + 127) / 128, 128>>>(slots, vals, keys, out, n, cap);
    }
    """, "put")
    assert res.complete
    assert res.annotation() == ("slots: inout[cap](4294967295..4294967295), vals: out[cap], keys: in[len], "
                                "len: size(1..4096), cap: size(1..4096), grid: cdiv(len, 128), block: 128, "
                                "where: cap >= len")


def test_hash_probes_the_host_does_not_make_safe_are_holes(tmp_path):
    # the lookup runs on the table the insert filled (random contents would never meet the key or the empty key);
    # the insert's capacity is read at run time, unrelated to the count: a full table would never end
    text = TABLE + """
    int main(int argc, char** argv) {
      int n = atoi(argv[1]);
      int cap = atoi(argv[2]);
      uint32_t *slots, *vals, *keys, *out;
      cudaMalloc(&slots, cap * sizeof(uint32_t));
      cudaMalloc(&vals, cap * sizeof(uint32_t));
      cudaMalloc(&keys, n * sizeof(uint32_t));
      cudaMalloc(&out, n * sizeof(uint32_t));
      cudaMemset(slots, 0xff, cap * sizeof(uint32_t));
      put<<<(n + 127) / 128, 128>>>(slots, vals, keys, n, cap);
      get<<<(n + 127) / 128, 128>>>(slots, vals, keys, out, n, cap);
    }
    """
    put = resolve(tmp_path, text, "put")
    assert not put.complete and set(put.holes) == {"slots"}
    assert "keeps the inserts within its capacity" in put.holes["slots"]
    get = resolve(tmp_path, text, "get")
    assert not get.complete and set(get.holes) == {"slots", "vals"}
    assert "does not empty it before every launch" in get.holes["slots"]


def test_a_lookup_in_a_table_the_program_just_emptied(tmp_path):
    res = resolve(tmp_path, TABLE + """
    int main() {
      int n = 500, cap = 1031;
      uint32_t *slots, *vals, *keys, *out;
      cudaMalloc(&slots, cap * sizeof(uint32_t));
      cudaMalloc(&vals, cap * sizeof(uint32_t));
      cudaMalloc(&keys, n * sizeof(uint32_t));
      cudaMalloc(&out, n * sizeof(uint32_t));
      cudaMemset(slots, 0xff, cap * sizeof(uint32_t));
      get<<<(n + 127) / 128, 128>>>(slots, vals, keys, out, n, cap);
    }
    """, "get")
    assert res.complete
    assert res.annotation() == ("slots: in[cap](4294967295..4294967295), vals: in[cap], keys: in[len], out: out[len], "
                                "len: size(1..500), cap: size(1..1031), grid: cdiv(len, 128), block: 128")


def test_a_host_array_written_after_its_memset_is_no_constant(tmp_path):
    res = resolve(tmp_path, """
    __global__ void scale(float* y, int* k, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) { y[i] *= 2.0f; k[i] += 1; }
    }
    int main(int argc, char** argv) {
      int n = 900;
      float* h = (float*)malloc(n * sizeof(float));
      int* g = (int*)malloc(n * sizeof(int));
      memset(h, 0, n * sizeof(float));
      memset(g, 0, n * sizeof(int));
      for (int i = 0; i < n; i++) h[i] = rand() / (float)RAND_MAX;
      *(g + 3) = 7;
      float* y; int* k;
      cudaMalloc(&y, n * sizeof(float));
      cudaMalloc(&k, n * sizeof(int));
      cudaMemcpy(y, h, n * sizeof(float), cudaMemcpyHostToDevice);
      cudaMemcpy(k, g, n * sizeof(int), cudaMemcpyHostToDevice);
      scale<<<(n + 255) / 256, 256>>>(y, k, n);
    }
    """, "scale")
    assert res.complete
    assert res.annotation() == "y: inout[n], k: inout[n], n: size(1..900), grid: cdiv(n, 256), block: 256"


def test_a_probe_that_only_the_table_contents_end_is_a_hole_too(tmp_path):
    res = resolve(tmp_path, """
    __global__ void find(const int* table, const int* keys, int* pos, int n, int cap) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i >= n) return;
      int h = keys[i] * 31 % cap;
      if (h < 0) h += cap;
      while (table[h] != keys[i] && table[h] != -1) h = (h + 1) % cap;
      pos[i] = h;
    }
    int main(int argc, char** argv) {
      int n = atoi(argv[1]), cap = 2 * n + 1;
      int *table, *keys, *pos;
      cudaMalloc(&table, cap * sizeof(int));
      cudaMalloc(&keys, n * sizeof(int));
      cudaMalloc(&pos, n * sizeof(int));
      cudaMemcpy(table, keys, cap * sizeof(int), cudaMemcpyDeviceToDevice);
      find<<<(n + 127) / 128, 128>>>(table, keys, pos, n, cap);
    }
    """, "find")
    assert not res.complete and set(res.holes) == {"table"}
    assert "does not empty it before every launch" in res.holes["table"]


def test_a_power_of_two_table_of_structs_probed_with_a_mask(tmp_path):
    # `slot = (slot + 1) & (CAP - 1)` wraps like `% CAP`; the table's length comes from `sizeof(Entry) * CAP`,
    # a struct defined at file scope (its name was read as a global variable, and sizeof of it as unknown: the
    # table had no length at all). Emptied once before a loop of launches, not before each: a hole. The scan of
    # the same table, which ends by its length alone, is complete.
    text = """
    #include <cstdint>
    struct Entry { uint32_t key; uint32_t val; };
    const uint32_t CAP = 1024;
    __global__ void insert(Entry* table, const uint32_t* keys, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i >= n) return;
      uint32_t slot = (keys[i] * 2654435761u) & (CAP - 1);
      while (true) {
        uint32_t prev = atomicCAS(&table[slot].key, 0xffffffffu, keys[i]);
        if (prev == 0xffffffffu || prev == keys[i]) { table[slot].val = i; return; }
        slot = (slot + 1) & (CAP - 1);
      }
    }
    __global__ void count(const Entry* table, int* used) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < CAP && table[i].key != 0xffffffffu) atomicAdd(used, 1);
    }
    int main(int argc, char** argv) {
      int n = atoi(argv[1]);
      Entry* table; uint32_t* keys; int* used;
      cudaMalloc(&table, sizeof(Entry) * CAP);
      cudaMalloc(&keys, n * sizeof(uint32_t));
      cudaMalloc(&used, sizeof(int));
      cudaMemset(table, 0xff, sizeof(Entry) * CAP);
      for (int b = 0; b < 3; b++) insert<<<(n + 127) / 128, 128>>>(table, keys, n);
      count<<<CAP / 128, 128>>>(table, used);
    }
    """
    ins = resolve(tmp_path, text, "insert")
    assert not ins.complete and set(ins.holes) == {"table"}
    assert "probed in an unbounded loop" in ins.holes["table"]
    cnt = resolve(tmp_path, text, "count")
    assert cnt.complete
    assert cnt.annotation() == "table: in[1024, 2] as uint32, used: inout[1], grid: 8, block: 128"
