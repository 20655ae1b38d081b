"""How global memory is touched: the shape of the blocks the port loads and stores, so that Triton's
compiler sees contiguous, vectorisable accesses where the CUDA source made them.

* Vector types (`float4`, `__half2`, packed structs of 2^k lanes) at a per-thread index: one load of a
  [..., lanes] block whose last axis is contiguous (`tl.load(p + off[..., None] + tl.arange(0, lanes))`), split
  into its lanes with `tl.reshape`/`tl.split` (exact: data movement only); stores join the lanes back. The
  compiler turns that into one 64/128-bit access per thread, as CUDA's vector load is, instead of `lanes`
  stride-`lanes` loads.
* In a 2-D block, a load whose address runs along threadIdx.y (stride 1) but not along threadIdx.x -- the read
  side of a shared-memory tiled transpose once forwarding resolved it, or a naive column read -- is issued
  with the two thread axes swapped (rows contiguous) and turned with `tl.trans`: a coalesced tile load and one
  on-chip transpose, not a column gather.
"""

from __future__ import annotations

from xlate.cir import ctype as ctyping
from xlate.translate.triton import sym as S
from xlate.translate.triton.emit import Ctx, Emitter, literal, tl_of
from xlate.translate.triton.state import LiftState
from xlate.translate.triton.sym import Sym

TRANSPOSED = Ctx("transposed", {"x": "tl.arange(0, BX)[:, None]", "y": "tl.arange(0, BY)[None, :]"}, "[BX, BY]")


class Layout:
    """Load and store shapes (mixed into the Lifter)."""

    st: LiftState
    ctx: Ctx
    bx: int
    by: int

    @property
    def em(self) -> Emitter: ...

    # -- scalar loads --------------------------------------------------------------------------------------------

    def emit_global(self, ld: Sym, hint: str = "v") -> None:
        """Issue a global load at this program point, turned where its addresses run down the block's columns."""
        if self.by > 1 and self.ctx.name == "default" and self.transposable(ld):
            em = self.em
            base, offset = ld.args
            addr = em._address(base, offset, ld.mask, TRANSPOSED)
            mask = "" if ld.mask is None else f", mask={em.code(ld.mask, TRANSPOSED, 'bool')}, other=0"
            tile = em.assign(hint + "_t", f"tl.load({addr}{mask})")
            name = em.assign(em.hints.get(ld.id, hint), f"tl.trans({tile})")
            ld.temp = name
            em._remember(ld, self.ctx, name)
            return
        self.em.emit_load(ld, self.ctx, hint=hint)

    def transposable(self, ld: Sym) -> bool:
        """The load's offset is `y + f(x, uniforms)` with f not `x` (a column of the block is contiguous in memory,
        a row is not), and it reads nothing the default orientation already holds (other loads, loop values)."""
        base, offset = ld.args
        mask = ld.mask
        if mask is not None and mask.is_const:
            return False
        if base.lanes or offset.opaque or (mask is not None and mask.opaque):
            return False
        if S.loads_in(offset) or (mask is not None and S.loads_in(mask)):
            return False
        if "x" not in offset.lanes or "y" not in offset.lanes:
            return False
        p = S.poly(offset)
        if p is None:
            return False
        x, y = S.lane_atom("x"), S.lane_atom("y")
        if p.get((y,)) != 1 or any(y in m for m in p if m != (y,)):
            return False
        return p.get((x,)) != 1

    # -- vector types ------------------------------------------------------------------------------------------

    def vector_lanes_ok(self, n: int, off: Sym) -> bool:
        """One block access for a vector of `n` lanes at per-thread offset `off`: n a power of two, the offset
        per-thread (a uniform vector is `n` scalar loads, no slower), the default orientation."""
        return n >= 2 and not n & (n - 1) and bool(off.lanes) and self.ctx.name == "default" and not self.st.defer

    def _full(self, code: str, s: Sym) -> str:
        """`code` of `s` as a tensor of the block's full shape."""
        full = s.opaque or s.lanes >= ({"x", "y"} if self.by > 1 else {"x"})
        return code if full else self.em.broadcast(code, s, self.ctx)

    def _vector_address(self, base: Sym, off: Sym, mask: Sym | None, n: int) -> tuple[str, str]:
        em = self.em
        addr = em._address(base, off, None, self.ctx)
        ptrs = f"tl.expand_dims({self._full(addr, off)}, -1) + tl.arange(0, {n})"
        if mask is None or (mask.is_const and mask.value):
            return ptrs, ""
        m = em.code(mask, self.ctx, "bool")
        return ptrs, f", mask={f'tl.expand_dims({m}, -1)' if mask.lanes or mask.opaque else m}"

    def emit_vector_load(self, comps: list[Sym], off: Sym, hint: str) -> None:
        """Issue `comps` (lane k at `off + k`, one mask) as one [..., n] load split into its lanes."""
        em = self.em
        n = len(comps)
        ptrs, mask = self._vector_address(comps[0].args[0], off, comps[0].mask, n)
        block = em.assign(hint + "_vec", f"tl.load({ptrs}{mask}{', other=0' if mask else ''})")
        names = self._split(block, n, hint)
        for ld, name in zip(comps, names):
            ld.temp = name
            em._remember(ld, self.ctx, name)

    def _split(self, block: str, n: int, hint: str) -> list[str]:
        """The n lanes of a [..., n] block (n a power of two), by halving the lowest index bit each time."""
        em = self.em
        if n == 1:
            return [block]
        bits = n.bit_length() - 1
        src = block if bits == 1 else em.assign(hint + "_lanes", f"tl.reshape({block}, {self._shape([2] * bits)})")
        return self._split_bits(src, bits, hint)

    def _split_bits(self, t: str, bits: int, hint: str) -> list[str]:
        em = self.em
        even, odd = em.fresh(hint), em.fresh(hint)
        em.line(f"{even}, {odd} = tl.split({t})")
        if bits == 1:
            return [even, odd]
        lo, hi = self._split_bits(even, bits - 1, hint), self._split_bits(odd, bits - 1, hint)
        return [x for pair in zip(lo, hi) for x in pair]

    def _shape(self, tail: list[int]) -> str:
        return self.ctx.shape[:-1] + "".join(f", {t}" for t in tail) + "]"

    def emit_vector_store(self, base: Sym, off: Sym, mask: Sym, comps: list[Sym], scalar: str) -> None:
        """Store n lanes (`comps`, of C type `scalar`) at `off + k` as one [..., n] block."""
        em = self.em
        n = len(comps)
        codes = []
        for c in comps:
            if c.is_const and not ctyping.is_symbolic(scalar):
                codes.append(f"tl.full({self.ctx.shape}, {literal(c.value, scalar)}, {tl_of(scalar)})")
                continue
            code = em.code(c, self.ctx, scalar if not ctyping.is_symbolic(scalar) else None)
            if ctyping.is_symbolic(scalar) and c.ctype != scalar:
                code = f"{code}.to({tl_of(scalar)})"
            codes.append(self._full(code, c) if (c.lanes or c.opaque) else em.broadcast(code, c, self.ctx))
        joined = self._join(codes)
        if n > 2:
            joined = f"tl.reshape({joined}, {self._shape([n])})"
        value = em.assign("vec", joined)
        ptrs, m = self._vector_address(base, off, None if mask.is_const else mask, n)
        em.line(f"tl.store({ptrs}, {value}{m})")

    def _join(self, codes: list[str]) -> str:
        if len(codes) == 1:
            return codes[0]
        return f"tl.join({self._join(codes[0::2])}, {self._join(codes[1::2])})"
