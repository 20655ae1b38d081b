"""Row kernels (xlate/translate/triton/rows.py): a lifted kernel whose threads stride over a row's columns runs
with any number of lanes per row and several rows per program. The kernels are written here; each configuration
runs on the Triton interpreter against NumPy with poisoned outputs and sizes that are no multiples of anything,
the lanes variants compile for sm_90 on the CPU, and kernels whose result depends on the lane count are refused."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from xlate.parse import parse_file
from xlate.translate.base import TranslateOptions
from xlate.translate.triton.rows import free_lanes, row_configurations
from xlate.translate.triton.translator import CudaToTriton
from xlate.verify.configs import declared

ABSMAX = """
#define W 128
// xlate: a: in[nr, nc](-3..3), s: out[nr], nr: size(1..300), nc: size(1..700), grid: nr, block: 128,
// xlate: op: reduction(nc), values: finite
__global__ void row_absmax(const float* a, float* s, int nr, int nc) {
    __shared__ float buf[W];
    int r = blockIdx.x;
    float best = 0.0f;
    for (int j = threadIdx.x; j < nc; j += blockDim.x) best = fmaxf(best, fabsf(a[r * nc + j]));
    buf[threadIdx.x] = best;
    __syncthreads();
    for (int h = W / 2; h > 0; h /= 2) {
        if (threadIdx.x < h) buf[threadIdx.x] = fmaxf(buf[threadIdx.x], buf[threadIdx.x + h]);
        __syncthreads();
    }
    if (threadIdx.x == 0) s[r] = buf[0];
}
"""

# two passes: the sum of squares of a row, then every element scaled by its root mean square
RMS = """
#define W 128
// xlate: a: in[nr, nc](-3..3), b: out[nr, nc], nr: size(1..300), nc: size(1..700), grid: nr, block: 128,
// xlate: op: reduction(nc), values: finite
__global__ void row_rms(const float* a, float* b, int nr, int nc) {
    __shared__ float part[W];
    int r = blockIdx.x;
    int t = threadIdx.x;
    float q = 0.0f;
    for (int j = t; j < nc; j += blockDim.x) { float v = a[r * nc + j]; q += v * v; }
    part[t] = q;
    __syncthreads();
    for (int h = W / 2; h > 0; h >>= 1) {
        if (t < h) part[t] += part[t + h];
        __syncthreads();
    }
    float inv = rsqrtf(part[0] / nc + 1e-3f);
    for (int j = t; j < nc; j += blockDim.x) b[r * nc + j] = a[r * nc + j] * inv;
}
"""


def lift(src: str, kernel: str, tmp: Path) -> str:
    path = tmp / f"{kernel}.cu"
    path.write_text(src)
    unit = parse_file(path)
    t = CudaToTriton().translate(unit, unit.text, TranslateOptions(kernels=[kernel]))
    assert kernel in t.kernels, t.diagnostics if hasattr(t, "diagnostics") else t
    return t.text


def jit_def(text: str, name: str) -> ast.FunctionDef:
    return next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == name)


def test_a_row_kernel_offers_lanes_per_row_and_its_batched_kernel_steps_by_bx(tmp_path):
    text = lift(RMS, "row_rms", tmp_path)
    table = declared(text)
    assert table is not None
    configs = table["row_rms"]
    assert configs[0] == {"blocks": 1, "num_warps": 4}
    assert [c for c in configs if "lanes" in c] == row_configurations(128)
    assert {c["lanes"] for c in row_configurations(128)} == {32, 64, 512, 1024}  # not CUDA's own 128 again
    batched = ast.unparse(jit_def(text, "_row_rms_kernel_blocks"))
    # both column loops step by the lanes per row (the first, loads only, unrolled as nvcc would: unroll.py)
    assert batched.count(", nc, BX, loop_unroll_factor=4):") == 1 and batched.count(", nc, BX):") == 1
    assert "128)" not in batched.split("def ", 1)[1].split("\n", 1)[1]  # no trace of CUDA's block in the loops
    default = ast.unparse(jit_def(text, "_row_rms_kernel"))
    # the default kernel's unrolled loop is the one a pipelined configuration pipelines (launch_configs.yaml)
    assert default.count(", nc, 128, loop_unroll_factor=4, num_stages=_xl_stages):") == 1
    assert default.count(", nc, 128):") == 1
    assert {"blocks": 1, "num_warps": 4, "stages": 3} in configs
    assert "BX=_xl_c.get('lanes', 128)" in text and '"lanes" not in _xl_c' in text


RUN = r'''
import importlib.util, json, sys
import numpy as np, torch
from xlate.verify.configs import declared, only
text = open(sys.argv[1]).read()
kernel = sys.argv[2]
out = []
for i, config in enumerate(declared(text)[kernel]):
    path = sys.argv[1] + f".{i}.py"
    open(path, "w").write(only(text, kernel, i))
    spec = importlib.util.spec_from_file_location(f"port{i}", path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    for nr, nc in ((1, 1), (3, 37), (67, 5), (5, 129), (2, 1111), (37, 300)):
        a = np.random.default_rng(nr * 1000 + nc).uniform(-3, 3, (nr, nc)).astype(np.float32)
        if kernel == "row_absmax":
            res = torch.full((nr + 3,), float("nan"))  # poisoned, with 3 guard elements past the end
            m.row_absmax(torch.from_numpy(a.ravel()), res, nr, nc)
            want = np.abs(a.astype(np.float64)).max(axis=1)
        else:
            res = torch.full((nr * nc + 3,), float("nan"))
            m.row_rms(torch.from_numpy(a.ravel()), res, nr, nc)
            a64 = a.astype(np.float64)
            want = (a64 / np.sqrt((a64 * a64).mean(axis=1, keepdims=True) + 1e-3)).ravel()
        got = res.numpy().astype(np.float64)
        out.append({"config": config, "chosen": m._XL_CHOSEN[kernel], "nr": nr, "nc": nc,
                    "err": float(np.max(np.abs(got[:len(want)] - want))) if np.all(np.isfinite(got[:len(want)])) else None,
                    "guard": bool(np.all(np.isnan(got[len(want):])))})
print(json.dumps(out))
'''


@pytest.mark.parametrize(("src", "kernel"), [(ABSMAX, "row_absmax"), (RMS, "row_rms")])
def test_every_configuration_of_a_row_kernel_matches_numpy_on_the_interpreter(tmp_path, src, kernel):
    text = lift(src, kernel, tmp_path)
    configs = declared(text)[kernel]
    assert sum("lanes" in c for c in configs) >= 4
    port = tmp_path / "port.py"
    port.write_text(text)
    script = tmp_path / "run.py"
    script.write_text(RUN)
    done = subprocess.run([sys.executable, str(script), str(port), kernel], capture_output=True, text=True,
                          env={**os.environ, "TRITON_INTERPRET": "1"}, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(rows) == 6 * len(configs)
    for r in rows:
        assert r["chosen"] == r["config"]
        assert r["err"] is not None and r["err"] <= (0 if kernel == "row_absmax" else 2e-6), r  # max is exact
        assert r["guard"], r  # nothing written past the output


def test_the_lanes_variants_compile_for_sm90(tmp_path):
    triton = pytest.importorskip("triton")
    try:
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource
    except ImportError:
        pytest.skip("this Triton has no ASTSource/GPUTarget")
    text = lift(RMS, "row_rms", tmp_path)
    path = tmp_path / "rms_port.py"
    path.write_text(text.replace("_INTERPRET = ", "_INTERPRET = False and "))  # the GPU lowering
    spec = importlib.util.spec_from_file_location("rms_port", path)
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(mod)
    sig = {"a": "*fp32", "b": "*fp32", "nr": "i32", "nc": "i32", "_xl_gx": "i32", "BX": "constexpr",
           "_xl_r": "constexpr"}
    for c in row_configurations(128):
        try:
            k = triton.compile(ASTSource(fn=mod._row_rms_kernel_blocks, signature=sig,
                                         constexprs={"BX": c["lanes"], "_xl_r": c["blocks"]}),
                               target=GPUTarget("cuda", 90, 32), options={"num_warps": c["num_warps"]})
        except Exception as exc:
            if "CompilationError" in type(exc).__name__:
                raise
            pytest.skip(f"Triton cannot compile for sm_90 here: {type(exc).__name__}")
        assert "ttgir" in k.asm


# -- what is refused: results that depend on how columns are dealt to lanes -------------------------------------

HEAD = """
@triton.jit
def _k(x, y, nr, nc, BX: tl.constexpr):
    pid_x = tl.program_id(0)
    lane_x = tl.arange(0, BX)
"""

OK = HEAD + """
    s = tl.full([BX], 0.0, tl.float32)
    for c_base_it in range(0, nc, 256):
        c_base = c_base_it + tl.zeros([], tl.int32)
        v = tl.load(x + (pid_x * nc + (c_base + lane_x)), mask=(c_base + lane_x) < nc, other=0)
        s_1 = tl.where((c_base + lane_x) < nc, s + v, s)
        s = s_1
    t = tl.sum(tl.broadcast_to(s, (BX,)), axis=0)
    tl.store(y + pid_x, t)
"""


def kernel(src: str) -> ast.FunctionDef:
    fn = ast.parse(textwrap.dedent(src)).body[0]
    assert isinstance(fn, ast.FunctionDef)
    return fn


def test_a_plain_row_sum_is_free_and_only_its_loop_steps_change():
    out, why = free_lanes(kernel(OK), 256)
    assert out is not None, why
    assert ast.unparse(out) == ast.unparse(kernel(OK)).replace("range(0, nc, 256)", "range(0, nc, BX)")
    assert free_lanes(kernel(OK), 128)[0] is None  # a loop stepping by something else than the block


REFUSED = {
    # a sum starting at 1 in every lane: BX + the row's sum
    "does not start at 0": OK.replace("tl.full([BX], 0.0", "tl.full([BX], 1.0"),
    # a running max summed over the lanes: the sum of per-lane maxima
    "another operation": OK.replace("s + v", "tl.maximum(s, v)"),
    # the lane's partial sum stored per column
    "reach a store": OK.replace("tl.store(y + pid_x, t)", "").replace(
        "        s = s_1\n", "        s = s_1\n        tl.store(y + (c_base + lane_x), s_1)\n"),
    # the maximum of each tile of lanes, inside the loop
    "reduction other than of an accumulator": OK.replace(
        "        s = s_1\n", "        s = s_1\n        tl.store(y + pid_x, tl.max(v, axis=0))\n"),
    # a lane count: the sum of ones over the lanes
    "summed without being accumulated": HEAD + """
    one = tl.full([BX], 1, tl.int32)
    tl.store(y + pid_x, tl.sum(one, axis=0))
    for c_base_it in range(0, nc, 256):
        c_base = c_base_it + tl.zeros([], tl.int32)
        tl.store(y + (c_base + lane_x), 0.0, mask=(c_base + lane_x) < nc)
""",
    # every other column: not `base + lane`
    "used other than as the column": OK.replace("(c_base + lane_x) < nc, other", "(c_base + 2 * lane_x) < nc, other"),
    # the last iteration's lanes read after the loop
    "read after its loop": OK.replace("tl.store(y + pid_x, t)", "tl.store(y + lane_x, v)"),
    # a value per lane carried from one iteration to the next that is not an accumulator
    "carried across iterations": OK.replace("    for c_base_it", "    w = tl.full([BX], 0.0, tl.float32) + 0.0\n"
                                            "    for c_base_it").replace("s + v", "s + w").replace(
        "        s = s_1\n", "        s = s_1\n        w = v\n"),
    # a counter of iterations (uniform) carried from one to the next: its values depend on the lane count
    "'k' carried across iterations": OK.replace("    for c_base_it", "    k = 0\n    for c_base_it").replace(
        "s + v, s)", "s + v * k, s)").replace("        s = s_1\n", "        s = s_1\n        k = k + 1\n"),
    # the range's own counter (the first column of the iteration)
    "loop's counter": OK.replace("s + v, s)", "s + v * c_base_it, s)"),
    # BX used as a number
    "BX is used": OK.replace("tl.store(y + pid_x, t)", "tl.store(y + pid_x, t / BX)"),
    # the lanes outside a column loop
    "outside the column loops": OK.replace("tl.store(y + pid_x, t)", "tl.store(y + pid_x + lane_x, t)"),
}


@pytest.mark.parametrize("reason", sorted(REFUSED))
def test_a_kernel_whose_result_depends_on_the_lane_count_is_refused(reason):
    out, why = free_lanes(kernel(REFUSED[reason]), 256)
    assert out is None and reason in why, why


def _rms_files(tmp_path):
    """The RMS row kernel as a source file and its NumPy reference (`file:function` for --reference)."""
    src = tmp_path / "row_rms.cu"
    src.write_text(RMS)
    ref = tmp_path / "rms_ref.py"
    ref.write_text(textwrap.dedent('''
        import numpy as np

        def row_rms(a, nr, nc, **_):
            a = np.asarray(a, dtype=np.float64).reshape(nr, nc)
            return {"b": a / np.sqrt((a * a).mean(axis=1, keepdims=True) + 1e-3)}
    '''))
    return src, ref


def test_the_gate_verifies_and_keeps_a_lanes_configuration(tmp_path, monkeypatch):
    from xlate.port import PortRequest, port_file
    from xlate.translate.triton import launch_configs

    src, ref = _rms_files(tmp_path)
    lanes = {"blocks": 8, "lanes": 32, "num_warps": 4}
    monkeypatch.setattr(launch_configs, "configurations", lambda bx, w, p=False: [{"blocks": 1, "num_warps": w}])
    monkeypatch.setattr(launch_configs, "row_configurations", lambda bx: [lanes])  # one, to keep the test short
    out = tmp_path / "row_rms.py"
    res = port_file(PortRequest(source=str(src), target="triton", output=str(out), engine="rules", examples=12,
                                reference=f"{ref}:row_rms"))
    assert res.status == "verified" and res.written
    report = res.kernels[0].configs
    assert report is not None and report.kept == [0, 1]
    assert report.outcomes[1].config == lanes and report.outcomes[1].verdict.examples >= 12
    assert declared(out.read_text()) == {"row_rms": [{"blocks": 1, "num_warps": 4}, lanes]}


def test_the_gate_verifies_and_keeps_a_pipelined_configuration(tmp_path, monkeypatch):
    """The row kernel's loads-only column loop is unrolled, so its default launch is also offered with that loop
    software-pipelined (launch_configs.yaml's pipelined_stages); the gate runs that configuration on its own
    against the NumPy reference before the port may keep it."""
    from xlate.port import PortRequest, port_file
    from xlate.translate.triton import launch_configs

    src, ref = _rms_files(tmp_path)
    real = launch_configs.configurations
    # the one-block configurations only, to keep the test short
    monkeypatch.setattr(launch_configs, "configurations",
                        lambda bx, w, p=False: [c for c in real(bx, w, p) if c["blocks"] == 1])
    monkeypatch.setattr(launch_configs, "row_configurations", lambda bx: [])
    out = tmp_path / "row_rms.py"
    res = port_file(PortRequest(source=str(src), target="triton", output=str(out), engine="rules", examples=12,
                                reference=f"{ref}:row_rms"))
    assert res.status == "verified" and res.written
    report = res.kernels[0].configs
    pipelined = {"blocks": 1, "num_warps": 4, "stages": 3}
    assert report is not None and report.kept == [0, 1]
    assert report.outcomes[1].config == pipelined and report.outcomes[1].verdict.examples >= 12
    assert report.outcomes[1].verdict.status == "verified" and report.outcomes[1].verdict.max_error_ratio < 1
    text = out.read_text()
    assert declared(text) == {"row_rms": [{"blocks": 1, "num_warps": 4}, pipelined]}
    assert "num_stages=_xl_stages)" in text and "_xl_stages=_xl_c.get('stages')" in text


# -- rows of their own lengths: a column loop whose bounds are read per row ------------------------------------

CSR = """
// xlate: ptr: in[nr + 1](0..nnz), val: in[nnz](-2..2), col: in[nnz](0..nc - 1), x: in[nc](-2..2), y: out[nr],
// xlate: nr: size(1..200), nnz: size(1..900), nc: size(1..100), grid: nr, block: 64, op: reduction(nnz),
// xlate: values: finite
__global__ void csr_rows(const int* ptr, const float* val, const int* col, const float* x, float* y, int nr,
                         int nnz, int nc) {
    __shared__ float p[64];
    int r = blockIdx.x;
    int a = ptr[r], b = ptr[r + 1];
    float s = 0.0f;
    for (int j = a + threadIdx.x; j < b; j += 64) s += val[j] * x[col[j]];
    p[threadIdx.x] = s;
    __syncthreads();
    for (int h = 32; h > 0; h >>= 1) {
        if (threadIdx.x < h) p[threadIdx.x] += p[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0) y[r] = p[0];
}
"""

RUN_CSR = r'''
import importlib.util, json, sys
import numpy as np, torch
from xlate.verify.configs import declared, only
text = open(sys.argv[1]).read()
out = []
for i, config in enumerate(declared(text)["csr_rows"]):
    path = sys.argv[1] + f".{i}.py"
    open(path, "w").write(only(text, "csr_rows", i))
    spec = importlib.util.spec_from_file_location(f"port{i}", path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    for nr, nnz, nc in ((1, 1, 1), (3, 37, 5), (67, 5, 3), (9, 1111, 13), (40, 700, 7)):
        g = np.random.default_rng(nr * 7 + nnz)
        ptr = np.sort(g.integers(0, nnz + 1, nr + 1)).astype(np.int32)  # rows of 0 to nnz entries
        ptr[0] = 0
        val = g.uniform(-2, 2, nnz).astype(np.float32)
        col = g.integers(0, nc, nnz).astype(np.int32)
        x = g.uniform(-2, 2, nc).astype(np.float32)
        y = torch.full((nr + 3,), float("nan"))
        m.csr_rows(*(torch.from_numpy(a) for a in (ptr, val, col, x)), y, nr, nnz, nc)
        want = [float((val[ptr[r]:ptr[r + 1]].astype(np.float64) * x[col[ptr[r]:ptr[r + 1]]]).sum()) for r in range(nr)]
        got = y.numpy().astype(np.float64)
        out.append({"config": config, "chosen": m._XL_CHOSEN["csr_rows"], "empty": int(np.sum(np.diff(ptr) == 0)),
                    "err": float(np.max(np.abs(got[:nr] - want))) if np.all(np.isfinite(got[:nr])) else None,
                    "guard": bool(np.all(np.isnan(got[nr:])))})
print(json.dumps(out))
'''


def test_rows_of_their_own_lengths_batch_and_match_numpy_in_every_configuration(tmp_path):
    text = lift(CSR, "csr_rows", tmp_path)
    configs = declared(text)["csr_rows"]
    assert any("lanes" in c for c in configs) and any(c["blocks"] > 1 and "lanes" not in c for c in configs)
    batched = ast.unparse(jit_def(text, "_csr_rows_kernel_blocks"))
    assert "in tl.range(0, tl.max(ptr_2 - ptr_1), BX, loop_unroll_factor=4):" in batched  # the longest row of the program
    assert "j_base = ptr_1 + j_base_it" in batched  # each row from its own start
    port = tmp_path / "port.py"
    port.write_text(text)
    script = tmp_path / "run.py"
    script.write_text(RUN_CSR)
    done = subprocess.run([sys.executable, str(script), str(port)], capture_output=True, text=True,
                          env={**os.environ, "TRITON_INTERPRET": "1"}, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(rows) == 5 * len(configs) and sum(r["empty"] for r in rows) > 0  # empty rows were drawn
    for r in rows:
        assert r["chosen"] == r["config"]
        assert r["err"] is not None and r["err"] <= 2e-5, r
        assert r["guard"], r


def test_rows_of_their_own_lengths_compile_for_sm90(tmp_path):
    triton = pytest.importorskip("triton")
    try:
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource
    except ImportError:
        pytest.skip("this Triton has no ASTSource/GPUTarget")
    path = tmp_path / "csr_port.py"
    path.write_text(lift(CSR, "csr_rows", tmp_path).replace("_INTERPRET = ", "_INTERPRET = False and "))
    spec = importlib.util.spec_from_file_location("csr_port", path)
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(mod)
    sig = {"ptr": "*i32", "val": "*fp32", "col": "*i32", "x": "*fp32", "y": "*fp32", "nr": "i32", "nnz": "i32",
           "nc": "i32", "_xl_gx": "i32", "BX": "constexpr", "_xl_r": "constexpr"}
    for lanes, rows, warps in ((64, 16, 4), (32, 32, 4), (1024, 1, 8)):
        try:
            k = triton.compile(ASTSource(fn=mod._csr_rows_kernel_blocks, signature=sig,
                                         constexprs={"BX": lanes, "_xl_r": rows}),
                               target=GPUTarget("cuda", 90, 32), options={"num_warps": warps})
        except Exception as exc:
            if "CompilationError" in type(exc).__name__:
                raise
            pytest.skip(f"Triton cannot compile for sm_90 here: {type(exc).__name__}")
        assert "ttgir" in k.asm


RAGGED = HEAD + """
    n = tl.load(x + pid_x)
    s = tl.full([BX], 0.0, tl.float32)
    for c_base_it in range(0, n, 256):
        c_base = c_base_it + tl.zeros([], tl.int32)
        v = tl.load(x + (pid_x * nc + (c_base + lane_x)), mask=(c_base + lane_x) < n, other=0)
        s_1 = tl.where((c_base + lane_x) < n, s + v, s)
        s = s_1
    t = tl.sum(tl.broadcast_to(s, (BX,)), axis=0)
    tl.store(y + pid_x, t)
"""


def test_a_ragged_loop_batches_only_when_everything_it_does_is_masked_by_its_column_test():
    from xlate.translate.triton.batching import batch_kernel

    src, why = batch_kernel(kernel(RAGGED), "_k_blocks")
    assert src is not None, why
    assert "range(0, tl.max(n), 256)" in src
    for bad, reason in [
        (RAGGED.replace("mask=(c_base + lane_x) < n, other=0", "mask=(c_base + lane_x) < nc, other=0"),
         "tl.load in the loop not masked by its column test"),
        (RAGGED.replace("tl.where((c_base + lane_x) < n, s + v, s)", "s + v"), "'s' is left behind"),
        (RAGGED.replace("        s = s_1\n", "        s = s_1\n        tl.store(y + (c_base + lane_x), v)\n"),
         "tl.store in the loop not masked"),
        (RAGGED.replace("range(0, n, 256)", "range(0, n, 7)").replace("+ lane_x", "+ lane_x * 7"),
         "used other than as the column"),
    ]:
        src, why = batch_kernel(kernel(bad), "_k_blocks")
        assert src is None and "control flow depends on the block" in why and reason in why, why


def test_a_barrier_batches():
    # all the program's threads meet: R blocks' as well as one block's (a program's control flow is uniform)
    from xlate.translate.triton.batching import batch_kernel

    src, why = batch_kernel(kernel(RAGGED.replace("    t = tl.sum", "    tl.debug_barrier()\n    t = tl.sum")), "_k_blocks")
    assert src is not None and "    tl.debug_barrier()\n" in src, why


def test_a_loop_whose_temporaries_double_at_each_step_is_refused_quickly():
    chain = "".join(f"        d{i + 1} = d{i} + d{i}\n" for i in range(40))  # 2**40 nodes if expanded naively
    src = OK.replace("        s_1 = tl.where", f"        d0 = v\n{chain}        s_1 = tl.where").replace("s + v", "s + d40")
    out, why = free_lanes(kernel(src), 256)
    assert out is None and "too large" in why
