"""`in[n](LO..HI ascending)` and `(LO..HI ascending by L)` (docs/spec.md): segment offsets the program keeps in
order (CSR row pointers, prefix sums of lengths), so the segments threads walk never overlap. Parsing and writing
back, the draws (non-decreasing, in range, the edges' empty segments and one segment holding everything, lengths
kept inside their steps, shrinking), and why it matters: a NumPy model of a kernel writing its segments without
atomics is deterministic under the form and races under a plain range."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, find, given, settings

from xlate.errors import SpecError
from xlate.parse import parse_string
from xlate.specs import build_spec
from xlate.specs.language import parse_values, spec_items, value_order
from xlate.verify.cases import Case, environment, make_inputs
from xlate.verify.strategies import cases

# thread s copies its segment: dst[off[s] + k] = src[off[s] + k] * 2 for k < len[s]
SEGMENTS = """
__global__ void k(const int* off, const int* len, const float* src, float* dst, int nseg, int total) {
  int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= nseg) return;
  for (int k = 0; k < len[s]; k++) dst[off[s] + k] = src[off[s] + k] * 2.0f;
}
"""

ITEMS = ("off: in[nseg](0..total ascending by len), len: in[nseg](0..total), src: in[total], dst: out[total], "
         "nseg: size(1..70), total: size(1..500), grid: cdiv(nseg, 32), block: 32")


def spec_of(annotation: str):
    return build_spec(parse_string(f"// xlate: {annotation}\n" + textwrap.dedent(SEGMENTS).lstrip(), "k.cu"), "k")


SPEC = spec_of(ITEMS)
PLAIN = spec_of(ITEMS.replace(" ascending by len", ""))


def test_parse_and_write_back():
    assert parse_values("0..nnz ascending", "") == ("0", "nnz", False, False)
    assert value_order("0..nnz ascending") == (True, None)
    assert parse_values("1..m - 1 ascending by lengths", "") == ("1", "m - 1", False, False)
    assert value_order("1..m - 1 ascending by lengths") == (True, "lengths")
    assert value_order("0..m - 1 distinct") == (False, None)
    off = SPEC.param("off")
    assert off is not None and off.ascending and off.ascending_by == "len" and (off.lo, off.hi) == ("0", "total")
    assert not SPEC.param("len").ascending
    text = ", ".join(t for _, t in spec_items(SPEC))
    assert "off: in[nseg](0..total ascending by len)" in text
    again = spec_of(text)  # the written spec reads back to the same one
    assert again.params == SPEC.params
    plain = spec_of(ITEMS.replace(" by len", ""))
    assert "off: in[nseg](0..total ascending)" in ", ".join(t for _, t in spec_items(plain))


@pytest.mark.parametrize("bad", ["(ascending)", "(0..total distinct ascending)", "(0..total ascending by dst)",
                                 "(0..total ascending by nseg)", "(0..total ascending by off)"])
def test_malformed_orders_are_refused(bad):
    with pytest.raises(SpecError, match="ascending"):
        spec_of(ITEMS.replace("(0..total ascending by len)", bad))


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(cases(SPEC, 1 << 16, 1 << 12))
def test_offsets_ascend_and_segments_stay_apart_inside_the_range(case):
    env = environment(SPEC, case)
    inputs = make_inputs(SPEC, case, env)
    off, length = inputs["off"].astype(np.int64), inputs["len"].astype(np.int64)
    total = case.sizes["total"]
    assert off.dtype == np.int64 and off.size == case.sizes["nseg"]
    assert (np.diff(off) >= 0).all() and off.min() >= 0 and off.max() <= total
    ends = off + length
    assert (length >= 0).all() and (ends <= total).all()
    assert (ends[:-1] <= off[1:]).all()  # segment k ends before segment k + 1 starts


def test_edges_draw_empty_segments_and_one_segment_holding_all():
    plain = spec_of(ITEMS.replace(" by len", ""))
    seen = set()
    for seed in range(40):
        case = Case({"nseg": 9, "total": 50}, {}, {}, {"off": "edges", "len": "uniform"}, seed)
        off = make_inputs(plain, case, environment(plain, case))["off"].astype(np.int64)
        assert (np.diff(off) >= 0).all() and off.min() >= 0 and off.max() <= 50
        steps = np.diff(off)
        if (steps == 0).all():
            seen.add("all empty")
        elif sorted(steps.tolist())[-1] == 50 and off[0] == 0:
            seen.add("one holds all")  # every other segment empty
        if (steps == 0).any():
            seen.add("some empty")
    assert seen == {"all empty", "one holds all", "some empty"}


def test_lengths_fill_their_segments_under_edges():
    # lengths drawn at the top of their range are cut to the steps: an exclusive prefix sum of them
    case = Case({"nseg": 12, "total": 400}, {}, {}, {"off": "uniform", "len": "edges"}, 5)
    inputs = make_inputs(SPEC, case, environment(SPEC, case))
    off, length = inputs["off"].astype(np.int64), inputs["len"].astype(np.int64)
    full = np.append(np.diff(off), 400 - off[-1])
    assert (length <= full).all() and (length == full).any()


def test_shrinks_to_the_smallest_case():
    case = find(cases(SPEC, 1 << 16, 1 << 12), lambda c: c.sizes["nseg"] >= 3,
                settings=settings(max_examples=500, database=None, suppress_health_check=list(HealthCheck)))
    assert case.sizes["nseg"] == 3 and case.sizes["total"] == 1
    inputs = make_inputs(SPEC, case, environment(SPEC, case))
    assert inputs["off"].tolist() == sorted(inputs["off"].tolist())


def run_segments(spec, case: Case, order: np.ndarray) -> np.ndarray | None:
    """The kernel above as threads run it in `order`, each writing its segment (None: a write out of bounds)."""
    inputs = make_inputs(spec, case, environment(spec, case))
    off, length = inputs["off"].astype(np.int64), inputs["len"].astype(np.int64)
    src = inputs["src"].astype(np.float64)
    dst = np.full(case.sizes["total"], np.nan)
    for s in order:
        k = np.arange(max(0, int(length[s])))
        if k.size and (off[s] + k[-1] >= dst.size or off[s] < 0):
            return None
        dst[off[s] + k] = src[off[s] + k] * 2 + s  # `+ s`: which thread wrote shows
    return dst


def agree(spec, case: Case) -> bool:
    n = case.sizes["nseg"]
    first, second = run_segments(spec, case, np.arange(n)), run_segments(spec, case, np.arange(n)[::-1])
    return first is not None and second is not None and np.array_equal(first, second, equal_nan=True)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(cases(SPEC, 1 << 16, 1 << 12))
def test_segment_writes_are_deterministic_and_in_bounds_under_ascending_by(case):
    assert agree(SPEC, case)


def test_the_same_kernel_races_or_faults_under_a_plain_range():
    case = find(cases(PLAIN, 1 << 16, 1 << 12), lambda c: not agree(PLAIN, c),
                settings=settings(max_examples=300, database=None, suppress_health_check=list(HealthCheck)))
    assert case.sizes["nseg"] >= 1


def test_csr_row_sums_match_numpy():
    # y[r] = sum of v[rp[r] .. rp[r + 1] - 1], as the CUDA loop `for (j = rp[r]; j < rp[r + 1]; j++)` computes
    s = spec_of("off: in[nseg](0..total ascending), len: in[nseg](0..0), src: in[total], dst: out[total], "
                "nseg: size(1..70), total: size(1..500), grid: cdiv(nseg, 32), block: 32")
    for seed, profile in [(1, "uniform"), (2, "edges"), (3, "edges"), (4, "uniform")]:
        case = Case({"nseg": 37, "total": 101}, {}, {}, {"off": profile, "src": "integers"}, seed)
        inputs = make_inputs(s, case, environment(s, case))
        rp, v = inputs["off"].astype(np.int64), inputs["src"].astype(np.float64)
        rows = [v[rp[r]:rp[r + 1]].sum() for r in range(rp.size - 1)]
        assert np.isclose(sum(rows), v[rp[0]:rp[-1]].sum())  # the rows tile rp[0] .. rp[-1] once each


def test_offsets_leave_every_segment_its_least_length():
    # lengths of at least 2 (a kernel reading each segment's last element): offsets step at least 2 apart
    s = spec_of(ITEMS.replace("len: in[nseg](0..total)", "len: in[nseg](2..total)"))
    for seed, profile in [(0, "uniform"), (1, "edges"), (2, "edges"), (3, "uniform"), (4, "edges")]:
        case = Case({"nseg": 11, "total": 60}, {}, {}, {"off": profile, "len": profile}, seed)
        inputs = make_inputs(s, case, environment(s, case))
        off, length = inputs["off"].astype(np.int64), inputs["len"].astype(np.int64)
        assert (np.diff(off) >= 2).all() and off.min() >= 0 and off[-1] + 2 <= 60
        assert (length >= 2).all() and (off + length <= np.append(off[1:], 60)).all()
