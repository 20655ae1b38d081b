"""Correct: one program per row looping over 64-column chunks, instead of 8 x 32 tiles."""
import triton
import triton.language as tl


@triton.jit
def _axpy_ld_kernel(cols, alpha, x_ptr, ldx, y_ptr, ldy, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    for c0 in range(0, cols, BLOCK):
        c = c0 + tl.arange(0, BLOCK)
        m = c < cols
        x = tl.load(x_ptr + r * ldx + c, mask=m)
        y = tl.load(y_ptr + r * ldy + c, mask=m)
        tl.store(y_ptr + r * ldy + c, alpha * x + y, mask=m)


# xlate: rows: size(1..300), cols: size(1..300), alpha: scalar(-2..2), X: in[rows, ldx],
# xlate: ldx: size(1..320), Y: inout[rows, ldy], ldy: size(1..320),
# xlate: where: ldx >= cols and ldy >= cols,
# xlate: grid: (cdiv(cols, 32), cdiv(rows, 8)), block: (32, 8), op: elementwise
def matrix_axpy_ld(rows, cols, alpha, X, ldx, Y, ldy):
    _axpy_ld_kernel[(rows,)](cols, alpha, X, ldx, Y, ldy, BLOCK=64)
