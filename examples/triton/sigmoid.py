"""Triton port of kernels/sigmoid.cu: y = 1 / (1 + exp(-x))."""
import triton
import triton.language as tl


@triton.jit
def _sigmoid_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, 1.0 / (1.0 + tl.exp(-x)), mask=mask)


# xlate: x: in[n](-20..20), y: out[n], n: size(1..1<<20), grid: cdiv(n, 256), block: 256,
# xlate: op: elementwise
def sigmoid(x, y, n):
    grid = (triton.cdiv(n, 256),)
    _sigmoid_kernel[grid](x, y, n, BLOCK=256)
