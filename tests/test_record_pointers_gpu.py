"""Structs holding pointers on a GPU: a CUDA kernel taking a tensor-view struct by value (a data pointer, sizes,
strides) and one taking a struct with an output pointer, fuzzed against ports through CUDA and HIP-on-NVIDIA with
the gate writing the buffers' device addresses into the structs' bytes. A right port is verified; a port that
walks the wrong stride, or writes one element past its output field, is caught. Kernels written for these tests."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from xlate.parse import parse_string
from xlate.specs import resolve_spec

pytestmark = pytest.mark.gpu

SOURCE = textwrap.dedent("""
    struct View { const float* data; int size[3]; int stride[3]; int dims; };
    struct Pair { const float* src; float* dst; int n; };

    // xlate: x: scalar as {data: in[r, c](-2..2) as float32, size: int32[3] const(r, c), stride: int32[3] const(c, 1), dims: int32 const(2)}, out: out[r], r: size(1..3000), c: size(1..40), grid: cdiv(r, 128), block: 128
    __global__ void row_sums(View x, float* out) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < x.size[0]) {
        float s = 0.0f;
        for (int j = 0; j < x.size[x.dims - 1]; ++j) s += (float)(j + 1) * x.data[i * x.stride[0] + j * x.stride[1]];
        out[i] = s;
      }
    }

    // xlate: io: scalar as {src: in[n] as float32, dst: out[n] as float32, n: int32 const(n)}, n: size(1..5000), grid: cdiv(n, 64), block: 64
    __global__ void scale_copy(Pair io) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < io.n) io.dst[i] = io.src[i] * 2.0f;
    }
""").lstrip()


def _mutant(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new)


RIGHT = _mutant(SOURCE, "for (int j = 0; j < x.size[x.dims - 1]; ++j) s += (float)(j + 1) * x.data[i * x.stride[0] + j * x.stride[1]];",
                "const float* row = x.data + i * x.stride[0];\n"
                "        for (int j = 0; j < x.size[1]; ++j) s += (float)(j + 1) * row[j * x.stride[1]];")


def _fuzz(tmp_path: Path, kernel: str, text: str, language: str = "cuda"):
    from xlate.verify.engine import FuzzConfig, Fuzzer, run_fuzz
    from xlate.verify.runner import Side

    path = tmp_path / "views.cu"
    path.write_text(SOURCE)
    res = resolve_spec(parse_string(SOURCE, str(path), "cuda"), kernel)
    assert res.complete, res.holes
    source = Side(str(path), kernel, label="source")
    cand = Side(str(tmp_path / ("port.cu" if language == "cuda" else "port.hip")), kernel, text=text,
                language=language, label="candidate")
    return run_fuzz(Fuzzer(res.spec, cand, source, config=FuzzConfig(examples=30)), budget=1 << 20, size_cap=1 << 16)


@pytest.mark.parametrize("language", ["cuda", "hip"])
@pytest.mark.parametrize("kernel", ["row_sums", "scale_copy"])
def test_a_right_port_of_a_pointer_struct_kernel_is_verified(tmp_path, monkeypatch, language, kernel):
    monkeypatch.setenv("XLATE_HIP_PLATFORM", "nvidia")
    text = RIGHT if language == "cuda" else "#include <hip/hip_runtime.h>\n" + RIGHT
    result = _fuzz(tmp_path, kernel, text, language)
    assert result.failure is None, result.failure.describe() if result.failure else ""
    assert result.examples >= 30


def test_a_port_walking_the_wrong_stride_is_a_mismatch(tmp_path):
    wrong = _mutant(RIGHT, "row[j * x.stride[1]]", "row[((j + 1) % x.size[1]) * x.stride[1]]")  # a rotated row
    cx = _fuzz(tmp_path, "row_sums", wrong).failure
    assert cx is not None and cx.failure == "mismatch" and cx.buffer == "out"


def test_a_write_past_an_output_field_is_caught_on_that_field(tmp_path):
    spill = _mutant(SOURCE, "if (i < io.n) io.dst[i] = io.src[i] * 2.0f;",
                    "if (i < io.n) io.dst[i] = io.src[i] * 2.0f;\n      if (i == 0) io.dst[io.n] = 1.0f;")
    cx = _fuzz(tmp_path, "scale_copy", spill).failure
    assert cx is not None and cx.failure == "out-of-bounds write" and cx.buffer == "io.dst"


@pytest.mark.parametrize("language", ["cuda", "hip"])
def test_an_aten_tensor_info_kernel_under_its_inferred_spec(tmp_path, monkeypatch, language):
    """ATen's TensorInfo (the gate's shim, xlate_aten_tensorinfo.cuh) filled by getTensorInfo in the host code:
    the inferred spec fills data, sizes and strides; a port summing the other axis is caught."""
    from tests.test_record_pointers_infer import EXTENSION
    from xlate.verify.engine import FuzzConfig, Fuzzer, run_fuzz
    from xlate.verify.runner import Side

    monkeypatch.setenv("XLATE_HIP_PLATFORM", "nvidia")
    path = tmp_path / "ext.cu"
    path.write_text(EXTENSION)
    for kernel in ("row_sums_kernel", "copy_kernel"):
        res = resolve_spec(parse_string(EXTENSION, str(path), "cuda"), kernel)
        assert res.complete, res.holes
        right = EXTENSION.replace("float s = 0.0f;", "float s = 0.0f;  // a port")
        text = right if language == "cuda" else "#include <hip/hip_runtime.h>\n" + right
        cand = Side(str(tmp_path / ("port.cu" if language == "cuda" else "port.hip")), kernel, text=text,
                    language=language, label="candidate")
        result = run_fuzz(Fuzzer(res.spec, cand, Side(str(path), kernel, label="source"),
                                 config=FuzzConfig(examples=20)), budget=1 << 20, size_cap=1 << 16)
        assert result.failure is None, result.failure.describe() if result.failure else ""
    res = resolve_spec(parse_string(EXTENSION, str(path), "cuda"), "row_sums_kernel")
    wrong = EXTENSION.replace("src.data[i * src.strides[0] + j * src.strides[1]]",
                              "src.data[(j * src.strides[0] + i * src.strides[1]) % (src.sizes[0] * src.sizes[1])]")
    cand = Side(str(tmp_path / "wrong.cu"), "row_sums_kernel", text=wrong, label="candidate")
    cx = run_fuzz(Fuzzer(res.spec, cand, Side(str(path), "row_sums_kernel", label="source"),
                         config=FuzzConfig(examples=20)), budget=1 << 20, size_cap=1 << 16).failure
    assert cx is not None and cx.failure == "mismatch"
