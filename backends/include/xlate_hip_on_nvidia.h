// xlate: HIP device language on NVIDIA GPUs through NVRTC (CUDA 13).
//
// Debian's HIP-on-NVIDIA headers predate CUDA 13, so HIP ports run on NVIDIA through this prelude instead.
// It covers the device side only (host code is compile-checked for AMD with hipcc). What it proves is
// limited: warps here are 32 wide, so a kernel that is wrong only with 64-wide wavefronts passes here.
#pragma once
#define __HIP_PLATFORM_NVIDIA__ 1
#define __HIP__ 0
#define __HIP_DEVICE_COMPILE__ 1
// hipcc defines __HIPCC__ on every platform (hip_common.h, from __CUDACC__ on NVIDIA): a header that gives its
// members `__host__ __device__` only `#if defined(__NVCC__) || defined(__HIPCC__)` must see it here too
#ifndef __HIPCC__
#define __HIPCC__ 1
#endif
#define HIP_XLATE_ON_NVIDIA 1

#define hipThreadIdx_x threadIdx.x
#define hipThreadIdx_y threadIdx.y
#define hipThreadIdx_z threadIdx.z
#define hipBlockIdx_x blockIdx.x
#define hipBlockIdx_y blockIdx.y
#define hipBlockIdx_z blockIdx.z
#define hipBlockDim_x blockDim.x
#define hipBlockDim_y blockDim.y
#define hipBlockDim_z blockDim.z
#define hipGridDim_x gridDim.x
#define hipGridDim_y gridDim.y
#define hipGridDim_z gridDim.z
#define HIP_DYNAMIC_SHARED(type, var) extern __shared__ type var[];
#define HIP_DYNAMIC_SHARED_ATTRIBUTE
#define __HIP_KERNEL_NAME(...) __VA_ARGS__
#define HIP_KERNEL_NAME(...) __VA_ARGS__

// Warp intrinsics without masks (HIP's classic forms) act on the whole warp, as on AMD.
#define XLATE_FULL_MASK 0xffffffffu
template <typename T> __device__ __forceinline__ T __shfl(T v, int src, int width = 32) { return __shfl_sync(XLATE_FULL_MASK, v, src, width); }
template <typename T> __device__ __forceinline__ T __shfl_up(T v, unsigned int d, int width = 32) { return __shfl_up_sync(XLATE_FULL_MASK, v, d, width); }
template <typename T> __device__ __forceinline__ T __shfl_down(T v, unsigned int d, int width = 32) { return __shfl_down_sync(XLATE_FULL_MASK, v, d, width); }
template <typename T> __device__ __forceinline__ T __shfl_xor(T v, int m, int width = 32) { return __shfl_xor_sync(XLATE_FULL_MASK, v, m, width); }
// HIP's __ballot returns a 64-bit mask (wavefront 64 on CDNA); on NVIDIA the upper half is zero.
// (xlate-hip helper edit) CUDA 13 still declares the deprecated 32-bit __ballot/__any/__all, so defining
// HIP's spellings directly is a redeclaration error under NVRTC, and macros of those names break libcu++ (its
// `struct __any { __any(...); }` and `__all<...>` templates, which thrust and <cuda/std/...> pull in): the route
// renames the port's own calls to these (backends/hip.py, HIP_VOTES) before NVRTC sees them.
__device__ __forceinline__ unsigned long long xlate_hip_ballot(int p) { return (unsigned long long)__ballot_sync(XLATE_FULL_MASK, p); }
__device__ __forceinline__ int xlate_hip_any(int p) { return __any_sync(XLATE_FULL_MASK, p); }
__device__ __forceinline__ int xlate_hip_all(int p) { return __all_sync(XLATE_FULL_MASK, p); }
__device__ __forceinline__ unsigned int __lane_id() { unsigned int r; asm volatile("mov.u32 %0, %%laneid;" : "=r"(r)); return r; }

#include "xlate_hip_vector_ops.h"  // HIP vector types' element-wise operators

// Types and helpers of the HIP headers a port may name.
typedef int hipError_t;
// host handles a port keeps in its structs (`struct State { hipStream_t stream; }` beside the kernels)
typedef cudaStream_t hipStream_t;
typedef cudaEvent_t hipEvent_t;
// pitched allocations a kernel takes by value (`__global__ void k(hipPitchedPtr p, hipExtent e)`): the same layout
typedef cudaPitchedPtr hipPitchedPtr;
typedef cudaExtent hipExtent;
typedef cudaPos hipPos;
#define hipSuccess 0

// hipRAND's device API on NVIDIA is cuRAND's under other names (hipRAND's own NVIDIA backend): names only, so
// they mean something where <curand_kernel.h> is included (hiprand/hiprand_kernel.h maps to it on this route)
#define hiprand curand
#define hiprand4 curand4
#define hiprand_init curand_init
#define hiprand_uniform curand_uniform
#define hiprand_uniform_double curand_uniform_double
#define hiprand_uniform2_double curand_uniform2_double
#define hiprand_uniform4 curand_uniform4
#define hiprand_uniform4_double curand_uniform4_double
#define hiprand_normal curand_normal
#define hiprand_normal2 curand_normal2
#define hiprand_normal4 curand_normal4
#define hiprand_normal_double curand_normal_double
#define hiprand_normal2_double curand_normal2_double
#define hiprand_normal4_double curand_normal4_double
#define hiprand_log_normal curand_log_normal
#define hiprand_log_normal2 curand_log_normal2
#define hiprand_log_normal4 curand_log_normal4
#define hiprand_log_normal_double curand_log_normal_double
#define hiprand_log_normal2_double curand_log_normal2_double
#define hiprand_log_normal4_double curand_log_normal4_double
#define hiprand_poisson curand_poisson
#define hiprand_poisson4 curand_poisson4
#define hiprand_discrete curand_discrete
#define hiprand_discrete4 curand_discrete4
#define hiprandState curandState
#define hiprandState_t curandState_t
#define hiprandStateXORWOW curandStateXORWOW
#define hiprandStateXORWOW_t curandStateXORWOW_t
#define hiprandStateMRG32k3a curandStateMRG32k3a
#define hiprandStateMRG32k3a_t curandStateMRG32k3a_t
#define hiprandStatePhilox4_32_10 curandStatePhilox4_32_10
#define hiprandStatePhilox4_32_10_t curandStatePhilox4_32_10_t
#define hiprandStateSobol32 curandStateSobol32
#define hiprandStateSobol32_t curandStateSobol32_t
#define hiprandStateScrambledSobol32 curandStateScrambledSobol32
#define hiprandStateScrambledSobol32_t curandStateScrambledSobol32_t
#define hiprandStateSobol64 curandStateSobol64
#define hiprandStateSobol64_t curandStateSobol64_t
#define hiprandStateScrambledSobol64 curandStateScrambledSobol64
#define hiprandStateScrambledSobol64_t curandStateScrambledSobol64_t
#define hiprandStateMtgp32 curandStateMtgp32
#define hiprandStateMtgp32_t curandStateMtgp32_t
