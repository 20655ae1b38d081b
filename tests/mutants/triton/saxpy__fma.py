"""Correct: a * x + y as one fused multiply-add (one rounding instead of two)."""
import triton
import triton.language as tl


@triton.jit
def _saxpy_kernel(n, a, x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.fma(x, a, y), mask=mask)


# xlate: n: size(1..1<<20), a: scalar(-4..4), x: in[n], y: inout[n],
# xlate: grid: cdiv(n, 256), block: 256, op: elementwise
def saxpy(n, a, x, y):
    _saxpy_kernel[(triton.cdiv(n, 256),)](n, a, x, y, BLOCK=256)
