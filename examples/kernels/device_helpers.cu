// Elementwise Huber loss built from __device__ helpers (huber_elem calls square):
//   d = pred - target;  loss = |d| <= delta ? 0.5*d^2 : delta*(|d| - 0.5*delta)
#include <cuda_runtime.h>

__device__ __forceinline__ float square(float v) {
    return v * v;
}

__device__ float huber_elem(float d, float delta) {
    float ad = fabsf(d);
    return (ad <= delta) ? 0.5f * square(d) : delta * (ad - 0.5f * delta);
}

// xlate: pred: in[n](-3..3), target: in[n](-3..3), loss: out[n], n: size(1..1<<20),
// xlate: delta: scalar(0..2), grid: cdiv(n, 256), block: 256, op: elementwise
__global__ void huber_loss(const float* pred, const float* target, float* loss, int n, float delta) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        loss[i] = huber_elem(pred[i] - target[i], delta);
    }
}

void launch_huber_loss(const float* pred, const float* target, float* loss, int n, float delta,
                       cudaStream_t stream) {
    huber_loss<<<(n + 255) / 256, 256, 0, stream>>>(pred, target, loss, n, delta);
}
