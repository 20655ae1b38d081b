"""Spec inference from the program, one pattern per test (issue [infer] item 1): small host+kernel programs
written for these tests, each with the exact spec inferred and where each item came from."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from xlate.parse import parse_string
from xlate.specs import build_spec, resolve_spec
from xlate.specs.infer import infer_specs


def program(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text).lstrip())
    return tmp_path


def resolve(folder: Path, name: str, kernel: str):
    path = folder / name
    unit = parse_string(path.read_text(), str(path), "cuda")
    return resolve_spec(unit, kernel)


def origins(res) -> dict[str, str]:
    return {k: o.kind for k, (_, o) in res.items.items()}


SAXPY = """
__global__ void saxpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
"""


def test_locals_and_the_ceil_div_idiom(tmp_path):
    folder = program(tmp_path, {"main.cu": SAXPY + """
    int main() {
      int n = 1 << 20;
      float alpha = 2.0f;
      float *d_x, *d_y;
      cudaMalloc(&d_x, n * sizeof(float));
      cudaMalloc((void**)&d_y, sizeof(float) * n);
      int threads = 256;
      int blocks = (n + threads - 1) / threads;
      saxpy<<<blocks, threads>>>(n, alpha, d_x, d_y);
    }
    """})
    res = resolve(folder, "main.cu", "saxpy")
    assert res.complete
    assert res.annotation() == ("n: size(1..1048576), a: scalar(1..4), x: in[n], y: inout[n], grid: cdiv(n, 256), "
                                "block: 256")
    assert set(origins(res).values()) == {"host"}
    assert res.items["x"][1].where == "main.cu:10" and "cudaMalloc(&d_x" in res.items["x"][1].detail


def test_dim3_constructors_and_a_2d_guard(tmp_path):
    folder = program(tmp_path, {"main.cu": """
    __global__ void transpose(const float* in, float* out, int w, int h) {
      int x = blockIdx.x * blockDim.x + threadIdx.x;
      int y = blockIdx.y * blockDim.y + threadIdx.y;
      if (x < w && y < h) out[x * h + y] = in[y * w + x];
    }
    int main(int argc, char** argv) {
      const int w = atoi(argv[1]), h = atoi(argv[2]);
      float *a, *b;
      cudaMalloc(&a, w * h * sizeof(float));
      cudaMalloc(&b, w * h * sizeof(float));
      dim3 block(16, 16);
      dim3 grid((w + block.x - 1) / block.x, (h + 15) / 16);
      transpose<<<grid, block>>>(a, b, w, h);
    }
    """})
    res = resolve(folder, "main.cu", "transpose")
    assert res.annotation() == ("in: in[h * w], out: out[h * w], w: size(1..4096), h: size(1..4096), "
                                "grid: (cdiv(w, 16), cdiv(h, 16)), block: (16, 16)")
    assert res.items["w"][1].kind == "default"  # read from argv: the range is a default, and says so


def test_launcher_function_its_caller_and_block_sizes_from_an_array(tmp_path):
    # llm.c style: the launcher computes the grid from its block_size parameter; main loops over block sizes
    folder = program(tmp_path, {
        "kernels.cuh": """
        __global__ void gelu_forward_kernel(float* out, const float* inp, int N) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < N) out[i] = inp[i] * 0.5f;
        }
        """,
        "main.cu": """
        #include "kernels.cuh"
        int ceil_div(int a, int b) { return (a + b - 1) / b; }
        void gelu_forward(float* out, const float* inp, int N, const int block_size) {
          const int grid_size = ceil_div(N, block_size);
          gelu_forward_kernel<<<grid_size, block_size>>>(out, inp, N);
        }
        int main() {
          int B = 8, T = 1024, C = 768;
          float *d_out, *d_inp;
          cudaMalloc(&d_out, B * T * C * sizeof(float));
          cudaMalloc(&d_inp, B * T * C * sizeof(float));
          int block_sizes[] = {32, 64, 128, 256, 512, 1024};
          for (int j = 0; j < sizeof(block_sizes) / sizeof(int); j++) {
            int block_size = block_sizes[j];
            gelu_forward(d_out, d_inp, B * T * C, block_size);
          }
        }
        """})
    res = resolve(folder, "kernels.cuh", "gelu_forward_kernel")
    assert res.annotation() == ("out: out[N], inp: in[N], N: size(1..6291456), "
                                "block_size: choice(32|64|128|256|512|1024), grid: cdiv(N, block_size), block: block_size")
    spec = res.spec
    assert spec is not None and spec.axes == {"block_size": [32, 64, 128, 256, 512, 1024]}
    assert spec.pinned().grid == ["cdiv(N, 32)"] and spec.pinned().block == ["32"]
    assert "through main -> gelu_forward" in res.notes[0]


def test_macros_statement_macros_and_file_constants(tmp_path):
    folder = program(tmp_path, {"main.cu": """
    #define CHECK(call) do { cudaError_t e = (call); if (e != cudaSuccess) exit(1); } while (0)
    #define NUM_BLOCKS(n, t) (((n) + (t) - 1) / (t))
    #define THREADS 128
    const int LEN = 5000;
    __global__ void scale(float* v, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) v[i] *= 2.0f;
    }
    int main() {
      float* d;
      CHECK(cudaMalloc((void**)&d, LEN * sizeof(float)));
      scale<<<NUM_BLOCKS(LEN, THREADS), THREADS>>>(d, LEN);
    }
    """})
    res = resolve(folder, "main.cu", "scale")
    assert res.annotation() == "v: inout[n], n: size(1..5000), grid: cdiv(n, 128), block: 128"


def test_template_arguments_at_the_launch(tmp_path):
    folder = program(tmp_path, {"main.cu": """
    template <typename T, int TILE>
    __global__ void copy_tiles(const T* src, T* dst, int n) {
      int i = blockIdx.x * TILE + threadIdx.x;
      if (i < n) dst[i] = src[i];
    }
    int main() {
      int n = 777;
      double *a, *b;
      cudaMalloc(&a, n * sizeof(double));
      cudaMalloc(&b, n * sizeof(double));
      copy_tiles<double, 64><<<(n + 63) / 64, 64>>>(a, b, n);
    }
    """})
    res = resolve(folder, "main.cu", "copy_tiles")
    assert res.annotation() == ("src: in[n], dst: out[n], n: size(1..777), T: float64, TILE: 64, "
                                "grid: cdiv(n, 64), block: 64")
    assert res.spec is not None and res.spec.dtype_axes == {"T": ["float64"]} and res.spec.value_params == {"TILE": "64"}


def test_host_buffers_new_malloc_vector_and_memcpy_sizes(tmp_path):
    folder = program(tmp_path, {"main.cu": """
    #include <vector>
    __global__ void add3(const float* a, const float* b, const int* c, float* out, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) out[i] = a[i] + b[i] + c[i];
    }
    int main() {
      int n = 3000;
      std::vector<float> ha(n);
      float* hb = new float[n];
      int* hc = (int*)malloc(n * sizeof(int));
      float* a; float* b; int* c; float* out;
      cudaMallocManaged(&a, ha.size() * sizeof(float));
      cudaMalloc(&b, n * sizeof(float));
      cudaMemcpy(b, hb, n * sizeof(float), cudaMemcpyHostToDevice);
      cudaMalloc(&c, n * sizeof(int));
      add3<<<(n + 255) / 256, 256>>>(ha.data(), hb, hc, out, n);
    }
    """})
    res = resolve(folder, "main.cu", "add3")
    # the launch passes host buffers (a std::vector, new[], malloc) for a, b, c; out has no allocation: the
    # kernel's guard gives its length
    assert res.annotation() == "a: in[n], b: in[n], c: in[n], out: out[n], n: size(1..3000), grid: cdiv(n, 256), block: 256"
    kinds = origins(res)
    assert (kinds["a"], kinds["b"], kinds["c"], kinds["out"]) == ("host", "host", "host", "kernel")


def test_kernel_in_another_file_of_the_program(tmp_path):
    folder = program(tmp_path, {
        "kernels.cu": """
        __global__ void relu(float* x, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) x[i] = x[i] > 0 ? x[i] : 0;
        }
        """,
        "main.cpp": """
        void relu_launch(float* d, int count);
        int main() { float* d; int count = 100000; cudaMalloc(&d, count * 4); relu_launch(d, count); }
        void relu_launch(float* d, int count) { relu<<<(count + 511) / 512, 512>>>(d, count); }
        """})
    res = resolve(folder, "kernels.cu", "relu")
    assert res.annotation() == "x: inout[n], n: size(1..100000), grid: cdiv(n, 512), block: 512"
    # the same through the API with explicit context units (a program given as units, not a folder)
    kernels = parse_string((folder / "kernels.cu").read_text(), "/nowhere/kernels.cu", "cuda")
    main = parse_string((folder / "main.cpp").read_text(), "/nowhere/main.cpp", "cuda")
    inf = infer_specs(kernels, [main])["relu"]
    assert inf.items["grid"][0] == "grid: cdiv(n, 512)" and not inf.holes


def test_no_host_code_extents_from_guards_and_index_expressions(tmp_path):
    folder = program(tmp_path, {"attention.cu": """
    __global__ void permute(float* out, const float* inp, int B, int T, int C) {
      int idx = blockIdx.x * blockDim.x + threadIdx.x;
      if (idx < B * T * C) {
        int b = idx / (T * C);
        int rest = idx % (T * C);
        int t = rest / C;
        int c = rest % C;
        out[b * T * C + c * T + t] = inp[idx];
      }
    }
    """})
    res = resolve(folder, "attention.cu", "permute")
    assert res.annotation() == ("out: out[B * C * T], inp: in[B * C * T], B: size(1..4096), T: size(1..4096), "
                                "C: size(1..4096), grid: cdiv(B * C * T, 256), block: 256")
    assert origins(res)["out"] == "kernel" and origins(res)["grid"] == "kernel" and origins(res)["B"] == "default"


def test_a_size_the_kernel_does_not_receive(tmp_path):
    folder = program(tmp_path, {"main.cu": """
    __global__ void twice(const float* a, float* o) {
      int t = blockIdx.x * blockDim.x + threadIdx.x;
      o[t] = 2.0f * a[t];
    }
    int main(int argc, char** argv) {
      const int n = atoi(argv[1]);
      float *a, *o;
      cudaMalloc(&a, n * sizeof(float));
      cudaMalloc(&o, n * sizeof(float));
      twice<<<n / 256, 256>>>(a, o);
    }
    """})
    res = resolve(folder, "main.cu", "twice")
    assert res.annotation() == "a: in[n], o: out[n], n: size(1..4096), grid: n / 256, block: 256, where: n % 256 == 0"
    spec = res.spec
    assert spec is not None and spec.param("n").position == -1  # shapes buffers and the launch, never passed


def test_index_buffers_get_the_range_that_keeps_accesses_in_bounds(tmp_path):
    folder = program(tmp_path, {"main.cu": """
    __global__ void spmv(const int* rowptr, const int* col, const float* val, const float* x, float* y, int rows) {
      int r = blockIdx.x * blockDim.x + threadIdx.x;
      if (r < rows) {
        float s = 0;
        for (int j = rowptr[r]; j < rowptr[r + 1]; j++) s += val[j] * x[col[j]];
        y[r] = s;
      }
    }
    int main() {
      int rows = 1000, nnz = 5000, cols = 800;
      int *rp, *ci; float *v, *x, *y;
      cudaMalloc(&rp, (rows + 1) * sizeof(int)); cudaMalloc(&ci, nnz * sizeof(int));
      cudaMalloc(&v, nnz * sizeof(float)); cudaMalloc(&x, cols * sizeof(float)); cudaMalloc(&y, rows * sizeof(float));
      spmv<<<(rows + 127) / 128, 128>>>(rp, ci, v, x, y, rows);
    }
    """})
    res = resolve(folder, "main.cu", "spmv")
    assert res.annotation() == ("rowptr: in[rows + 1](0..nnz ascending), col: in[nnz](0..cols - 1), val: in[nnz], x: in[cols], "
                                "y: out[rows], rows: size(1..1000), nnz: size(1..5000), cols: size(1..800), "
                                "grid: cdiv(rows, 128), block: 128")


def test_float_values_used_as_indices_are_a_hole(tmp_path):
    folder = program(tmp_path, {"h.cu": """
    __global__ void hist(const float* v, int* bins, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) atomicAdd(&bins[(int)(v[i] * 16)], 1);
    }
    """})
    res = resolve(folder, "h.cu", "hist")
    assert not res.complete and "v" in res.holes and "used as indices" in res.holes["v"]


def test_typedefs_and_structs_of_one_number_type(tmp_path):
    folder = program(tmp_path, {"main.cu": """
    typedef double Real_t;
    struct Complex { float re; float im; };
    __global__ void k(const Real_t* a, Complex* z, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) { z[i].re = a[i]; z[i].im = -a[i]; }
    }
    int main() {
      int n = 64; Real_t* a; Complex* z;
      cudaMalloc(&a, n * sizeof(Real_t)); cudaMalloc(&z, n * sizeof(Complex));
      k<<<1, 64>>>(a, z, n);
    }
    """})
    res = resolve(folder, "main.cu", "k")
    assert res.annotation() == "a: in[n], z: out[n, 2] as float32, n: size(1..64), grid: 1, block: 64"
    spec = res.spec
    assert spec is not None and spec.param("a").ctype == "double" and spec.param("z").dims == ["n", "2"]


def test_annotation_wins_over_inference_and_both_are_labelled(tmp_path):
    folder = program(tmp_path, {"main.cu": """
    // xlate: n: size(1..64)
    """ + SAXPY + """
    int main() { int n = 4096; float *x, *y; cudaMalloc(&x, n * 4); cudaMalloc(&y, n * 4);
                 saxpy<<<(n + 255) / 256, 256>>>(n, 1.5f, x, y); }
    """})
    res = resolve(folder, "main.cu", "saxpy")
    assert res.items["n"] == ("n: size(1..64)", res.items["n"][1]) and res.items["n"][1].kind == "annotation"
    assert res.spec is not None and res.spec.source == "mixed" and "x" in res.spec.inferred


def test_unguarded_thread_index_with_no_launch_is_a_hole(tmp_path):
    folder = program(tmp_path, {"k.cu": """
    __global__ void fill(float* out) { out[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f; }
    """})
    res = resolve(folder, "k.cu", "fill")
    assert set(res.holes) >= {"grid", "out"}
    with pytest.raises(Exception) as info:
        build_spec(parse_string((folder / "k.cu").read_text(), str(folder / "k.cu"), "cuda"), "fill")
    assert "cannot infer the grid of 'fill'" in str(info.value) and "annotate it" in str(info.value)


def test_cpp_objects_constructors_members_and_methods(tmp_path):
    folder = program(tmp_path, {"main.cu": """
    template <typename T>
    class Tensor {
     public:
      Tensor(unsigned h, unsigned w) : height_(h), width_(w) { cudaMalloc((void**)&data_, h * w * sizeof(T)); }
      unsigned height_, width_;
      T* data_;
    };
    class Model {
     public:
      void init(int n);
      void step(float* out);
      float* weights; int n_;
    };
    __global__ void rows(const double* m, double* r, unsigned cols) {
      int row = blockIdx.x;
      double s = 0;
      for (int j = threadIdx.x; j < cols; j += blockDim.x) s += m[row * cols + j];
      if (threadIdx.x == 0) r[row] = s;
    }
    __global__ void step_k(int n, const float* w, float* out) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) out[i] = w[i];
    }
    void Model::init(int n) { n_ = n; cudaMalloc(&weights, sizeof(float) * n); }
    void Model::step(float* out) { step_k<<<(n_ + 127) / 128, 128>>>(n_, weights, out); }
    int main() {
      Tensor<double> m(300, 40), r(300, 1);
      rows<<<m.height_, 64>>>(m.data_, r.data_, m.width_);
      Model model; model.init(1000);
      float* o; cudaMalloc(&o, 1000 * sizeof(float));
      model.step(o);
    }
    """})
    res = resolve(folder, "main.cu", "rows")
    # the rows of m and r are two values of the program that are equal (300): they stay equal; a size of 1 is 1
    assert res.annotation() == "m: in[cols * h], r: out[h], cols: size(1..40), h: size(1..300), grid: h, block: 64"
    res = resolve(folder, "main.cu", "step_k")
    assert res.annotation() == "n: size(1..1000), w: in[n], out: out[1000], grid: cdiv(n, 128), block: 128"
