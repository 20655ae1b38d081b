"""How global memory is touched: the shape of the blocks the port loads and stores, so that Triton's
compiler sees contiguous, vectorisable accesses where the CUDA source made them.

* Vector types (`float4`, `__half2`, packed structs of 2^k lanes) at a per-thread index: one load of a
  [..., lanes] block whose last axis is contiguous (`tl.load(p + off[..., None] + tl.arange(0, lanes))`), split
  into its lanes with `tl.reshape`/`tl.split` (exact: data movement only); stores join the lanes back. The
  compiler turns that into one 64/128-bit access per thread, as CUDA's vector load is, instead of `lanes`
  stride-`lanes` loads.
* Scalar loads of one buffer at consecutive per-thread offsets (`a[4 * i]`, `a[4 * i + 1]`, ... of an unrolled
  loop), under one mask and with no store or barrier between them, become one [..., n] block load (n a power of
  two, the first offset a multiple of n) split into its lanes: the first load's line is rewritten to the block
  load, the others to its lanes.
* In a 2-D block, a load whose address runs along threadIdx.y (stride 1) but not along threadIdx.x -- the read
  side of a shared-memory tiled transpose once forwarding resolved it, or a naive column read -- is issued
  with the two thread axes swapped (rows contiguous) and turned with `tl.trans`: a coalesced tile load and one
  on-chip transpose, not a column gather.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xlate.cir import ctype as ctyping
from xlate.translate.triton import sym as S
from xlate.translate.triton.emit import Ctx, Emitter, literal, tl_of
from xlate.translate.triton.state import LiftState
from xlate.translate.triton.sym import Sym

MAX_MERGED = 8  # scalar loads merged into one block load at most


@dataclass(frozen=True)
class LoadRun:
    """Scalar loads issued at `first`'s offset + k: k -> (line number, the line's text, the load's variable)."""

    first: Sym
    lanes: dict[int, tuple[int, str, str]]
    width: int  # lanes 0..width-1 are one block load already

    def intact(self, lines: list[str]) -> bool:
        """Whether the recorded lines are still in place (a fork may have truncated them)."""
        return all(i < len(lines) and lines[i] == text for i, text, _ in self.lanes.values())


def offset_delta(a: Sym, b: Sym) -> int | None:
    """b - a where it is a constant (as polynomials over the same atoms); narrowing casts of both sides are
    looked through (truncation commutes with addition). None otherwise."""
    while (a.op == "cast" and b.op == "cast" and a.ctype == b.ctype and a.args[0].ctype == b.args[0].ctype
           and ctyping.is_int(a.ctype) and ctyping.is_int(a.args[0].ctype)
           and ctyping.bits(a.ctype) <= ctyping.bits(a.args[0].ctype)):
        a, b = a.args[0], b.args[0]
    if a.ctype != b.ctype:
        return None
    (ra, ca), (rb, cb) = _constant_part(a), _constant_part(b)
    if S.canon(ra) == S.canon(rb):  # `x + 1` with a constant of another width is an atom to poly
        return cb - ca
    pa, pb = S.poly(a), S.poly(b)
    if pa is None or pb is None:
        return None
    diff = {m: pb.get(m, 0) - pa.get(m, 0) for m in set(pa) | set(pb)}
    if any(c for m, c in diff.items() if m != ()):
        return None
    mod = 1 << ctyping.bits(a.ctype)
    d = diff.get((), 0) % mod
    return d - mod if d >= mod // 2 else d


def aligned(off: Sym, n: int) -> bool:
    """Whether offset `off` is a multiple of n on every thread (each term's coefficient is): a block of n at it
    is then n aligned elements, which Triton issues as vector accesses. A misaligned block gains no fewer loads
    and costs a layout conversion through shared memory to split."""
    if off.is_const:
        return ctyping.is_int(off.ctype) and int(off.value) % n == 0
    a = off.args
    if off.op == "mul":
        return aligned(a[0], n) or aligned(a[1], n)
    if off.op in ("add", "sub"):
        return aligned(a[0], n) and aligned(a[1], n)
    if off.op in ("cast", "neg", "pos"):  # integer casts keep the low bits, and n divides a power of two
        return ctyping.is_int(off.ctype) and ctyping.is_int(a[0].ctype) and aligned(a[0], n)
    if off.op == "shl" and a[1].is_const:
        return (1 << int(a[1].value)) % n == 0 or aligned(a[0], n)
    return False


def _constant_part(s: Sym) -> tuple[Sym, int]:
    """`s` as rest + c, c the constants added or subtracted at its top."""
    c = 0
    while s.op in ("add", "sub") and s.args[1].is_const and ctyping.is_int(s.args[1].ctype) and ctyping.is_int(s.ctype):
        c += int(s.args[1].value) * (1 if s.op == "add" else -1)
        s = s.args[0]
    return s, c


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
            em.set_temp(ld, name)
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

    # -- adjacent scalar loads ----------------------------------------------------------------------------------

    def merge_adjacent(self, ld: Sym) -> None:
        """Record the scalar load just issued; where it completes a run of 2, 4 or 8 loads at consecutive offsets
        (same buffer, mask, barrier interval, loop body and nesting, no store since), rewrite the run's lines into
        one block load and its lanes."""
        em = self.em
        if not em.enabled or self.ctx.name != "default" or ld.temp is None or not ld.args[1].lanes:
            return
        at = len(em.lines) - 1
        if at < 0 or not em.lines[at].startswith("    " * em.level + f"{ld.temp} = tl.load("):
            return
        key = (ld.root, S.canon(ld.args[0]), S.canon(ld.mask) if ld.mask is not None else None, ld.ctype,
               sum(self.st.store_epoch.values()), self.st.epoch, self.st.region, em.level)
        run = self.st.load_runs.get(key)
        k = None if run is None else offset_delta(run.first.args[1], ld.args[1])
        if run is None or k is None or not 0 < k < MAX_MERGED or k in run.lanes or not run.intact(em.lines):
            self.st.load_runs[key] = LoadRun(ld, {0: (at, em.lines[at], ld.temp)}, 1)
            return
        lanes = {**run.lanes, k: (at, em.lines[at], ld.temp)}
        n = 1
        while n * 2 <= MAX_MERGED and all(j in lanes for j in range(n * 2)) and aligned(run.first.args[1], n * 2):
            n *= 2
        self.st.load_runs[key] = LoadRun(run.first, lanes, run.width)
        if n > run.width:
            self.st.load_runs[key] = self._merge_run(run.first, lanes, n) or self.st.load_runs[key]

    def _merge_run(self, first: Sym, lanes: dict[int, tuple[int, str, str]], n: int) -> LoadRun | None:
        """Rewrite lanes 0..n-1 as one [..., n] block load at the first's line; None (nothing changed) where its
        address or mask is no longer at hand without new lines."""
        em = self.em
        mark = len(em.lines)
        ptrs, mask = self._vector_address(first.args[0], first.args[1], first.mask, n)
        if len(em.lines) != mark:  # the address needed lines of its own: they would come after the first load
            del em.lines[mark:]
            return None
        block = em.assign(first.root or "v", f"tl.load({ptrs}{mask}{', other=0' if mask else ''})")
        names = self._split(block, n, first.root or "v")
        made = em.lines[mark:]
        del em.lines[mark:]
        pad = "    " * em.level
        out = dict(lanes)
        for j in range(n):
            at, _, var = lanes[j]
            text = "\n".join([*made, f"{pad}{var} = {names[0]}"]) if j == 0 else f"{pad}{var} = {names[j]}"
            em.lines[at] = text
            out[j] = (at, text, var)
        return LoadRun(first, out, n)

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
            em.set_temp(ld, name)
            em._remember(ld, self.ctx, name)

    def emit_staged_vector(self, values: list[Any]) -> bool:
        """Issue the loads of the lanes of a vector read of a staged shared array (staging.py: each lane the global
        element the staging loop copied there, under the condition that it did; read with the loads deferred):
        one [..., n] load where they are n consecutive elements of one buffer under one condition -- the vector
        access the CUDA code made -- instead of n scalar loads (fma's row kernel reads its `b` so: 8 loads -> 1).
        False, nothing issued, where they are not."""
        n = len(values)
        if n < 2 or n & (n - 1) or self.ctx.name != "default" or self.st.defer:
            return False
        loads: list[Sym] = []
        for v in values:
            if not isinstance(v, Sym):
                return False
            # the loads not issued yet (a condition's loads, of indices say, were issued before the read)
            found = [ld for ld in S.loads_in(v) if self._unissued(ld)]
            if len(found) != 1:
                return False  # another shape of value, or loads of its own in a condition
            loads.append(found[0])
        first = loads[0]
        mask = S.canon(first.mask) if first.mask is not None else None
        start = S.cast(first.args[1], "int")
        for k, ld in enumerate(loads):
            if (ld.root != first.root or ld.epoch != first.epoch or ld.ctype != first.ctype
                    or S.canon(ld.args[0]) != S.canon(first.args[0])
                    or (S.canon(ld.mask) if ld.mask is not None else None) != mask
                    or S.canon(S.cast(ld.args[1], "int")) != S.canon(S.op("add", "int", start, S.const(k, "int")))):
                return False
        self.emit_vector_load(loads, first.args[1], first.root or "v")
        return True

    def _unissued(self, ld: Sym) -> bool:
        """Whether load `ld` has no variable holding it here yet."""
        return ld.temp is None and self.em._cached(ld, self.ctx) is None

    def issue_deferred(self, values: list[Any]) -> None:
        """Issue now, in the order they were built, the loads of `values` not issued yet (built deferred)."""
        pending = {ld.id: ld for v in values if isinstance(v, Sym) for ld in S.loads_in(v)}
        for ld in sorted(pending.values(), key=lambda x: x.id):
            if self._unissued(ld):
                self.emit_global(ld, hint=ld.root or "v")

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
