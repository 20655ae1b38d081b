"""Verdicts blame the right side, and the bugs of issue [infer]'s "Why" stay fixed: a source that cannot run on
its own is "could not verify" (exit 3), never "rejected"; a reference that raises is an input error naming it
(exit 2); destination-passing references work; NVRTC compiles what nvcc compiles (M_PI, INFINITY...); the
Triton map knows fma; no Python traceback reaches the user."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

GOOD = '''
import triton
import triton.language as tl


@triton.jit
def _double(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, 2.0 * tl.load(x_ptr + offs, mask=mask), mask=mask)


# xlate: x: in[n], y: out[n], n: size(1..300), grid: cdiv(n, 64), block: 64
def double(x, y, n):
    _double[(triton.cdiv(n, 64),)](x, y, n, BLOCK=64)
'''

# writes past the end of y: the mask is missing
OVERRUN = GOOD.replace("tl.store(y_ptr + offs, 2.0 * tl.load(x_ptr + offs, mask=mask), mask=mask)",
                       "tl.store(y_ptr + offs, 2.0 * tl.load(x_ptr + offs, mask=mask))")


def xlate(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "xlate.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=900, env={**__import__("os").environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"})


def write(folder: Path, name: str, text: str) -> Path:
    p = folder / name
    p.write_text(textwrap.dedent(text).lstrip())
    return p


@pytest.fixture()
def triton_ok():
    from xlate.backends.registry import get_backend

    if not get_backend("triton").detect().can_run:
        pytest.skip("no Triton here")


def test_a_source_that_faults_on_its_own_is_not_a_rejected_port(tmp_path, triton_ok):
    src = write(tmp_path, "src.py", OVERRUN)
    cand = write(tmp_path, "cand.py", GOOD)
    r = xlate("fuzz", str(src), str(cand), "--examples", "5", "--json", cwd=tmp_path)
    assert r.returncode == 3, r.stderr
    doc = json.loads(r.stdout)
    assert doc["status"] == "unverified" and doc["blame"] == "source"
    assert doc["reason"].startswith("the source writes out of bounds on its own under its spec")
    assert "could not verify double: the source writes out of bounds" in r.stderr and "Traceback" not in r.stderr
    # the same fault in the candidate is the candidate's
    r = xlate("fuzz", str(cand), str(src), "--examples", "5", "--json", cwd=tmp_path)
    doc = json.loads(r.stdout)
    assert r.returncode == 1 and doc["status"] == "rejected" and doc["blame"] == "candidate"
    assert doc["counterexample"]["failure"] == "out-of-bounds write"


def test_a_reference_that_raises_is_an_input_error_naming_it(tmp_path, triton_ok):
    cand = write(tmp_path, "cand.py", GOOD)
    write(tmp_path, "ref.py", """
        def broken(x, n):
            return {"y": x * (n // 0)}
        def wrong_name(x, y, m):
            y[:] = 2 * x
    """)
    r = xlate("fuzz", str(cand), "--reference", f"{tmp_path / 'ref.py'}:broken", "--examples", "3", cwd=tmp_path)
    assert r.returncode == 2
    assert "the reference ref.py:broken raised" in r.stderr and "Traceback" not in r.stderr
    r = xlate("fuzz", str(cand), "--reference", f"{tmp_path / 'ref.py'}:wrong_name", "--examples", "3", cwd=tmp_path)
    assert r.returncode == 2 and "takes m, which is not a parameter of 'double'" in r.stderr


def test_destination_passing_references_are_accepted_beside_return_style_ones(tmp_path, triton_ok):
    cand = write(tmp_path, "cand.py", GOOD)
    write(tmp_path, "ref.py", """
        def cuda_style(x, y, n):
            y[:n] = 2.0 * x[:n]

        def return_style(x, n):
            return 2.0 * x
    """)
    for fn in ("cuda_style", "return_style"):
        r = xlate("fuzz", str(cand), "--reference", f"{tmp_path / 'ref.py'}:{fn}", "--examples", "6", cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        assert f"oracle reference:ref.py:{fn}" in r.stderr


def test_a_spec_problem_is_a_message_not_a_traceback(tmp_path, triton_ok):
    bad = write(tmp_path, "bad.py", GOOD.replace("n: size(1..300)", "n: size(1..300), where: n / 0 > 1"))
    r = xlate("fuzz", str(bad), "--reference", f"{tmp_path / 'ref.py'}:f", "--examples", "3", cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr


NVCC_ENVIRONMENT = r"""
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cfloat>
#include <climits>
#include <cassert>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
__global__ void uses_everything(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = (float)M_PI + INFINITY + (float)NAN + FLT_MAX + (float)INT_MAX + FLT_EPSILON + (float)M_SQRT2;
  int32_t a = 3; uint64_t b = 4; int64_t c = 5;
  __half h = __float2half(1.0f); __nv_bfloat16 bf = __float2bfloat16(2.0f);
  v += __half2float(h) + __bfloat162float(bf) + a + b + c + std::sqrt(v) + std::max(1.0f, v) + fmaf(v, 2.0f, 1.0f);
  v += std::numeric_limits<float>::max() + (isnan(v) ? 1 : 0);
  if (i == 0) printf("%f\n", v);
  assert(n > 0);
  out[i] = v;
}
"""


def test_nvrtc_compiles_what_nvcc_compiles():
    # the [infer] report: the source did not compile under NVRTC (M_PI, INFINITY undefined) and was "rejected"
    from xlate.backends import nvrtc

    if nvrtc.nvrtc_version() is None:
        pytest.skip("NVRTC is not installed")
    for text in (NVCC_ENVIRONMENT, "\n".join(line for line in NVCC_ENVIRONMENT.splitlines() if not line.startswith(
            ("#include <c", "#include <cuda_")) or "fp16" in line or "bf16" in line)):
        out = nvrtc.compile_nvrtc(text, name="env.cu", arch="sm_90", name_expressions=["uses_everything"],
                                  options=nvrtc.include_options()[-1:])
        assert out.ok, out.log


FMA_KERNEL = """
// xlate: a: in[n](-2..2), b: in[n](0.5..3), out: out[n], n: size(1..200), grid: cdiv(n, 64), block: 64
__global__ void fused(const float* a, const float* b, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = fmaf(a[i], b[i], 1.0f) + (float)fma((double)a[i], 2.0, 0.5) + std::sqrt(b[i]) + hypotf(a[i], b[i]);
}
"""


def test_the_triton_map_knows_fma_and_the_math_library(tmp_path, triton_ok):
    src = write(tmp_path, "fused.cu", FMA_KERNEL)
    write(tmp_path, "ref.py", """
        import numpy as np
        def fused(a, b, out, n):
            out[:] = a * b + 1.0 + (a * 2.0 + 0.5) + np.sqrt(b) + np.hypot(a, b)
    """)
    out = tmp_path / "fused_triton.py"
    r = xlate("port", str(src), "--to", "triton", "-o", str(out), "--no-verify", cwd=tmp_path)
    assert r.returncode == 3 and out.exists(), r.stderr  # written, and said to be unverified (--no-verify)
    text = out.read_text()
    assert "tl.fma(" in text and "_xl_hypotf" in text
    r = xlate("fuzz", str(out), "--reference", f"{tmp_path / 'ref.py'}:fused", "--examples", "8", cwd=tmp_path)
    assert r.returncode == 0, r.stderr


def test_a_source_compile_error_is_reported_by_its_first_error_not_a_warning_before_it():
    from xlate.verdict import Counterexample, Verdict
    from xlate.verify.api import blame_source

    log = ("main.cu(59): warning #1444-D: class \"double4\" was declared deprecated\n\n"
           "main.cu(80): error: identifier \"TILE\" is undefined\n")
    v = blame_source(Verdict("unverified", "k", spec={"source": "inferred"}),
                     Counterexample("compile error", "k", {}, {}, {}, 0, {}, side="source", message=log), "main.cu", "k")
    assert v.blame == "source" and v.reason.endswith('main.cu(80): error: identifier "TILE" is undefined')


def test_a_port_in_memory_finds_kernels_qualified_by_its_sources_header_macro(tmp_path):
    # `GLOBAL void k(...)` with `#define GLOBAL __global__` in the source's header: the port, held in memory with
    # no folder of its own, is read with its source's include context; otherwise it had no kernel at all and the
    # gate "rejected" it ("no kernel named ... (kernels: none)", frna on the H200)
    from xlate.verify.runner import Side

    (tmp_path / "qual.h").write_text("#ifdef __CUDACC__\n#define GLOBAL __global__\n#else\n#define GLOBAL\n#endif\n")
    body = '#include "qual.h"\nGLOBAL static void bump(float* x, int n) { int i = threadIdx.x; if (i < n) x[i] += 1.0f; }\n'
    src = tmp_path / "main.cu"
    src.write_text(body)
    port = "#include <hip/hip_runtime.h>\n" + body
    side = Side("<candidate>", "bump", text=port, language="hip", include_dirs=[str(tmp_path)], context_path=str(src))
    assert side.has_kernel()
    alone = Side("<candidate>", "bump", text=port, language="hip")
    assert not alone.has_kernel()  # what the port's text alone shows: the context is what finds it


def test_a_case_larger_than_the_interpreter_fuzzes_is_could_not_verify_with_the_reason(tmp_path, triton_ok):
    """A spec whose smallest case holds 200 M numbers (a kernel built for one large size): on the CPU interpreter
    that is "could not verify" with the size and "run it on a GPU" (exit 3), not a Hypothesis error."""
    big = write(tmp_path, "big.py", GOOD.replace("x: in[n], y: out[n], n: size(1..300), grid: cdiv(n, 64)",
                                                 "x: in[n], y: out[n], n: const(100000000), grid: cdiv(n, 64)"))
    write(tmp_path, "ref.py", """
        def f(x, n):
            return {"y": 2.0 * x}
    """)
    r = xlate("fuzz", str(big), "--reference", f"{tmp_path / 'ref.py'}:f", "--examples", "3", "--json", cwd=tmp_path)
    assert r.returncode == 3, r.stderr
    doc = json.loads(r.stdout)
    assert doc["status"] == "unverified" and "Traceback" not in r.stderr
    assert "smallest case holds 200000000 numbers" in doc["reason"] and "run it on a GPU" in doc["reason"]


def test_a_kernel_that_writes_no_buffer_is_could_not_verify_not_verified(tmp_path, triton_ok):
    """A spec with no out or inout buffer (a kernel that only prints): nothing is compared, so the verdict is
    "could not verify" (exit 3); it read "verified" of nothing."""
    quiet = write(tmp_path, "quiet.py", GOOD.replace("x: in[n], y: out[n], n: size(1..300)",
                                                     "x: in[n], y: in[n], n: size(1..300)"))
    write(tmp_path, "ref.py", """
        def f(x, y, n):
            return {}
    """)
    r = xlate("fuzz", str(quiet), "--reference", f"{tmp_path / 'ref.py'}:f", "--examples", "3", "--json", cwd=tmp_path)
    assert r.returncode == 3, r.stderr
    doc = json.loads(r.stdout)
    assert doc["status"] == "unverified" and "nothing to compare" in doc["reason"] and "Traceback" not in r.stderr
