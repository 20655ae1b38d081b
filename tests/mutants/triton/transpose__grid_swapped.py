"""Wrong for non-square shapes: the launch grid is (row tiles, column tiles) while the kernel reads
program_id(0) as the column tile, so tiles are missed whenever the two tile counts differ."""
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
    tl.store(dst_ptr + c[None, :] * rows + r[:, None], tile, mask=mask)


# xlate: idata: in[rows, cols], odata: out[cols, rows], rows: size(1..1024), cols: size(1..1024),
# xlate: grid: (cdiv(cols, 32), cdiv(rows, 32)), block: (32, 8), op: movement
def transpose_tiled(idata, odata, rows, cols):
    grid = (triton.cdiv(rows, 32), triton.cdiv(cols, 32))
    _transpose_kernel[grid](idata, odata, rows, cols, TILE=32)
