"""Wrong: keeps the source's cap of 64 programs but drops the grid-stride loop, so with 64-element
blocks everything past 64 * 64 = 4096 elements is never written (wrong only at large n)."""
import triton
import triton.language as tl


@triton.jit
def _grid_stride_scale_kernel(x_ptr, y_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, alpha * x, mask=mask)


# xlate: x: in[n], y: out[n], n: size(0..1<<20), alpha: scalar(-4..4),
# xlate: grid: max(1, min(cdiv(n, 256), 64)), block: 256, op: elementwise
def grid_stride_scale(x, y, n, alpha):
    grid = (max(1, min(triton.cdiv(n, 64), 64)),)
    _grid_stride_scale_kernel[grid](x, y, n, alpha, BLOCK=64)
