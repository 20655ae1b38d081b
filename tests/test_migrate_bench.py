"""The --benchmark step: the benchmark case respects the spec, and timing runs both sides on their backends."""

from __future__ import annotations

import pytest

from tests.test_migrate_support import KERNELS, ROOT
from xlate.migrate.bench import bench_case, benchmark_kernel
from xlate.parse import parse_file, parse_string
from xlate.specs import build_spec, expr
from xlate.verify.cases import buffer_length, environment


def test_bench_case_is_the_largest_within_the_spec_and_budget():
    spec = build_spec(parse_file(KERNELS / "vector_add_vec4.cu"), "vector_add_vec4")
    case = bench_case(spec, budget=1 << 16)
    env = environment(spec, case)
    assert all(expr.evaluate(w, env) for w in spec.where)  # n % 4 == 0
    total = sum(buffer_length(p, env, case, spec) for p in spec.buffers)
    assert total <= 1 << 16
    # Halving once more would be needlessly small: the case fills at least half the budget.
    assert total > (1 << 16) // 2


def test_bench_case_none_when_nothing_fits():
    text = """
// xlate: n: size(64..64), x: in[n], y: out[n], grid: cdiv(n, 64), block: 64
__global__ void k(int n, const float* x, float* y) { int i = threadIdx.x; if (i < n) y[i] = x[i]; }
"""
    spec = build_spec(parse_string(text, "k.cu"), "k")
    assert bench_case(spec, budget=1 << 10) is not None
    assert bench_case(spec, budget=100) is None  # 128 elements over both buffers never fit


def test_benchmark_runs_both_sides(monkeypatch):
    pytest.importorskip("triton")
    from xlate.backends.registry import get_backend

    if not get_backend("triton").detect().can_run:
        pytest.skip("Triton cannot run here")
    # Both sides are the same Triton port here (CUDA cannot run on this machine): the mechanics, not the speed
    # (interpreter_ok: the interpreter's times are taken, which --benchmark never reports).
    src = ROOT / "examples" / "triton" / "saxpy.py"
    r = benchmark_kernel(str(src), src.read_text(), "triton", "saxpy", budget=1 << 12, repeat=2, interpreter_ok=True)
    assert r["status"] == "ok", r
    assert r["source_s"] > 0 and r["port_s"] > 0 and r["ratio"] == pytest.approx(r["source_s"] / r["port_s"])
    assert r["sizes"]["n"] * 2 <= 1 << 12


def test_benchmark_says_why_when_a_side_cannot_run():
    from xlate.backends.registry import get_backend

    if get_backend("cuda").detect().can_run:
        pytest.skip("CUDA runs here")
    r = benchmark_kernel(str(KERNELS / "saxpy.cu"), (ROOT / "examples" / "triton" / "saxpy.py").read_text(), "triton", "saxpy")
    assert r["status"] == "unavailable" and "cannot run cuda" in r["reason"]


def test_fleet_bench_without_gpus_says_what_was_not_run():
    """bench/fleet.py on a machine without the GPUs asked for: exit 3 and the counts it could not run."""
    import subprocess
    import sys

    from tests.conftest import has_nvidia_gpu

    if has_nvidia_gpu():
        pytest.skip("a GPU is present")
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "fleet.py"), "--gpus", "1,2"], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "not run for 1, 2 GPUs" in proc.stdout and "--cpus" in proc.stdout


def test_benchmark_arguments_are_the_gates_for_vectors_and_records():
    # a float3 by value, a record by value and a buffer of records: the benchmark passed a float3 as one number
    # and a record buffer as a structured array (the backends take lanes, and records as bytes, as the gate does)
    import numpy as np

    from xlate.migrate.bench import _args
    from xlate.verify.cases import make_inputs

    text = """
struct P { float s; int k; };
struct Q { float dt; int steps; };
// xlate: n: size(1..4096), w: scalar(1..3), q: scalar as {dt: float32(0..1), steps: int32(2..8)},
// xlate: ps: inout[n] as {s: float32, k: int32(0..9)}, grid: cdiv(n, 128), block: 128
__global__ void k(int n, float3 w, Q q, P* ps) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { ps[i].s = ps[i].s * w.x + q.dt; ps[i].k += q.steps; }
}
"""
    spec = build_spec(parse_string(text, "k.cu"), "k")
    case = bench_case(spec, budget=1 << 12)
    env = environment(spec, case)
    args = {a.name: a for a in _args(spec, case, env, make_inputs(spec, case, env))}
    assert args["w"].value == [2.0, 2.0, 2.0] and args["w"].dtype == "float32"
    assert args["q"].dtype.startswith("record") and len(args["q"].value) == 8
    rec = np.asarray(args["q"].value, dtype=np.uint8).view(np.dtype([("dt", "<f4"), ("steps", "<i4")]))[0]
    assert 0 <= rec["dt"] <= 1 and 2 <= rec["steps"] <= 8
    n = case.sizes["n"]
    assert args["ps"].data.dtype == np.uint8 and args["ps"].length == 8 * n
