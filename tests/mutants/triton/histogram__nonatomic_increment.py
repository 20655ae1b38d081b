"""Wrong: bins[v] = bins[v] + 1 as a plain load/store instead of an atomic add; repeated byte values
within one block collapse into a single increment."""
import triton
import triton.language as tl


@triton.jit
def _histogram_kernel(data_ptr, bins_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(data_ptr + offs, mask=mask, other=0).to(tl.int32)
    old = tl.load(bins_ptr + v, mask=mask, other=0)
    tl.store(bins_ptr + v, old + 1, mask=mask)


# xlate: data: in[n](0..255) as uint8, bins: inout[256](0..1000) as int32, n: size(0..1<<20),
# xlate: grid: max(1, min(cdiv(n, 256), 120)), block: 256, op: atomic
def histogram_shared(data, bins, n):
    _histogram_kernel[(triton.cdiv(n, 256),)](data, bins, n, BLOCK=256)
