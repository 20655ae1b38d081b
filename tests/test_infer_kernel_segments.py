"""Inference of segment offsets (docs/spec.md, "Buffers"): an index buffer whose neighbours bound a run the kernel
walks (`for (j = p[r]; j < p[r + 1]; j++)`, a count `p[b + 1] - p[b]`) is drawn `ascending`; one whose element
starts a run of another buffer's element (`for (j = 0; j < len[s]; j++) x[off[s] + j]`) is drawn `ascending by`
that buffer, and its range is then the whole buffer the runs index. Each program is written for its test (host and
kernel), with the exact spec inferred."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import numpy as np
import pytest

from xlate.parse import parse_string
from xlate.specs import resolve_spec
from xlate.verify.cases import Case, environment, make_inputs

HOST = """
int main() {
  int nseg = 77, total = 999, nrows = 300, nnz = 5000, nblk = 13;
  int *first, *count, *rp; unsigned *bound; float *src, *dst, *v, *y;
  cudaMalloc(&first, nseg * sizeof(int));
  cudaMalloc(&count, nseg * sizeof(int));
  cudaMalloc(&src, total * sizeof(float));
  cudaMalloc(&dst, total * sizeof(float));
  cudaMalloc(&rp, (nrows + 1) * sizeof(int));
  cudaMalloc(&v, nnz * sizeof(float));
  cudaMalloc(&y, nrows * sizeof(float));
  cudaMalloc(&bound, (nblk + 1) * sizeof(unsigned));
  LAUNCH;
  return 0;
}
"""


def resolve(tmp_path: Path, kernel_text: str, launch: str, kernel: str):
    path = tmp_path / "prog.cu"
    path.write_text(textwrap.dedent(kernel_text).lstrip() + textwrap.dedent(HOST).replace("LAUNCH", launch))
    res = resolve_spec(parse_string(path.read_text(), str(path), "cuda"), kernel)
    assert res.complete, res.holes
    return res


def annotation(tmp_path: Path, kernel_text: str, launch: str, kernel: str) -> str:
    return resolve(tmp_path, kernel_text, launch, kernel).annotation()


def test_a_loop_between_neighbours_makes_row_pointers_ascending(tmp_path):
    got = annotation(tmp_path, """
    __global__ void row_sums(const int* rp, const float* v, float* y, int nrows) {
      int r = blockIdx.x * blockDim.x + threadIdx.x;
      if (r >= nrows) return;
      float s = 0.0f;
      for (int j = rp[r]; j < rp[r + 1]; j++) s += v[j];
      y[r] = s;
    }
    """, "row_sums<<<(nrows + 127) / 128, 128>>>(rp, v, y, nrows)", "row_sums")
    assert got == ("rp: in[nrows + 1](0..nnz ascending), v: in[nnz], y: out[nrows], nrows: size(1..300), "
                   "nnz: size(1..5000), grid: cdiv(nrows, 128), block: 128")


def test_a_count_of_neighbours_in_a_block_loop_makes_bounds_ascending(tmp_path):
    # block b copies bound[b] .. bound[b + 1] - 1 with a strided while loop
    got = annotation(tmp_path, """
    __global__ void blk_copy(const unsigned* bound, const float* src, float* dst) {
      int b = blockIdx.x;
      int first = bound[b];
      int count = bound[b + 1] - bound[b];
      int t = threadIdx.x;
      while (t < count) { dst[first + t] = src[first + t] + 1.0f; t += blockDim.x; }
    }
    """, "blk_copy<<<nblk, 32>>>(bound, src, dst)", "blk_copy")
    assert got == ("bound: in[nblk + 1](0..total / 2 ascending), src: in[total], dst: out[total], "
                   "nblk: size(1..13), total: size(1..999), grid: nblk, block: 32")


def test_a_start_set_on_two_paths_still_pairs_neighbours(tmp_path):
    # warp w walks cut[w - 1] .. cut[w] - 1, warp 0 from 0
    got = annotation(tmp_path, """
    __global__ void chunks(const int* cut, const float* src, float* dst) {
      int lane = threadIdx.x & 31;
      int warp = (threadIdx.x + blockIdx.x * blockDim.x) / 32;
      int start = 0;
      if (warp > 0) start = cut[warp - 1];
      int term = cut[warp];
      for (int i = start + lane; i < term; i += 32) dst[i] = src[i] * 3.0f;
    }
    """, "chunks<<<nseg / 4, 128>>>(first, src, dst)", "chunks")
    assert got == ("cut: in[nseg](0..total ascending), src: in[total], dst: out[total], nseg: size(1..77), "
                   "total: size(1..999), grid: nseg / 4, block: 128, where: nseg % 4 == 0")


def test_a_loop_from_an_offset_over_a_length_makes_offsets_ascending_by_it(tmp_path):
    got = annotation(tmp_path, """
    __global__ void seg_double(const int* first, const int* count, const float* src, float* dst, int nseg) {
      int s = blockIdx.x * blockDim.x + threadIdx.x;
      if (s >= nseg) return;
      int start = first[s];
      int end = start + count[s];
      for (int k = start; k < end; k++) dst[k] = src[k] * 2.0f;
    }
    """, "seg_double<<<(nseg + 63) / 64, 64>>>(first, count, src, dst, nseg)", "seg_double")
    assert got == ("first: in[nseg](0..total ascending by count), count: in[nseg](0..total - 1), src: in[total], "
                   "dst: out[total], nseg: size(1..77), total: size(1..999), grid: cdiv(nseg, 64), block: 64")


def test_a_guarded_run_from_an_offset_and_its_least_length(tmp_path):
    # out[first[s] + j] for j < count[s]; the kernel also reads each segment's last element, so counts are at
    # least 1 and the offsets need room for nseg of them
    kernel = """
    __global__ void seg_last(const int* first, const int* count, const float* src, float* dst, int nseg) {
      int s = blockIdx.x * blockDim.x + threadIdx.x;
      if (s >= nseg) return;
      float keep = src[first[s] + count[s] - 1];
      for (int j = 0; j < count[s]; j++) dst[first[s] + j] = keep;
    }
    """
    res = resolve(tmp_path, kernel, "seg_last<<<(nseg + 63) / 64, 64>>>(first, count, src, dst, nseg)", "seg_last")
    assert res.annotation() == (
        "first: in[nseg](1..total ascending by count), count: in[nseg](1..total - 1), src: in[total], "
        "dst: out[total], nseg: size(1..77), total: size(1..999), grid: cdiv(nseg, 64), block: 64, "
        "where: total - 1 >= 1 and total - 1 >= nseg")
    spec = res.spec
    assert spec is not None
    for seed, profile in enumerate(["uniform", "edges", "edges", "uniform"]):  # the CUDA semantics, element by element
        case = Case({"nseg": 23, "total": 61}, {}, {}, {"first": profile, "count": profile, "src": "integers"}, seed)
        inputs = make_inputs(spec, case, environment(spec, case))
        first, count = inputs["first"].astype(np.int64), inputs["count"].astype(np.int64)
        dst = np.full(61, np.nan)
        for s in range(23):
            last = first[s] + count[s] - 1
            assert 0 <= last < 61  # the read stays inside src
            assert np.isnan(dst[first[s]:last + 1]).all()  # no element written by two segments
            dst[first[s]:last + 1] = inputs["src"][last]


def test_runs_that_are_not_neighbours_or_not_one_element_are_left_alone(tmp_path):
    # p[s] .. p[s + 2] overlaps the next thread's run whatever the order; count[s + 1] is not segment s's length
    got = annotation(tmp_path, """
    __global__ void skip_pairs(const int* rp, const float* src, float* dst, int nrows) {
      int s = blockIdx.x * blockDim.x + threadIdx.x;
      if (s + 1 >= nrows) return;
      for (int j = rp[s]; j < rp[s + 2]; j++) dst[j] = src[j];
    }
    """, "skip_pairs<<<(nrows + 63) / 64, 64>>>(rp, src, dst, nrows)", "skip_pairs")
    assert "ascending" not in got and re.search(r"rp: in\[[^]]*\]\(0\.\.total\)", got)
    got = annotation(tmp_path, """
    __global__ void other_len(const int* first, const int* count, float* dst, int nseg) {
      int s = blockIdx.x * blockDim.x + threadIdx.x;
      if (s + 1 >= nseg) return;
      for (int j = 0; j < count[s + 1]; j++) dst[first[s] + j] = 1.0f;
    }
    """, "other_len<<<(nseg + 63) / 64, 64>>>(first, count, dst, nseg)", "other_len")
    assert "ascending" not in got and re.search(r"first: in\[[^]]*\]\(0\.\.total / 2\)", got)


def test_offsets_the_kernel_writes_are_not_drawn(tmp_path):
    got = annotation(tmp_path, """
    __global__ void shift_rows(int* rp, const float* v, float* y, int nrows) {
      int r = blockIdx.x * blockDim.x + threadIdx.x;
      if (r >= nrows) return;
      float s = 0.0f;
      for (int j = rp[r]; j < rp[r + 1]; j++) s += v[j];
      y[r] = s;
      rp[r] = 0;
    }
    """, "shift_rows<<<(nrows + 127) / 128, 128>>>(rp, v, y, nrows)", "shift_rows")
    assert "ascending" not in got


def test_a_write_through_a_running_count_that_just_grew_makes_it_ascending(tmp_path):
    # stream compaction over an inclusive scan: element i goes to keep[i] - 1 when keep[i] > keep[i - 1]; only a
    # non-decreasing keep sends two threads to two elements
    kernel = """
    __global__ void compact(const int* keep, const float* src, float* dst, int nseg) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i == 0) {
        if (keep[0] == 1) dst[0] = src[0];
      } else if (i < nseg) {
        if (keep[i] > keep[i - 1]) {
          int to = keep[i] - 1;
          dst[to] = src[i];
        }
      }
    }
    """
    res = resolve(tmp_path, kernel,
                  "compact<<<(nseg + 127) / 128, 128>>>(first, src, dst, nseg)", "compact")
    assert res.annotation() == ("keep: in[nseg](1..total ascending), src: in[max(1, nseg, total)], dst: out[total], "
                                "nseg: size(1..77), total: size(1..999), grid: cdiv(nseg, 128), block: 128")
    spec = res.spec
    assert spec is not None
    for seed, profile in enumerate(["uniform", "edges", "edges", "uniform"]):
        case = Case({"nseg": 40, "total": 25}, {}, {}, {"keep": profile}, seed)
        keep = make_inputs(spec, case, environment(spec, case))["keep"].astype(np.int64)
        targets = [0] if keep[0] == 1 else []
        targets += [int(keep[i]) - 1 for i in range(1, 40) if keep[i] > keep[i - 1]]
        assert len(targets) == len(set(targets)) and all(0 <= t < 25 for t in targets)  # one thread per element


def test_a_write_through_a_count_compared_with_another_element_is_left_alone(tmp_path):
    got = annotation(tmp_path, """
    __global__ void compact2(const int* keep, const float* src, float* dst, int nseg) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i >= 2 && i < nseg && keep[i] > keep[i - 2]) dst[keep[i] - 1] = src[i];
    }
    """, "compact2<<<(nseg + 127) / 128, 128>>>(first, src, dst, nseg)", "compact2")
    assert "ascending" not in got


SEGMENT_PROGRAM = """
__global__ void seg_bump(const int* first, const int* count, const float* src, float* dst, int nseg) {
  int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= nseg) return;
  int start = first[s];
  int end = start + count[s];
  for (int k = start; k < end; k++) dst[k] += src[k] * 2.0f + (float)s;
}
int main() {
  int nseg = 77, total = 999;
  int *first, *count; float *src, *dst;
  cudaMalloc(&first, nseg * sizeof(int));
  cudaMalloc(&count, nseg * sizeof(int));
  cudaMalloc(&src, total * sizeof(float));
  cudaMalloc(&dst, total * sizeof(float));
  seg_bump<<<(nseg + 63) / 64, 64>>>(first, count, src, dst, nseg);
  return 0;
}
"""

REFERENCE = """
def seg_bump(first, count, src, dst, nseg, total):
    for s in range(nseg):
        a, n = int(first[s]), int(count[s])
        dst[a:a + n] += src[a:a + n] * 2.0 + s
"""


def test_a_triton_port_of_a_segment_kernel_verifies_under_the_inferred_spec_only(tmp_path):
    """End to end on the CPU: the lifted port (Triton interpreter) against a NumPy reference. Under the inferred
    `ascending by` spec it verifies; under the ranges drawn apart (as before) segments overlap, the port's lanes
    store over each other and the correct port is rejected."""
    from xlate.backends.registry import get_backend

    from xlate.translate.base import TranslateOptions
    from xlate.translate.triton.translator import CudaToTriton
    from xlate.verify.api import verify

    path = tmp_path / "main.cu"
    path.write_text(textwrap.dedent(SEGMENT_PROGRAM).lstrip())
    unit = parse_string(path.read_text(), str(path), "cuda")
    res = resolve_spec(unit, "seg_bump")
    assert "first: in[nseg](0..total ascending by count), count: in[nseg](0..total - 1)" in res.annotation()
    port = tmp_path / "port.py"
    port.write_text(CudaToTriton().translate(unit, unit.text, TranslateOptions(kernels=["seg_bump"])).text)
    ref = tmp_path / "ref.py"
    ref.write_text(textwrap.dedent(REFERENCE).lstrip())
    if get_backend("cuda").detect().can_run:
        pytest.skip("a GPU is here: the source runs, the reference is not the oracle")
    verdict = verify(str(path), str(port), kernel="seg_bump", reference=f"{ref}:seg_bump", examples=8)
    assert verdict.status == "verified", verdict.summary()
    apart = verify(str(path), str(port), kernel="seg_bump", reference=f"{ref}:seg_bump", examples=8,
                   spec_overrides="first: in[nseg](0..total / 2), count: in[nseg](0..total / 2)")
    assert apart.status == "rejected" and apart.counterexample.failure == "mismatch", apart.summary()
