"""Inference of by-value structs holding pointers (xlate/specs/infer/pointer_records.py): pointer fields become
buffers with their roles from the kernel's accesses and their lengths from the allocations the host stores in
them; the number fields the kernel indexes, bounds loops or guards with take the values the host gives them; and
the holes say why where that is not sound. The inferred spec of a tensor-view kernel then drives the gate on the
CPU (the NumPy toy backend, whose kernels dereference the addresses in the struct). Kernels written for these
tests."""

from __future__ import annotations

import shutil
import subprocess
import textwrap

import numpy as np
import pytest

from tests.conftest import ROOT
from tests.test_record_pointers import NPY
from tests.test_record_specs import toy  # noqa: F401  (the fixture: the toy backend registered)
from xlate.parse import parse_string
from xlate.specs import resolve_spec

PROGRAM = textwrap.dedent("""
    struct View { const float* data; int size[3]; int stride[3]; int dims; };
    struct Pair { const float* src; float* dst; int n; float gain; };
    struct Lookup { const int* idx; int n; };
    struct Loose { const float* src; float* dst; int n; };
    struct Raw { void* bytes; int n; };
    struct Coo { const int* row; int n; };
    struct Shape { int rows; int cols; };
    struct Mat : public Shape { const float* data; float* sums; };

    __device__ void scale_into(const Pair& io, int i) { io.dst[i] = io.src[i] * io.gain; }
    __device__ void put(float* d, int i, float v) { d[i] = v; }
    __device__ float pick(const int* idx, const float* x, int i) { return x[idx[i]]; }

    __global__ void row_sums(View x, float* out) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < x.size[0]) {
        float s = 0.0f;
        const float* row = x.data + i * x.stride[0];
        for (int j = 0; j < x.size[x.dims - 1]; ++j) s += row[j * x.stride[1]];
        out[i] = s;
      }
    }

    __global__ void scale_copy(Pair io) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < io.n) scale_into(io, i);
    }

    __global__ void shift_copy(Pair io) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < io.n) put(io.dst, i, io.src[i] + 1.0f);
    }

    __global__ void gather_via(Lookup l, const float* x, float* y) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < l.n) y[i] = pick(l.idx, x, i);
    }

    __global__ void gather(Lookup l, const float* x, float* y) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < l.n) y[i] = x[l.idx[i]];
    }

    __global__ void loose_copy(Loose q) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < q.n) q.dst[i] += q.src[i];
    }

    __global__ void raw_zero(Raw w) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < w.n) ((char*)w.bytes)[i] = 0;
    }

    __global__ void unlaunched(Pair io) { io.dst[0] = io.src[0]; }

    __global__ void col_sums(Mat m) {
      int j = blockIdx.x * blockDim.x + threadIdx.x;
      if (j < m.cols) {
        float s = 0.0f;
        for (int i = 0; i < m.rows; ++i) s += m.data[i * m.cols + j];
        m.sums[j] = s;
      }
    }

    __global__ void histogram(Coo c, float* out) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < c.n) { int j = c.row[i]; atomicAdd(out + j, 1.0f); }
    }

    __global__ void widen(Coo c, float* out) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < c.n) out[i] = 2.0f * c.row[i] + 1.0f;
    }

    int main(int argc, char** argv) {
      int r = atoi(argv[1]), c = atoi(argv[2]), n = atoi(argv[3]);
      float *d_x, *d_out, *d_a, *d_b;
      int* d_i;
      cudaMalloc(&d_x, r * c * sizeof(float));
      cudaMalloc(&d_out, r * sizeof(float));
      cudaMalloc(&d_a, n * sizeof(float));
      cudaMalloc(&d_b, n * sizeof(float));
      cudaMalloc(&d_i, n * sizeof(int));
      View v;
      v.data = d_x; v.size[0] = r; v.size[1] = c; v.stride[0] = c; v.stride[1] = 1; v.dims = 2;
      row_sums<<<(r + 127) / 128, 128>>>(v, d_out);
      Pair p;
      p.src = d_a; p.dst = d_b; p.n = n; p.gain = 0.5f;
      scale_copy<<<(n + 63) / 64, 64>>>(p);
      Lookup l;
      l.idx = d_i; l.n = n;
      gather<<<(n + 63) / 64, 64>>>(l, d_a, d_b);
      gather_via<<<(n + 63) / 64, 64>>>(l, d_a, d_b);
      shift_copy<<<(n + 63) / 64, 64>>>(p);
      Loose q;
      q.src = d_x; q.dst = d_b; q.n = n;
      loose_copy<<<(n + 63) / 64, 64>>>(q);
      Raw w;
      w.bytes = d_a; w.n = n;
      raw_zero<<<(n + 63) / 64, 64>>>(w);
      Coo k;
      k.row = d_i; k.n = n;
      histogram<<<(n + 63) / 64, 64>>>(k, d_b);
      widen<<<(n + 63) / 64, 64>>>(k, d_b);
      Mat m;
      float* d_s;
      cudaMalloc(&d_s, c * sizeof(float));
      m.rows = r; m.cols = c; m.data = d_x; m.sums = d_s;
      col_sums<<<(c + 31) / 32, 32>>>(m);
      return 0;
    }
""").lstrip()


def _res(kernel: str):
    return resolve_spec(parse_string(PROGRAM, "views.cu", "cuda"), kernel)


def test_a_tensor_view_gets_its_buffer_and_the_layout_the_host_gives_it():
    res = _res("row_sums")
    assert res.complete, res.holes
    assert res.annotation() == (
        "x: scalar as {data: in[c * r] as float32, size: int32[3] const(r, c), stride: int32[3] const(c, 1), "
        "dims: int32 const(2)}, out: out[max(r, 128 * cdiv(r, 128))], r: size(1..4096), c: size(1..4096), "
        "grid: cdiv(r, 128), block: 128")
    assert res.spec.param("x.data").role == "in" and res.spec.param("x.data").dims == ["c * r"]


def test_an_output_field_written_in_a_device_function_and_a_drawn_float_field():
    res = _res("scale_copy")
    assert res.complete, res.holes
    assert "io: scalar as {src: in[n] as float32, dst: out[n] as float32, n: int32 const(n), gain: float32}" in (
        res.annotation())
    assert [(p.name, p.role) for p in res.spec.buffers] == [("io.src", "in"), ("io.dst", "out")]
    shifted = _res("shift_copy")  # the pointer handed to a device function that writes through it
    assert shifted.complete and [(p.name, p.role) for p in shifted.spec.buffers] == [("io.src", "in"), ("io.dst", "out")]


def test_holes_say_why_a_pointer_struct_is_not_fuzzed():
    why = {k: _res(k).holes for k in ("gather", "gather_via", "loose_copy", "unlaunched", "histogram")}
    assert "a value read through field l.idx indexes a buffer" in why["gather"]["l"]
    assert "a value read through field l.idx indexes a buffer" in why["gather_via"]["l"]  # inside a device function
    assert "field q.src (c * r) uses c, r, which the kernel does not receive" in why["loose_copy"]["q"]
    assert "no launch that fills them" in why["unlaunched"]["io"]
    # an offset added to a pointer (no subscript): still an index whose values need a range
    assert "a value read through field c.row flows into 'j', which is passed to 'atomicAdd'" in why["histogram"]["c"]


def test_a_void_pointer_field_takes_the_type_the_kernel_casts_it_to():
    res = _res("raw_zero")  # `((char*)w.bytes)[i]` of n floats' allocation: 4 * n chars
    assert res.complete, res.holes
    assert res.annotation().startswith("w: scalar as {bytes: out[4 * n] as int8, n: int32 const(n)}")


def test_a_base_class_contributes_its_members_first():
    res = _res("col_sums")
    assert res.complete, res.holes
    assert res.annotation().startswith(
        "m: scalar as {rows: int32 const(r), cols: int32 const(c), data: in[c * r] as float32, sums: out[c] as float32}")


def test_integers_read_through_a_field_as_data_are_drawn():
    res = _res("widen")
    assert res.complete, res.holes
    assert res.annotation().startswith("c: scalar as {row: in[n] as int32, n: int32 const(n)}, out: ")


def test_the_inferred_spec_drives_the_gate_end_to_end(toy):  # noqa: F811
    from xlate.verify.engine import FuzzConfig, Fuzzer, run_fuzz
    from xlate.verify.runner import Side

    spec = _res("row_sums").spec

    def fuzz(text: str):
        source = Side("src.py", "row_sums", text=NPY, language="npy", label="source")
        cand = Side("cand.py", "row_sums", text=text, language="npy", label="candidate")
        return run_fuzz(Fuzzer(spec, cand, source, config=FuzzConfig(examples=6)), budget=1 << 14, size_cap=1 << 10)

    assert fuzz(NPY).failure is None
    cx = fuzz(NPY.replace("for j in range(cols)", "for j in range(max(cols - 1, 0))")).failure
    assert cx is not None and cx.failure == "mismatch" and cx.buffer == "out"


def test_record_of_lays_a_base_class_out_first_or_says_why_not(tmp_path):
    from xlate.specs.infer.program import Program, load_file
    from xlate.specs.records import record_dtype

    path = tmp_path / "b.cu"
    path.write_text("struct Base { int n; int pad; };\n"
                    "struct Derived : public Base { double w; float v; };\n"
                    "struct Tail { double d; int k; };\n"
                    "struct Reused : Tail { int z; };\n"
                    "struct Empty { __device__ int f() const { return 1; } };\n"
                    "struct OnEmpty : Empty { float a; };\n"
                    "struct Two : Base, Empty { int z; };\n"
                    "struct Shadow : Base { int n; };\n")
    program = Program([load_file(str(path))])
    record, _ = program.record_of("Derived")
    assert record == "{n: int32, pad: int32, w: float64, v: float32}"
    dtype = record_dtype(record)  # g++: sizeof 24, w at 8, v at 16
    assert (dtype.itemsize, dtype.fields["w"][1], dtype.fields["v"][1]) == (24, 8, 16)
    assert program.record_of("OnEmpty") == ("{a: float32}", "")
    assert "tail padding" in program.record_of("Reused")[1]
    assert "several classes" in program.record_of("Two")[1]
    assert "same name as its base" in program.record_of("Shadow")[1]


# -- a library struct: ATen's TensorInfo, filled from a tensor by getTensorInfo (xlate/data/library_types.yaml) ----

EXTENSION = textwrap.dedent("""
    #include <torch/extension.h>
    #include <ATen/cuda/detail/TensorInfo.cuh>

    __global__ void row_sums_kernel(const at::cuda::detail::TensorInfo<float, int> src, float* out) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < src.sizes[0]) {
        float s = 0.0f;
        for (int j = 0; j < src.sizes[src.dims - 1]; ++j) s += src.data[i * src.strides[0] + j * src.strides[1]];
        out[i] = s;
      }
    }

    __global__ void bump_kernel(const at::cuda::detail::TensorInfo<int64_t, int> index, float* out, int numel) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < numel) { int64_t k = index.data[i]; atomicAdd(out + k, 1.0f); }
    }

    __global__ void copy_kernel(at::cuda::detail::TensorInfo<float, int> src, float* out, int numel) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < numel) out[i] = src.data[at::cuda::detail::IndexToOffset<float, int, -1>::get(i, src)];
    }

    torch::Tensor row_sums(torch::Tensor x) {
      TORCH_CHECK(x.dim() == 2, "x must be 2-d");
      x = x.contiguous();
      auto out = torch::empty({x.size(0)}, x.options());
      auto info = at::cuda::detail::getTensorInfo<float, int>(x);
      row_sums_kernel<<<(x.size(0) + 127) / 128, 128>>>(info, out.data_ptr<float>());
      return out;
    }

    torch::Tensor bump(torch::Tensor index, torch::Tensor out) {
      auto info = at::cuda::detail::getTensorInfo<int64_t, int>(index);
      bump_kernel<<<(index.numel() + 255) / 256, 256>>>(info, out.data_ptr<float>(), index.numel());
      return out;
    }

    torch::Tensor copy(torch::Tensor x) {
      auto out = torch::empty({x.numel()}, x.options());
      auto info = at::cuda::detail::getTensorInfo<float, int>(x);
      copy_kernel<<<(x.numel() + 255) / 256, 256>>>(info, out.data_ptr<float>(), x.numel());
      return out;
    }
""").lstrip()


def _ext(kernel: str):
    return resolve_spec(parse_string(EXTENSION, "ext.cu", "cuda"), kernel)


def test_a_tensor_info_gets_the_tensors_storage_sizes_and_contiguous_strides():
    res = _ext("row_sums_kernel")
    assert res.complete, res.holes
    assert res.annotation().startswith(
        "src: scalar as {data: in[x_size0 * x_size1] as float32, sizes: int32[25] const(x_size0, x_size1), "
        "strides: int32[25] const(x_size1, 1), dims: int32 const(2)}, out: ")


def test_a_tensor_info_handed_to_library_code_keeps_its_layout_and_is_compared_as_written():
    res = _ext("copy_kernel")  # IndexToOffset is ATen's: every number field the host's, data maybe written
    assert res.complete, res.holes
    assert res.annotation().startswith(
        "src: scalar as {data: inout[numel] as float32, sizes: int32[25] const(numel), strides: int32[25] const(1), "
        "dims: int32 const(1)}, out: out[numel]")


def test_an_index_tensor_info_whose_values_offset_a_pointer_is_a_hole():
    holes = _ext("bump_kernel").holes
    assert set(holes) == {"index", "out"} and "index.data flows into 'k', which is passed to 'atomicAdd'" in holes["index"]
    assert "accessed through a pointer moved by 'k'" in holes["out"]  # `out + k`: no length is known to cover it


def test_the_extension_compiles_through_nvrtc_with_the_tensor_info_shim(tmp_path):
    from xlate.backends.base import CompileOptions
    from xlate.backends.nvrtc import nvrtc_version
    from xlate.backends.registry import get_backend

    if nvrtc_version() is None:
        pytest.skip("NVRTC not installed")
    path = tmp_path / "ext.cu"
    path.write_text(EXTENSION)
    for kernel in ("row_sums_kernel", "bump_kernel", "copy_kernel"):
        options = CompileOptions(compile_only=True, context_path=str(path))
        assert get_backend("cuda").compile(EXTENSION, kernel, options, path=str(path)).compile.ok


def test_the_shims_index_to_offset_walks_a_strided_layout_as_numpy_does(tmp_path):
    if shutil.which("g++") is None:
        pytest.skip("no host C++ compiler")
    shape, strides = (3, 4, 5), (1, 3, 12)  # a transposed view: the first dimension varies fastest in memory
    (tmp_path / "t.cpp").write_text(textwrap.dedent(f"""
        #define __host__
        #define __device__
        #include <cstdio>
        #include "xlate_aten_tensorinfo.cuh"
        int main() {{
          at::cuda::detail::TensorInfo<float, int> info{{}};
          int sizes[3] = {{{shape[0]}, {shape[1]}, {shape[2]}}}, strides[3] = {{{strides[0]}, {strides[1]}, {strides[2]}}};
          for (int d = 0; d < 3; ++d) {{ info.sizes[d] = sizes[d]; info.strides[d] = strides[d]; }}
          info.dims = 3;
          for (int i = 0; i < 60; ++i)
            printf("%d %d\\n", at::cuda::detail::IndexToOffset<float, int, -1>::get(i, info),
                   at::cuda::detail::IndexToOffset<float, int, 3>::get(i, info));
        }}
    """))
    exe = tmp_path / "t"
    subprocess.run(["g++", "-std=c++17", "-I", str(ROOT / "backends" / "include"), str(tmp_path / "t.cpp"), "-o",
                    str(exe)], check=True)
    got = np.array([line.split() for line in subprocess.run([str(exe)], capture_output=True, text=True,
                                                            check=True).stdout.splitlines()], dtype=np.int64)
    want = np.array([sum(i * s for i, s in zip(np.unravel_index(k, shape), strides, strict=True)) for k in range(60)])
    assert np.array_equal(got[:, 0], want) and np.array_equal(got[:, 1], want)


def test_record_of_reads_the_types_a_struct_names_inside_itself(tmp_path):
    from xlate.specs.infer.program import Program, load_file

    path = tmp_path / "a.cu"
    path.write_text("struct P { using index_t = unsigned int; typedef float real; index_t n; real w[2]; int k; };\n")
    assert Program([load_file(str(path))]).record_of("P") == ("{n: uint32, w: float32[2], k: int32}", "")
