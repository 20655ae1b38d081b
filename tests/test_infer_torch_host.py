"""Spec inference through the host code of PyTorch C++ extensions: a tensor is a value with a symbolic shape (a
size per dimension the code uses, bounded by its rank), its data pointer points into storage of the product of
its dimensions, tensors made from another share or derive its shape, TORCH_CHECK equalities tie dimensions, and a
dispatch macro's lambda runs with `scalar_t` bound to float. Each test is a small extension written for it, with
the exact spec inferred; the ones the Triton lifter ports are then run by the gate's runner (guard bands, poisoned
outputs) under the Triton interpreter on cases drawn from the inferred spec, against NumPy."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings

from xlate.parse import parse_string
from xlate.specs import build_spec, resolve_spec
from xlate.specs.infer.tensors import scan_rank, tensor_type
from xlate.translate.base import TranslateOptions
from xlate.translate.triton.translator import CudaToTriton
from xlate.verify.cases import environment, make_inputs
from xlate.verify.strategies import cases

ELEMENTWISE = """
#include <torch/extension.h>

template <typename scalar_t>
__global__ void axpb(const scalar_t* __restrict__ x, scalar_t* __restrict__ y, float a, float b, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b;
}

torch::Tensor axpb_cuda(const torch::Tensor& x, double a, double b) {
  TORCH_CHECK(x.is_contiguous(), "x must be contiguous");
  auto y = torch::empty_like(x);
  const int64_t n = x.numel();
  const int threads = 192;
  const int blocks = (n + threads - 1) / threads;
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "axpb_cuda", [&] {
    axpb<scalar_t><<<blocks, threads>>>(x.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), (float)a, (float)b, n);
  });
  return y;
}
"""

ROWS = """
#include <torch/extension.h>

template <typename scalar_t>
__global__ void row_max(const scalar_t* x, scalar_t* out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  scalar_t m = x[r * cols];
  for (int c = 1; c < cols; ++c) m = x[r * cols + c] > m ? x[r * cols + c] : m;
  out[r] = m;
}

torch::Tensor row_max_cuda(torch::Tensor x) {
  TORCH_CHECK(x.dim() == 2, "x must be a matrix");
  x = x.contiguous();
  const int rows = x.size(0);
  const int cols = x.sizes()[1];
  auto out = torch::zeros({rows}, x.options());
  AT_DISPATCH_FLOATING_TYPES_AND_HALF(x.scalar_type(), "row_max", ([&] {
    row_max<scalar_t><<<(rows + 47) / 48, 48>>>(x.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), rows, cols);
  }));
  return out;
}
"""

MATVEC = """
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

template <typename scalar_t>
__global__ void bmv(const scalar_t* __restrict__ a, const scalar_t* __restrict__ v, scalar_t* __restrict__ out,
                    int B, int M, int K) {
  int b = blockIdx.y;
  int m = blockIdx.x * blockDim.x + threadIdx.x;
  if (m >= M) return;
  scalar_t acc = 0;
  for (int k = 0; k < K; ++k) acc += a[(b * M + m) * K + k] * v[b * K + k];
  out[b * M + m] = acc;
}

#define CHECK_INPUT(t) TORCH_CHECK(t.is_cuda(), #t " must be on the GPU"); TORCH_CHECK(t.is_contiguous(), #t)

at::Tensor bmv_cuda(const at::Tensor& a, const at::Tensor& v) {
  CHECK_INPUT(a);
  CHECK_INPUT(v);
  TORCH_CHECK(a.dim() == 3, "a is [B, M, K]");
  const int B = a.size(0), M = a.size(1), K = a.size(2);
  TORCH_CHECK(v.size(0) == B && v.size(1) == K, "v must be [B, K]");
  auto out = at::empty({B, M}, a.options());
  dim3 block(40);
  dim3 grid((M + 39) / 40, B);
  AT_DISPATCH_FLOATING_TYPES(a.scalar_type(), "bmv", [&] {
    bmv<scalar_t><<<grid, block, 0, at::cuda::getCurrentCUDAStream()>>>(
        a.data_ptr<scalar_t>(), v.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), B, M, K);
  });
  return out;
}
"""

GATHER = """
#include <torch/extension.h>
__global__ void pick_cols(const float* src, const int64_t* idx, float* dst, int rows, int picks, int64_t ld) {
  int r = blockIdx.y;
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows && j < picks) dst[r * picks + j] = src[r * ld + idx[j]];
}
void pick_cols_cuda(torch::Tensor src, torch::Tensor idx, torch::Tensor dst) {
  const int rows = src.size(0);
  const int picks = idx.numel();
  TORCH_CHECK(dst.size(0) == rows && dst.size(1) == picks, "dst is [rows, picks]");
  dim3 grid((picks + 31) / 32, rows);
  pick_cols<<<grid, 32>>>(src.data_ptr<float>(), idx.data_ptr<int64_t>(), dst.data_ptr<float>(), rows, picks,
                          src.stride(0));
}
"""

BIAS = """
#include <torch/extension.h>
template <typename scalar_t>
__global__ void add_bias(scalar_t* y, const scalar_t* bias, int n, int c) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n * c) y[i] += bias ? bias[i % c] : scalar_t(0);
}
void add_bias_cuda(at::Tensor y, c10::optional<at::Tensor> bias) {
  const int n = y.size(0), c = y.size(1);
  if (bias.has_value()) TORCH_CHECK(bias->size(0) == c);
  AT_DISPATCH_FLOATING_TYPES(y.scalar_type(), "add_bias", [&]() {
    add_bias<scalar_t><<<(n * c + 127) / 128, 128>>>(y.data_ptr<scalar_t>(),
        bias.has_value() ? bias->data_ptr<scalar_t>() : nullptr, n, c);
  });
}
"""

DIVIDED = """
#include <torch/extension.h>
__global__ void norm3(const float* v, float* out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float* p = v + i * 3;
  out[i] = sqrtf(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
}
__global__ void scale_rows(float* x, const float* s, unsigned rows, unsigned width) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < rows * width) x[i] *= s[i / width];
}
__global__ void sum4(const float* q, float* out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = q[4 * i] + q[4 * i + 1] + q[4 * i + 2] + q[4 * i + 3];
}
void norm3_cuda(const at::Tensor vecs, at::Tensor out) {
  unsigned n = vecs.size(-2);
  unsigned b = vecs.numel() / (n * 3);
  norm3<<<(b * n + 127) / 128, 128>>>(vecs.data_ptr<float>(), out.data_ptr<float>(), b * n);
}
void scale_rows_cuda(at::Tensor x, const at::Tensor s) {
  const unsigned rows = x.size(0);
  const unsigned width = x.numel() / rows;
  scale_rows<<<(rows * width + 255) / 256, 256>>>(x.data_ptr<float>(), s.data_ptr<float>(), rows, width);
}
void sum4_cuda(const at::Tensor q, at::Tensor out) {
  const int64_t total = q.numel();
  const unsigned n = total / 4;
  sum4<<<(n + 63) / 64, 64>>>(q.data_ptr<float>(), out.data_ptr<float>(), n);
}
"""

BOUNDED = """
#include <torch/extension.h>
__global__ void topk_small(const float* x, float* out, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float best[16];
  for (int j = 0; j < k; ++j) best[j] = x[i * k + j];
  float s = 0;
  for (int j = 0; j < k; ++j) s += best[j];
  out[i] = s;
}
torch::Tensor topk_small_cuda(torch::Tensor x, int64_t k) {
  TORCH_CHECK(k <= 16, "k is at most 16");
  TORCH_CHECK(x.size(1) == k);
  const int n = x.size(0);
  auto out = torch::empty({n}, x.options());
  topk_small<<<(n + 127) / 128, 128>>>(x.data_ptr<float>(), out.data_ptr<float>(), n, k);
  return out;
}
"""


def write(tmp_path: Path, text: str, name: str = "ext.cu") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def inferred(path: Path, kernel: str):
    return resolve_spec(parse_string(path.read_text(), str(path), "cuda"), kernel)


def gate_runs(path: Path, kernel: str, reference, examples: int = 4) -> list[dict[str, int]]:
    """The Triton port of `kernel` run by the gate's runner on cases drawn from the inferred spec; each run must
    keep its guard bands and match `reference(inputs, case)`, which gives each output's float64 values or a pair
    (values, per-element error bound). Returns the sizes drawn."""
    from xlate.verify.runner import Side

    unit = parse_string(path.read_text(), str(path), "cuda")
    res = resolve_spec(unit, kernel)
    assert res.complete, res.holes
    spec = build_spec(parse_string(f"// xlate: {res.annotation()}\n" + path.read_text(), str(path), "cuda"), kernel)
    t = CudaToTriton().translate(unit, unit.text, TranslateOptions(kernels=[kernel]))
    assert t.kernels == [kernel], [d.format() for d in t.diagnostics]
    side = Side(str(path.with_suffix(".py")), kernel, text=t.text, language="triton", context_path=str(path))
    drawn: list[dict[str, int]] = []

    @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(cases(spec, 1 << 16, 1 << 12))
    def check(case):
        inputs = make_inputs(spec, case, environment(spec, case))
        run = side.run_case(spec, case, inputs)
        assert run.failure is None, run.failure
        for name, expected in reference(inputs, case).items():
            want, bound = expected if isinstance(expected, tuple) else (expected, 1e-5 + 1e-5 * np.abs(expected))
            got = run.buffers[name]
            assert got.written.all()
            finite = np.isfinite(want)
            err = np.abs(got.values[finite].astype(np.float64) - want[finite])
            assert (err <= bound[finite]).all(), (name, err.max())
        drawn.append(dict(case.sizes))

    check()
    return drawn


# -- the model's parts --------------------------------------------------------------------------------------------


def test_tensor_types_and_ranks_read_from_the_code():
    assert tensor_type("const at::Tensor &") and tensor_type("torch::Tensor") and tensor_type(
        "c10::optional<at::Tensor>") and tensor_type("const std::optional<torch::Tensor>&")
    assert not tensor_type("at::Tensor*") and not tensor_type("float")
    assert not tensor_type("Tensor", {"Tensor": {}})  # the program's own class of that name
    code = "int n = x.size(0); int k = x.sizes()[2]; auto s = w.stride(0); TORCH_CHECK(q.dim() == 4);" \
           " auto acc = p.packed_accessor32<float, 3, at::RestrictPtrTraits>(); int e = z.size(-2);"
    assert scan_rank("x", code) == 3
    assert scan_rank("w", code) == 2  # a stride read is of a dimension with more after it
    assert scan_rank("q", code) == 4 and scan_rank("p", code) == 3
    assert scan_rank("z", code) == 3  # `[..., a, b]`: at least one leading dimension
    assert scan_rank("y", code) is None  # never named: one dimension of numel elements
    assert scan_rank("u", "int d = u.numel() / u.size(0);") == 2  # more dimensions than the one named


# -- specs --------------------------------------------------------------------------------------------------------


def test_elementwise_over_numel_with_empty_like_and_dispatch(tmp_path):
    res = inferred(write(tmp_path, ELEMENTWISE), "axpb")
    assert res.complete
    assert res.annotation() == ("x: in[n], y: out[n], a: scalar, b: scalar, n: size(1..4096), scalar_t: float32, "
                                "grid: cdiv(n, 192), block: 192")
    x, y, n = res.items["x"][1], res.items["y"][1], res.items["n"][1]
    assert x.kind == "host" and x.detail == ("tensor x [x_numel] (parameter of axpb_cuda); contiguous: the code "
                                             "checks it")
    assert y.kind == "host" and y.where.endswith("ext.cu:11") and "empty_like(x)" in y.detail
    assert n.kind == "host" and "number of elements of tensor x" in n.detail


def test_two_dimensions_from_size_and_sizes_and_a_list_shaped_output(tmp_path):
    res = inferred(write(tmp_path, ROWS), "row_max")
    assert res.complete
    assert res.annotation() == ("x: in[cols * rows], out: out[rows], rows: size(1..256), cols: size(1..256), "
                                "scalar_t: float32, grid: cdiv(rows, 48), block: 48")
    assert "contiguous: the code makes it so" in res.items["x"][1].detail
    assert "torch::zeros({rows}, x.options())" in res.items["out"][1].detail


def test_three_dimensions_tied_by_torch_check(tmp_path):
    res = inferred(write(tmp_path, MATVEC), "bmv")
    assert res.complete
    assert res.annotation() == ("a: in[B * K * M], v: in[B * K], out: out[B * M], B: size(1..64), M: size(1..64), "
                                "K: size(1..64), scalar_t: float32, grid: (cdiv(M, 40), B), block: 40")
    assert "dimensions tied by the code before the launch" in res.items["v"][1].detail


def test_without_the_check_the_kernels_reach_still_covers_the_buffer(tmp_path):
    # v's code names no dimension: one of numel elements, a size of its own; what the kernel reads of it
    # (b * K + k) may be more: the length is at least that, so a correct source never faults under its spec
    untied = MATVEC.replace('  TORCH_CHECK(v.size(0) == B && v.size(1) == K, "v must be [B, K]");\n', "")
    res = inferred(write(tmp_path, untied), "bmv")
    assert res.complete
    assert res.annotation() == ("a: in[B * K * M], v: in[max(v_numel, B * K)], out: out[B * M], B: size(1..64), "
                                "M: size(1..64), K: size(1..64), v_numel: size(1..4096), scalar_t: float32, "
                                "grid: (cdiv(M, 40), B), block: 40")


def test_strides_of_a_tensor_not_checked_contiguous(tmp_path):
    res = inferred(write(tmp_path, GATHER), "pick_cols")
    assert res.complete
    assert res.annotation() == ("src: in[ld * rows], idx: in[picks](0..ld - 1), dst: out[picks * rows], "
                                "rows: size(1..256), picks: size(1..4096), ld: size(1..256), "
                                "grid: (cdiv(picks, 32), rows), block: 32")
    assert res.items["src"][1].detail.endswith(
        "(parameter of pick_cols_cuda; strides read); assumed contiguous: the code neither checks nor makes it so")


def test_an_optional_tensor_is_taken_as_given(tmp_path):
    # whichever side of `has_value() ? ... : nullptr` holds the buffer: which optional is given is the guess
    res = inferred(write(tmp_path, BIAS), "add_bias")
    assert res.complete
    assert res.annotation() == ("y: inout[c * n], bias: in[c], n: size(1..256), c: size(1..256), scalar_t: float32, "
                                "grid: cdiv(c * n, 128), block: 128")
    # a buffer passed only where another optional is absent: still the buffer
    other = BIAS.replace("bias.has_value() ? bias->data_ptr<scalar_t>() : nullptr",
                         "y.defined() ? nullptr : bias->data_ptr<scalar_t>()")
    assert inferred(write(tmp_path, other, "other.cu"), "add_bias").annotation() == res.annotation()


def test_a_count_the_code_divides_out_of_numel_shapes_the_tensor(tmp_path):
    # `numel() / (n * 3)` with n a dimension: the last dimension is 3; `numel() / rows`: more dimensions than
    # the one named; a numel of unknown rank divided by 4: a multiple of 4 elements
    path = write(tmp_path, DIVIDED)
    norm3, rows, sum4 = (inferred(path, k) for k in ("norm3", "scale_rows", "sum4"))
    assert norm3.annotation() == ("v: in[3 * n], out: out[max(n, out_numel)], n: size(1..4096), "
                                  "out_numel: size(1..4096), grid: cdiv(n, 128), block: 128")
    assert rows.annotation() == ("x: inout[rows * width], s: in[max(rows, s_numel)], rows: size(1..256), "
                                 "width: size(1..256), s_numel: size(1..4096), grid: cdiv(rows * width, 256), "
                                 "block: 256")
    assert sum4.annotation() == ("q: in[4 * n], out: out[max(n, out_numel)], n: size(1..1024), "
                                 "out_numel: size(1..4096), grid: cdiv(n, 64), block: 64")
    assert sum4.items["n"][1].detail == "the elements of tensor q over 4: the code divides its numel by 4"


def test_a_checked_bound_limits_the_size_drawn(tmp_path):
    # the kernel keeps k values in a local array of 16: the host's check is what keeps a correct source in it
    res = inferred(write(tmp_path, BOUNDED), "topk_small")
    assert res.annotation() == ("x: in[k * n], out: out[n], n: size(1..256), k: size(1..16), grid: cdiv(n, 128), "
                                "block: 128")
    assert res.items["k"][1].detail == "parameter of topk_small_cuda; the code checks it is at most 16"


# -- the inferred specs fuzz the kernels (their Triton ports, on CPU) ---------------------------------------------


def test_elementwise_runs_under_its_inferred_spec(tmp_path):
    def ref(inputs, case):
        return {"y": np.float32(case.scalars["a"]) * inputs["x"] + np.float32(case.scalars["b"])}

    assert gate_runs(write(tmp_path, ELEMENTWISE), "axpb", ref)


def test_row_max_runs_under_its_inferred_spec(tmp_path):
    def ref(inputs, case):
        return {"out": inputs["x"].reshape(case.sizes["rows"], case.sizes["cols"]).max(axis=1)}

    assert gate_runs(write(tmp_path, ROWS), "row_max", ref)


def test_batched_matvec_runs_under_its_inferred_spec(tmp_path):
    def ref(inputs, case):
        b, m, k = case.sizes["B"], case.sizes["M"], case.sizes["K"]
        a = inputs["a"].reshape(b, m, k).astype(np.float64)
        v = inputs["v"].reshape(b, k).astype(np.float64)
        want = np.einsum("bmk,bk->bm", a, v).ravel()
        # a float32 dot product of K terms may lose K ulps of the sum of |terms| (cancellation makes rtol useless)
        scale = np.einsum("bmk,bk->bm", np.abs(a), np.abs(v)).ravel()
        return {"out": (want, 1e-5 + 2 * k * np.finfo(np.float32).eps * scale)}

    assert gate_runs(write(tmp_path, MATVEC), "bmv", ref)


def test_gather_runs_under_its_inferred_spec(tmp_path):
    def ref(inputs, case):
        src = inputs["src"].reshape(case.sizes["rows"], case.sizes["ld"])
        return {"dst": src[:, inputs["idx"]].ravel()}

    assert gate_runs(write(tmp_path, GATHER), "pick_cols", ref)


def test_a_wrong_length_shows_up_as_a_fault(tmp_path):
    # the guard bands stay the judge: the same kernel under a spec whose output is too short faults
    from xlate.verify.runner import Side

    path = write(tmp_path, MATVEC)
    unit = parse_string(path.read_text(), str(path), "cuda")
    wrong = inferred(path, "bmv").annotation().replace("out: out[B * M]", "out: out[M]")
    spec = build_spec(parse_string(f"// xlate: {wrong}\n" + path.read_text(), str(path), "cuda"), "bmv")
    t = CudaToTriton().translate(unit, unit.text, TranslateOptions(kernels=["bmv"]))
    side = Side(str(path.with_suffix(".py")), "bmv", text=t.text, language="triton", context_path=str(path))
    from xlate.verify.cases import Case

    case = Case({"B": 3, "M": 41, "K": 5}, {"scalar_t": "float32"}, {}, {}, 7)
    run = side.run_case(spec, case, make_inputs(spec, case, environment(spec, case)))
    assert run.failure is not None
