"""Correct: exp(-x) written as exp2(-x * log2(e))."""
import triton
import triton.language as tl


@triton.jit
def _sigmoid_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, 1.0 / (1.0 + tl.exp2(-x * 1.4426950408889634)), mask=mask)


# xlate: x: in[n](-20..20), y: out[n], n: size(1..1<<20), grid: cdiv(n, 256), block: 256,
# xlate: op: elementwise
def sigmoid(x, y, n):
    _sigmoid_kernel[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256)
