"""Triton port of kernels/macros.cu (hard-swish; the CUDA macros become plain expressions)."""
import triton
import triton.language as tl


@triton.jit
def _hardswish_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    t = tl.minimum(tl.maximum(x + 3.0, 0.0), 6.0)
    tl.store(y_ptr + offs, x * t / 6.0, mask=mask)


# xlate: x: in[n](-8..8), y: out[n], n: size(1..1<<20), grid: cdiv(n, 256), block: 256,
# xlate: op: elementwise
def hardswish(x, y, n):
    _hardswish_kernel[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256)
