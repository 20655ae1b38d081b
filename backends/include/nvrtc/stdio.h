// xlate shim: NVRTC provides printf, malloc, memcpy and friends as builtins; std::min/max/swap and
// std::numeric_limits come with xlate_nvcc_env.h, pre-included on the NVRTC route.
#pragma once
