"""Wrong: a ^ (b & mask) instead of (a ^ b) & mask."""
import triton
import triton.language as tl


@triton.jit
def _xor_kernel(a_ptr, b_ptr, c_ptr, n, mask_bits, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=0)
    b = tl.load(b_ptr + offs, mask=mask, other=0)
    tl.store(c_ptr + offs, a ^ (b & mask_bits), mask=mask)


# xlate: a: in[n] as int32, b: in[n] as int32, c: out[n] as int32, n: size(1..1<<20),
# xlate: mask: scalar(0..65535), grid: cdiv(n, 256), block: 256, op: elementwise
def xor_mask(a, b, c, n, mask):
    _xor_kernel[(triton.cdiv(n, 256),)](a, b, c, n, int(mask), BLOCK=256)
