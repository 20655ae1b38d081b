"""Triton port of kernels/transpose.cu: one program per 32x32 tile, transposed in registers."""
import triton
import triton.language as tl


@triton.jit
def _transpose_kernel(src_ptr, dst_ptr, rows, cols, TILE: tl.constexpr):
    pid_c = tl.program_id(0)
    pid_r = tl.program_id(1)
    r = pid_r * TILE + tl.arange(0, TILE)
    c = pid_c * TILE + tl.arange(0, TILE)
    mask = (r[:, None] < rows) & (c[None, :] < cols)
    tile = tl.load(src_ptr + r[:, None] * cols + c[None, :], mask=mask, other=0.0)
    # odata[c, r] = idata[r, c]
    tl.store(dst_ptr + c[None, :] * rows + r[:, None], tile, mask=mask)


# xlate: idata: in[rows, cols], odata: out[cols, rows], rows: size(1..1024), cols: size(1..1024),
# xlate: grid: (cdiv(cols, 32), cdiv(rows, 32)), block: (32, 8), op: movement
def transpose_tiled(idata, odata, rows, cols):
    grid = (triton.cdiv(cols, 32), triton.cdiv(rows, 32))
    _transpose_kernel[grid](idata, odata, rows, cols, TILE=32)
