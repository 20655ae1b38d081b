"""Wrong only at n = 1: the grid is sized from the last index (n - 1), which is 0 programs for
n = 1; for every other n the grid-stride loop covers the array anyway."""
import triton
import triton.language as tl


@triton.jit
def _grid_stride_scale_kernel(x_ptr, y_ptr, n, alpha, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    step = tl.num_programs(0) * BLOCK
    for start in range(pid * BLOCK, n, step):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        tl.store(y_ptr + offs, alpha * x, mask=mask)


# xlate: x: in[n], y: out[n], n: size(0..1<<20), alpha: scalar(-4..4),
# xlate: grid: max(1, min(cdiv(n, 256), 64)), block: 256, op: elementwise
def grid_stride_scale(x, y, n, alpha):
    grid = (min(triton.cdiv(n - 1, 256), 64),)
    _grid_stride_scale_kernel[grid](x, y, n, alpha, BLOCK=256)
