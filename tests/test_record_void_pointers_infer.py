"""A by-value parameter struct whose data pointers are `void*` (the pointer type a host fills from several element
types) takes, for each such field, the one number type the kernel casts it to (`reinterpret_cast<const float*>
(p.x_ptr)`, `static_cast`, a C cast), through the device functions the struct is handed to; a test against null
reads no element. Where the kernel casts a field to several types, to a type xlate does not resolve (a template's)
or uses it uncast, the hole names the field and why. Kernels written for these tests."""

from __future__ import annotations

import textwrap

from xlate.parse import parse_string
from xlate.specs import resolve_spec

PROGRAM = textwrap.dedent("""
    struct MixParams {
        int n;
        float gain;
        void *__restrict__ x_ptr;
        void *__restrict__ bias_ptr;
        void *__restrict__ out_ptr;
        void *unused_ptr;
    };

    __device__ void store(const MixParams &p, int i, float v) { static_cast<float *>(p.out_ptr)[i] = v; }

    __global__ void mix(MixParams p) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i >= p.n) return;
        const float *x = reinterpret_cast<const float *>(p.x_ptr);
        float b = p.bias_ptr == nullptr ? 0.f : ((const double *)p.bias_ptr)[i % 7];
        store(p, i, p.gain * x[i] + b);
    }

    __global__ void two_views(MixParams p) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < p.n) reinterpret_cast<float *>(p.out_ptr)[i] = reinterpret_cast<const int *>(p.out_ptr)[i];
    }

    template <typename T>
    __global__ void typed_by_template(MixParams p) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < p.n) reinterpret_cast<T *>(p.out_ptr)[i] = T(0);
    }

    __global__ void from_elsewhere(MixParams p) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < p.n) static_cast<float *>(p.out_ptr)[i] = 0.f;
    }

    MixParams *params_at(int n);  // defined in code not read

    int main() {
        int n = 1000;
        float *d_x, *d_out, *d_u;
        double *d_b;
        cudaMalloc(&d_x, n * sizeof(float));
        cudaMalloc(&d_b, 7 * sizeof(double));
        cudaMalloc(&d_out, n * sizeof(float));
        cudaMalloc(&d_u, 16);
        MixParams p;
        p.n = n;
        p.gain = 0.5f;
        p.x_ptr = d_x;
        p.bias_ptr = d_b;
        p.out_ptr = d_out;
        p.unused_ptr = d_u;
        mix<<<(n + 127) / 128, 128>>>(p);
        two_views<<<(n + 127) / 128, 128>>>(p);
        typed_by_template<float><<<(n + 127) / 128, 128>>>(p);
        MixParams *q = params_at(n);
        from_elsewhere<<<(n + 127) / 128, 128>>>(*q);
        return 0;
    }
""").lstrip()


def _res(kernel: str):
    return resolve_spec(parse_string(PROGRAM, "mix.cu", "cuda"), kernel)


def test_void_pointer_fields_take_the_types_the_kernel_casts_them_to():
    res = _res("mix")
    assert res.complete, res.holes
    # x read as floats, bias as doubles (its null test reads nothing), out written as floats in a device
    # function; a field the kernel never touches is bytes; lengths from the host's allocations
    assert res.annotation().startswith(
        "p: scalar as {n: int32 const(n), gain: float32, x_ptr: in[n] as float32, bias_ptr: in[7] as float64, "
        "out_ptr: out[n] as float32, unused_ptr: in[16] as uint8}"), res.annotation()


def test_holes_name_the_void_pointer_field_and_why():
    two = _res("two_views").holes["p"]
    assert "an untyped pointer 'out_ptr' (void*) the kernel casts to several types (float*, int*)" in two, two
    templ = _res("typed_by_template").holes["p"]
    assert "an untyped pointer 'out_ptr' (void*) the kernel casts to T*, which is no number type" in templ, templ
    elsewhere = _res("from_elsewhere").holes["p"]  # the argument the launch passes, named
    assert "it holds pointers, and the launch passes '*q', a value xlate does not follow" in elsewhere, elsewhere
