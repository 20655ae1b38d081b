"""`in[n](LO..HI distinct)` (docs/spec.md): index buffers whose values the program keeps apart, so that threads
writing through them never share an element. Parsing and writing back, the draws (distinct, in range, shrinking,
never more elements than values), and why it matters: a NumPy model of a kernel's non-atomic scatter is
deterministic under the form and is not under a plain range."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from xlate.errors import SpecError
from xlate.parse import parse_string
from xlate.specs import build_spec
from xlate.specs.language import parse_values, spec_items
from xlate.verify.cases import Case, environment, make_inputs
from xlate.verify.strategies import cases, explicit_cases

SCATTER = """
__global__ void k(const float* a, float* c, const int* rows, int n, int m, int w) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n * w) c[rows[t / w] * w + t % w] += a[t];
}
"""


def spec_of(annotation: str):
    return build_spec(parse_string(f"// xlate: {annotation}\n" + textwrap.dedent(SCATTER).lstrip(), "k.cu"), "k")


ITEMS = ("a: in[n, w], c: inout[m, w], rows: in[n](0..m - 1 distinct), n: size(1..300), m: size(1..400), "
         "w: size(1..7), grid: cdiv(n * w, 64), block: 64")


def test_parse_and_write_back():
    assert parse_values("0..m - 1 distinct", "") == ("0", "m - 1", False, True)
    assert parse_values("perm", "") == (None, None, True, False)
    assert parse_values("2..9", "") == ("2", "9", False, False)
    s = spec_of(ITEMS + ", where: m >= n")
    rows = s.param("rows")
    assert rows is not None and rows.distinct and (rows.lo, rows.hi) == ("0", "m - 1")
    assert not s.param("a").distinct
    text = ", ".join(t for _, t in spec_items(s))
    assert "rows: in[n](0..m - 1 distinct)" in text and "where: m >= n" in text
    again = spec_of(text)  # the written spec reads back to the same one
    assert again.params == s.params and again.where == s.where


def test_distinct_needs_a_range():
    with pytest.raises(SpecError, match="distinct"):
        spec_of(ITEMS.replace("(0..m - 1 distinct)", "(distinct)"))


SPEC = spec_of(ITEMS + ", where: m >= n")


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(cases(SPEC, 1 << 16, 1 << 12))
def test_drawn_values_are_distinct_and_in_range(case):
    env = environment(SPEC, case)
    rows = make_inputs(SPEC, case, env)["rows"]
    assert rows.dtype == np.int32 and rows.size == case.sizes["n"]
    assert len(set(rows.tolist())) == rows.size  # no value twice
    assert rows.min() >= 0 and rows.max() <= case.sizes["m"] - 1
    assert case.sizes["m"] >= case.sizes["n"]


def test_an_offset_range_and_the_edges_profile():
    s = spec_of(ITEMS.replace("(0..m - 1 distinct)", "(5..m + 4 distinct)") + ", where: m >= n")
    for seed in range(20):
        case = Case({"n": 9, "m": 10, "w": 1}, {}, {}, {"rows": "edges", "a": "uniform", "c": "uniform"}, seed)
        rows = make_inputs(s, case, environment(s, case))["rows"]
        assert sorted(set(rows.tolist())) == sorted(rows.tolist()) and rows.min() >= 5 and rows.max() <= 14
        assert {5, 14} <= set(rows.tolist())  # edges: both ends of the range are in
    case = Case({"n": 10, "m": 10, "w": 1}, {}, {}, {"rows": "uniform"}, 3)  # n == m: a permutation of the range
    assert sorted(make_inputs(s, case, environment(s, case))["rows"].tolist()) == list(range(5, 15))


def test_more_elements_than_values_is_never_drawn():
    loose = spec_of(ITEMS)  # no `where`: the form's own constraint still holds in every drawn case
    seen = []

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @given(cases(loose, 1 << 16, 1 << 12))
    def run(case):
        assert case.sizes["n"] <= case.sizes["m"]
        seen.append(case)

    run()
    assert seen
    assert all(c.sizes["n"] <= c.sizes["m"] for c in explicit_cases(loose, 1 << 16, 1 << 12))
    bad = Case({"n": 5, "m": 4, "w": 1}, {}, {}, {}, 0)  # a replayed case that breaks it: an error naming it
    with pytest.raises(SpecError, match=r"'rows'.*5 distinct values"):
        make_inputs(loose, bad, environment(loose, bad))


def test_shrinks_to_the_smallest_case():
    # the bound size is drawn from its bound up: the smallest case with n >= 5 has m == 5 too
    case = find(cases(SPEC, 1 << 16, 1 << 12), lambda c: c.sizes["n"] >= 5,
                settings=settings(max_examples=500, database=None, suppress_health_check=list(HealthCheck)))
    assert case.sizes["n"] == 5 and case.sizes["m"] == 5 and case.sizes["w"] == 1


def scatter_add(c: np.ndarray, rows: np.ndarray, a: np.ndarray, order: np.ndarray) -> np.ndarray:
    """The kernel's `c[rows[r] * w + j] += a[r, j]` as threads run it without atomics: every thread reads its
    element, then all write back in `order`; two threads on one element lose one update, and which one depends
    on the order."""
    out = c.copy()
    old = c[rows, :].copy()  # every thread's read, before anyone writes
    for r in order:
        out[rows[r], :] = old[r] + a[r]
    return out


def two_orders_agree(spec, case: Case) -> bool:
    env = environment(spec, case)
    inputs = make_inputs(spec, case, env)
    n, m, w = case.sizes["n"], case.sizes["m"], case.sizes["w"]
    a = inputs["a"].astype(np.float64).reshape(n, w)
    c = inputs["c"].astype(np.float64).reshape(m, w)
    rows = inputs["rows"].astype(np.int64)
    first = scatter_add(c, rows, a, np.arange(n))
    second = scatter_add(c, rows, a, np.arange(n)[::-1])
    reference = c.copy()
    np.add.at(reference, rows, a)  # what the program computes: each update once
    return np.array_equal(first, second, equal_nan=True) and (
        not np.isfinite(first).all() or np.allclose(first, reference))


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_non_atomic_scatter_is_deterministic_under_distinct(data):
    case = data.draw(cases(SPEC, 1 << 16, 1 << 12))
    assert two_orders_agree(SPEC, case)


def test_the_same_scatter_races_under_a_plain_range():
    plain = spec_of(ITEMS.replace(" distinct)", ")"))
    case = find(cases(plain, 1 << 16, 1 << 12), lambda c: not two_orders_agree(plain, c),
                settings=settings(max_examples=300, database=None, suppress_health_check=list(HealthCheck)))
    rows = make_inputs(plain, case, environment(plain, case))["rows"]
    assert len(set(rows.tolist())) < rows.size  # the race comes from a repeated value
