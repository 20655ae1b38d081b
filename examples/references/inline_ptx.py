"""NumPy references for kernels/inline_ptx.cu."""
import numpy as np


def ptx_add(a, b, n, **_):
    """c = a + b (add.f32)."""
    return {"c": np.asarray(a, dtype=np.float64) + np.asarray(b, dtype=np.float64)}


def ptx_lane_id(n, **_):
    """lanes[i] = %laneid = i % 32 (1-D blocks of 128 threads, NVIDIA's 32-lane warps)."""
    return {"lanes": np.arange(n, dtype=np.int64) % 32}
