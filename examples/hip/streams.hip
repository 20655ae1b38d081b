// HIP port of kernels/streams.cu: a scaling kernel plus a two-stream chunked host pipeline
// (hipStreamCreate / hipMemcpyAsync / hipStreamSynchronize / hipStreamDestroy).
#include <hip/hip_runtime.h>

// xlate: x: in[n], y: out[n], n: size(1..1<<20), alpha: scalar(-4..4),
// xlate: grid: cdiv(n, 256), block: 256, op: elementwise
__global__ void chunk_scale(const float* x, float* y, int n, float alpha) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = alpha * x[i];
    }
}

void launch_chunk_scale(const float* x, float* y, int n, float alpha, hipStream_t stream) {
    hipLaunchKernelGGL(chunk_scale, dim3((n + 255) / 256), dim3(256), 0, stream, x, y, n, alpha);
}

// Host pipeline: h_x/h_y are host buffers (ideally pinned with hipHostMalloc), d_x/d_y device
// buffers of n floats. Returns the first HIP error seen (hipSuccess on success).
hipError_t pipelined_scale_two_streams(const float* h_x, float* h_y, float* d_x, float* d_y, int n,
                                       float alpha) {
    const int num_streams = 2;
    hipStream_t streams[num_streams];
    for (int s = 0; s < num_streams; ++s) {
        hipError_t err = hipStreamCreate(&streams[s]);
        if (err != hipSuccess) return err;
    }
    int chunk = (n + num_streams - 1) / num_streams;
    for (int s = 0; s < num_streams; ++s) {
        int offset = s * chunk;
        int len = n - offset;
        if (len > chunk) len = chunk;
        if (len <= 0) continue;
        size_t bytes = (size_t)len * sizeof(float);
        hipMemcpyAsync(d_x + offset, h_x + offset, bytes, hipMemcpyHostToDevice, streams[s]);
        launch_chunk_scale(d_x + offset, d_y + offset, len, alpha, streams[s]);
        hipMemcpyAsync(h_y + offset, d_y + offset, bytes, hipMemcpyDeviceToHost, streams[s]);
    }
    for (int s = 0; s < num_streams; ++s) {
        hipStreamSynchronize(streams[s]);
        hipStreamDestroy(streams[s]);
    }
    return hipGetLastError();
}
