"""Correct: one program per tile of the output, gathering the transposed input tile and storing
contiguously (tl.trans in registers) instead of scattering on store."""
import triton
import triton.language as tl


@triton.jit
def _transpose_kernel(src_ptr, dst_ptr, rows, cols, TILE: tl.constexpr):
    oc = tl.program_id(0) * TILE + tl.arange(0, TILE)  # output row = input column
    orr = tl.program_id(1) * TILE + tl.arange(0, TILE)  # output column = input row
    src = tl.load(src_ptr + orr[:, None] * cols + oc[None, :],
                  mask=(orr[:, None] < rows) & (oc[None, :] < cols), other=0.0)
    tl.store(dst_ptr + oc[:, None] * rows + orr[None, :], tl.trans(src),
             mask=(oc[:, None] < cols) & (orr[None, :] < rows))


# xlate: idata: in[rows, cols], odata: out[cols, rows], rows: size(1..1024), cols: size(1..1024),
# xlate: grid: (cdiv(cols, 32), cdiv(rows, 32)), block: (32, 8), op: movement
def transpose_tiled(idata, odata, rows, cols):
    _transpose_kernel[(triton.cdiv(cols, 32), triton.cdiv(rows, 32))](idata, odata, rows, cols, TILE=32)
