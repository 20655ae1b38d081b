"""The fuzz loop: Hypothesis draws cases, both sides run each case (twice, poisoned, guarded), outputs are
compared; the first failure is shrunk to a minimal counterexample with a replayable case."""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import HealthCheck, Phase, example, given, seed, settings
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.errors import Flaky, FlakyFailure, InvalidArgument, Unsatisfiable

from xlate.errors import SpecError, ToolchainMissing, XlateError
from xlate.resources import cache_dir
from xlate.specs import KernelSpec
from xlate.verdict import Counterexample
from xlate.verify.cases import (
    Case,
    buffer_shape,
    ctype_dtype,
    environment,
    is_float,
    make_inputs,
    record_leaves,
    summarize,
)
from xlate.verify.compare import compare, output_scale, scale_of, tolerance
from xlate.verify.golden import Golden, GoldenCase
from xlate.verify.oracle import ReferenceOracle
from xlate.verify.runner import Side, SideRun
from xlate.verify.strategies import cases as case_strategy
from xlate.verify.strategies import explicit_cases


@contextlib.contextmanager
def _no_local_constants():
    """Hypothesis mixes literal constants of every loaded local module into its draws, so the same --seed gave
    different cases depending on what the caller had imported. Turn that off for our runs (private API:
    best effort; counterexamples still replay exactly through their --replay JSON)."""
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:
        yield
        return
    original = getattr(providers, "_get_local_constants", None)
    if original is None:
        yield
        return
    empty = providers.Constants()
    providers._get_local_constants = lambda: empty
    providers.CONSTANTS_CACHE.cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = original
        providers.CONSTANTS_CACHE.cache.clear()


class _StopShrinking(BaseException):
    """Raised once the shrink budget is spent; Hypothesis lets BaseExceptions through."""


class _CaseFailed(Exception):
    pass


@dataclass
class FuzzConfig:
    examples: int = 50
    seed: int = 0
    dtypes: list[str] | None = None  # restrict dtype axes to these
    budget: int | None = None  # max elements over all buffers in one case
    size_cap: int | None = None  # max value of any size parameter
    max_failing_evaluations: int = 80  # shrink budget, in failing cases evaluated
    runs: int = 2
    replay_hint: str = ""  # command prefix for the replay line


@dataclass
class CaseResult:
    ok: bool
    counterexample: Counterexample | None = None
    max_error: float = 0.0
    max_ratio: float = 0.0
    source_outputs: dict[str, np.ndarray] = field(default_factory=dict)
    written: dict[str, np.ndarray] = field(default_factory=dict)
    oracle: dict[str, np.ndarray] | None = None
    inputs: dict[str, np.ndarray] = field(default_factory=dict)


@dataclass
class FuzzResult:
    failure: Counterexample | None
    examples: int
    shapes: int
    dtypes: list[str]
    max_error: float
    max_ratio: float
    tolerance: str
    seconds: float
    warnings: list[str]
    recorded: list[GoldenCase]


def tolerance_terms(spec: KernelSpec, case: Case, env: dict[str, Any], inputs: dict[str, np.ndarray]) -> tuple[int | None, float]:
    """What a case's tolerances scale with: the reduction length (None: no reduction) and the inputs' magnitude."""
    inputs_read = [inputs[p.name] for p in spec.buffers if p.role != "out"]
    buffers = [b for a in inputs_read for b in (_leaf_arrays(a) if a.dtype.fields is not None else [a])]
    in_arrays = buffers + [np.asarray([v]) for v in case.scalars.values() if not isinstance(v, dict)]
    length = None
    if spec.op_length:
        from xlate.specs import expr

        length = int(expr.evaluate(spec.op_length, env))
    elif spec.op == "atomic":
        # Unknown contributions per output element: bound it by the longest input.
        length = max((a.size for a in inputs_read), default=1)
    floats = [abs(v) for v in case.scalars.values() if isinstance(v, float) and math.isfinite(v)]
    if spec.op == "atomic" and floats:  # a term may be an input times the float scalars (`atomicAdd(m, r * dx * dz)`)
        return length, scale_of(buffers or in_arrays, spec) * math.prod(max(1.0, v) for v in floats)
    return length, scale_of(in_arrays, spec)


class Fuzzer:
    def __init__(self, spec: KernelSpec, candidate: Side | None, source: Side | None = None,
                 reference: ReferenceOracle | None = None, golden: Golden | None = None,
                 config: FuzzConfig | None = None):
        if candidate is None and source is None:
            raise ValueError("nothing to run")
        self.spec = spec
        self.candidate = candidate
        self.source = source
        self.reference = reference
        self.golden = golden
        self.config = config or FuzzConfig()
        self.tolerant_repeat = spec.op == "atomic" or any(
            s is not None and (fn := s.unit.kernel(s.kernel)) is not None and bool(fn.atomics)
            for s in (candidate, source)
        )
        self._shapes: set[Any] = set()
        self._dtypes: set[str] = set()
        self.examples = 0
        self.max_error = 0.0
        self.max_ratio = 0.0
        self.tolerance_text = ""
        self.recorded: list[GoldenCase] = []
        self._failing_evaluations = 0
        self._failures: list[Counterexample] = []
        self._degenerate: dict[str, dict[str, Any]] = {}
        self._input_error: Exception | None = None  # a reference or spec failure: reported as such, not a verdict

    # -- one case ----------------------------------------------------------------------------------------------
    def evaluate(self, case: Case, given_inputs: dict[str, np.ndarray] | None = None,
                 recorded: GoldenCase | None = None) -> CaseResult:
        spec = self.spec
        try:
            env = environment(spec, case)
            inputs = given_inputs if given_inputs is not None else make_inputs(spec, case, env)
            if given_inputs is not None:  # a golden file keeps records as raw bytes (`void24`): their fields again
                inputs = {k: _as_records(v, ctype_dtype(p.ctype, case, spec)) if (p := spec.param(k)) is not None else v
                          for k, v in inputs.items()}
        except XlateError:
            raise
        except (ArithmeticError, ValueError, TypeError, MemoryError) as exc:  # a spec whose expressions fail on this case
            raise SpecError(f"xlate: error: the spec of '{spec.kernel}' cannot be evaluated for "
                            f"{dict(case.sizes)}: {type(exc).__name__}: {exc}") from None
        length, term_scale = tolerance_terms(spec, case, env, inputs)

        def repeat_atol(dtype: np.dtype) -> float:
            return tolerance(spec, dtype, length, term_scale, 0.0).atol

        src_run: SideRun | None = None
        if self.source is not None:
            src_run = self.source.run_case(spec, case, inputs, runs=self.config.runs, tolerant_repeat=self.tolerant_repeat,
                                           repeat_atol=repeat_atol)
            if src_run.failure is not None:
                return CaseResult(False, self._cx(case, inputs, env, src_run.failure.failure, src_run.failure.message,
                                                  side=self.source.label, buffer=src_run.failure.buffer,
                                                  flat=src_run.failure.index))
        oracle = self.reference.outputs(spec, case, env, inputs) if self.reference is not None else None
        if recorded is not None and recorded.oracle is not None and oracle is None:
            oracle = recorded.oracle
        cand_run: SideRun | None = None
        if self.candidate is not None:
            cand_run = self.candidate.run_case(spec, case, inputs, runs=self.config.runs, tolerant_repeat=self.tolerant_repeat,
                                               repeat_atol=repeat_atol)
            if cand_run.failure is not None:
                f = cand_run.failure
                return CaseResult(False, self._cx(case, inputs, env, f.failure, f.message, side=self.candidate.label,
                                                  buffer=f.buffer, flat=f.index))
        result = CaseResult(True, inputs=inputs, oracle=oracle)
        for p in spec.buffers:
            if p.role == "in":
                continue
            dtype = ctype_dtype(p.ctype, case, spec)
            shape = buffer_shape(p, env, case, spec)
            expected = written = None
            if src_run is not None:
                expected = src_run.buffers[p.name].values
                written = src_run.buffers[p.name].written
                nondet = src_run.buffers[p.name].nondeterministic
                if nondet is not None:
                    return CaseResult(False, self._cx(case, inputs, env, "nondeterministic",
                                                      f"two runs of the source gave different '{p.name}'" + _jitter_note(src_run),
                                                      side=self.source.label if self.source else None, buffer=p.name,
                                                      flat=int(np.flatnonzero(nondet)[0]), shape=shape,
                                                      count=int(nondet.sum())))
            elif recorded is not None:
                expected = _as_records(recorded.outputs[p.name], dtype)
                written = recorded.written[p.name]
            if written is None:
                written = np.ones(int(np.prod(shape)), dtype=bool)
            result.source_outputs[p.name] = expected if expected is not None else np.zeros(0)
            result.written[p.name] = written
            if cand_run is None:
                self._track_degenerate(p.name, expected, inputs)
                continue
            got = cand_run.buffers[p.name]
            if got.nondeterministic is not None:
                varies = self._source_varies(spec, case, inputs, repeat_atol)
                if varies is not None:  # the source races on this case too: the port is not to blame
                    name, run, nondet = varies
                    return CaseResult(False, self._cx(
                        case, inputs, env, "nondeterministic",
                        f"two runs of the source gave different '{name}' when run again on the case where the "
                        f"candidate's runs differed" + _jitter_note(run), side=self.source.label if self.source else None,
                        buffer=name, flat=int(np.flatnonzero(nondet)[0]), count=int(nondet.sum()),
                        shape=buffer_shape(spec.param(name), env, case, spec)))
                return CaseResult(False, self._cx(case, inputs, env, "nondeterministic",
                                                  f"two runs of the candidate gave different '{p.name}'" + _jitter_note(cand_run),
                                                  side=self.candidate.label if self.candidate else None, buffer=p.name,
                                                  flat=int(np.flatnonzero(got.nondeterministic)[0]), shape=shape,
                                                  count=int(got.nondeterministic.sum())))
            missing = written & ~got.written
            if missing.any():
                i = int(np.flatnonzero(missing)[0])
                return CaseResult(False, self._cx(case, inputs, env, "unwritten output",
                                                  f"the candidate left '{p.name}' elements unwritten that the source writes",
                                                  side=self.candidate.label if self.candidate else None, buffer=p.name, flat=i,
                                                  shape=shape, count=int(missing.sum()),
                                                  exp=expected[i] if expected is not None else None))
            ref_oracle = oracle.get(p.name) if oracle is not None else None
            if dtype.fields is not None:
                cx = self._compare_records(p, dtype, case, inputs, env, shape, expected, got, written, ref_oracle,
                                           src_run.buffers[p.name].fields_written if src_run is not None else None,
                                           length, term_scale)
                self._track_degenerate(p.name, expected, inputs)
                if cx is not None:
                    return CaseResult(False, cx)
                continue
            tol = tolerance(spec, dtype, length, term_scale, output_scale(ref_oracle if ref_oracle is not None else expected))
            self.tolerance_text = tol.text
            cmp = compare(got.values, expected, ref_oracle, tol, written)
            self.max_error = max(self.max_error, cmp.max_error)
            if math.isfinite(cmp.ratio):
                self.max_ratio = max(self.max_ratio, cmp.ratio)
            self._track_degenerate(p.name, ref_oracle if expected is None else expected, inputs)
            if not cmp.ok:
                i = int(np.flatnonzero(cmp.bad)[0])
                return CaseResult(False, self._cx(case, inputs, env, "mismatch",
                                                  f"'{p.name}' differs beyond tolerance ({tol.text})",
                                                  side=self.candidate.label if self.candidate else None, buffer=p.name, flat=i,
                                                  shape=shape, count=int(cmp.bad.sum()),
                                                  exp=(expected if expected is not None else ref_oracle)[i],
                                                  got=got.values[i], oracle=ref_oracle[i] if ref_oracle is not None else None))
        return result

    def _compare_records(self, p: Any, dtype: np.dtype, case: Case, inputs: dict[str, np.ndarray], env: dict[str, Any],
                         shape: tuple[int, ...], expected: np.ndarray | None, got: Any, written: np.ndarray,
                         oracle: np.ndarray | None, src_fields: dict[str, np.ndarray] | None, length: int | None,
                         term_scale: float) -> Counterexample | None:
        """A buffer of records compared field by field: integer and bool fields exactly, float fields within
        their dtype's tolerance, each where the source wrote the element; the counterexample names the field
        (`opts[3].X`)."""
        side = self.candidate.label if self.candidate else None
        for leaf in record_leaves(p.ctype, dtype):
            got_leaf = leaf.values(got.values)
            exp_leaf = leaf.values(expected) if expected is not None else None
            orc_leaf = leaf.values(oracle) if oracle is not None and oracle.dtype.fields is not None else None
            mask = np.repeat(written, leaf.count)

            def where(i: int, leaf: Any = leaf) -> str:
                elem, sub = divmod(i, leaf.count)
                index = [int(x) for x in np.unravel_index(elem, shape)] if shape and elem < int(np.prod(shape)) else [elem]
                return f"{p.name}[{', '.join(map(str, index))}]{leaf.element_label(sub)}"

            if src_fields is not None and got.fields_written is not None and leaf.label in src_fields:
                missing = (src_fields[leaf.label] & ~got.fields_written[leaf.label]).reshape(-1)
                if missing.any():
                    i = int(np.flatnonzero(missing)[0])
                    return self._cx(case, inputs, env, "unwritten output",
                                    f"the candidate left '{where(i)}' unwritten, which the source writes", side=side,
                                    buffer=p.name, flat=i // leaf.count, shape=shape, count=int(missing.sum()),
                                    exp=exp_leaf.reshape(-1)[i] if exp_leaf is not None else None)
            ref = orc_leaf.reshape(-1) if orc_leaf is not None else None
            scale = output_scale(ref if ref is not None else exp_leaf.reshape(-1) if exp_leaf is not None else None)
            tol = tolerance(self.spec, leaf.dtype, length, term_scale, scale)
            if is_float(leaf.dtype):
                self.tolerance_text = tol.text
            cmp = compare(got_leaf.reshape(-1), exp_leaf.reshape(-1) if exp_leaf is not None else None, ref, tol, mask)
            self.max_error = max(self.max_error, cmp.max_error)
            if math.isfinite(cmp.ratio):
                self.max_ratio = max(self.max_ratio, cmp.ratio)
            if not cmp.ok:
                i = int(np.flatnonzero(cmp.bad)[0])
                exp = (exp_leaf if exp_leaf is not None else orc_leaf).reshape(-1)[i]  # type: ignore[union-attr]
                return self._cx(case, inputs, env, "mismatch",
                                f"'{where(i)}' differs beyond tolerance (field {leaf.label}: {tol.text})", side=side,
                                buffer=p.name, flat=i // leaf.count, shape=shape, count=int(cmp.bad.sum()), exp=exp,
                                got=got_leaf.reshape(-1)[i], oracle=ref[i] if ref is not None else None)
        return None

    def _source_varies(self, spec: KernelSpec, case: Case, inputs: dict[str, np.ndarray],
                       repeat_atol: Callable[[np.dtype], float]) -> tuple[str, SideRun, np.ndarray] | None:
        """Where the candidate's runs differed, the source is run again on the same case (SOURCE_RECHECKS times,
        each with its jittered repeat): a race of the program shows up in one run in a few, and a port of racy
        code must not be blamed for the race it kept. (buffer, run, elements) where the source varied, else None."""
        if self.source is None:
            return None
        for _ in range(SOURCE_RECHECKS):
            run = self.source.run_case(spec, case, inputs, runs=self.config.runs, tolerant_repeat=self.tolerant_repeat,
                                       repeat_atol=repeat_atol)
            if run.failure is not None:
                continue
            for name, buf in run.buffers.items():
                if buf.nondeterministic is not None:
                    return name, run, buf.nondeterministic
        return None

    def _cx(self, case: Case, inputs: dict[str, np.ndarray], env: dict[str, Any], failure: str, message: str, *,
            side: str | None, buffer: str | None = None, flat: int | None = None, shape: tuple[int, ...] | None = None,
            count: int = 0, exp: Any = None, got: Any = None, oracle: Any = None) -> Counterexample:
        index = None
        if flat is not None and shape and 0 <= flat < int(np.prod(shape)):
            index = [int(x) for x in np.unravel_index(flat, shape)]
        elif flat is not None:
            index = [int(flat)]
        total = int(np.prod(shape)) if shape else 0
        fmt = lambda v: None if v is None else repr(float(v)) if np.asarray(v).dtype.kind == "f" or is_float(np.asarray(v).dtype) else str(v)  # noqa: E731
        replay = self.config.replay_hint
        if replay:
            replay += f" --seed {self.config.seed} --replay '{json.dumps(case.to_dict(), separators=(',', ':'))}'"
        return Counterexample(
            failure=failure, kernel=self.spec.kernel, sizes=dict(case.sizes), scalars=dict(case.scalars),
            dtypes=dict(case.dtypes), seed=case.seed, profile=dict(case.profiles), buffer=buffer, index=index,
            flat_index=flat, expected=fmt(exp), got=fmt(got), oracle=fmt(oracle), side=side, mismatches=count,
            elements=total, message=message, inputs={k: summarize(v) for k, v in inputs.items()}, replay=replay,
        )

    def _track_degenerate(self, name: str, values: np.ndarray | None, inputs: dict[str, np.ndarray]) -> None:
        """Remember what each output looked like, to warn when agreement on it proves little."""
        if values is None or values.size == 0:
            return
        if values.dtype.fields is not None:  # records: their number fields side by side
            values = np.concatenate([a.astype(np.float64) for a in _leaf_arrays(values)] or [np.zeros(0)])
        d = self._degenerate.setdefault(name, {"nonzero": False, "outputs": set(), "by_size": {}})
        f = values.astype(np.float64)
        with np.errstate(invalid="ignore"):
            if np.any(f != 0):
                d["nonzero"] = True
            finite = f[np.isfinite(f)]
            if finite.size > 1 and finite.min() != finite.max():
                d["outputs"].add("varies within a case")
        out_key = hashlib.sha1(np.ascontiguousarray(values).tobytes()).hexdigest()
        in_key = hashlib.sha1(b"".join(np.ascontiguousarray(v).tobytes() for v in inputs.values())).hexdigest()
        d["outputs"].add(out_key)
        d["by_size"].setdefault(values.size, {}).setdefault(in_key, set()).add(out_key)

    def warnings(self) -> list[str]:
        out = []
        for name, d in self._degenerate.items():
            if not d["nonzero"]:
                out.append(f"output '{name}' was all zero in every case: agreement proves little")
                continue
            # Different inputs of the same size that always gave one and the same output.
            same_size = [cases for cases in d["by_size"].values() if len(cases) > 1]
            constant = same_size and all(len(set().union(*cases.values())) == 1 for cases in same_size)
            if constant and "varies within a case" not in d["outputs"]:
                out.append(f"output '{name}' was the same constant whatever the inputs: agreement proves little")
            elif constant:
                out.append(f"output '{name}' did not change with the inputs: agreement proves little")
        return out

    # -- the loop ------------------------------------------------------------------------------------------------
    def _account(self, case: Case) -> None:
        self.examples += 1
        self._shapes.add(case.shape_key())
        self._dtypes.update(case.dtypes.values())

    def run_cases(self, cases: list[Case], golden: list[GoldenCase] | None = None, record: bool = False) -> Counterexample | None:
        for i, case in enumerate(cases):
            gc = golden[i] if golden else None
            res = self.evaluate(case, gc.inputs if gc else None, gc)
            if not res.ok:
                return res.counterexample
            self._account(case)
            if record:
                self.recorded.append(GoldenCase(case, res.inputs, res.source_outputs, res.written, res.oracle))
        return None

    def run_hypothesis(self, budget: int, size_cap: int, record: bool = False, record_limit: int = 24,
                       record_budget: int = 1 << 14) -> Counterexample | None:
        cfg = self.config
        strategy = case_strategy(self.spec, budget, size_cap, {k: v for k, v in self.spec.dtype_axes.items()} if not cfg.dtypes
                                 else {k: [d for d in v if d in cfg.dtypes] or v for k, v in self.spec.dtype_axes.items()})
        failures = self._failures

        def check(case: Case) -> None:
            if self._input_error is not None:
                raise _StopShrinking()
            try:
                res = self.evaluate(case)
            except (XlateError, ToolchainMissing) as exc:  # the user's reference or spec, or a missing toolchain
                self._input_error = exc
                raise _StopShrinking() from None
            if not res.ok:
                failures.append(res.counterexample)  # type: ignore[arg-type]
                self._failing_evaluations += 1
                if self._failing_evaluations > cfg.max_failing_evaluations:
                    raise _StopShrinking()
                raise _CaseFailed(res.counterexample.failure if res.counterexample else "failed")
            self._account(case)
            if record and len(self.recorded) < record_limit:
                total = sum(a.size for a in res.inputs.values()) + sum(a.size for a in res.source_outputs.values())
                if total <= record_budget:
                    self.recorded.append(GoldenCase(case, res.inputs, res.source_outputs, res.written, res.oracle))

        db = DirectoryBasedExampleDatabase(str(cache_dir() / "hypothesis"))
        explicit = explicit_cases(self.spec, budget, size_cap)
        check_fn = check
        for case in reversed(explicit):
            check_fn = example(case=case)(check_fn)
        test = settings(
            max_examples=cfg.examples, deadline=None, database=db, derandomize=False, print_blob=False,
            report_multiple_bugs=False,
            suppress_health_check=list(HealthCheck),
            phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
        )(seed(cfg.seed)(given(case=strategy)(check_fn)))
        key = json.dumps([self.spec.to_dict(), [s.text if s else None for s in (self.source, self.candidate)],
                          self.reference.label if self.reference else None], sort_keys=True, default=str)
        test.hypothesis.inner_test._hypothesis_internal_add_digest = hashlib.sha256(key.encode()).digest()  # type: ignore[attr-defined]
        try:
            with _no_local_constants():
                test()
        except _StopShrinking:
            if self._input_error is not None:
                raise self._input_error from None
        except InvalidArgument as exc:  # a spec Hypothesis cannot draw from (bounds, an empty range)
            raise SpecError(f"xlate: error: cannot generate cases for '{self.spec.kernel}' from its spec: {exc}") from None
        except _CaseFailed:
            pass
        except Unsatisfiable:  # no draw met the spec's constraints: the verdict says no case could be generated
            pass
        except ToolchainMissing:
            raise
        except (Flaky, FlakyFailure):
            # The same case failed and then passed on replay: the result depends on more than the inputs.
            if failures:
                last = failures[-1]
                last.message = (f"{last.message}; the same case passed when run again: results vary from run to run "
                                "(a race, uninitialised memory or order-dependent atomics)")
                if last.failure == "mismatch":
                    last.failure = "nondeterministic"
        if failures:
            # Hypothesis replays the minimal failing example last; after a budget stop take the smallest seen.
            if self._failing_evaluations > cfg.max_failing_evaluations:
                return min(failures, key=lambda c: (sum(c.sizes.values()), c.elements))
            return failures[-1]
        return None


def run_fuzz(fuzzer: Fuzzer, *, budget: int, size_cap: int, cases: list[Case] | None = None,
             golden: list[GoldenCase] | None = None, record: bool = False) -> FuzzResult:
    t0 = time.perf_counter()
    if cases is not None:
        failure = fuzzer.run_cases(cases, golden, record)
    else:
        failure = fuzzer.run_hypothesis(budget, size_cap, record=record)
    return FuzzResult(
        failure=failure, examples=fuzzer.examples, shapes=len(fuzzer._shapes), dtypes=sorted(fuzzer._dtypes),
        max_error=fuzzer.max_error, max_ratio=fuzzer.max_ratio, tolerance=fuzzer.tolerance_text,
        seconds=time.perf_counter() - t0, warnings=fuzzer.warnings(), recorded=fuzzer.recorded,
    )


def _as_records(a: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Raw record bytes (a golden file's `void24`) viewed as the spec's record dtype; anything else as it is."""
    if dtype.fields is not None and a.dtype.fields is None and a.dtype.itemsize == dtype.itemsize:
        return np.ascontiguousarray(a).view(dtype)
    return a


def _leaf_arrays(a: np.ndarray) -> list[np.ndarray]:
    """A structured array's number fields, each flat (for magnitudes and output tracking)."""
    out: list[np.ndarray] = []

    def walk(v: np.ndarray) -> None:
        if v.dtype.fields is None:
            out.append(np.asarray(v).reshape(-1))
            return
        for name in v.dtype.names or ():
            walk(v[name])

    walk(a)
    return out


SOURCE_RECHECKS = 3  # the source's runs again on a case where the candidate's runs differed


def _jitter_note(run: SideRun) -> str:
    if not run.meta.get("schedule_jitter"):
        return ""
    return " (the repeat run delays warps in a random order at entry and after each barrier: a missing barrier or a race)"
