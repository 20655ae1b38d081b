"""The statistics of `--benchmark`: how long to repeat, the spread of the samples, the port/source time ratio
with a distribution-free confidence interval, whether that ratio is within noise, and bandwidth percentages.

Pure functions of the samples (no device, no clock of their own), so they are tested against computed values.

A *round* is one timed call on each side (source and port, their order alternating from round to round), each
call a few back-to-back launch batches, one sample (seconds per launch) per batch. Rounds are paired: each gives
one port/source ratio of the two sides' median samples, so a drift of the GPU's clock over the run shows in both
sides of a pair and cancels in its ratio. The reported ratio is the median of the paired ratios, its interval
the order-statistics confidence interval of that median."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Plan:
    """How hard `--benchmark` tries. A run stops when the ratio's confidence interval is narrower than
    `target_spread` (relative half-width) after at least `min_rounds`, or at `max_rounds` / `max_seconds`."""

    min_rounds: int = 6  # (min, max) of 6 paired ratios already covers their median with 96.9 % confidence
    max_rounds: int = 20
    max_seconds: float = 60.0  # per kernel, both sides, transfers included
    target_spread: float = 0.01  # half-width of the ratio's interval, relative to the ratio
    level: float = 0.95  # confidence of the interval
    noise_floor: float = 0.01  # a ratio closer to 1 than this is never called a speed-up or a slow-down
    batch_seconds: float = 0.01  # GPU time of one launch batch (one sample)
    batches: int = 5  # batches per timed call (the runtimes' backends/base.py batches())
    l2_multiple: float = 4.0  # the working set is at least this many times the device's L2 cache

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def quantile(values: Sequence[float], q: float) -> float:
    """The q-quantile with linear interpolation between order statistics (NumPy's default method)."""
    xs = sorted(values)
    if not xs:
        raise ValueError("quantile of no values")
    pos = q * (len(xs) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


@dataclass(frozen=True)
class Spread:
    n: int
    median: float
    q1: float
    q3: float
    low: float
    high: float

    @property
    def rel_iqr(self) -> float:
        """Interquartile range over the median: the spread of the samples, as a fraction."""
        return (self.q3 - self.q1) / self.median if self.median else math.inf

    @property
    def rel_range(self) -> float:
        return (self.high - self.low) / self.median if self.median else math.inf

    def to_dict(self) -> dict[str, Any]:
        return {"n": self.n, "median": self.median, "q1": self.q1, "q3": self.q3, "min": self.low, "max": self.high,
                "rel_iqr": self.rel_iqr, "rel_range": self.rel_range}


def spread(values: Sequence[float]) -> Spread:
    return Spread(len(values), quantile(values, 0.5), quantile(values, 0.25), quantile(values, 0.75), min(values),
                  max(values))


def median_ci(values: Sequence[float], level: float = 0.95) -> tuple[float, float, float]:
    """Distribution-free confidence interval of the median: (x_(k), x_(n+1-k), coverage) for the largest k whose
    coverage P(x_(k) <= median <= x_(n+1-k)) = 1 - 2 P(Binomial(n, 1/2) < k) still reaches `level`. With too few
    values for `level`, the widest interval (min, max) and its lower coverage."""
    xs = sorted(values)
    n = len(xs)
    if n == 0:
        raise ValueError("interval of no values")
    below = 0.0  # P(B < k), B ~ Binomial(n, 1/2)
    best = (1, 1.0 - 2.0 * 0.5 ** n)  # k = 1: the whole range
    for k in range(1, n // 2 + 1):
        below += math.comb(n, k - 1) / 2 ** n
        coverage = 1.0 - 2.0 * below
        if coverage < level:
            break
        best = (k, coverage)
    k, coverage = best
    return xs[k - 1], xs[n - k], max(0.0, coverage)


def judge(ratio: float, lo: float, hi: float, floor: float) -> str:
    """'port faster', 'port slower' or 'within noise' for a port/source time ratio and its interval: within noise
    when the interval holds 1 or the ratio is within `floor` of 1."""
    if lo <= 1.0 <= hi or abs(ratio - 1.0) < floor:
        return "within noise"
    return "port faster" if ratio < 1.0 else "port slower"


def half_width(lo: float, hi: float, centre: float) -> float:
    return (hi - lo) / 2 / centre if centre else math.inf


@dataclass
class Rounds:
    """Samples (seconds per launch) of each timed call, per round and side; why the loop stopped."""

    samples: list[dict[str, list[float]]] = field(default_factory=list)
    converged: bool = False
    stopped: str = ""

    def ratios(self) -> list[float]:
        return [statistics.median(r["port"]) / statistics.median(r["source"]) for r in self.samples]

    def flat(self, side: str) -> list[float]:
        return [s for r in self.samples for s in r[side]]


def interleave(timed_call: Callable[[str], list[float]], plan: Plan, clock: Callable[[], float]) -> Rounds:
    """Timed calls of source and port in alternating order (source first in even rounds) until the ratio's
    interval is narrow enough (converged) or a cap is hit. `timed_call(side)` returns one call's samples."""
    out = Rounds()
    start = clock()
    while True:
        order = ("source", "port") if len(out.samples) % 2 == 0 else ("port", "source")
        out.samples.append({side: timed_call(side) for side in order})
        n = len(out.samples)
        if n >= plan.min_rounds:
            ratios = out.ratios()
            lo, hi, _ = median_ci(ratios, plan.level)
            if half_width(lo, hi, statistics.median(ratios)) <= plan.target_spread:
                out.converged, out.stopped = True, f"interval within ±{plan.target_spread:.0%} after {n} rounds"
                return out
        if n >= plan.max_rounds:
            out.stopped = f"round cap ({plan.max_rounds}) reached"
            return out
        if clock() - start >= plan.max_seconds:
            out.stopped = f"time cap ({plan.max_seconds:.0f} s) reached after {n} rounds"
            return out


def ratio_stats(rounds: Rounds, plan: Plan) -> dict[str, Any]:
    """The benchmark's numbers: each side's median seconds per launch and spread, the paired port/source ratio,
    its interval and spread, and the noise verdict."""
    src, port = spread(rounds.flat("source")), spread(rounds.flat("port"))
    ratios = rounds.ratios()
    r = spread(ratios)
    lo, hi, coverage = median_ci(ratios, plan.level)
    verdict = judge(r.median, lo, hi, plan.noise_floor)
    return {"source_s": src.median, "port_s": port.median, "ratio": src.median / port.median,
            "port_over_source": r.median, "interval": [lo, hi], "interval_coverage": coverage,
            "spread": {"source": src.rel_iqr, "port": port.rel_iqr, "ratio": r.rel_iqr,
                       "interval_half_width": half_width(lo, hi, r.median)},
            "verdict": verdict, "within_noise": verdict == "within noise",
            "rounds": len(ratios), "samples": {"source": src.n, "port": port.n}, "converged": rounds.converged,
            "stopped": rounds.stopped}


def launches_per_batch(seconds_per_launch: float, plan: Plan, cap: int = 10_000) -> int:
    """Launches in one batch so that it lasts about `plan.batch_seconds` of GPU time."""
    if seconds_per_launch <= 0:
        return 1
    return max(1, min(cap, math.ceil(plan.batch_seconds / seconds_per_launch)))


def bandwidth(bytes_moved: int, seconds: float, copy_bytes_per_s: float | None) -> dict[str, float | None]:
    """Achieved bandwidth (GB/s, bytes read + written) and its percentage of the measured copy bandwidth."""
    achieved = bytes_moved / seconds if seconds > 0 else 0.0
    return {"gbs": achieved / 1e9, "pct_of_copy": 100.0 * achieved / copy_bytes_per_s if copy_bytes_per_s else None}


def geomean(values: Sequence[float]) -> float | None:
    vals = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None
