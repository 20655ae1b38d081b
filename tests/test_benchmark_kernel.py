"""One kernel's benchmark end to end on the machine's backends. Without a GPU, the mechanics run on the Triton
interpreter (interpreter_ok: compile, checked first run, calibration, interleaved rounds, copy kernel), and
the default says why no GPU number exists."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from tests.test_migrate_support import KERNELS, ROOT
from xlate.migrate.bench import benchmark_kernel
from xlate.migrate.benchdevice import DeviceFacts, device_facts, gpu_timing, measure_copy
from xlate.migrate.benchstats import Plan

SAXPY = ROOT / "examples" / "triton" / "saxpy.py"
QUICK = Plan(min_rounds=3, max_rounds=3, batch_seconds=1e-4, batches=2)
TINY_L2 = DeviceFacts("test device", 1 << 10, "assumed")


def _triton_runs() -> None:
    pytest.importorskip("triton")
    from xlate.backends.registry import get_backend

    if not get_backend("triton").detect().can_run:
        pytest.skip("Triton cannot run here")


def _limited(n_max: int, body: str) -> str:
    """A Triton copy-like kernel with the spec range n <= n_max and `body` as the stored value."""
    return f'''import triton
import triton.language as tl


@triton.jit
def _k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, {body}, mask=mask)


# xlate: x: in[n], y: out[n], n: size(1..{n_max}), grid: cdiv(n, 64), block: 64, op: elementwise
def k(x, y, n):
    _k[(triton.cdiv(n, 64),)](x, y, n, BLOCK=64)
'''


def test_mechanics_on_the_interpreter():
    _triton_runs()
    copy = measure_copy("triton", TINY_L2, QUICK, elements=1 << 10, interpreter_ok=True)
    assert copy["status"] == "ok" and copy["gbs"] > 0 and copy["bytes_per_copy"] == 2 * 4 * (1 << 10)
    r = benchmark_kernel(str(SAXPY), SAXPY.read_text(), "triton", "saxpy", plan=QUICK, device=TINY_L2, copy=copy,
                         interpreter_ok=True)
    assert r["status"] == "ok", r
    n = r["sizes"]["n"]
    # the L2-derived budget: 2 x 4 x 1 KiB of float32 = 2048 elements over x and y -> n = 1024 (beyond no range)
    assert n == 1024 and r["working_set_bytes"] == 2 * 4 * n and r["fills_gpu"]
    assert r["working_set_over_l2"] == pytest.approx(8.0)
    assert r["bytes_moved"] == 4 * n * 3  # x read, y read and written
    assert r["rounds"] == 3  # min_rounds = max_rounds = 3: converged or capped, the host clock decides which
    assert ("interval within" in r["stopped"]) if r["converged"] else ("round cap" in r["stopped"])
    assert r["samples"]["source"] >= 3 and r["samples"]["port"] >= 3
    lo, hi = r["interval"]
    assert lo <= r["port_over_source"] <= hi
    assert r["ratio"] == pytest.approx(r["source_s"] / r["port_s"])
    assert r["verdict"] in ("port faster", "port slower", "within noise")
    bw = r["bandwidth"]
    assert bw["copy_gbs"] == copy["gbs"]
    assert bw["port"]["pct_of_copy"] == pytest.approx(100 * r["bytes_moved"] / r["port_s"] / (copy["gbs"] * 1e9))
    # the interpreter ignores batching: one host-clock sample per call, said as a caveat
    assert r["batched"] == {"source": False, "port": False} and len(r["caveats"]) == 2


def _scripted_timings(monkeypatch, timed) -> str:
    """Triton runs with real first runs (outputs checked) and scripted timed calls: `timed(side, bench)` gives the
    seconds per launch and the launch path of a call. Returns the port's text (saxpy's, another artifact)."""
    _triton_runs()
    from xlate.backends.base import RunResult, batches
    from xlate.backends.triton import TritonBackend

    real = TritonBackend.run

    def fake(self, artifact, args, launch, *, timeout=120.0, bench=None, wrapper=None):
        if bench is None:
            return real(self, artifact, args, launch, timeout=timeout)
        side = "port" if "The port" in Path(artifact.path).read_text() else "source"
        per_launch, path = timed(side, bench)
        return RunResult("ok", {}, seconds=per_launch,
                         meta={"times": [per_launch] * len(batches(bench["repeat"])), "launch_path": path})

    monkeypatch.setattr(TritonBackend, "run", fake)
    return SAXPY.read_text().replace('"""Triton port', '"""The port')


def test_batched_device_times_are_calibrated_and_interleaved(monkeypatch):
    """The GPU branch with a runtime that returns batched event times (as CuPy's and Triton's on a GPU do):
    the real first runs (outputs checked), then scripted times: source 100 us, port 87 us per launch."""
    calls: list[tuple[str, int]] = []

    def timed(side: str, bench: dict) -> tuple[float, str]:
        calls.append((side, bench["repeat"]))
        return {"source": 100e-6, "port": 87e-6}[side] * (1 + 0.001 * (len(calls) % 3)), "stream"

    port_text = _scripted_timings(monkeypatch, timed)
    plan = Plan(batch_seconds=0.01)
    r = benchmark_kernel(str(SAXPY), port_text, "triton", "saxpy", plan=plan, device=TINY_L2, interpreter_ok=True)
    assert r["status"] == "ok", r
    assert r["batched"] == {"source": True, "port": True} and r["caveats"] == []
    # calibration: one call of 5 single-launch batches per side; then 5 batches of ceil(10 ms / t) launches
    assert calls[:2] == [("source", 5), ("port", 5)]
    assert r["launches_per_call"] == {"source": 5 * math.ceil(0.01 / (100e-6 * 1.001)),
                                      "port": 5 * math.ceil(0.01 / (87e-6 * 1.002))}
    # then rounds alternating in order: S P, P S, S P ...
    assert [c[0] for c in calls[2:8]] == ["source", "port", "port", "source", "source", "port"]
    assert r["rounds"] == 6 and r["converged"]  # every paired ratio within 0.1 %: the interval is narrow at once
    assert r["port_over_source"] == pytest.approx(0.87, rel=3e-3) and r["verdict"] == "port faster"
    assert r["samples"] == {"source": 30, "port": 30}
    assert r["source_s"] == pytest.approx(100e-6, rel=3e-3)


def test_both_sides_replay_graphs_or_neither(monkeypatch):
    """A side whose launches cannot be captured as a CUDA graph: both are timed from the stream (a graph on one
    side only would compare a kernel's GPU time with another's host latency), and the result says so."""
    asked: list[tuple[str, int]] = []

    def timed(side: str, bench: dict) -> tuple[float, str]:
        asked.append((side, bench["graph"]))
        return {"source": 10e-6, "port": 20e-6}[side], "graph" if bench["graph"] and side == "source" else "stream"

    port_text = _scripted_timings(monkeypatch, timed)
    r = benchmark_kernel(str(SAXPY), port_text, "triton", "saxpy", plan=Plan(batch_seconds=0.01), device=TINY_L2,
                         interpreter_ok=True)
    assert r["status"] == "ok", r
    assert asked[:2] == [("source", 1), ("port", 1)]  # the probe asks both for graphs
    assert all(g == 0 for _, g in asked[2:]) and len(asked) > 4  # then neither, calibration included
    assert r["launch_path"] == "stream"
    assert any("port cannot be captured as a CUDA graph" in c for c in r["caveats"])


def test_beyond_the_range_outputs_are_checked_and_the_range_used_when_they_differ(tmp_path):
    _triton_runs()
    src = tmp_path / "src.py"
    src.write_text(_limited(256, "x"))
    # right up to the spec's 256 elements, wrong beyond them
    wrong_beyond = _limited(256, "tl.where(offs < 256, x, 0.0)")
    r = benchmark_kernel(str(src), wrong_beyond, "triton", "k", plan=QUICK, device=TINY_L2, interpreter_ok=True)
    assert r["status"] == "ok", r
    assert r["sizes"]["n"] == 256 and r["beyond_range"] is False
    assert "timed within the spec's ranges" in r["note"] and "'y' differs" in r["note"]
    assert not r["fills_gpu"] and "below 4x the L2 cache" in r["note"]
    assert r["bandwidth"]["reason"] == "the copy bandwidth was not measured"
    # a port right everywhere is timed beyond the range
    r = benchmark_kernel(str(src), _limited(256, "x"), "triton", "k", plan=QUICK, device=TINY_L2, interpreter_ok=True)
    assert r["status"] == "ok" and r["beyond_range"] and r["sizes"]["n"] > 256 and r["note"] is None


def test_a_kernel_that_fails_beyond_its_range_is_timed_within_it(tmp_path):
    _triton_runs()
    src = tmp_path / "src.py"
    text = _limited(256, "x").replace("def k(x, y, n):\n", "def k(x, y, n):\n    if n > 256:\n        raise ValueError('n too large')\n")
    src.write_text(text)
    r = benchmark_kernel(str(src), _limited(256, "x"), "triton", "k", plan=QUICK, device=TINY_L2, interpreter_ok=True)
    assert r["status"] == "ok", r
    assert r["sizes"] == {"n": 256} and not r["beyond_range"]
    assert "timed within the spec's ranges" in r["note"] and "source run: error" in r["note"] and "n too large" in r["note"]


def test_a_port_wrong_within_the_range_is_not_timed(tmp_path):
    _triton_runs()
    src = tmp_path / "src.py"
    src.write_text(_limited(4096, "x"))
    r = benchmark_kernel(str(src), _limited(4096, "x + 1.0"), "triton", "k", plan=QUICK, device=TINY_L2,
                         interpreter_ok=True)
    assert r["status"] == "failed" and "'y' differs between source and port" in r["reason"]


def test_without_a_gpu_no_number_and_why():
    from xlate.backends.registry import get_backend

    if get_backend("cuda").detect().can_run:
        pytest.skip("CUDA runs here")
    r = benchmark_kernel(str(KERNELS / "saxpy.cu"), SAXPY.read_text(), "triton", "saxpy")
    assert r == {"status": "unavailable", "reason": gpu_timing("cuda")}
    assert r["reason"].startswith("cannot run cuda here: missing ")
    if get_backend("triton").detect().interpreter:
        why = gpu_timing("triton")
        assert why is not None and why.startswith("no GPU here: triton runs on cpu")
        assert benchmark_kernel(str(SAXPY), SAXPY.read_text(), "triton", "saxpy")["reason"] == why
        assert measure_copy("triton", TINY_L2, QUICK) == {"status": "unavailable", "reason": why}


def test_device_facts_without_a_device_fall_back(monkeypatch):
    from xlate.migrate import benchdevice

    device_facts.cache_clear()
    monkeypatch.setattr(benchdevice, "_from_cupy", lambda: None)
    monkeypatch.setattr(benchdevice, "_from_torch", lambda: ("NVIDIA H200", 0))
    facts = device_facts()
    assert facts.l2_bytes == 62914560 and facts.l2_origin == "arch table (h200)"  # templates/arch/h200.yaml
    device_facts.cache_clear()
    monkeypatch.setattr(benchdevice, "_from_torch", lambda: ("NVIDIA H100 80GB HBM3", 52428800))
    assert device_facts() == DeviceFacts("NVIDIA H100 80GB HBM3", 52428800, "device")
    device_facts.cache_clear()
    monkeypatch.setattr(benchdevice, "_from_torch", lambda: None)
    assert device_facts() == DeviceFacts(None, benchdevice.ASSUMED_L2, "assumed")
    device_facts.cache_clear()


@pytest.mark.gpu
def test_on_a_gpu_cuda_vs_triton_is_timed_at_gpu_filling_sizes():
    facts = device_facts()
    copy = measure_copy("cuda", facts, Plan())
    assert copy["status"] == "ok" and copy["gbs"] > 100
    r = benchmark_kernel(str(KERNELS / "saxpy.cu"), SAXPY.read_text(), "triton", "saxpy", device=facts, copy=copy)
    assert r["status"] == "ok", r
    assert r["working_set_bytes"] >= 4 * facts.l2_bytes and r["fills_gpu"]
    assert r["batched"] == {"source": True, "port": True}
    assert 10 < r["bandwidth"]["source"]["pct_of_copy"] < 130


@pytest.mark.gpu
def test_on_a_gpu_a_launch_bound_kernel_is_timed_from_cuda_graphs():
    """saxpy on a few hundred elements (one block, a few microseconds): both sides replay CUDA graphs, so Triton's
    Python launcher (tens of microseconds) is not what is timed."""
    facts = device_facts()
    r = benchmark_kernel(str(KERNELS / "saxpy.cu"), SAXPY.read_text(), "triton", "saxpy", device=facts, budget=512,
                         beyond_range=False)
    assert r["status"] == "ok", r
    assert r["launch_path"] == "graph" and not any("CUDA graph" in c for c in r["caveats"]), r
    assert r["source_s"] < 8e-6 and r["port_s"] < 8e-6, r
    # and not an empty graph (launches that ran outside the capture): a kernel node takes at least ~1 us
    assert r["source_s"] > 5e-7 and r["port_s"] > 5e-7, r


@pytest.mark.parametrize("backend", ["cuda", "hip"])
def test_the_copy_kernel_compiles_for_the_c_family_backends(backend):
    """NVRTC (no GPU needed) and hipcc for gfx90a: the copy kernel the run measures on those backends builds."""
    from xlate.backends.base import CompileOptions
    from xlate.backends.registry import get_backend

    from xlate.migrate.benchdevice import COPY_KERNEL, copy_source

    b = get_backend(backend)
    if not b.detect().can_compile:
        pytest.skip(f"{backend} cannot compile here")
    text, path = copy_source(backend)
    art = b.compile(text, COPY_KERNEL, CompileOptions(), path=path)
    assert art.compile.ok and COPY_KERNEL in art.entry


def test_the_port_is_built_with_its_sources_includer_context(tmp_path, monkeypatch):
    # A header kernel whose size macro comes from another header its includer reads first: the gate built its
    # HIP port with the source's context and verified it, while the benchmark built the port file alone, in the
    # folder it was written to, and failed with "identifier ... is undefined" (H200, two real HIP ports).
    from xlate.backends import hip as hip_backend
    from xlate.backends.base import CompileError, CompileOptions

    from xlate.migrate.bench import port_side
    from xlate.verify.runner import Side

    prog, out = tmp_path / "prog", tmp_path / "ports"
    prog.mkdir()
    out.mkdir()
    (prog / "sizes.h").write_text("#define ROW_LEN 96\n")
    kernel = ("__global__ void shift(const float* in, float* out, int rows) {\n"
              "  int r = blockIdx.x, c = threadIdx.x;\n"
              "  if (r < rows && c < ROW_LEN) out[r * ROW_LEN + c] = in[r * ROW_LEN + (c + 1) % ROW_LEN]; }\n")
    (prog / "kernel.h").write_text(kernel)
    (prog / "main.cu").write_text('#include "sizes.h"\n#include "kernel.h"\nint main() { return 0; }\n')
    port_file = out / "kernel.hip"
    port_text = "#include <hip/hip_runtime.h>\n" + kernel
    port_file.write_text(port_text)
    monkeypatch.setattr(hip_backend, "run_platform", lambda: "nvidia")
    monkeypatch.setattr(hip_backend, "hipcc_path", lambda: None)  # the NVIDIA route alone
    backend = hip_backend.HipBackend()

    def compiles(side: Side) -> bool:
        options = CompileOptions("sm_90", [], {}, [], include_dirs=side.include_dirs, context_path=side.context_path)
        try:
            return backend.compile(side.text, "shift", options, path=side.path).compile.ok
        except CompileError as exc:
            assert "ROW_LEN" in exc.log  # the one failure this test is about
            return False

    source = Side(str(prog / "kernel.h"), "shift")
    as_file_alone = Side(str(port_file), "shift", text=port_text, language="hip", include_dirs=[str(prog)])
    assert not compiles(as_file_alone)  # the way it was built before: ROW_LEN unknown
    port = port_side(source, port_text, "hip", arch="sm_90", timeout=60.0, port_path=str(port_file))
    assert port.context_path == source.context_path and str(prog) in port.include_dirs
    assert compiles(port)


def test_a_kernel_with_nothing_to_compare_is_not_timed(tmp_path):
    # A kernel whose spec names no out/inout buffer (it only prints) may be ported to one that does no work, and
    # the gate cannot tell: a port/source ratio of it (0.002 on the H200) would be read as a fast port.
    _triton_runs()
    src = tmp_path / "src.py"
    src.write_text(_limited(256, "x").replace("y: out[n]", "y: in[n]"))
    r = benchmark_kernel(str(src), src.read_text(), "triton", "k", plan=QUICK, device=TINY_L2, interpreter_ok=True)
    assert r["status"] == "unavailable" and "nothing to time" in r["reason"]
    src.write_text(_limited(256, "x"))  # the same kernel with its output named is timed
    assert benchmark_kernel(str(src), src.read_text(), "triton", "k", plan=QUICK, device=TINY_L2,
                            interpreter_ok=True)["status"] == "ok"


def test_the_benchmark_fills_module_globals_and_refuses_a_backend_without_them(tmp_path, monkeypatch):
    # The benchmark's arguments are the gate's: a kernel writing a `__device__` array gets it as a by-name buffer
    # (before, only parameters were passed: the runtime could not fill or read the variable). A Triton port whose
    # launcher does not take them as keywords cannot be given them: nothing is timed.
    from xlate.backends.base import BufferArg

    from xlate.migrate.bench import _args
    from xlate.parse import parse_string
    from xlate.specs import build_spec
    from xlate.verify.cases import Case, make_inputs

    src = tmp_path / "k.cu"
    src.write_text("__device__ float d_out[64];\n__constant__ float c_tab[8];\n"
                   "// xlate: x: in[n], n: size(1..64), d_out: global out[64], c_tab: global in[8], grid: 1, block: 64\n"
                   "__global__ void k(const float* x, int n) {\n"
                   "  int i = threadIdx.x; if (i < n) d_out[i] = x[i] * c_tab[i % 8]; }\n")
    spec = build_spec(parse_string(src.read_text(), str(src), "cuda"), "k")
    case = Case({"n": 40}, {}, {}, {"x": "uniform", "c_tab": "uniform"}, 0)
    env = {"n": 40}
    inputs = make_inputs(spec, case, env)
    args = _args(spec, case, env, inputs)
    by_name = {a.name: a for a in args if isinstance(a, BufferArg)}
    assert by_name["x"].symbol is None and by_name["x"].length == 40
    assert by_name["d_out"].symbol == "d_out" and by_name["d_out"].length == 64
    assert by_name["c_tab"].symbol == "c_tab" and np.array_equal(by_name["c_tab"].data, inputs["c_tab"])
    from xlate.migrate import benchdevice

    monkeypatch.setattr(benchdevice, "gpu_timing", lambda backend, interpreter_ok: None)  # as on a GPU machine
    r = benchmark_kernel(str(src), SAXPY.read_text(), "triton", "k", plan=QUICK, device=TINY_L2)
    assert r["status"] == "unavailable" and "the triton port does not accept the module globals d_out, c_tab" in r["reason"]


def test_the_benchmark_finds_a_specialisations_launcher_as_the_gate_does(tmp_path):
    # `k<float>`'s Triton port names its launcher `k_float_`: the gate verified it under that name, the benchmark
    # looked for `k<float>` and timed nothing ("no launcher function", fma's float specialisation on the H100)
    from xlate.migrate.bench import port_side
    from xlate.parse import parse_string
    from xlate.translate.base import TranslateOptions
    from xlate.translate.triton.translator import CudaToTriton
    from xlate.verify.runner import Side

    src = tmp_path / "scale.cu"
    src.write_text("template <typename T> __global__ void scale(const T* x, T* y, int n) {\n"
                   "  int i = blockIdx.x * 64 + threadIdx.x; if (i < n) y[i] = x[i] * 2; }\n"
                   "// xlate: x: in[n], y: out[n], n: size(1..500), grid: cdiv(n, 64), block: 64\n"
                   "template <> __global__ void scale<float>(const float* x, float* y, int n) {\n"
                   "  int i = blockIdx.x * 64 + threadIdx.x; if (i < n) y[i] = x[i] * 3.0f; }\n")
    unit = parse_string(src.read_text(), str(src), "cuda")
    t = CudaToTriton().translate(unit, src.read_text(), TranslateOptions(kernels=["scale<float>"]))
    assert t.kernels, [d.format() for d in t.diagnostics]
    source = Side(str(src), "scale<float>")
    port = port_side(source, t.text, "triton", arch=None, timeout=60.0)
    assert port.kernel == "scale_float_" and port.has_kernel()


def test_the_benchmark_records_the_launch_configuration_a_port_chose(tmp_path):
    # a rule port of relu (a table of launch configurations) timed against itself on the interpreter: the row
    # says which configuration the launcher used (the interpreter takes the first: CUDA's warps)
    _triton_runs()
    from xlate.port import PortRequest, port_file

    port = tmp_path / "relu_triton.py"
    port_file(PortRequest(source=str(ROOT / "examples" / "kernels" / "relu.cu"), target="triton", output=str(port),
                          engine="rules", verify=False, force=True))
    r = benchmark_kernel(str(port), port.read_text(), "triton", "relu", plan=QUICK, device=TINY_L2,
                         interpreter_ok=True)
    assert r["status"] == "ok", r
    assert r["launch_configs"] == {"relu": {"blocks": 1, "num_warps": 8}}

    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    from benchmark_ports import row

    assert row({"path": "relu.cu"}, {"name": "relu", "status": "verified", "perf": r})["launch_configs"] == \
        r["launch_configs"]
