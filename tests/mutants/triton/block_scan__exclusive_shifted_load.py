"""Correct: the exclusive scan as the inclusive scan of the input shifted right by one within each
512-element segment (no cumsum - x cancellation)."""
import triton
import triton.language as tl


@triton.jit
def _scan_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    t = tl.arange(0, BLOCK)
    offs = tl.program_id(0) * BLOCK + t
    prev = tl.load(x_ptr + offs - 1, mask=(t > 0) & (offs - 1 < n), other=0.0)
    tl.store(y_ptr + offs, tl.cumsum(prev, axis=0), mask=offs < n)


# xlate: x: in[n], y: out[n], n: size(1..1<<18), grid: cdiv(n, 512), block: 256, op: scan(512)
def block_scan_exclusive(x, y, n):
    _scan_kernel[(triton.cdiv(n, 512),)](x, y, n, BLOCK=512)
