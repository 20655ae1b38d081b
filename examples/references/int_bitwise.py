"""NumPy integer references for kernels/int_bitwise.cu (32-bit wraparound emulated in int64)."""
import numpy as np


def _wrap_i32(v):
    return (v + 2**31) % 2**32 - 2**31


def xor_mask(a, b, n, mask, **_):
    """c = (a ^ b) & mask, as int32."""
    a = _wrap_i32(np.asarray(a, dtype=np.int64))
    b = _wrap_i32(np.asarray(b, dtype=np.int64))
    return {"c": _wrap_i32((a ^ b) & int(mask))}


def hash_u32(x, n, **_):
    """h = v ^ (v >> 16) with v = x * 2654435761 mod 2^32 (uint32 arithmetic)."""
    x = np.asarray(x, dtype=np.int64) & 0xFFFFFFFF
    v = (x.astype(np.uint64) * np.uint64(2654435761)) & np.uint64(0xFFFFFFFF)
    v = v ^ (v >> np.uint64(16))
    return {"h": v.astype(np.int64)}
