"""--benchmark's statistics against computed values: quantiles (NumPy as the reference), the order-statistics
interval of the median (binomial sums worked out by hand, and its coverage by simulation), the noise verdict,
the interleaving and stop rule with scripted samples, launch batching, bandwidth percentages, and the size
budget that puts the working set above the L2 cache."""

from __future__ import annotations

import math

import numpy as np
import pytest

from xlate.migrate.benchstats import (
    Plan,
    bandwidth,
    geomean,
    interleave,
    judge,
    launches_per_batch,
    median_ci,
    quantile,
    ratio_stats,
    spread,
)


@pytest.mark.parametrize("n", [1, 2, 5, 6, 11, 40])
def test_quantile_matches_numpy(n):
    values = list(np.random.default_rng(n).lognormal(size=n))
    for q in (0.0, 0.1, 0.25, 0.5, 0.75, 1.0):
        assert quantile(values, q) == pytest.approx(float(np.percentile(values, 100 * q)))


def test_spread_of_known_values():
    s = spread([5.0, 1.0, 4.0, 2.0, 3.0])
    assert (s.median, s.q1, s.q3, s.low, s.high) == (3.0, 2.0, 4.0, 1.0, 5.0)
    assert s.rel_iqr == pytest.approx(2 / 3) and s.rel_range == pytest.approx(4 / 3)


def test_median_interval_by_hand():
    # n = 6: only (min, max) reaches 95 %: 1 - 2 / 2**6
    assert median_ci([3, 1, 6, 2, 5, 4]) == (1, 6, pytest.approx(1 - 2 / 64))
    # n = 10: k = 2 gives 1 - 2 (1 + 10) / 1024 = 0.9785; k = 3 would give 0.8906
    assert median_ci(list(range(10, 0, -1))) == (2, 9, pytest.approx(1 - 2 * 11 / 1024))
    # n = 20: P(B <= 5) = (1 + 20 + 190 + 1140 + 4845 + 15504) / 2**20 -> k = 6
    lo, hi, cov = median_ci(list(range(20, 0, -1)))
    assert (lo, hi) == (6, 15) and cov == pytest.approx(1 - 2 * 21700 / 2**20)
    # n = 5 cannot reach 95 %: the whole range, with the coverage it has
    assert median_ci([5, 4, 3, 2, 1]) == (1, 5, pytest.approx(1 - 2 / 32))
    assert median_ci([7.0]) == (7.0, 7.0, 0.0)


def test_median_interval_covers_as_claimed():
    """Simulation: the interval of 10 log-normal values holds the true median (1.0) 97.85 % of the time."""
    rng = np.random.default_rng(0)
    trials = 4000
    hits = 0
    for _ in range(trials):
        lo, hi, cov = median_ci(list(rng.lognormal(0.0, 0.3, size=10)))
        hits += lo <= 1.0 <= hi
    assert hits / trials == pytest.approx(cov, abs=0.012)


@pytest.mark.parametrize("ratio, lo, hi, verdict", [
    (0.80, 0.78, 0.82, "port faster"),
    (1.30, 1.25, 1.33, "port slower"),
    (0.97, 0.90, 1.04, "within noise"),  # the interval holds 1
    (1.006, 1.004, 1.008, "within noise"),  # tight, but under the 1 % floor
    (1.02, 1.015, 1.025, "port slower"),
])
def test_judge(ratio, lo, hi, verdict):
    assert judge(ratio, lo, hi, floor=0.01) == verdict


class Script:
    """A fake timed call: per side, a list of sample lists returned in turn; records the call order."""

    def __init__(self, source, port):
        self.data = {"source": list(source), "port": list(port)}
        self.calls: list[str] = []

    def __call__(self, side: str) -> list[float]:
        self.calls.append(side)
        return self.data[side].pop(0)


def test_interleave_alternates_and_stops_when_the_interval_is_narrow():
    plan = Plan(min_rounds=6, max_rounds=20, target_spread=0.01)
    script = Script([[1.0, 1.0, 1.0]] * 20, [[0.8, 0.81, 0.79]] * 20)
    rounds = interleave(script, plan, clock=lambda: 0.0)
    assert len(rounds.samples) == 6 and rounds.converged
    assert script.calls[:6] == ["source", "port", "port", "source", "source", "port"]
    stats = ratio_stats(rounds, plan)
    assert stats["port_over_source"] == pytest.approx(0.8)
    assert stats["interval"] == [pytest.approx(0.8), pytest.approx(0.8)]
    assert stats["verdict"] == "port faster" and not stats["within_noise"]
    assert stats["source_s"] == 1.0 and stats["port_s"] == pytest.approx(0.8)
    assert stats["ratio"] == pytest.approx(1 / 0.8)
    assert stats["samples"] == {"source": 18, "port": 18}
    port = [0.8, 0.81, 0.79] * 6
    iqr = np.percentile(port, 75) - np.percentile(port, 25)
    assert stats["spread"]["port"] == pytest.approx(iqr / 0.8) == pytest.approx(0.025)


def test_interleave_hits_the_round_cap_when_noisy():
    plan = Plan(min_rounds=4, max_rounds=9, target_spread=0.01)
    port = [[1.0 + (0.2 if i % 2 else -0.2)] for i in range(9)]  # ratios 0.8, 1.2, 0.8, ...
    rounds = interleave(Script([[1.0]] * 9, port), plan, clock=lambda: 0.0)
    assert len(rounds.samples) == 9 and not rounds.converged and "round cap" in rounds.stopped
    stats = ratio_stats(rounds, plan)
    assert stats["port_over_source"] == pytest.approx(0.8)  # five of the nine ratios are 0.8
    assert stats["interval"] == [pytest.approx(0.8), pytest.approx(1.2)]
    assert stats["verdict"] == "within noise"
    # IQR / median of the nine ratios: quartiles 0.8 and 1.2
    assert stats["spread"]["ratio"] == pytest.approx(0.4 / 0.8)


def test_interleave_time_cap():
    ticks = iter(range(100))
    plan = Plan(min_rounds=6, max_rounds=50, max_seconds=3.0)
    port = [[1.0 + 0.1 * (i % 3)] for i in range(50)]
    rounds = interleave(Script([[1.0]] * 50, port), plan, clock=lambda: float(next(ticks)))
    # clock() is read once at the start (0) and after each round (1, 2, 3): the third round reaches 3 s
    assert len(rounds.samples) == 3 and "time cap" in rounds.stopped


def test_launches_per_batch():
    plan = Plan(batch_seconds=0.01)
    assert launches_per_batch(1e-5, plan) == 1000
    assert launches_per_batch(3e-3, plan) == 4  # ceil(0.01 / 0.003)
    assert launches_per_batch(0.5, plan) == 1
    assert launches_per_batch(1e-9, plan) == 10_000  # capped
    assert launches_per_batch(0.0, plan) == 1


def test_bandwidth_and_geomean():
    assert bandwidth(2_000_000_000, 0.5, 5e9) == {"gbs": pytest.approx(4.0), "pct_of_copy": pytest.approx(80.0)}
    assert bandwidth(10, 1.0, None)["pct_of_copy"] is None
    assert geomean([0.5, 2.0, 1.0]) == pytest.approx(1.0)
    assert geomean([2.0, 8.0]) == pytest.approx(4.0)
    assert geomean([]) is None


def test_budget_puts_the_working_set_above_the_l2_multiple():
    from xlate.migrate.bench import bench_case, gpu_budget
    from xlate.parse import parse_string
    from xlate.specs import build_spec
    from xlate.verify.cases import buffer_length, ctype_dtype, environment

    plan = Plan(l2_multiple=4.0)
    l2 = 1 << 20
    for ctype in ("float", "__half", "double"):
        text = f"""
#include <cuda_fp16.h>
// xlate: n: size(1..4096), x: in[n], y: in[n], z: out[n], grid: cdiv(n, 256), block: 256
__global__ void k(int n, const {ctype}* x, const {ctype}* y, {ctype}* z) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) z[i] = x[i] + y[i]; }}
"""
        spec = build_spec(parse_string(text, "k.cu"), "k")
        item = {"float": 4, "__half": 2, "double": 8}[ctype]
        assert gpu_budget(spec, l2, plan) == 2 * 4 * l2 // item
        case = bench_case(spec, gpu_budget(spec, l2, plan), beyond_range=True)
        env = environment(spec, case)
        ws = sum(buffer_length(p, env, case, spec) * ctype_dtype(p.ctype, case, spec).itemsize for p in spec.buffers)
        assert 4 * l2 <= ws <= 8 * l2, (ctype, ws / l2)
        assert case.sizes["n"] > 4096  # beyond the spec's fuzzing range
        assert math.log2(case.sizes["n"]).is_integer()
