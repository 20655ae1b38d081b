"""Wrong: `src >= thresh` instead of `src > thresh`; pixels equal to the threshold become 255."""
import triton
import triton.language as tl


@triton.jit
def _threshold_kernel(src_ptr, dst_ptr, n, thresh, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    s = tl.load(src_ptr + offs, mask=mask, other=0).to(tl.int32)
    tl.store(dst_ptr + offs, tl.where(s >= thresh, 255, 0).to(tl.uint8), mask=mask)


# xlate: src: in[n](0..255) as uint8, dst: out[n] as uint8, n: size(1..1<<20), thresh: scalar(0..255),
# xlate: grid: cdiv(n, 256), block: 256, op: elementwise
def threshold_u8(src, dst, n, thresh):
    _threshold_kernel[(triton.cdiv(n, 256),)](src, dst, n, int(thresh), BLOCK=256)
