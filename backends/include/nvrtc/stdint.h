// xlate shim: the fixed-width integer types come with xlate_nvcc_env.h, pre-included on the NVRTC route.
#pragma once
