"""Wrong: the hash is computed on int32, so `v >> 16` is an arithmetic (sign-extending) shift
instead of the logical shift of the source's unsigned int."""
import triton
import triton.language as tl


@triton.jit
def _hash_kernel(x_ptr, h_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x_ptr + offs, mask=mask, other=0).to(tl.int32, bitcast=True)
    v = v * -1640531535  # 2654435761 as int32
    v = v ^ (v >> 16)
    tl.store(h_ptr + offs, v.to(tl.uint32, bitcast=True), mask=mask)


# xlate: x: in[n] as uint32, h: out[n] as uint32, n: size(1..1<<20), grid: cdiv(n, 256), block: 256,
# xlate: op: elementwise
def hash_u32(x, h, n):
    _hash_kernel[(triton.cdiv(n, 256),)](x, h, n, BLOCK=256)
