// HIP port of kernels/template_axpby.cu: out = alpha * x + beta * y over T in {float, __half, double}.
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>

template <typename T>
struct AccType {
    typedef float type;
};

template <>
struct AccType<double> {
    typedef double type;
};

// xlate: x: in[n], y: in[n], out: out[n], alpha: scalar(-2..2), beta: scalar(-2..2),
// xlate: n: size(1..1<<20), T: float32|float16|float64,
// xlate: grid: cdiv(n, 256), block: 256, op: elementwise
template <typename T>
__global__ void axpby(const T* x, const T* y, T* out, float alpha, float beta, int n) {
    typedef typename AccType<T>::type Acc;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        Acc xv = static_cast<Acc>(x[i]);
        Acc yv = static_cast<Acc>(y[i]);
        Acc r = static_cast<Acc>(alpha) * xv + static_cast<Acc>(beta) * yv;
        out[i] = static_cast<T>(r);
    }
}

template <typename T>
void launch_axpby(const T* x, const T* y, T* out, float alpha, float beta, int n, hipStream_t stream) {
    const int block = 256;
    const int grid = (n + block - 1) / block;
    hipLaunchKernelGGL(axpby<T>, dim3(grid), dim3(block), 0, stream, x, y, out, alpha, beta, n);
}

template void launch_axpby<float>(const float*, const float*, float*, float, float, int, hipStream_t);
template void launch_axpby<__half>(const __half*, const __half*, __half*, float, float, int, hipStream_t);
template void launch_axpby<double>(const double*, const double*, double*, float, float, int, hipStream_t);
