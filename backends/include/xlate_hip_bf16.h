// xlate: hip/hip_bf16.h on NVIDIA (see xlate_hip_on_nvidia.h).
#pragma once
#include <cuda_bf16.h>
typedef __nv_bfloat16 __hip_bfloat16;
typedef __nv_bfloat162 __hip_bfloat162;
