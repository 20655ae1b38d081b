"""Correct: each program handles two consecutive 128-element tiles in an unrolled loop."""
import triton
import triton.language as tl


@triton.jit
def _relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    for t in tl.static_range(2):
        offs = (tl.program_id(0) * 2 + t) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        tl.store(y_ptr + offs, tl.where(x > 0.0, x, 0.0), mask=mask)


# xlate: x: in[n], y: out[n], n: size(1..1<<20), grid: cdiv(n, 256), block: 256, op: elementwise
def relu(x, y, n):
    _relu_kernel[(triton.cdiv(n, 256),)](x, y, n, BLOCK=128)
