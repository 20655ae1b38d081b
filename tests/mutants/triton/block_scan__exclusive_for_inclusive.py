"""Wrong: computes the exclusive scan (cumsum - x) where the kernel is the inclusive one."""
import triton
import triton.language as tl


@triton.jit
def _scan_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, tl.cumsum(x, axis=0) - x, mask=mask)


# xlate: x: in[n], y: out[n], n: size(1..1<<18), grid: cdiv(n, 256), block: 256, op: scan(256)
def block_scan_inclusive(x, y, n):
    _scan_kernel[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256)
