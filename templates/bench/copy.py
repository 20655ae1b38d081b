# The device-to-device copy xlate --benchmark measures once per run when only Triton times on this GPU: the
# bandwidth a streaming kernel can reach (bytes read + written per second).
import triton
import triton.language as tl


@triton.jit
def _xlate_copy_kernel(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst + offs, tl.load(src + offs, mask=mask), mask=mask)


def xlate_copy(src, dst, n):
    _xlate_copy_kernel[(triton.cdiv(n, 1024),)](src, dst, n, BLOCK=1024)
