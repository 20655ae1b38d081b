"""Loops of a port unrolled where nvcc unrolls the CUDA loop (xlate/translate/triton/unroll.py): a run-time loop
whose small body only loads and computes becomes `tl.range(..., loop_unroll_factor=4)`, so the machine code keeps
as many loads in flight as nvcc's (16 in a strided double sum on sm_90, 4 without the hint). Loops that store,
reduce across the block, read volatile memory, nest control flow or run a count known at compile time stay as
they were. Results are the same: the ports run under the Triton interpreter against NumPy in float64, sizes off
the block, outputs poisoned."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import kernel_body, port
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, rng, run
from xlate.translate.triton.unroll import rolled_lines, unroll_loops
from xlate.verify.configs import declared

SRC = """
// xlate: part: in[n], out: out[1], n: size(1..5000), grid: 1, block: 128
__global__ void one_block_total(const double* __restrict__ part, double* out, int n) {
    __shared__ double red[128];
    double acc = 0.0;
    for (int k = threadIdx.x; k < n; k += 128)
        acc += part[k];
    red[threadIdx.x] = acc;
    __syncthreads();
    for (int s = 64; s > 0; s >>= 1) {
        if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[0] = red[0];
}

// xlate: x: in[n], y: out[n], n: size(1..3000), grid: 4, block: 64
__global__ void scaled_copy(const float* x, float* y, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        y[i] = 2.0f * x[i] + 1.0f;
}

// xlate: rowptr: in[rows + 1](0..nnz ascending), vals: in[nnz], y: out[rows], rows: size(1..500), nnz: size(1..2000), grid: cdiv(rows, 32), block: 32
__global__ void row_sums(const int* rowptr, const float* vals, float* y, int rows, int nnz) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float s = 0.0f;
    for (int j = rowptr[r]; j < rowptr[r + 1]; j++)
        s += vals[j] * vals[j];
    y[r] = s;
}

// xlate: part: in[n], out: out[1], n: size(1..5000), grid: 1, block: 128
__global__ void kept_rolled(const double* __restrict__ part, double* out, int n) {
    double acc = 0.0;
    #pragma unroll 1
    // the author's choice: one iteration at a time
    for (int k = threadIdx.x; k < n; k += 128)
        acc += exp(part[k]);
    #pragma unroll
    for (int k = threadIdx.x; k < n; k += 128)
        acc += sqrt(fabs(part[k]));
    atomicAdd(out, acc);
}

// xlate: x: in[256], out: out[1], grid: 1, block: 32
__global__ void fixed_count(const float* x, float* out) {
    float s = 0.0f;
    for (int k = threadIdx.x; k < 256; k += 32) s += x[k];
    if (threadIdx.x == 0) out[0] = s;
}
"""

KERNELS = ["one_block_total", "scaled_copy", "row_sums", "kept_rolled", "fixed_count"]
HINT = "loop_unroll_factor=4"


def hinted(text: str, kernel: str) -> int:
    return kernel_body(text, kernel).count(HINT)


def test_a_strided_sum_is_unrolled_and_its_total_is_right(tmp_path):
    t = port(SRC)
    assert t.kernels == KERNELS, [d.format() for d in t.diagnostics]
    body = kernel_body(t.text, "one_block_total")
    # the strided sum, not the tree reduction (its barriers and shared memory would be copied)
    assert hinted(t.text, "one_block_total") == 1 and re.search(r"in tl\.range\(0, n, 128, " + HINT, body), body
    for n, seed in ((5000, 1), (129, 2), (1, 3), (127, 4)):
        part = rng(seed).standard_normal(n)
        out = run(t.text, "one_block_total", [buf("part", part), buf("out", poisoned(1, np.float64)),
                                              ScalarArg("n", n, "int32")], tmp_path)
        np.testing.assert_allclose(out["out"], [part.astype(np.float64).sum()], rtol=1e-12, atol=1e-12)
        guards_intact(out, "out")


def test_a_per_thread_count_is_unrolled_and_each_row_is_right(tmp_path):
    t = port(SRC)
    assert hinted(t.text, "row_sums") == 1, kernel_body(t.text, "row_sums")
    rows = 333
    counts = rng(5).integers(0, 14, rows)
    counts[[0, 7]] = 0  # empty rows
    rowptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    nnz = int(rowptr[-1])
    vals = rng(6).standard_normal(nnz).astype(np.float32)
    out = run(t.text, "row_sums", [buf("rowptr", rowptr), buf("vals", vals), buf("y", poisoned(rows, np.float32)),
                                   ScalarArg("rows", rows, "int32"), ScalarArg("nnz", nnz, "int32")], tmp_path)
    want = [float((vals[rowptr[r]:rowptr[r + 1]].astype(np.float64) ** 2).sum()) for r in range(rows)]
    np.testing.assert_allclose(out["y"], want, rtol=1e-5, atol=1e-6)
    guards_intact(out, "y")


def test_loops_that_store_or_have_a_compile_time_count_stay_rolled(tmp_path):
    t = port(SRC)
    # a store may write what a later iteration loads: the loads cannot move above it
    assert hinted(t.text, "scaled_copy") == 0 and "in range(" in kernel_body(t.text, "scaled_copy")
    # eight iterations known when the kernel compiles: LLVM unrolls them itself
    assert hinted(t.text, "fixed_count") == 0
    n = 1001
    x = rng(7).standard_normal(n).astype(np.float32)
    out = run(t.text, "scaled_copy", [buf("x", x), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32")],
              tmp_path)
    np.testing.assert_allclose(out["y"], 2.0 * x.astype(np.float64) + 1.0, rtol=1e-6)
    guards_intact(out, "y")


def test_a_loop_its_author_kept_rolled_stays_rolled(tmp_path):
    """`#pragma unroll 1` (a comment between) keeps the first loop rolled, as nvcc does; the second, whose math
    goes through the port's libdevice wrappers (defined one way for the interpreter, another for the GPU), is
    unrolled. Both sums right."""
    t = port(SRC)
    body = kernel_body(t.text, "kept_rolled")
    assert hinted(t.text, "kept_rolled") == 1, body
    first, second = re.findall(r"for \w+ in (.*):", body)
    assert first.startswith("range(") and HINT in second, body
    n = 1003
    part = rng(8).standard_normal(n)
    out = run(t.text, "kept_rolled", [buf("part", part), buf("out", np.zeros(1)), ScalarArg("n", n, "int32")],
              tmp_path)
    np.testing.assert_allclose(out["out"], [np.exp(part).sum() + np.sqrt(np.abs(part)).sum()], rtol=1e-12)


def test_rolled_lines_follow_the_pragmas_that_keep_a_loop_rolled():
    src = "#pragma unroll 1\nfor (;;) {}\n#pragma unroll (1)\n\n// why\nfor (;;) {}\n#pragma unroll 4\nfor (;;) {}\n" \
          "  # pragma nounroll\n  while (1) {}\n#pragma unroll 16\nfor (;;) {}\n"
    assert rolled_lines(src) == {2, 6, 10}


MODULE = '''
import triton
import triton.language as tl


@triton.jit
def _private(v):
    return v * 2.0


@triton.jit
def _writes(p, v):
    tl.store(p, v)
    return v


@triton.jit
def _k(x, n, BX: tl.constexpr):
    lane = tl.arange(0, BX)
    s = tl.zeros([BX], tl.float32)
    for a in range(0, n, BX):
        s += _private(tl.load(x + a + lane, mask=a + lane < n, other=0))
    for b in range(0, n, BX):
        s += _writes(x, tl.load(x + b + lane, mask=b + lane < n, other=0))
    for c in range(0, n, BX):
        s += tl.load(x + c + lane, mask=c + lane < n, other=0, volatile=True)
    for d in range(0, n, BX):
        s += tl.sum(tl.load(x + d + lane, mask=d + lane < n, other=0), 0)
    for e in range(0, n, BX):
        if n > 3:
            s += tl.load(x + e + lane, mask=e + lane < n, other=0)
    for f in range(0, n, BX):
        s += f
    for g in range(0, BX, 4):
        s += tl.load(x + g + lane)
    for h in range(0, n, BX):
        for i in range(0, n, BX):
            s += tl.load(x + i + lane, mask=i + lane < n, other=0)
    for j in range(0, n, BX):
        s += len(tl.load(x + j + lane, mask=j + lane < n, other=0))
'''


def test_only_thread_private_loads_with_a_run_time_count_are_marked():
    out = unroll_loops(MODULE)
    marked = re.findall(r"for (\w+) in tl\.range\(0, n, BX, loop_unroll_factor=4\):", out)
    # a: a jit helper that only computes; i: the inner loop of h (h itself holds a loop). Not: b (its helper
    # stores), c (volatile: a poll of other threads' stores), d (a block reduction), e (a branch), f (no load),
    # g (a count fixed at compile time), j (a call of something not tl's nor the module's jit functions)
    assert marked == ["a", "i"], out
    assert unroll_loops(out) == out  # once marked, a loop is no `range` loop: applying twice changes nothing
    long_body = MODULE.replace("        s += _private(", "        s += 1.0\n" * 40 + "        s += _private(")
    assert "for a in range(0, n, BX):" in unroll_loops(long_body)  # a body past max_statements stays rolled


COMPILE = r'''
import importlib.util, json, os, re, subprocess, sys, tempfile
import triton, triton.backends.nvidia
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
spec = importlib.util.spec_from_file_location("port", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
fn = m._one_block_total_kernel
signature = {"part": "*fp64", "out": "*fp64", "n": "i32", "BX": "constexpr"}
constexprs = {"BX": 128}
if "_xl_stages" in fn.arg_names:  # a pipelined launch configuration's knob: argv[2] stages, "-" for the default
    signature["_xl_stages"] = "constexpr"
    constexprs["_xl_stages"] = None if sys.argv[2] == "-" else int(sys.argv[2])
ck = triton.compile(ASTSource(fn=fn, signature=signature, constexprs=constexprs,
                    attrs={(0,): [["tt.divisibility", 16]]}), target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
cp_async = ck.asm["ptx"].count("cp.async.")
nvdisasm = os.path.join(os.path.dirname(triton.backends.nvidia.__file__), "bin", "nvdisasm")
with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
    f.write(ck.asm["cubin"])
    f.flush()
    sass = subprocess.run([nvdisasm, "-c", f.name], capture_output=True, text=True, check=True).stdout
# the loads of each basic block: the loop's body is the block with the most
blocks = re.split(r"^\.L_x_\d+:", sass, flags=re.M)
print(cp_async, max(len(re.findall(r"\bLDG\b", b)) for b in blocks))
'''


def sm90_loads(text: str, tmp_path, name: str, stages: int | None = None) -> tuple[int, int]:
    """(cp.async instructions in the PTX, the most global loads of one basic block in the machine code) of the
    port's one_block_total kernel built for sm_90 at `stages` (None: the default launch)."""
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    done = subprocess.run([sys.executable, "-c", COMPILE, str(path), "-" if stages is None else str(stages)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]  # a port Triton's compiler refuses is a failure, not a skip
    cp_async, loads = done.stdout.split()[-2:]
    return int(cp_async), int(loads)


def loads_in_flight(text: str, tmp_path, name: str) -> int:
    return sm90_loads(text, tmp_path, name)[1]


def test_the_machine_code_keeps_as_many_loads_in_flight_as_nvcc(tmp_path):
    """sm_90 machine code from Triton's bundled ptxas (no GPU): the unrolled loop's body issues 16 loads before
    it adds (nvcc's count for this loop), the rolled one 4."""
    pytest.importorskip("triton.backends.nvidia")
    t = port(SRC)
    rolled = re.sub(r"tl\.range\(0, n, 128, " + HINT + r"[^)]*\)", "range(0, n, 128)", t.text)
    assert rolled != t.text
    assert loads_in_flight(t.text, tmp_path, "unrolled") >= 16
    assert loads_in_flight(rolled, tmp_path, "rolled") <= 4


def test_a_pipelined_configuration_pipelines_the_unrolled_loop_and_the_default_does_not(tmp_path):
    """The pipelined launch configuration (launch_configs.yaml's pipelined_stages) sets the kernel's `_xl_stages`:
    Triton then copies the loop's loads ahead through shared memory (cp.async in the PTX); the default launch
    (None) builds exactly the loop without it."""
    pytest.importorskip("triton.backends.nvidia")
    t = port(SRC)
    configs = declared(t.text)["one_block_total"]
    assert {"blocks": 1, "num_warps": 4, "stages": 3} in configs and "stages" not in configs[0]
    assert "_xl_stages=_xl_c.get('stages')" in t.text
    assert sm90_loads(t.text, tmp_path, "default")[0] == 0
    assert sm90_loads(t.text, tmp_path, "pipelined", 3)[0] > 0
    # a kernel whose loops all store stays without the knob (nothing to pipeline)
    assert "_xl_stages" not in kernel_body(t.text, "scaled_copy") and "scaled_copy" not in (declared(t.text) or {})


def test_the_rules_are_data():
    from xlate.translate.triton.unroll import rules

    r = rules()
    assert r["factor"] == 4 and r["max_statements"] > 0 and {"store", "sum", "debug_barrier"} <= set(r["keeps_rolled"])
    assert textwrap.dedent(MODULE).count("for ") == unroll_loops(MODULE).count("for ")
