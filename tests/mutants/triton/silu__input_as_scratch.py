"""Wrong: stores the intermediate sigmoid(x) back into x (an input) as scratch before writing y."""
import triton
import triton.language as tl


@triton.jit
def _silu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(x_ptr + offs, 1.0 / (1.0 + tl.exp(-x)), mask=mask)
    s = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x * s, mask=mask)


# xlate: x: in[n](-20..20), y: out[n], n: size(1..1<<20), grid: cdiv(n, 256), block: 256,
# xlate: op: elementwise
def silu(x, y, n):
    _silu_kernel[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256)
