// xlate: hip/hip_fp8.h on NVIDIA (see xlate_hip_on_nvidia.h): HIP's OCP fp8 names as CUDA's (cuda_fp8.h), the
// same encodings and the same argument order. HIP's FNUZ formats (__HIP_E4M3_FNUZ, __hip_fp8_e4m3_fnuz) are another
// encoding with no NVIDIA counterpart: a port that names them does not compile here, on purpose.
#pragma once
#include <cuda_fp8.h>
typedef __nv_fp8_storage_t __hip_fp8_storage_t;
typedef __nv_fp8x2_storage_t __hip_fp8x2_storage_t;
typedef __nv_fp8x4_storage_t __hip_fp8x4_storage_t;
typedef __nv_saturation_t __hip_saturation_t;
typedef __nv_fp8_interpretation_t __hip_fp8_interpretation_t;
typedef __nv_fp8_e4m3 __hip_fp8_e4m3;
typedef __nv_fp8_e5m2 __hip_fp8_e5m2;
typedef __nv_fp8x2_e4m3 __hip_fp8x2_e4m3;
typedef __nv_fp8x2_e5m2 __hip_fp8x2_e5m2;
typedef __nv_fp8x4_e4m3 __hip_fp8x4_e4m3;
typedef __nv_fp8x4_e5m2 __hip_fp8x4_e5m2;
#define __HIP_NOSAT __NV_NOSAT
#define __HIP_SATFINITE __NV_SATFINITE
#define __HIP_E4M3 __NV_E4M3
#define __HIP_E5M2 __NV_E5M2
#define __hip_cvt_float_to_fp8 __nv_cvt_float_to_fp8
#define __hip_cvt_float2_to_fp8x2 __nv_cvt_float2_to_fp8x2
#define __hip_cvt_double_to_fp8 __nv_cvt_double_to_fp8
#define __hip_cvt_double2_to_fp8x2 __nv_cvt_double2_to_fp8x2
#define __hip_cvt_halfraw_to_fp8 __nv_cvt_halfraw_to_fp8
#define __hip_cvt_halfraw2_to_fp8x2 __nv_cvt_halfraw2_to_fp8x2
#define __hip_cvt_bfloat16raw_to_fp8 __nv_cvt_bfloat16raw_to_fp8
#define __hip_cvt_bfloat16raw2_to_fp8x2 __nv_cvt_bfloat16raw2_to_fp8x2
#define __hip_cvt_fp8_to_halfraw __nv_cvt_fp8_to_halfraw
#define __hip_cvt_fp8x2_to_halfraw2 __nv_cvt_fp8x2_to_halfraw2
