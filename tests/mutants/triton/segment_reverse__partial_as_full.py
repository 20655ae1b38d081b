"""Wrong: reverses the last, partial segment as if it were a full 256 elements, so its elements come
from positions past the end (read as 0) instead of from its own valid range."""
import triton
import triton.language as tl


@triton.jit
def _reverse_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    base = tl.program_id(0) * BLOCK
    t = tl.arange(0, BLOCK)
    src = base + BLOCK - 1 - t
    v = tl.load(x_ptr + src, mask=src < n, other=0.0)
    tl.store(y_ptr + base + t, v, mask=base + t < n)


# xlate: x: in[n], y: out[n], n: size(1..1<<20), grid: cdiv(n, 256), block: 256,
# xlate: shmem: block * sizeof(float), op: movement
def segment_reverse(x, y, n):
    _reverse_kernel[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256)
