// xlate shim: float limits for NVRTC.
#pragma once
#include <cuda/std/cfloat>
