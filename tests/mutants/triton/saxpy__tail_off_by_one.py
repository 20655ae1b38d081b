"""Wrong: off-by-one bound `offs < n - 1`; y is read-write, so its last element keeps the old y
instead of a * x + y (no poison can reveal that: only the value is wrong)."""
import triton
import triton.language as tl


@triton.jit
def _saxpy_kernel(n, a, x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n - 1
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, a * x + y, mask=mask)


# xlate: n: size(1..1<<20), a: scalar(-4..4), x: in[n], y: inout[n],
# xlate: grid: cdiv(n, 256), block: 256, op: elementwise
def saxpy(n, a, x, y):
    _saxpy_kernel[(triton.cdiv(n, 256),)](n, a, x, y, BLOCK=256)
