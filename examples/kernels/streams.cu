// Streams: a scaling kernel plus a host pipeline that splits the array into chunks and overlaps
// host->device copy, kernel and device->host copy across two cudaStream_t's.
#include <cuda_runtime.h>

// xlate: x: in[n], y: out[n], n: size(1..1<<20), alpha: scalar(-4..4),
// xlate: grid: cdiv(n, 256), block: 256, op: elementwise
__global__ void chunk_scale(const float* x, float* y, int n, float alpha) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = alpha * x[i];
    }
}

void launch_chunk_scale(const float* x, float* y, int n, float alpha, cudaStream_t stream) {
    chunk_scale<<<(n + 255) / 256, 256, 0, stream>>>(x, y, n, alpha);
}

// Host pipeline: h_x/h_y are host buffers (ideally pinned), d_x/d_y device buffers of n floats.
// Returns the first CUDA error seen (cudaSuccess on success).
cudaError_t pipelined_scale_two_streams(const float* h_x, float* h_y, float* d_x, float* d_y, int n,
                                        float alpha) {
    const int num_streams = 2;
    cudaStream_t streams[num_streams];
    for (int s = 0; s < num_streams; ++s) {
        cudaError_t err = cudaStreamCreate(&streams[s]);
        if (err != cudaSuccess) return err;
    }
    int chunk = (n + num_streams - 1) / num_streams;
    for (int s = 0; s < num_streams; ++s) {
        int offset = s * chunk;
        int len = n - offset;
        if (len > chunk) len = chunk;
        if (len <= 0) continue;
        size_t bytes = (size_t)len * sizeof(float);
        cudaMemcpyAsync(d_x + offset, h_x + offset, bytes, cudaMemcpyHostToDevice, streams[s]);
        launch_chunk_scale(d_x + offset, d_y + offset, len, alpha, streams[s]);
        cudaMemcpyAsync(h_y + offset, d_y + offset, bytes, cudaMemcpyDeviceToHost, streams[s]);
    }
    for (int s = 0; s < num_streams; ++s) {
        cudaStreamSynchronize(streams[s]);
        cudaStreamDestroy(streams[s]);
    }
    return cudaGetLastError();
}
