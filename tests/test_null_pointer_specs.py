"""Pointer parameters the program always passes as the null pointer: the spec's `bias: null` item.

A kernel with an optional buffer tests it (`if (bias != nullptr)`); a program that never has one passes `nullptr`,
`NULL`, `0` or a local left null. The spec language says so (`bias: null`), inference reads it from the launches, the
gate passes an 8-byte zero to CUDA and HIP and None to a Triton launcher, a NumPy reference receives None, and the
Triton lifter folds the kernel's null tests. Every kernel and program here was written for these tests; sizes are
not multiples of the block."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from xlate.errors import SpecError
from xlate.parse import parse_string
from xlate.specs import build_spec, resolve_spec
from xlate.specs.language import param_item, spec_items

# y = 2x (+ bias[column] when there is a bias), over n rows of c columns
KERNEL = """
__global__ void add_bias(const float* x, const float* bias, float* y, int n, int c) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n * c) {
    float v = x[i] * 2.0f;
    if (bias != nullptr) v += bias[i % c];
    y[i] = v;
  }
}
"""

PROGRAM = KERNEL + """
int main() {
  int n = 300, c = 7;
  float *x, *y;
  cudaMalloc(&x, n * c * sizeof(float));
  cudaMalloc(&y, n * c * sizeof(float));
  add_bias<<<(n * c + 127) / 128, 128>>>(x, ARG, y, n, c);
  return 0;
}
"""

WANT = ("x: in[c * n], bias: null, y: out[c * n], n: size(1..300), c: size(1..7), grid: cdiv(c * n, 128), "
        "block: 128")


def write(tmp_path: Path, text: str, name: str = "main.cu") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def resolve(tmp_path: Path, text: str, kernel: str = "add_bias"):
    path = write(tmp_path, text)
    return resolve_spec(parse_string(path.read_text(), str(path), "cuda"), kernel)


def annotated(tmp_path: Path, items: str, kernel: str = KERNEL, name: str = "k.cu") -> tuple[Path, object]:
    path = write(tmp_path, f"// xlate: {items}\n" + textwrap.dedent(kernel).lstrip(), name)
    unit = parse_string(path.read_text(), str(path), "cuda")
    return path, unit


# -- the spec language ------------------------------------------------------------------------------------------


def test_a_null_item_reads_and_writes_back(tmp_path):
    items = "x: in[n, c], bias: null, y: out[n, c], n: size(1..999), c: size(1..9), grid: cdiv(n * c, 128), block: 128"
    _, unit = annotated(tmp_path, items)
    spec = build_spec(unit, "add_bias")
    bias = spec.param("bias")
    assert bias is not None and bias.role == "null" and bias.is_null and not bias.is_buffer
    assert (bias.position, bias.ctype, bias.dims) == (1, "float", [])
    assert [p.name for p in spec.nulls] == ["bias"] and "bias" not in [p.name for p in spec.buffers + spec.scalars]
    assert param_item(bias) == "bias: null"
    written = ", ".join(text for _, text in spec_items(spec))
    assert written == items
    _, again = annotated(tmp_path, written, name="k2.cu")  # what `xlate spec --write` saves reads back the same
    assert build_spec(again, "add_bias").params == spec.params


@pytest.mark.parametrize(("items", "message"), [
    ("n: null", "'n' is annotated as null but is not a pointer (int)"),
    ("bias: null as {a: float32}", "'bias' is annotated as null but is not a pointer"),
    ("bias: nul", "or null)"),
])
def test_a_null_item_that_cannot_be_is_refused(tmp_path, items, message):
    full = "x: in[n * c], bias: in[c], y: out[n * c], n: size(1..9), c: size(1..9), grid: 1, block: 64, " + items
    _, unit = annotated(tmp_path, ", ".join(dict((i.split(":")[0], i) for i in full.split(", ")).values()))
    with pytest.raises(SpecError, match=message.replace("(", r"\(").replace(")", r"\)")):
        build_spec(unit, "add_bias")


def test_the_gate_passes_a_zero_pointer(tmp_path):
    from xlate.backends.base import NULL_POINTER
    from xlate.backends.cupy_runtime import _scalar
    from xlate.backends.hip import _ctype

    from xlate.verify.cases import Case, environment, scalar_arg

    _, unit = annotated(tmp_path, "x: in[n * c], bias: null, y: out[n * c], n: size(1..9), c: size(1..9), "
                                  "grid: cdiv(n * c, 64), block: 64")
    spec = build_spec(unit, "add_bias")
    case = Case({"n": 5, "c": 3}, {}, {}, {}, 1)
    arg = scalar_arg(spec.param("bias"), case, environment(spec, case), spec)
    assert (arg.name, arg.value, arg.dtype) == ("bias", 0, NULL_POINTER)
    cuda = _scalar(arg.value, arg.dtype)  # CuPy passes a NumPy scalar by its bytes: a pointer's 8, all zero
    assert cuda.dtype.itemsize == 8 and int(cuda) == 0
    assert _ctype(arg.value, arg.dtype).value is None  # HIP's kernel argument: a void* holding NULL


# -- inference ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("arg", ["nullptr", "NULL", "0", "(const float*)0", "static_cast<const float*>(nullptr)"])
def test_a_null_literal_at_the_launch_is_null(tmp_path, arg):
    res = resolve(tmp_path, PROGRAM.replace("ARG", arg))
    assert res.complete, res.holes
    assert res.annotation() == WANT
    origin = res.items["bias"][1]
    assert (origin.kind, origin.where) == ("host", "main.cu:15")
    assert origin.detail == f"{arg}: a null pointer at every launch"


def test_a_local_left_null_is_null(tmp_path):
    text = PROGRAM.replace("  float *x, *y;", "  float *x, *y;\n  const float* none = nullptr;").replace("ARG", "none")
    res = resolve(tmp_path, text)
    assert res.annotation() == WANT
    assert res.items["bias"][1].detail == "none: a null pointer at every launch"


def test_a_local_pointed_at_a_buffer_later_is_that_buffer(tmp_path):
    text = PROGRAM.replace("  float *x, *y;", "  float *x, *y, *b;\n  const float* bias = nullptr;").replace(
        "  add_bias<<<", "  cudaMalloc(&b, c * sizeof(float));\n  bias = b;\n  add_bias<<<").replace("ARG", "bias")
    res = resolve(tmp_path, text)
    assert res.annotation() == WANT.replace("bias: null", "bias: in[c]")
    assert res.items["bias"][1].detail == "cudaMalloc(&b, c * sizeof(float))"


@pytest.mark.parametrize("setter", [
    "make_buffer(&bias, c);",  # a function the inference cannot follow gets its address
    "bias = pick_buffer(c);",  # or returns what it points at
], ids=["address-handed-out", "assigned-from-a-call"])
def test_a_local_set_where_inference_cannot_see_is_not_null(tmp_path, setter):
    text = PROGRAM.replace("  float *x, *y;", "  float *x, *y;\n  const float* bias = nullptr;").replace(
        "  add_bias<<<", f"  {setter}\n  add_bias<<<").replace("ARG", "bias")
    res = resolve(tmp_path, text)
    assert "bias: null" not in res.annotation()
    item = res.items.get("bias")
    assert item is None or item[0].startswith("bias: in["), item  # the kernel's reach, or a hole: never null


def test_a_launcher_handed_nullptr_by_its_caller(tmp_path):
    """The launch passes the launcher's own parameter; the caller (main) passes nullptr for it, at both calls."""
    res = resolve(tmp_path, KERNEL + """
    void run(const float* x, const float* b, float* y, int n, int c) {
      add_bias<<<(n * c + 127) / 128, 128>>>(x, b, y, n, c);
    }
    int main() {
      int n = 300, c = 7;
      float *x, *y;
      cudaMalloc(&x, n * c * sizeof(float));
      cudaMalloc(&y, n * c * sizeof(float));
      run(x, nullptr, y, n, c);
      run(x, NULL, y, n - 1, c);
      return 0;
    }
    """)
    assert res.annotation() == WANT
    origin = res.items["bias"][1]
    assert origin.detail == "b: a null pointer at every launch (and 1 other launch)"


def test_a_buffer_at_one_launch_wins_over_null_at_another(tmp_path):
    """The design choice: where some launches pass a buffer, the spec is that buffer (the case that runs more of
    the kernel), whichever launch comes first."""
    res = resolve(tmp_path, KERNEL + """
    int main() {
      int n = 300, c = 7;
      float *x, *y, *b;
      cudaMalloc(&x, n * c * sizeof(float));
      cudaMalloc(&y, n * c * sizeof(float));
      cudaMalloc(&b, c * sizeof(float));
      add_bias<<<(n * c + 127) / 128, 128>>>(x, nullptr, y, n, c);
      add_bias<<<(n * c + 127) / 128, 128>>>(x, b, y, n, c);
      return 0;
    }
    """)
    assert res.annotation() == WANT.replace("bias: null", "bias: in[c]")
    assert res.items["bias"][1].detail == "cudaMalloc(&b, c * sizeof(float))"


# -- the Triton lifter and the gate on the CPU (Triton interpreter) ----------------------------------------------

BODIES = {
    "ne-nullptr": "if (bias != nullptr) v += bias[i % c];",
    "if-pointer": "if (bias) v += bias[i % c];",
    "ternary": "v += bias ? bias[i % c] : 0.0f;",
    "null-on-the-left": "if (NULL != bias) v += bias[i % c];",
    "not-pointer": "if (!bias) v += 0.5f; else v += bias[i % c];",
}


def triton_port(path: Path, kernel: str = "add_bias"):
    from xlate.translate.base import TranslateOptions
    from xlate.translate.triton.translator import CudaToTriton

    unit = parse_string(path.read_text(), str(path), "cuda")
    return unit, CudaToTriton().translate(unit, unit.text, TranslateOptions(kernels=[kernel]))


def run_port(path: Path, n: int, c: int, seed: int = 7):
    from xlate.verify.cases import Case, environment, make_inputs
    from xlate.verify.runner import Side

    unit, t = triton_port(path)
    assert t.kernels == ["add_bias"], [d.format() for d in t.diagnostics]
    spec = build_spec(unit, "add_bias")
    side = Side(str(path.with_suffix(".py")), "add_bias", text=t.text, language="triton", context_path=str(path))
    case = Case({"n": n, "c": c}, {}, {}, {}, seed)
    inputs = make_inputs(spec, case, environment(spec, case))
    run = side.run_case(spec, case, inputs)
    assert run.failure is None, run.failure
    return spec, inputs, run, t.text


@pytest.mark.parametrize("body", list(BODIES), ids=list(BODIES))
def test_the_port_folds_the_null_test(tmp_path, body):
    source = PROGRAM.replace("ARG", "nullptr").replace("if (bias != nullptr) v += bias[i % c];", BODIES[body])
    spec, inputs, run, text = run_port(write(tmp_path, source), 37, 5)
    assert spec.param("bias").role == "null"
    want = inputs["x"] * 2 + (0.5 if body == "not-pointer" else 0.0)
    np.testing.assert_array_equal(run.buffers["y"].values, want.astype(np.float32))
    assert run.buffers["y"].written.all()
    assert "bias: null" in text and "bias: null as" not in text  # the port's own spec: no element type
    kernel = text.split("@triton.jit", 1)[1].split("# xlate:", 1)[0]
    assert "tl.load(bias" not in kernel  # the read under the null test is gone


def test_a_buffer_tested_for_null_is_never_null(tmp_path):
    """The same kernel launched with a buffer: `if (bias)` holds, the port reads it."""
    source = PROGRAM.replace("if (bias != nullptr)", "if (bias)").replace("  float *x, *y;", "  float *x, *y, *b;").replace(
        "  add_bias<<<", "  cudaMalloc(&b, c * sizeof(float));\n  add_bias<<<").replace("ARG", "b")
    spec, inputs, run, _ = run_port(write(tmp_path, source), 41, 6)
    assert spec.param("bias").dims == ["c"]
    want = inputs["x"] * 2 + np.tile(inputs["bias"], 41)
    np.testing.assert_allclose(run.buffers["y"].values, want, rtol=1e-6)


@pytest.mark.parametrize("body", [
    "v += bias[i % c];",  # read with no test
    "if (bias != nullptr) v += 1.0f; else v += bias[0];",  # read where the test says it is null
    "if (bias + 1 != nullptr) v += 1.0f;",  # arithmetic on it
], ids=["unguarded", "null-branch", "arithmetic"])
def test_the_lifter_refuses_to_reach_through_a_null_pointer(tmp_path, body):
    source = PROGRAM.replace("ARG", "nullptr").replace("if (bias != nullptr) v += bias[i % c];", body)
    _, t = triton_port(write(tmp_path, source))
    assert t.kernels == []
    messages = [d.message for d in t.diagnostics]
    assert any("'bias' is a null pointer (`bias: null` in the spec)" in m for m in messages), messages


def test_the_gate_verifies_the_port_against_a_reference_given_none(tmp_path):
    """verify(): the CUDA source cannot run on a CPU, so the port is judged against a NumPy reference, which
    receives None for the null pointer."""
    from xlate.backends.registry import get_backend

    from xlate.verify.api import verify

    path = write(tmp_path, PROGRAM.replace("ARG", "nullptr"))
    _, t = triton_port(path)
    port = tmp_path / "main_port.py"
    port.write_text(t.text)
    ref = tmp_path / "ref.py"
    ref.write_text("def add_bias(x, bias, n, c):\n    assert bias is None\n    return {'y': 2 * x}\n")
    verdict = verify(str(path), str(port), kernel="add_bias", reference=f"{ref}:add_bias", examples=4)
    if get_backend("cuda").detect().can_run:
        pytest.skip("a GPU is here: the source runs (the gpu tests below cover that side)")
    assert verdict.status == "verified", verdict.to_dict()
    wrong = tmp_path / "wrong_port.py"  # a port that adds one where the source adds nothing
    wrong.write_text(t.text.replace("v = x_1 * 2.0", "v = x_1 * 2.0 + 1.0"))
    verdict = verify(str(path), str(wrong), kernel="add_bias", reference=f"{ref}:add_bias", examples=4)
    assert verdict.status == "rejected" and verdict.counterexample.failure == "mismatch", verdict.to_dict()


# -- CUDA and HIP on an NVIDIA GPU -------------------------------------------------------------------------------

HIP = "#include <hip/hip_runtime.h>\n" + PROGRAM.replace("ARG", "nullptr").replace("cudaMalloc", "hipMalloc")


@pytest.mark.gpu
@pytest.mark.parametrize(("port", "status"), [
    (HIP, "verified"),
    (HIP.replace("if (bias != nullptr) v += bias[i % c];", "if (bias == nullptr) v += 1.0f;"), "rejected"),
    (HIP.replace("if (bias != nullptr) v += bias[i % c];", "v += bias[i % c];"), "rejected"),
], ids=["correct", "inverted-test", "reads-the-null-pointer"])
def test_cuda_against_hip_ports(tmp_path, port, status):
    from xlate.verify.api import verify

    src = write(tmp_path, PROGRAM.replace("ARG", "nullptr"), "main.cu")
    hip = write(tmp_path, port, "main.hip")
    verdict = verify(str(src), str(hip), kernel="add_bias", examples=12, seed=2)
    assert verdict.status == status, verdict.to_dict()
    if status == "rejected":
        assert verdict.counterexample is not None and verdict.counterexample.failure in ("mismatch", "crash")


def test_nullptr_handed_to_a_device_function_folds_its_test(tmp_path):
    """Not a parameter of the kernel: `nullptr` written at a call of a device function whose pointer parameter it
    tests. The port folds that test too (the null pointer constant is never a buffer)."""
    source = """
    __device__ float shifted(const float* shift, float v, int j) { return shift != nullptr ? v + shift[j] : v; }
    __global__ void add_bias(const float* x, const float* bias, float* y, int n, int c) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n * c) y[i] = shifted(nullptr, x[i] * 2.0f, i % c) + shifted(bias, 0.0f, i % c);
    }
    int main() {
      int n = 300, c = 7;
      float *x, *y, *b;
      cudaMalloc(&x, n * c * sizeof(float));
      cudaMalloc(&y, n * c * sizeof(float));
      cudaMalloc(&b, c * sizeof(float));
      add_bias<<<(n * c + 127) / 128, 128>>>(x, b, y, n, c);
      return 0;
    }
    """
    spec, inputs, run, _ = run_port(write(tmp_path, source), 29, 7)
    assert spec.param("bias").dims == ["c"]
    want = inputs["x"] * 2 + np.tile(inputs["bias"], 29)
    np.testing.assert_allclose(run.buffers["y"].values, want, rtol=1e-6)
