"""Triton ports of kernels/block_scan.cu: per-block scans with tl.cumsum (no carry between
blocks). Inclusive over 256-element segments, exclusive over 512-element segments."""
import triton
import triton.language as tl


@triton.jit
def _scan_inclusive_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, tl.cumsum(x, axis=0), mask=mask)


@triton.jit
def _scan_exclusive_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, tl.cumsum(x, axis=0) - x, mask=mask)


# xlate: x: in[n], y: out[n], n: size(1..1<<18), grid: cdiv(n, 256), block: 256, op: scan(256)
def block_scan_inclusive(x, y, n):
    _scan_inclusive_kernel[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256)


# xlate: x: in[n], y: out[n], n: size(1..1<<18), grid: cdiv(n, 512), block: 256, op: scan(512)
def block_scan_exclusive(x, y, n):
    _scan_exclusive_kernel[(triton.cdiv(n, 512),)](x, y, n, BLOCK=512)
