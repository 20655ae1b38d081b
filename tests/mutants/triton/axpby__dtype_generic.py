"""Correct: dtype-generic over T (float32, float16, float64) like the template: the arithmetic runs in
float32 (float64 for T = float64) and the result is rounded once to T on the store."""
import triton
import triton.language as tl


@triton.jit
def _axpby_kernel(x_ptr, y_ptr, o_ptr, alpha, beta, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    if x.dtype == tl.float16:
        x = x.to(tl.float32)
        y = y.to(tl.float32)
    tl.store(o_ptr + offs, (alpha * x + beta * y).to(o_ptr.dtype.element_ty), mask=mask)


# xlate: x: in[n], y: in[n], out: out[n], alpha: scalar(-2..2), beta: scalar(-2..2),
# xlate: n: size(1..1<<20), T: float32|float16|float64,
# xlate: grid: cdiv(n, 256), block: 256, op: elementwise
def axpby(x, y, out, alpha, beta, n):
    _axpby_kernel[(triton.cdiv(n, 256),)](x, y, out, alpha, beta, n, BLOCK=256)
