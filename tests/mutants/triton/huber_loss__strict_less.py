"""Correct: `|d| < delta` instead of `<=`; both branches equal 0.5 * delta^2 at |d| = delta."""
import triton
import triton.language as tl


@triton.jit
def _huber_kernel(p_ptr, t_ptr, l_ptr, n, delta, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    d = tl.load(p_ptr + offs, mask=mask, other=0.0) - tl.load(t_ptr + offs, mask=mask, other=0.0)
    ad = tl.abs(d)
    tl.store(l_ptr + offs, tl.where(ad < delta, 0.5 * d * d, delta * (ad - 0.5 * delta)), mask=mask)


# xlate: pred: in[n](-3..3), target: in[n](-3..3), loss: out[n], n: size(1..1<<20),
# xlate: delta: scalar(0..2), grid: cdiv(n, 256), block: 256, op: elementwise
def huber_loss(pred, target, loss, n, delta):
    _huber_kernel[(triton.cdiv(n, 256),)](pred, target, loss, n, delta, BLOCK=256)
