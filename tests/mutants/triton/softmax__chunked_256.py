"""Correct: like the CUDA kernel, three passes over 256-column chunks (max, sum, normalise), so any
cols works with a fixed block; chunk-wise reduction order."""
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(x_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = row * cols
    m = tl.full((BLOCK,), -float("inf"), tl.float32)
    for c0 in range(0, cols, BLOCK):
        c = c0 + tl.arange(0, BLOCK)
        m = tl.maximum(m, tl.load(x_ptr + base + c, mask=c < cols, other=-float("inf")))
    row_max = tl.max(m, axis=0)
    s = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, cols, BLOCK):
        c = c0 + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + base + c, mask=c < cols, other=-float("inf"))
        s += tl.where(c < cols, tl.exp(x - row_max), 0.0)
    inv = 1.0 / tl.sum(s, axis=0)
    for c0 in range(0, cols, BLOCK):
        c = c0 + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + base + c, mask=c < cols, other=0.0)
        tl.store(y_ptr + base + c, tl.exp(x - row_max) * inv, mask=c < cols)


# xlate: x: in[rows, cols](-10..10), y: out[rows, cols], rows: size(1..256), cols: size(1..2048),
# xlate: grid: rows, block: 256, op: reduction(cols), values: finite
def softmax_rows(x, y, rows, cols):
    _softmax_kernel[(rows,)](x, y, cols, BLOCK=256)
