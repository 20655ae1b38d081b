"""Triton port of kernels/matrix_ld.cu: Y[r, c] = alpha * X[r, c] + Y[r, c] with row strides
ldx / ldy on flat buffers; one program per 8x32 tile, Y's padding columns untouched."""
import triton
import triton.language as tl


@triton.jit
def _matrix_axpy_ld_kernel(rows, cols, alpha, x_ptr, ldx, y_ptr, ldy, BR: tl.constexpr,
                           BC: tl.constexpr):
    c = tl.program_id(0) * BC + tl.arange(0, BC)
    r = tl.program_id(1) * BR + tl.arange(0, BR)
    mask = (r[:, None] < rows) & (c[None, :] < cols)
    x = tl.load(x_ptr + r[:, None] * ldx + c[None, :], mask=mask)
    y_ptrs = y_ptr + r[:, None] * ldy + c[None, :]
    y = tl.load(y_ptrs, mask=mask)
    tl.store(y_ptrs, alpha * x + y, mask=mask)


# xlate: rows: size(1..300), cols: size(1..300), alpha: scalar(-2..2), X: in[rows, ldx],
# xlate: ldx: size(1..320), Y: inout[rows, ldy], ldy: size(1..320),
# xlate: where: ldx >= cols and ldy >= cols,
# xlate: grid: (cdiv(cols, 32), cdiv(rows, 8)), block: (32, 8), op: elementwise
def matrix_axpy_ld(rows, cols, alpha, X, ldx, Y, ldy):
    grid = (triton.cdiv(cols, 32), triton.cdiv(rows, 8))
    _matrix_axpy_ld_kernel[grid](rows, cols, alpha, X, ldx, Y, ldy, BR=8, BC=32)
