"""Wrong: exp(x) / sum(exp(x)) without subtracting the row max; exp overflows float32 once
x > 88.7, giving inf / inf = NaN. (The corpus range -10..10 cannot reach it: the manifest widens it.)"""
import triton
import triton.language as tl


@triton.jit
def _softmax_rows_kernel(x_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * cols + offs, mask=mask, other=-float("inf"))
    e = tl.where(mask, tl.exp(x), 0.0)
    tl.store(y_ptr + row * cols + offs, e / tl.sum(e, axis=0), mask=mask)


# xlate: x: in[rows, cols](-10..10), y: out[rows, cols], rows: size(1..256), cols: size(1..2048),
# xlate: grid: rows, block: 256, op: reduction(cols), values: finite
def softmax_rows(x, y, rows, cols):
    _softmax_rows_kernel[(rows,)](x, y, cols, BLOCK=triton.next_power_of_2(cols))
