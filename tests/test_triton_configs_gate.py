"""Launch configurations through the gate, on the CPU (Triton interpreter, the NumPy references of the corpus as
the oracle since CUDA cannot run here): a wrong configuration is discarded with its counterexample and never
written or chosen; a correct port keeps every configuration, each verified on its own with real values."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from tests.test_triton_configs import lifted, runtime
from xlate.port import PortRequest, port_file
from xlate.resources import templates_dir
from xlate.translate.triton import launch_configs
from xlate.verify.api import verify
from xlate.verify.configs import declared, only, restrict, verify_configs

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "examples" / "kernels"
EXAMPLES = 12

CONFIGS = [{"block": 256, "shift": 0, "scale": 1.0}, {"block": 1024, "shift": 0, "scale": 1.0},
           {"block": 512, "shift": 1, "scale": 1.0}, {"block": 128, "shift": 0, "scale": 2.0}]

HAND = '''"""A hand-written Triton relu whose configurations include two wrong ones."""
import os

import triton
import triton.language as tl

_INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"


@triton.jit
def _relu_kernel(x, y, n, BLOCK: tl.constexpr, SHIFT: tl.constexpr, SCALE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + offs, mask=offs < n, other=0.0)
    tl.store(y + offs + SHIFT, tl.where(v > 0.0, v, 0.0) * SCALE, mask=offs < n)


# xlate: x: in[n], y: out[n], n: size(1..1<<20), grid: cdiv(n, 256), block: 256, op: elementwise
def relu(x, y, n):
    def run(c):
        _relu_kernel[(triton.cdiv(n, c["block"]),)](x, y, n, BLOCK=c["block"], SHIFT=c["shift"], SCALE=c["scale"])

    _xl_launch("relu", run, (triton.cdiv(n, 256),), (x, y, n))


''' + (templates_dir() / "triton" / "launch_runtime.py").read_text() + "\n" + "_XL_CONFIGS = {\"relu\": " \
    + json.dumps(CONFIGS) + "}\n"


def judge_relu(text: str):
    return verify(str(KERNELS / "relu.cu"), None, kernel="relu", candidate_text=text, candidate_language="triton",
                  examples=EXAMPLES)


def test_a_hand_written_port_loses_the_configurations_that_write_out_of_bounds_or_compute_wrongly():
    assert judge_relu(only(HAND, "relu", 0)).status == "verified"  # the default, as port judges it
    report = verify_configs(HAND, "relu", judge_relu)
    assert report is not None and report.kept == [0, 1]
    failures = {o.index: o.verdict.counterexample.failure for o in report.discarded}
    assert failures == {2: "out-of-bounds write", 3: "mismatch"}
    oob = report.outcomes[2].verdict
    assert oob.reason.startswith("out-of-bounds write: wrote 'y'[") and "past the end" in oob.reason
    wrong = report.outcomes[3].verdict.counterexample
    assert float(wrong.got) == pytest.approx(2 * float(wrong.expected))  # scale 2: twice the relu
    assert all(o.verdict.oracle.startswith("reference:") for o in report.outcomes[1:])

    written = restrict(HAND, {"relu": report.kept}, report.header_lines())
    assert declared(written) == {"relu": CONFIGS[:2]}
    assert "# launch configurations of relu: 2 of 4 kept (each verified by the gate)" in written
    assert "#   discarded [block=512, shift=1, scale=1.0]: rejected: out-of-bounds write" in written
    assert "#   discarded [block=128, shift=0, scale=2.0]: rejected: mismatch" in written

    # never chosen: the written launcher picks among the written table only, even from a stale tuning cache
    ns = runtime(declared(written))
    ns["_xl_cache_read"] = lambda: {"key": CONFIGS[3]}
    ns["_xl_cache_write"] = lambda cache: None
    assert ns["_xl_pick"]("key", declared(written)["relu"], lambda: CONFIGS[1]) == CONFIGS[1]


def _corrupt_rows(batch_kernel):
    """The real batching, except that a program of 16 blocks or more runs only its first 8 (blocks 8..15 of
    every program are never written): a plausible bug only the gate can see."""
    def wrapped(fn, name):
        src, why = batch_kernel(fn, name)
        return (src.replace("tl.arange(0, _xl_r)", "(tl.arange(0, _xl_r) % 8)") if src else src), why
    return wrapped


def test_port_discards_a_forced_wrong_configuration_and_writes_only_verified_ones(tmp_path, monkeypatch):
    real = launch_configs.configurations
    monkeypatch.setattr(launch_configs, "configurations", lambda bx, w, p=False: [*real(bx, w, p), {"blocks": 3, "num_warps": 4}])
    monkeypatch.setattr(launch_configs, "batch_kernel", _corrupt_rows(launch_configs.batch_kernel))
    out = tmp_path / "relu.py"
    res = port_file(PortRequest(source=str(KERNELS / "relu.cu"), target="triton", output=str(out), engine="rules",
                                examples=EXAMPLES))
    assert res.status == "verified" and res.written
    report = res.kernels[0].configs
    assert report is not None and [o.config for o in report.outcomes] == [*real(256, 8), {"blocks": 3, "num_warps": 4}]
    assert report.kept == [0, 1, 2, 3]  # CUDA's warps, packed into 4, 4 and 8 blocks a program
    bad = {o.index: o.verdict for o in report.discarded}
    assert set(bad) == {4, 5}
    assert bad[4].counterexample.failure == "unwritten output"  # 16 blocks a program, 8 of them run
    assert bad[5].status == "rejected" and "power of 2" in bad[5].reason  # tl.arange(0, 3)

    text = out.read_text()
    assert declared(text) == {"relu": real(256, 8)[:4]}
    head = text.split('"""', 1)[0]
    assert "# launch configurations of relu: 4 of 6 kept (each verified by the gate)" in head
    assert "#   discarded [blocks=16, num_warps=8]: rejected: unwritten output" in head
    assert "#   discarded [blocks=3, num_warps=4]: rejected" in head
    assert res.translation is not None and declared(res.translation.text) == declared(text)  # what migrate writes
    entry = res.to_dict()["kernels"][0]["launch_configs"]
    assert entry["kept"] == [0, 1, 2, 3] and entry["configs"][4]["counterexample"]["failure"] == "unwritten output"


RUN = r'''
import importlib.util, json, sys
import numpy as np, torch
spec = importlib.util.spec_from_file_location("port", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
out = {}
for n in (1, 255, 257, 1000, 4099):
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    if sys.argv[2] == "relu":
        y = torch.full((n,), float("nan"))
        m.relu(torch.from_numpy(x), y, n)
    else:
        y = torch.full(((n + 255) // 256,), float("nan"))
        m.block_reduce_sum(torch.from_numpy(x), y, n)
    out[n] = y.tolist()
print(json.dumps({"chosen": m._XL_CHOSEN, "out": out}))
'''


@pytest.mark.parametrize(("stem", "kernel"), [("relu", "relu"), ("reduce_sum_shared", "block_reduce_sum")])
def test_a_correct_port_keeps_every_configuration_each_verified_with_real_values(tmp_path, stem, kernel):
    out = tmp_path / f"{stem}.py"
    res = port_file(PortRequest(source=str(KERNELS / f"{stem}.cu"), target="triton", output=str(out), engine="rules",
                                examples=EXAMPLES))
    assert res.status == "verified"
    report = res.kernels[0].configs
    configs = launch_configs.configurations(256, 8)
    assert report is not None and report.kept == list(range(len(configs))) and not report.discarded
    for o in report.outcomes[1:]:
        assert o.verdict.status == "verified" and o.verdict.examples >= EXAMPLES
        assert o.verdict.oracle.startswith("reference:") and o.verdict.max_error_ratio < 1
    assert declared(out.read_text()) == {kernel: configs}

    # independently of the gate: each configuration alone, run on the interpreter, against NumPy
    script = tmp_path / "run.py"
    script.write_text(RUN)
    for i, config in enumerate(configs):
        module = tmp_path / f"only_{i}.py"
        module.write_text(only(out.read_text(), kernel, i))
        done = subprocess.run([sys.executable, str(script), str(module), kernel], capture_output=True, text=True,
                              env={**__import__("os").environ, "TRITON_INTERPRET": "1"}, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        got = json.loads(done.stdout.strip().splitlines()[-1])
        assert got["chosen"] == {kernel: config}
        for n, values in got["out"].items():
            x = np.random.default_rng(int(n)).standard_normal(int(n)).astype(np.float32)
            if kernel == "relu":
                np.testing.assert_array_equal(np.asarray(values, np.float32), np.maximum(x, 0))
            else:
                pad = np.zeros(-(-int(n) // 256) * 256, np.float64)
                pad[: int(n)] = x
                np.testing.assert_allclose(values, pad.reshape(-1, 256).sum(axis=1), rtol=1e-5, atol=1e-4)


def test_the_backend_launches_the_default_in_gate_runs_and_reports_it():
    from xlate.backends.base import BufferArg, CompileOptions, LaunchConfig, ScalarArg
    from xlate.backends.registry import get_backend

    backend = get_backend("triton")
    art = backend.compile(lifted("relu", "relu"), "relu", CompileOptions(), path="relu_port.py")
    x = np.linspace(-1, 1, 300, dtype=np.float32)
    res = backend.run(art, [BufferArg("x", x, 0, 300), BufferArg("y", np.zeros(300, np.float32), 0, 300),
                            ScalarArg("n", 300, "int32")], LaunchConfig((2, 1, 1), (256, 1, 1)))
    assert res.status == "ok", res.message
    np.testing.assert_array_equal(res.buffers["y"], np.maximum(x, 0))
    assert res.meta["launch_configs"] == {"relu": {"blocks": 1, "num_warps": 8}}
    assert "launch_timings" not in res.meta


def _bench():
    spec = importlib.util.spec_from_file_location("triton_vs_cuda", ROOT / "bench" / "triton_vs_cuda.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_bench_times_source_default_and_chosen_side_by_side():
    """The timing mechanics on the interpreter, with the hand-written Triton relu standing in for the CUDA
    original (which cannot run here); a small L2 keeps the case small."""
    bench = _bench()
    r = bench.time_kernel(str(ROOT / "examples" / "triton" / "relu.py"), "relu", lifted("relu", "relu"), 2,
                          types.SimpleNamespace(l2_bytes=4096))
    assert r["status"] == "ok", r
    assert set(r["seconds"]) == {"cuda", "default", "chosen"} and min(r["seconds"].values()) > 0
    assert r["chosen_config"] == {"blocks": 1, "num_warps": 8}  # the interpreter times nothing
    assert r["bytes_moved"] == 2 * 4 * r["sizes"]["n"]
    row: dict = {"kernel": "relu"}
    bench.add_timing(row, r, copy_bps=1e9)
    s = r["seconds"]
    assert row["chosen_over_cuda"] == pytest.approx(s["chosen"] / s["cuda"]) and row["chosen"] == "1x/w8"
    assert row["default_pct_copy"] == pytest.approx(100 * r["bytes_moved"] / s["default"] / 1e9)


def test_the_bench_summary_checks_the_issue_targets():
    bench = _bench()
    rows = [{"kernel": "a", "chosen_over_cuda": 0.5, "default_over_cuda": 1.0, "cuda_pct_copy": 90.0, "chosen_pct_copy": 95.0},
            {"kernel": "b", "chosen_over_cuda": 1.2, "default_over_cuda": 1.2, "cuda_pct_copy": 80.0, "chosen_pct_copy": 70.0},
            {"kernel": "c", "chosen_over_cuda": 0.9, "default_over_cuda": 0.9, "cuda_pct_copy": 20.0, "chosen_pct_copy": 30.0},
            {"kernel": "d", "note": "not timed"}]
    s = bench.summarize(rows, 3000.0)
    assert s["timed"] == 3 and s["memory_bound"] == 2
    assert s["geomean_chosen_over_cuda"] == pytest.approx((0.5 * 1.2 * 0.9) ** (1 / 3))
    assert s["geomean_default_over_cuda"] == pytest.approx((1.0 * 1.2 * 0.9) ** (1 / 3))
    assert s["over_target_ratio"] == ["b"] and s["memory_bound_below_target_pct"] == ["b"]
    assert s["targets_met"] is False
    assert bench.summarize(rows[:1], 3000.0)["targets_met"] is True


PTX = r'''
import ast, importlib.util, json, re, sys
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

path, signature = sys.argv[1], json.loads(sys.argv[2])
spec = importlib.util.spec_from_file_location("port", path)
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
tree = ast.parse(open(path).read())
widths = {}
for fn in (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.endswith(("_kernel", "_kernel_blocks"))):
    sig = {a.arg: ("constexpr" if a.arg in ("BX", "_xl_r") else "i32" if a.arg == "_xl_gx" else signature[a.arg])
           for a in fn.args.args}
    consts = {"BX": 256, "_xl_r": 8} if fn.name.endswith("_blocks") else {"BX": 256}
    hints = {(i,): [["tt.divisibility", 16]] for i, (n, t) in enumerate(sig.items()) if t.startswith("*") or n == "n"}
    ck = triton.compile(ASTSource(fn=getattr(m, fn.name), signature=sig, constexprs=consts, attrs=hints),
                        target=GPUTarget("cuda", 90, 32), options={"num_warps": 8})
    found = re.findall(r"ld\.global(?:\.v(\d))?\.b32", ck.asm["ptx"])
    widths[fn.name] = max(int(v or 1) for v in found)
print(json.dumps(widths))
'''


@pytest.mark.parametrize(("stem", "kernel", "signature"), [
    ("relu", "relu", {"x": "*fp32", "y": "*fp32", "n": "i32"}),
    ("gelu", "gelu_tanh", {"x": "*fp32", "y": "*fp32", "n": "i32"}),
    ("reduce_sum_shared", "block_reduce_sum", {"x": "*fp32", "partial": "*fp32", "n": "i32"}),
])
def test_batched_kernels_compile_for_sm90_with_loads_at_least_as_wide(tmp_path, stem, kernel, signature):
    """Triton compiles for a GPU target without a GPU (its bundled ptxas): the batched kernel the interpreter
    verified also builds for an H200, and its global loads are vectorised at least as widely as the default's."""
    pytest.importorskip("triton.backends.nvidia")
    module = tmp_path / f"{stem}.py"
    module.write_text(lifted(stem, kernel))
    env = {k: v for k, v in __import__("os").environ.items() if k != "TRITON_INTERPRET"}
    done = subprocess.run([sys.executable, "-c", PTX, str(module), json.dumps(signature)], capture_output=True,
                          text=True, env={**env, "TRITON_DEFAULT_FP_FUSION": "1"}, timeout=600)
    if done.returncode != 0 and "ptxas" in done.stderr and "not found" in done.stderr.lower():
        pytest.skip("Triton's CUDA toolchain (ptxas) is not installed here")
    assert done.returncode == 0, done.stderr[-2000:]
    widths = json.loads(done.stdout.strip().splitlines()[-1])
    default, batched = widths[f"_{kernel}_kernel"], widths[f"_{kernel}_kernel_blocks"]
    assert batched >= default and batched == 4  # 128-bit loads: 8 rows of 256 lanes on 8 warps
