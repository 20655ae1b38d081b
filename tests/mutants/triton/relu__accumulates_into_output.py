"""Wrong: adds into y (y += relu(x)) as if y were zero-initialised; y is an output whose old
contents are garbage, so the result depends on memory the kernel never received as input."""
import triton
import triton.language as tl


@triton.jit
def _relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    old = tl.load(y_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, old + tl.where(x > 0.0, x, 0.0), mask=mask)


# xlate: x: in[n], y: out[n], n: size(1..1<<20), grid: cdiv(n, 256), block: 256, op: elementwise
def relu(x, y, n):
    _relu_kernel[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256)
