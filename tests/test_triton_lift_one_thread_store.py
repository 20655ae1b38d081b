"""A store one thread makes (`if (t == 0)`) under a further condition that differs between threads in the port
(`sum > cut[b]`, with `cut[b]` loaded by thread 0 alone, the others reading 0): the one-thread condition must stay.
The lifter dropped it for a store of a constant to one address, as if every thread would store the same, so
every lane stored by its own reading of the condition and the last lane's -1 won: deredundancy kernel_filter
was rejected on the H200 for it. Runs under the Triton interpreter against NumPy."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import run as run_raw
from tests.test_triton_realworld_patterns import GUARD, buf, rng
from xlate.parse import parse_string
from xlate.translate.base import TranslateOptions
from xlate.translate.triton.translator import CudaToTriton

KERNEL = """
__global__ void triage(const int* score, const int* bar, int* state, int groups) {
  __shared__ int acc[128];
  int g = blockIdx.x, t = threadIdx.x;
  acc[t] = score[g * 128 + t];
  __syncthreads();
  if (t == 0) {
    for (int k = 1; k < 128; k++) acc[0] += acc[k];
    if (acc[0] > bar[g]) state[g] = 7;
    else state[g] = 5;
  }
}
void run(const int* s, const int* b, int* st, int groups) { triage<<<groups, 128>>>(s, b, st, groups); }
"""


def test_a_one_thread_store_under_a_thread_varying_condition_keeps_its_thread(tmp_path: Path):
    unit = parse_string(KERNEL, str(tmp_path / "triage.cu"), "cuda")
    t = CudaToTriton().translate(unit, unit.text, TranslateOptions())
    assert t.kernels == ["triage"], [d.format() for d in t.diagnostics]
    # every store to state is masked to thread 0: which lane wins a collision is the interpreter's choice (it
    # happened to be lane 0 here), on the GPU it was another lane
    stores = [ln for ln in t.text.splitlines() if ln.strip().startswith("tl.store(state ")]
    assert len(stores) == 2, stores
    for ln in stores:
        mask = ln.split("mask=", 1)[1].rstrip(")")
        if re.fullmatch(r"\w+", mask):  # a named mask: the line that defines it
            mask = next(d for d in t.text.splitlines() if d.strip().startswith(f"{mask} ="))
        assert "lane_x == 0" in mask, ln
    groups = 45
    score = rng(5).integers(-20, 20, groups * 128).astype(np.int32)
    bar = rng(6).integers(-60, 60, groups).astype(np.int32)  # negative bars: lanes reading 0 would say "above"
    state = np.full(groups, 99, np.int32)
    out = run_raw(t.text, "triage", [buf("score", score), buf("bar", bar), buf("state", state),
                                     ScalarArg("groups", groups, "int32")], tmp_path)
    sums = score.reshape(groups, 128).astype(np.int64).sum(axis=1)
    want = np.where(sums > bar, 7, 5)
    assert np.array_equal(out["state"][GUARD:-GUARD], want)
