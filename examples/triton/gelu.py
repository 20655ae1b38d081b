"""Triton port of kernels/gelu.cu (tanh-approximate GELU).

tanh(z) is written as 2*sigmoid(2z) - 1 = 1 - 2/(exp(2z) + 1), which needs only tl.exp.
"""
import triton
import triton.language as tl


@triton.jit
def _gelu_tanh_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    t = 1.0 - 2.0 / (tl.exp(2.0 * inner) + 1.0)
    tl.store(y_ptr + offs, 0.5 * x * (1.0 + t), mask=mask)


# xlate: x: in[n](-6..6), y: out[n], n: size(1..1<<20), grid: cdiv(n, 256), block: 256,
# xlate: op: elementwise
def gelu_tanh(x, y, n):
    grid = (triton.cdiv(n, 256),)
    _gelu_tanh_kernel[grid](x, y, n, BLOCK=256)
