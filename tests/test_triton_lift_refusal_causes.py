"""Shared-memory refusals name their cause: a write subscript that splits the thread index, threads that store
one element with different values, and a shared array a run-time loop writes that it cannot carry (a block sized
at launch, a size set by the launch's dynamic shared memory) or whose carrying fails (a divergent barrier later
in the loop), and block communication that is no reduction, scan or gather (what the threads using the value
hold). Each kernel here is refused, with the cause in its diagnostic."""

from __future__ import annotations

import pytest

from tests.test_triton_lift import port

KERNELS = """
// xlate: x: in[n], idx: in[n](0..63), y: out[n], n: size(1..3000), grid: cdiv(n, 64), block: 64
__global__ void split_index(const float* x, const int* idx, float* y, int n) {
    __shared__ float s[80];
    int t = threadIdx.x;
    int i = blockIdx.x * 64 + t;
    s[(t / 8) * 10 + t % 8] = i < n ? x[i] : 0.0f;
    __syncthreads();
    if (i < n) y[i] = s[idx[i]];
}

// xlate: x: in[n], y: out[n], n: size(1..3000), grid: cdiv(n, 64), block: 64
__global__ void any_writer(const float* x, float* y, int n) {
    __shared__ int s[1];
    int i = blockIdx.x * 64 + threadIdx.x;
    if (i < n && x[i] > 0.0f) s[0] = threadIdx.x;
    __syncthreads();
    if (i < n) y[i] = s[0];
}

// xlate: x: in[n], y: out[n], n: size(1..3000), bs: choice(32|64), steps: size(1..5), grid: cdiv(n, bs), block: bs
__global__ void launch_sized(const float* x, float* y, int n, int steps) {
    __shared__ float s[64];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int k = 0; k < steps; k++) {
        float v = s[(t + 1) % blockDim.x];
        __syncthreads();
        s[t] = v + 1.0f;
        __syncthreads();
    }
    if (i < n) y[i] = s[t];
}

// xlate: x: in[n], y: out[n], n: size(1..3000), m: size(1..8), steps: size(1..5), grid: cdiv(n, 64), block: 64, shmem: 4 * m * 64
__global__ void sized_at_launch(const float* x, float* y, int n, int m, int steps) {
    extern __shared__ float s[];
    int t = threadIdx.x;
    int i = blockIdx.x * 64 + t;
    s[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int k = 0; k < steps; k++) {
        float v = s[(t + 1) % 64];
        __syncthreads();
        s[t] = v + 1.0f;
        __syncthreads();
    }
    if (i < n) y[i] = s[t];
}

// xlate: x: in[n], y: out[n], n: size(1..3000), steps: size(1..5), grid: cdiv(n, 64), block: 64
__global__ void divergent_barrier(const float* x, float* y, int n, int steps) {
    __shared__ float s[64];
    int t = threadIdx.x;
    int i = blockIdx.x * 64 + t;
    s[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int k = 0; k < steps; k++) {
        float v = s[(t + 1) % 64];
        __syncthreads();
        s[t] = v + 1.0f;
        __syncthreads();
        if (t < 32) __syncthreads();
    }
    if (i < n) y[i] = s[t];
}

// every thread of a 2-D block stores its partial warp sum (a shuffle past the warp's end adds a lane's own value)
// xlate: x: in[n], y: out[n], n: size(1..3000), grid: cdiv(n, 32), block: (8, 4)
__global__ void rows_partial(const float* x, float* y, int n) {
    int t = threadIdx.y * 8 + threadIdx.x;
    int i = blockIdx.x * 32 + t;
    float v = i < n ? x[i] : 0.0f;
    for (int d = 16; d > 0; d /= 2) v += __shfl_down_sync(0xffffffff, v, d);
    if (i < n) y[i] = v;
}
"""

CAUSES = {
    "split_index": "it applies `%` to the thread index",
    "any_writer": "the threads along x store the same element with values that may differ",
    "launch_sized": "not this one: the block is sized at launch",
    "sized_at_launch": "not this one: its size is the launch's dynamic shared memory",
    "divergent_barrier": "carried across the loop instead: __syncthreads under a thread-dependent condition",
    "rows_partial": "of the 32 threads that use it, 24 a value that counts one thread twice or mixes operators, 8 a partial sum",
}


@pytest.fixture(scope="module")
def refused():
    return port(KERNELS)


@pytest.mark.parametrize("kernel", sorted(CAUSES))
def test_the_refusal_names_the_cause(refused, kernel):
    assert kernel not in refused.kernels
    msgs = [d.message for d in refused.diagnostics if d.kernel == kernel]
    assert any(CAUSES[kernel] in m for m in msgs), msgs
