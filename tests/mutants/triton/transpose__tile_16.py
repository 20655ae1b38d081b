"""Correct: 16 x 16 tiles instead of 32 x 32."""
import triton
import triton.language as tl


@triton.jit
def _transpose_kernel(src_ptr, dst_ptr, rows, cols, TILE: tl.constexpr):
    r = tl.program_id(1) * TILE + tl.arange(0, TILE)
    c = tl.program_id(0) * TILE + tl.arange(0, TILE)
    mask = (r[:, None] < rows) & (c[None, :] < cols)
    tile = tl.load(src_ptr + r[:, None] * cols + c[None, :], mask=mask)
    tl.store(dst_ptr + c[None, :] * rows + r[:, None], tile, mask=mask)


# xlate: idata: in[rows, cols], odata: out[cols, rows], rows: size(1..1024), cols: size(1..1024),
# xlate: grid: (cdiv(cols, 32), cdiv(rows, 32)), block: (32, 8), op: movement
def transpose_tiled(idata, odata, rows, cols):
    _transpose_kernel[(triton.cdiv(cols, 16), triton.cdiv(rows, 16))](idata, odata, rows, cols, TILE=16)
