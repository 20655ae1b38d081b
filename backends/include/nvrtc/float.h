// xlate shim: the limits macros come with xlate_nvcc_env.h, pre-included on the NVRTC route.
#pragma once
