"""Kill rates of the mutation suite (tests/mutants/manifest.yaml): a KernelBench-style check beside xlate's gate.

    python bench/kill_rate.py [--side triton|cuda] [--only SUBSTRING] [--examples 20] [--out rows.json]

Every manifest entry whose side can run here (Triton: always, on the CPU through the interpreter; CUDA: with an
NVIDIA GPU) is judged twice:

(a) KernelBench-style, the usual protocol of LLM kernel benchmarks: one fixed shape, 5 trials with fresh float32
    standard-normal inputs, outputs initialised to zeros (not poisoned, no guard bands), each output compared with
    numpy.allclose(atol=1e-2, rtol=1e-2) against the NumPy reference (Triton entries) or the original corpus
    kernel run the same way (CUDA entries). A compile error, crash or timeout counts as a rejection.
    The fixed shape: when every buffer is 1-D each size parameter is min(hi, 4096), otherwise min(hi, 256) (the
    spec's lower bounds and `where` constraints are respected). The k-th scalar is fixed at lo + f_k (hi - lo)
    with f = 0.75, 0.6, 0.45, 0.3 (4 f_k - 1.5 when unbounded, rounded for integers), so equal ranges do not give
    equal values. Integer buffers (indices, bytes, counters) cannot be normal-distributed: they are uniform
    integers in the spec's range (a permutation where it says perm).
(b) xlate's gate: verify() with the same arguments as tests/test_mutation_suite*.py.

Prints one row per variant and a summary: kill rate on wrong variants (and, for the gate, how many were rejected
with the expected failure class) and false rejections of correct variants, for both protocols side by side.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ROOT / "tests" / "mutants" / "manifest.yaml"
TRIALS = 5
ATOL = RTOL = 1e-2
SIZE_1D, SIZE_ND = 4096, 256
# Fixed scalar values, as fractions of each scalar's range: distinct per position, so that two scalars with the
# same range do not get the same value (a benchmark author would not pick equal constants either).
SCALAR_FRACTIONS = (0.75, 0.6, 0.45, 0.3)


def expected(entry: dict[str, Any]) -> set[str]:
    e = entry["expect"]
    return set(e) if isinstance(e, list) else {e}


def is_wrong(entry: dict[str, Any]) -> bool:
    return expected(entry) != {"verified"}


# -- (a) the KernelBench-style protocol ----------------------------------------------------------------------


class Baseline:
    """One fixed shape, TRIALS random float32 trials, zero-initialised outputs, allclose(1e-2, 1e-2)."""

    def __init__(self, entry: dict[str, Any]):
        from xlate.parse import parse_file
        from xlate.specs import build_spec

        self.entry = entry
        self.spec = build_spec(parse_file(ROOT / entry["orig"]), entry["kernel"])
        self.case = self._case()
        self.timeout = float(entry.get("timeout", 60))

    def _case(self):
        from xlate.specs import expr
        from xlate.verify.cases import Case, environment

        spec = self.spec
        one_d = all(len(p.dims) == 1 for p in spec.buffers)
        sizes = {}
        for p in spec.sizes:
            lo, hi = int(expr.evaluate(p.lo or "0", {})), int(expr.evaluate(p.hi or "4096", {}))
            sizes[p.name] = max(lo, min(hi, SIZE_1D if one_d else SIZE_ND))
        scalars: dict[str, int | float] = {}
        for i, p in enumerate(spec.scalars):
            frac = SCALAR_FRACTIONS[i % len(SCALAR_FRACTIONS)]
            if p.lo is not None and p.hi is not None:
                lo, hi = float(expr.evaluate(p.lo, sizes)), float(expr.evaluate(p.hi, sizes))
                value = lo + frac * (hi - lo)
            else:
                value = 4 * frac - 1.5
            scalars[p.name] = round(value) if p.ctype in ("int", "unsigned int") else value
        dtypes = {t: "float32" if "float32" in options else options[0] for t, options in spec.dtype_axes.items()}
        case = Case(sizes, dtypes, scalars, {}, 0, "kernelbench")
        env = environment(spec, case)
        for w in spec.where:
            if not expr.evaluate(w, env):
                raise ValueError(f"{self.entry['id']}: the fixed shape {sizes} violates 'where: {w}'")
        return case

    def inputs(self, trial: int) -> dict[str, np.ndarray]:
        from xlate.specs import expr
        from xlate.verify.cases import buffer_length, ctype_dtype, environment, is_float

        env = environment(self.spec, self.case)
        rng = np.random.default_rng(1000 + trial)
        out = {}
        for p in self.spec.buffers:
            if p.role == "out":
                continue
            dtype = ctype_dtype(p.ctype, self.case, self.spec)
            n = buffer_length(p, env, self.case, self.spec)
            if is_float(dtype):
                out[p.name] = rng.standard_normal(n).astype(dtype)
            elif p.perm:
                out[p.name] = rng.permutation(n).astype(dtype)
            else:
                info = np.iinfo(dtype)
                lo = int(expr.evaluate(p.lo, env)) if p.lo is not None else max(int(info.min), -1000)
                hi = int(expr.evaluate(p.hi, env)) if p.hi is not None else min(int(info.max), 1000)
                out[p.name] = rng.integers(lo, hi + 1, n).astype(dtype)
        return out

    def run(self, path: Path, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray] | str:
        """Outputs of the kernel in `path` (flat arrays by buffer name), or a string saying why none came."""
        from xlate.backends.base import BufferArg, CompileError, CompileOptions, LaunchConfig, ScalarArg
        from xlate.backends.registry import get_backend

        from xlate.verify.cases import buffer_length, ctype_dtype, environment, is_float, launch_dims

        side = "triton" if path.suffix == ".py" else "cuda"
        backend = get_backend(side)
        spec, case = self.spec, self.case
        env = environment(spec, case)
        targs = ["float" for _ in spec.dtype_axes] if side == "cuda" else []
        try:
            art = backend.compile(path.read_text(), self.entry["kernel"], CompileOptions(template_args=targs), path=str(path))
        except CompileError as exc:
            return "compile error: " + exc.log.strip().splitlines()[-1][:120] if exc.log.strip() else "compile error"
        args: list[BufferArg | ScalarArg] = []
        for p in sorted(spec.params, key=lambda q: q.position):
            if p.is_buffer:
                dtype = ctype_dtype(p.ctype, case, spec)
                n = buffer_length(p, env, case, spec)
                data = inputs[p.name].copy() if p.role != "out" else np.zeros(n, dtype)
                args.append(BufferArg(p.name, data, 0, n))
            else:
                value = env[p.name]
                dtype = ctype_dtype(p.ctype, case, spec)
                args.append(ScalarArg(p.name, float(value) if is_float(dtype) else int(value), dtype.name))
        grid, block, shmem = launch_dims(spec, env, case)
        res = backend.run(art, args, LaunchConfig(grid, block, shmem), timeout=self.timeout)
        if res.status != "ok":
            return f"{res.status}: {res.message.strip()[:100]}"
        return {p.name: res.buffers[p.name].reshape(-1) for p in spec.buffers if p.role != "in"}

    def judge(self) -> tuple[bool, str]:
        """(accepted, note) under the protocol."""
        from xlate.verify.cases import environment
        from xlate.verify.oracle import ReferenceOracle

        oracle = ReferenceOracle(str(ROOT / self.entry["reference"])) if self.entry["side"] == "triton" else None
        for trial in range(TRIALS):
            inputs = self.inputs(trial)
            got = self.run(ROOT / self.entry["file"], inputs)
            if isinstance(got, str):
                return False, got
            if oracle is not None:
                want: dict[str, np.ndarray] | str = oracle.outputs(self.spec, self.case, environment(self.spec, self.case), inputs)
            else:
                want = self.run(ROOT / self.entry["orig"], inputs)
            if isinstance(want, str):
                return False, f"the original failed: {want}"
            for name, w in want.items():
                g = got[name].astype(np.float64)
                if not np.allclose(g, np.asarray(w, dtype=np.float64), atol=ATOL, rtol=RTOL):
                    return False, f"trial {trial}: '{name}' not allclose"
        return True, f"{TRIALS} trials allclose"


# -- (b) the gate --------------------------------------------------------------------------------------------


def gate(entry: dict[str, Any], examples: int) -> tuple[str, str | None, str]:
    from xlate.verify.api import verify

    kwargs: dict[str, Any] = dict(kernel=entry["kernel"], reference=str(ROOT / entry["reference"]), examples=examples,
                                  spec_overrides=entry.get("spec_overrides"), timeout=float(entry.get("timeout", 60)))
    if entry["side"] == "triton":
        v = verify(str(ROOT / entry["file"]), **kwargs)
    else:
        v = verify(str(ROOT / entry["orig"]), str(ROOT / entry["file"]), **kwargs)
    failure = v.counterexample.failure if v.counterexample else None
    return v.status, failure, (v.reason or "")[:160]


# -- driver --------------------------------------------------------------------------------------------------


def runnable_sides() -> set[str]:
    from xlate.backends.registry import get_backend

    return {side for side in ("triton", "cuda") if get_backend(side).detect().can_run}


def rate(k: int, n: int) -> str:
    return f"{k}/{n} ({100.0 * k / n:.0f}%)" if n else "-"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--manifest", default=str(MANIFEST))
    ap.add_argument("--side", choices=("triton", "cuda"), default=None, help="only this side (default: all that run here)")
    ap.add_argument("--only", default=None, help="only entries whose id contains this")
    ap.add_argument("--examples", type=int, default=20, help="gate examples per variant (the CPU tests use 20)")
    ap.add_argument("--out", default=None, help="write the rows and the summary as JSON")
    args = ap.parse_args()

    entries = yaml.safe_load(Path(args.manifest).read_text(encoding="utf-8"))
    sides = runnable_sides()
    skipped = sorted({e["side"] for e in entries} - sides)
    entries = [e for e in entries if e["side"] in sides and (args.side is None or e["side"] == args.side)
               and (args.only is None or args.only in e["id"])]
    if skipped:
        print(f"not runnable here: {', '.join(skipped)} entries", file=sys.stderr)
    rows = []
    print(f"{'id':52s} {'expect':20s} {'KernelBench':12s} {'xlate':30s} bug")
    for e in entries:
        t0 = time.perf_counter()
        try:
            kb_ok, kb_note = Baseline(e).judge()
        except Exception as exc:  # a harness problem must not stop the table
            kb_ok, kb_note = False, f"harness error: {type(exc).__name__}: {exc}"
        t1 = time.perf_counter()
        try:
            status, failure, reason = gate(e, args.examples)
        except Exception as exc:
            status, failure, reason = "error", None, f"{type(exc).__name__}: {exc}"
        t2 = time.perf_counter()
        want = expected(e)
        row = {"id": e["id"], "side": e["side"], "wrong": is_wrong(e), "expect": sorted(want), "bug": e["bug"],
               "kernelbench": "accepted" if kb_ok else "rejected", "kernelbench_note": kb_note,
               "xlate": status, "xlate_class": failure, "xlate_reason": reason,
               "xlate_as_expected": (status == "verified") if not is_wrong(e) else (status == "rejected" and failure in want),
               "seconds_kernelbench": round(t1 - t0, 2), "seconds_xlate": round(t2 - t1, 2)}
        rows.append(row)
        gate_text = status + (f": {failure}" if failure else "")
        mark = "" if row["xlate_as_expected"] else "  <-- not as expected"
        print(f"{e['id']:52s} {' | '.join(sorted(want))[:20]:20s} {row['kernelbench']:12s} {gate_text:30s} "
              f"{e['bug'][:60]}{mark}", flush=True)

    summary: dict[str, Any] = {}
    for side in [*sorted({r["side"] for r in rows}), "all"]:
        sel = [r for r in rows if side in ("all", r["side"])]
        wrong = [r for r in sel if r["wrong"]]
        right = [r for r in sel if not r["wrong"]]
        summary[side] = {
            "wrong": len(wrong), "correct": len(right),
            "kernelbench_killed": sum(r["kernelbench"] == "rejected" for r in wrong),
            "xlate_killed": sum(r["xlate"] == "rejected" for r in wrong),
            "xlate_killed_with_expected_class": sum(r["xlate_as_expected"] for r in wrong),
            "kernelbench_false_rejections": sum(r["kernelbench"] == "rejected" for r in right),
            "xlate_false_rejections": sum(r["xlate"] != "verified" for r in right),
        }
    print()
    print(f"{'side':8s} {'protocol':12s} {'kill rate (wrong variants)':30s} {'right class':16s} false rejections (correct)")
    for side, s in summary.items():
        print(f"{side:8s} {'KernelBench':12s} {rate(s['kernelbench_killed'], s['wrong']):30s} {'-':16s} "
              f"{s['kernelbench_false_rejections']}/{s['correct']}")
        print(f"{'':8s} {'xlate':12s} {rate(s['xlate_killed'], s['wrong']):30s} "
              f"{rate(s['xlate_killed_with_expected_class'], s['wrong']):16s} {s['xlate_false_rejections']}/{s['correct']}")
    if args.out:
        from xlate.backends.registry import get_backend

        doc = {"protocol": {"kernelbench": {"trials": TRIALS, "atol": ATOL, "rtol": RTOL, "size_1d": SIZE_1D,
                                            "size_nd": SIZE_ND, "inputs": "float32 standard normal; outputs zeroed"},
                            "xlate": {"examples": args.examples}},
               "backends": {n: get_backend(n).detect().platform for n in ("triton", "cuda")},
               "rows": rows, "summary": summary}
        Path(args.out).write_text(json.dumps(doc, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
