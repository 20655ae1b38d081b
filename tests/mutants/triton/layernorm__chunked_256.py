"""Correct: two-pass mean/variance over 256-column chunks with a fixed block, like the CUDA kernel's
strided loops (chunk-wise summation order)."""
import triton
import triton.language as tl


@triton.jit
def _layernorm_kernel(x_ptr, g_ptr, b_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    base = tl.program_id(0) * cols
    s = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, cols, BLOCK):
        c = c0 + tl.arange(0, BLOCK)
        s += tl.load(x_ptr + base + c, mask=c < cols, other=0.0)
    mean = tl.sum(s, axis=0) / cols
    q = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, cols, BLOCK):
        c = c0 + tl.arange(0, BLOCK)
        d = tl.where(c < cols, tl.load(x_ptr + base + c, mask=c < cols, other=0.0) - mean, 0.0)
        q += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(q, axis=0) / cols + 1e-5)
    for c0 in range(0, cols, BLOCK):
        c = c0 + tl.arange(0, BLOCK)
        m = c < cols
        x = tl.load(x_ptr + base + c, mask=m, other=0.0)
        g = tl.load(g_ptr + c, mask=m, other=0.0)
        b = tl.load(b_ptr + c, mask=m, other=0.0)
        tl.store(y_ptr + base + c, (x - mean) * rstd * g + b, mask=m)


# xlate: x: in[rows, cols](-4..4), gamma: in[cols], beta: in[cols], y: out[rows, cols],
# xlate: rows: size(1..256), cols: size(1..2048), grid: rows, block: 256,
# xlate: op: reduction(cols), values: finite
def layernorm_rows(x, gamma, beta, y, rows, cols):
    _layernorm_kernel[(rows,)](x, gamma, beta, y, cols, BLOCK=256)
