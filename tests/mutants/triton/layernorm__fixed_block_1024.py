"""Wrong only for wide rows: a constant 1024-column block instead of one sized from cols; columns
from 1024 on are never written (and the statistics ignore them)."""
import triton
import triton.language as tl


@triton.jit
def _layernorm_rows_kernel(x_ptr, g_ptr, b_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * cols + offs, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / cols
    d = tl.where(mask, x - mean, 0.0)
    var = tl.sum(d * d, axis=0) / cols
    rstd = 1.0 / tl.sqrt(var + 1e-5)
    g = tl.load(g_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + row * cols + offs, d * rstd * g + b, mask=mask)


# xlate: x: in[rows, cols](-4..4), gamma: in[cols], beta: in[cols], y: out[rows, cols],
# xlate: rows: size(1..256), cols: size(1..2048), grid: rows, block: 256,
# xlate: op: reduction(cols), values: finite
def layernorm_rows(x, gamma, beta, y, rows, cols):
    _layernorm_rows_kernel[(rows,)](x, gamma, beta, y, cols, BLOCK=1024)
