// xlate shim: integer limits for NVRTC.
#pragma once
#include <cuda/std/climits>
