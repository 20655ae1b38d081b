"""Module globals in CUDA -> Triton ports: a `__device__`/`__constant__`/`__managed__` variable the spec lists
(`counter: global inout[10]`) becomes a pointer parameter of the @triton.jit kernel and a keyword-only argument
of the launcher, named after the variable (a scalar variable is a one-element tensor). The Triton backend passes
the gate's module-variable buffers (BufferArg.symbol) as those keywords and reads them back after the launch.

Every port here runs through the gate's runner (Side.run_case: poisoned outputs, two runs) under the Triton
interpreter, with the spec inferred from the CUDA source, against NumPy; sizes are not multiples of the block.
Every kernel was written for these tests."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from xlate.parse import parse_string
from xlate.specs import build_spec
from xlate.translate.base import TranslateOptions
from xlate.translate.triton.translator import CudaToTriton
from xlate.verify.cases import Case, environment, make_inputs

SOURCE = """
#define NB 10
__device__ int counter[NB];
__device__ unsigned int hits;
__constant__ float coef[8];
__device__ float best;

__global__ void tally(const unsigned int* keys, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    atomicAdd(&counter[keys[i] % NB], 1);
    if (keys[i] & 1u) atomicAdd(&hits, 1u);
  }
}

__device__ float weight(int k) { return coef[k & 7]; }

__global__ void scale(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * weight(i);
}

__global__ void pick(const float* x, int n) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    float m = x[0];
    for (int k = 1; k < n; k++) m = fmaxf(m, x[k]);
    best = m;
  }
}

int main() {
  int n = 1000;
  unsigned int* keys;
  float *x, *y;
  float h[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  cudaMalloc(&keys, n * sizeof(unsigned int));
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&y, n * sizeof(float));
  cudaMemcpyToSymbol(coef, h, sizeof(h));
  tally<<<(n + 127) / 128, 128>>>(keys, n);
  scale<<<(n + 127) / 128, 128>>>(x, y, n);
  pick<<<1, 32>>>(x, n);
  return 0;
}
"""


def write(tmp_path: Path, text: str, name: str = "g.cu") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def ported(path: Path, *kernels: str):
    unit = parse_string(path.read_text(), str(path), "cuda")
    t = CudaToTriton().translate(unit, unit.text, TranslateOptions(kernels=list(kernels)))
    assert t.kernels == list(kernels), [d.format() for d in t.diagnostics]
    return unit, t


def gate_run(path: Path, kernel: str, n: int, seed: int = 5):
    """The port of `kernel` run by the gate's runner on one case of the CUDA source's spec: (inputs, run)."""
    from xlate.verify.runner import Side

    unit, t = ported(path, kernel)
    spec = build_spec(unit, kernel)
    side = Side(str(path.with_suffix(".py")), kernel, text=t.text, language="triton", context_path=str(path))
    case = Case({"n": n}, {}, {}, {}, seed)
    inputs = make_inputs(spec, case, environment(spec, case))
    run = side.run_case(spec, case, inputs)
    assert run.failure is None, run.failure
    return spec, inputs, run, t


def keyword_only(text: str, name: str) -> list[str]:
    from xlate.backends.triton import launcher_parameters

    return launcher_parameters(text, name)["keyword_only"]


def test_a_device_array_updated_with_atomics(tmp_path):
    path = write(tmp_path, SOURCE)
    spec, inputs, run, t = gate_run(path, "tally", 300)
    assert {p.name: p.role for p in spec.module_globals} == {"counter": "inout", "hits": "inout"}
    keys = inputs["keys"].astype(np.uint64)
    want = inputs["counter"] + np.bincount(keys % 10, minlength=10).astype(np.int32)
    assert np.array_equal(run.buffers["counter"].values, want)
    odd = np.uint32(np.count_nonzero(keys & 1))
    assert run.buffers["hits"].values.tolist() == [inputs["hits"][0] + odd]
    # keyword-only parameters of the launcher, named after the variables; pointers of the jit kernel
    assert keyword_only(t.text, "tally") == ["counter", "hits"]
    assert "def _tally_kernel(keys, n, counter, hits," in t.text
    assert "counter: global inout[10] as int32" in t.text and "hits: global inout[1] as uint32" in t.text


def test_a_constant_table_set_by_the_host_and_read_in_a_device_function(tmp_path):
    path = write(tmp_path, SOURCE)
    spec, inputs, run, t = gate_run(path, "scale", 301)
    coef = spec.param("coef")
    assert coef is not None and coef.module_global and coef.role == "in"
    i = np.arange(301)
    want = inputs["x"] * inputs["coef"][i & 7]
    np.testing.assert_allclose(run.buffers["y"].values, want, rtol=1e-6)
    assert run.buffers["y"].written.all()
    assert "coef" not in run.buffers  # an input: the runner checked it unchanged, nothing to compare
    assert "global in[8] as float32" in t.text
    # a launch-configuration timing saves and restores every tensor, the keyword-only variables too
    assert "_xl_launch('scale', _xl_run, grid, (x, y, n, coef))" in t.text


def test_a_scalar_written_by_one_thread(tmp_path):
    path = write(tmp_path, SOURCE)
    spec, inputs, run, _ = gate_run(path, "pick", 203)
    assert spec.param("best").role == "out"
    assert run.buffers["best"].written.all()
    assert run.buffers["best"].values.tolist() == [np.float32(inputs["x"].max())]


def test_the_gate_verifies_a_port_with_module_globals_against_a_reference(tmp_path):
    """verify(): the Triton side is let through require_globals; the CUDA source cannot run here, so the
    port is judged against a NumPy reference that takes the variables by name."""
    from xlate.backends.registry import get_backend

    from xlate.verify.api import verify

    path = write(tmp_path, SOURCE)
    _, t = ported(path, "scale")
    port = tmp_path / "g_scale.py"
    port.write_text(t.text)
    ref = tmp_path / "ref.py"
    ref.write_text("import numpy as np\n\ndef scale(x, coef, n):\n    return {'y': x * coef[np.arange(n) & 7]}\n")
    verdict = verify(str(path), str(port), kernel="scale", reference=f"{ref}:scale", examples=4)
    if get_backend("cuda").detect().can_run:
        pytest.skip("a GPU is here: the source runs (tests/test_module_globals_gpu.py covers that side)")
    assert verdict.status == "verified", verdict.to_dict()


def test_an_initialised_constant_table_stays_baked_in(tmp_path):
    path = write(tmp_path, """
    __constant__ float taps[3] = {0.25f, 0.5f, 0.25f};
    __device__ int seen;
    __global__ void smooth(const float* x, float* y, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i > 0 && i < n - 1) {
        float s = 0.0f;
        for (int k = 0; k < 3; k++) s += taps[k] * x[i + k - 1];
        y[i] = s;
        if (i == 1) seen = n;
      }
    }
    int main() { int n = 500; float *x, *y; cudaMalloc(&x, n * 4); cudaMalloc(&y, n * 4); smooth<<<(n + 63) / 64, 64>>>(x, y, n); }
    """)
    spec, inputs, run, t = gate_run(path, "smooth", 131)
    assert [p.name for p in spec.module_globals] == ["seen"]
    assert "def smooth(x, y, n, *, seen):" in t.text  # the table is no parameter: its values are in the port
    x = inputs["x"].astype(np.float64)
    want = 0.25 * x[:-2] + 0.5 * x[1:-1] + 0.25 * x[2:]
    np.testing.assert_allclose(run.buffers["y"].values[1:-1], want, rtol=1e-6)
    assert run.buffers["seen"].values.tolist() == [131]


def test_locals_shadow_module_variables_in_kernels_and_device_functions(tmp_path):
    path = write(tmp_path, """
    __device__ float level[4];
    __device__ float bump(float level) { return level + 1.0f; }   // the parameter, not the variable
    // xlate: level: global in[4]
    __global__ void lift(const float* x, float* y, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) {
        y[i] = bump(x[i]) + level[i & 3];
        if (i < 4) { float level = 2.0f; y[i] += level; }
      }
    }
    int main() { int n = 100; float *x, *y; cudaMalloc(&x, n * 4); cudaMalloc(&y, n * 4); lift<<<(n + 31) / 32, 32>>>(x, y, n); }
    """)
    _, inputs, run, _ = gate_run(path, "lift", 70)
    i = np.arange(70)
    want = inputs["x"] + 1.0 + inputs["level"][i & 3] + np.where(i < 4, 2.0, 0.0)
    np.testing.assert_allclose(run.buffers["y"].values, want.astype(np.float32), rtol=1e-6)


def test_a_scalar_s_address_handed_to_a_device_function_and_a_namespaced_counter(tmp_path):
    # `&total` where the callee indexes its pointer (not only `*dst`): the variable's buffer, element blockIdx.x
    path = write(tmp_path, """
    namespace stats { __device__ int hits; }
    __device__ float partial[4];
    __device__ float total;
    __device__ void sum_into(const float* src, float* dst, int k) { dst[blockIdx.x] = src[0] + src[k]; }
    // xlate: hits: global inout[1]
    __global__ void fold(const float* x, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n && x[i] > 0.0f) atomicAdd(&stats::hits, 1);
      if (i == 0) sum_into(partial, &total, 3);
    }
    int main() { int n = 100; float* x; cudaMalloc(&x, n * 4); fold<<<1, 128>>>(x, n); }
    """)
    _, inputs, run, _ = gate_run(path, "fold", 97)
    assert run.buffers["total"].values.tolist() == [np.float32(inputs["partial"][0] + inputs["partial"][3])]
    assert run.buffers["hits"].values.tolist() == [inputs["hits"][0] + np.count_nonzero(inputs["x"][:97] > 0)]


@pytest.mark.parametrize("decl, use, why", [
    ("float table2[4][8]", "table2[1][threadIdx.x] += 1.0f", "module variable 'table2' is an array of 2 dimensions"),
    ("int lane_x", "atomicAdd(&lane_x, 1)", "module variable 'lane_x' cannot be a keyword of the port's launcher"),
    ("int type", "atomicAdd(&type, 1)", "module variable 'type' cannot be a keyword of the port's launcher"),
])
def test_unsupported_module_variables_are_refused_with_a_diagnostic(tmp_path, decl, use, why):
    name = decl.split()[1].split("[")[0]
    path = write(tmp_path, f"""
    __device__ {decl};
    // xlate: {name}: global inout[{32 if "[" in decl else 1}], grid: 1, block: 8
    __global__ void k() {{ {use}; }}
    """)
    unit = parse_string(path.read_text(), str(path), "cuda")
    t = CudaToTriton().translate(unit, unit.text, TranslateOptions())
    assert t.kernels == [] and t.needs_llm == ["k"]
    assert any(why in d.message for d in t.diagnostics), [d.message for d in t.diagnostics]


# -- the role of a module variable holds for the port ------------------------------------------------------------

HAND_PORT = '''
import triton
import triton.language as tl


@triton.jit
def _scale(x, y, n, coef, BAD: tl.constexpr):
    i = tl.program_id(0) * 128 + tl.arange(0, 128)
    c = tl.load(coef + (i & 7), mask=i < n)
    tl.store(y + i, tl.load(x + i, mask=i < n) * c, mask=i < n)
    if BAD:
        tl.store(coef + (i & 7), c * 2, mask=i < 8)


def scale(x, y, n, *, coef):
    _scale[(triton.cdiv(n, 128),)](x, y, n, coef, BAD={bad})
'''


@pytest.mark.parametrize("bad", [False, True])
def test_a_port_writing_an_input_variable_is_caught(tmp_path, bad):
    from xlate.verify.runner import Side

    path = write(tmp_path, SOURCE)
    unit = parse_string(path.read_text(), str(path), "cuda")
    spec = build_spec(unit, "scale")
    side = Side(str(tmp_path / "hand.py"), "scale", text=HAND_PORT.format(bad=bad), language="triton")
    case = Case({"n": 100}, {}, {}, {}, 1)
    run = side.run_case(spec, case, make_inputs(spec, case, environment(spec, case)))
    if bad:
        assert run.failure is not None and run.failure.failure == "input modified" and run.failure.buffer == "coef"
    else:
        assert run.failure is None, run.failure


def test_a_port_leaving_an_output_variable_unwritten_is_seen(tmp_path):
    from xlate.verify.runner import Side

    path = write(tmp_path, SOURCE)
    spec = build_spec(parse_string(path.read_text(), str(path), "cuda"), "pick")
    lazy = ("import triton\n\n\n@triton.jit\ndef _pick(x, n, best):\n    pass\n\n\n"
            "def pick(x, n, *, best):\n    _pick[(1,)](x, n, best)\n")
    side = Side(str(tmp_path / "lazy.py"), "pick", text=lazy, language="triton")
    case = Case({"n": 50}, {}, {}, {}, 1)
    run = side.run_case(spec, case, make_inputs(spec, case, environment(spec, case)))
    assert run.failure is None and not run.buffers["best"].written.any()


# -- refusal: a port that does not take a variable the spec lists ------------------------------------------------


def test_a_port_without_the_keyword_is_never_verified(tmp_path):
    """The gate refuses before anything runs: could not verify, naming the variable; no traceback."""
    from xlate.verify.api import verify

    path = write(tmp_path, SOURCE)
    port = tmp_path / "old_scale.py"
    port.write_text(textwrap.dedent('''
        import triton
        import triton.language as tl

        @triton.jit
        def _scale(x, y, n):
            i = tl.program_id(0) * 128 + tl.arange(0, 128)
            tl.store(y + i, tl.load(x + i, mask=i < n), mask=i < n)

        def scale(x, y, n):
            _scale[(triton.cdiv(n, 128),)](x, y, n)
    ''').lstrip())
    ref = tmp_path / "ref.py"
    ref.write_text("import numpy as np\n\ndef scale(x, coef, n):\n    return {'y': x * coef[np.arange(n) & 7]}\n")
    verdict = verify(str(path), str(port), kernel="scale", reference=f"{ref}:scale", examples=3)
    assert verdict.status == "unverified", verdict.to_dict()
    assert (verdict.reason or "").startswith("could not verify: the triton port does not accept the module globals coef")
    assert "Traceback" not in (verdict.reason or "")


def test_a_launcher_taking_the_variable_by_position_only_is_refused():
    """`def k(x, coef, n)` with the gate passing x and n by position: coef cannot also come by keyword."""
    from xlate.backends.base import Artifact, BufferArg, LaunchConfig, ScalarArg
    from xlate.backends.triton import TritonBackend, launcher_parameters

    from xlate.errors import ToolchainMissing

    meta = {"launcher": launcher_parameters("def k(x, coef, n):\n    pass\n", "k")}
    args = [BufferArg("x", np.zeros(4, np.float32), 0, 4), ScalarArg("n", 4, "int32"),
            BufferArg("coef", np.zeros(8, np.float32), 0, 8, symbol="coef")]
    with pytest.raises(ToolchainMissing, match="does not accept the module globals coef"):
        TritonBackend().run(Artifact("triton", "k", "x", "", "k", meta=meta), args, LaunchConfig())
