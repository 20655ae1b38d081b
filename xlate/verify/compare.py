"""Comparing outputs: per-dtype, per-operation-class tolerances scaled with reduction length; NaN and inf
handled exactly; and, where a float64 oracle exists, each side judged against it, so a port closer to the exact
answer than the source is not rejected for differing from the source."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from xlate.specs import KernelSpec
from xlate.verify.cases import is_float

# Relative tolerance per output dtype for one rounding-sized step of work (elementwise math, transcendentals
# included: fast intrinsics like __expf are a few ulp off).
RTOL = {"float64": 1e-12, "float32": 4e-6, "float16": 4e-3, "bfloat16": 3.2e-2}
EPS = {"float64": 2.2e-16, "float32": 1.19e-7, "float16": 9.77e-4, "bfloat16": 7.8e-3}


@dataclass
class Tolerance:
    rtol: float
    atol: float
    exact: bool
    text: str


def tolerance(spec: KernelSpec, dtype: np.dtype, length: int | None, input_scale: float, output_scale: float) -> Tolerance:
    if not is_float(dtype) or spec.op == "movement":
        return Tolerance(0.0, 0.0, True, "exact")
    name = "bfloat16" if dtype.name == "bfloat16" else dtype.name
    eps = EPS.get(name, 1.19e-7)
    rtol = spec.rtol if spec.rtol is not None else RTOL.get(name, 4e-6)
    # Denormal results may be flushed to zero (float atomics, fast-math, Triton): below the smallest normal
    # number values count as zero.
    tiny = 6.1e-5 if name == "float16" else 1.2e-38 if name in ("float32", "bfloat16") else 2.3e-308
    atol = max(rtol * output_scale, 2 * tiny)
    text = f"rtol {rtol:.2g}"
    if spec.op in ("reduction", "scan", "matmul", "atomic") and length:
        # Summation error grows with the number of terms: ~eps * log2(L) * L * mean|term|.
        atol = max(atol, 4.0 * eps * math.log2(length + 2) * length * input_scale)
        text += f", atol {atol:.2g} (reduction over {length})"
    else:
        text += f", atol {atol:.2g}"
    if spec.atol is not None:
        atol = spec.atol
    return Tolerance(rtol, atol, False, text)


@dataclass
class Comparison:
    ok: bool
    bad: np.ndarray  # bool mask of failing elements
    error: np.ndarray  # |candidate - expected| (0 where not comparable)
    ratio: float  # max error / tolerance over compared elements
    max_error: float
    note: str = ""


def _f64(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float64)


def compare(candidate: np.ndarray, expected: np.ndarray | None, oracle: np.ndarray | None, tol: Tolerance,
            mask: np.ndarray | None = None) -> Comparison:
    """candidate vs expected (the source), with `oracle` (float64 exact answer) when there is one.

    `mask` selects the elements to judge (those the source wrote). Either of expected/oracle may be None but not
    both.
    """
    n = candidate.size
    sel = np.ones(n, dtype=bool) if mask is None else mask
    if tol.exact:
        ref = expected if expected is not None else oracle
        assert ref is not None
        if is_float(candidate.dtype) and ref.dtype == candidate.dtype:
            # Same dtype (source vs candidate): bit for bit, NaN payloads and signed zeros included.
            size = candidate.dtype.itemsize
            bad = (candidate.view(f"<u{size}") != ref.view(f"<u{size}")) & sel
        else:
            # Against a wider oracle: equal values, NaN where it has NaN, and the sign of zero.
            c, r = _f64(candidate), _f64(ref)
            with np.errstate(invalid="ignore"):
                same = (c == r) & (np.signbit(c) == np.signbit(r))
            bad = ~(same | (np.isnan(c) & np.isnan(r))) & sel
        err = np.zeros(n)
        if bad.any():
            with np.errstate(invalid="ignore"):
                err = np.nan_to_num(np.abs(_f64(candidate) - _f64(ref)), nan=np.inf)
        return Comparison(not bad.any(), bad, err, 0.0 if not bad.any() else math.inf, float(err[bad].max()) if bad.any() else 0.0)

    if oracle is None and expected is not None and expected.dtype == candidate.dtype and candidate.dtype.itemsize in (1, 2, 4, 8):
        # The common verdict, decided without float64 copies: bit-identical to the source (unwritten elements
        # included) is within any tolerance, with zero error.
        size = candidate.dtype.itemsize
        if np.array_equal(candidate.view(f"<u{size}"), expected.view(f"<u{size}")):
            return Comparison(True, np.zeros(n, dtype=bool), np.zeros(n), 0.0, 0.0)
    c = _f64(candidate)
    cdt = candidate.dtype
    with np.errstate(invalid="ignore", over="ignore"):
        s = _f64(expected) if expected is not None else None
        o = _f64(oracle) if oracle is not None else None
        # The exact answer as the output dtype would hold it: overflow to inf is part of the semantics.
        o_cast = _f64(np.asarray(oracle).astype(cdt)) if oracle is not None else None
        ref = s if s is not None else o_cast
        assert ref is not None
        bad = np.zeros(n, dtype=bool)
        err = np.zeros(n)
        c_nan, r_nan = np.isnan(c), np.isnan(ref)
        # NaN must match NaN exactly ...
        nan_mismatch = (c_nan != r_nan) & sel
        if s is not None and o_cast is not None:
            # ... except where the source is NaN and the candidate agrees with a finite exact answer.
            rescued = nan_mismatch & r_nan & ~c_nan & np.isfinite(o_cast) & (np.abs(c - o) <= tol.atol + tol.rtol * np.abs(o))
            nan_mismatch &= ~rescued
        bad |= nan_mismatch
        both = sel & ~c_nan & ~r_nan
        c_inf, r_inf = np.isinf(c), np.isinf(ref)
        inf_cases = both & (c_inf | r_inf)
        inf_bad = inf_cases & (c != ref)
        if o_cast is not None:
            inf_bad &= ~(np.isfinite(c) & np.isfinite(o) & (np.abs(c - o) <= tol.atol + tol.rtol * np.abs(o)))
            inf_bad &= ~(c == o_cast)
        bad |= inf_bad
        fin = both & ~c_inf & ~r_inf
        if o is not None:
            # Distance to the exact answer, or to its rounding to the output dtype (underflow to 0 is exact).
            cerr = np.minimum(np.abs(c - o), np.abs(c - o_cast))
            limit = tol.atol + tol.rtol * np.abs(o)
            if s is not None:
                serr = np.abs(s - o)
                # Not worse than twice the source's own error against the exact answer.
                limit = np.maximum(limit, 2.0 * serr + 0.5 * tol.atol)
        else:
            cerr = np.abs(c - s)
            limit = 2.0 * (tol.atol + tol.rtol * np.abs(s))
        fin_bad = fin & (cerr > limit)
        bad |= fin_bad
        err = np.where(fin, cerr, 0.0)
        ratio_arr = np.where(fin & (limit > 0), cerr / np.where(limit > 0, limit, 1.0), 0.0)
        ratio = float(ratio_arr.max()) if n else 0.0
        if (fin & (limit == 0) & (cerr > 0)).any():
            ratio = math.inf
    max_err = float(err[fin].max()) if fin.any() else 0.0
    if bad.any() and not fin_bad.any():
        ratio = math.inf
    return Comparison(not bad.any(), bad, err, ratio, max_err)


def scale_of(arrays: list[np.ndarray], spec: KernelSpec) -> float:
    """Typical magnitude of one term of the computation, for reduction tolerances."""
    mags = []
    for a in arrays:
        if a.size and (is_float(a.dtype) or a.dtype.kind in "iu"):
            f = np.abs(a.astype(np.float64))
            f = f[np.isfinite(f)]
            if f.size:
                mags.append(float(f.mean()) if spec.op != "atomic" else float(f.max()))
    if not mags:
        return 1.0
    if spec.op == "matmul" and len(mags) >= 2:
        top = sorted(mags)[-2:]
        return top[0] * top[1]
    return max(mags)


def output_scale(a: np.ndarray | None) -> float:
    if a is None or a.size == 0:
        return 1e-30
    f = np.abs(a.astype(np.float64))
    f = f[np.isfinite(f)]
    return float(f.max()) if f.size else 1e-30
