"""Wrong stride for non-square grids: the up/down neighbours are taken ny elements away instead of
nx (the row length); identical to the source when ny == nx."""
import triton
import triton.language as tl


@triton.jit
def _jacobi_kernel(u_ptr, o_ptr, ny, nx, BY: tl.constexpr, BX: tl.constexpr):
    j = tl.program_id(0) * BX + tl.arange(0, BX)
    i = tl.program_id(1) * BY + tl.arange(0, BY)
    inside = (i[:, None] < ny) & (j[None, :] < nx)
    idx = i[:, None] * nx + j[None, :]
    edge = (i[:, None] == 0) | (j[None, :] == 0) | (i[:, None] == ny - 1) | (j[None, :] == nx - 1)
    interior = inside & ~edge
    c = tl.load(u_ptr + idx, mask=inside, other=0.0)
    up = tl.load(u_ptr + idx - ny, mask=interior, other=0.0)
    down = tl.load(u_ptr + idx + ny, mask=interior, other=0.0)
    left = tl.load(u_ptr + idx - 1, mask=interior, other=0.0)
    right = tl.load(u_ptr + idx + 1, mask=interior, other=0.0)
    tl.store(o_ptr + idx, tl.where(edge, c, 0.25 * (up + down + left + right)), mask=inside)


# xlate: u: in[ny, nx], u_new: out[ny, nx], ny: size(1..300), nx: size(1..300),
# xlate: grid: (cdiv(nx, 16), cdiv(ny, 16)), block: (16, 16), op: elementwise
def jacobi_5pt(u, u_new, ny, nx):
    _jacobi_kernel[(triton.cdiv(nx, 16), triton.cdiv(ny, 16))](u, u_new, ny, nx, BY=16, BX=16)
