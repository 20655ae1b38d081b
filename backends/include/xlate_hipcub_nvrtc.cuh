// xlate: hipCUB on NVIDIA (see xlate_hip_on_nvidia.h): hipCUB's block- and warp-level API is CUB's under
// another namespace, as hipCUB's own CUDA backend defines it.
#pragma once
#include "xlate_cub_nvrtc.cuh"
namespace hipcub = cub;
