"""Communication between the threads of a block: shared memory and warp shuffles.

Two mechanisms, both checked on the actual block size (the spec's `block`):

* Forwarding (staging): a read of `s[r(t)]` after a barrier is replaced by the value thread t' stored, where
  t' solves w(t') = r(t) for the write's affine index map w; the write's predicate and value are re-evaluated
  for t' (loads are re-issued under the combined mask). Several writes form a where-chain, latest first.
  A stored value that loads global memory is not loaded again for t' but gathered: the writers' block, loaded
  once, is indexed at t' along the lane axis that moves (`tl.gather`), as CUDA reuses its shared tile.
* Tokens (reductions, scans): when the indices are thread-index arithmetic only, every slot's content is
  tracked per thread as a *token*: which (value, thread) pairs it combines and with which operator. A read
  whose token is the complete sum/max/min of one per-thread value over every thread of the block becomes
  `tl.sum/max/min`; prefix tokens become `tl.cumsum`. Shuffles permute tokens between threads.
A stored value that cannot be re-evaluated for its writer (it reads a loop-carried register) is taken from the
block that computed it, at the writer's lane (`tl.gather`). A shared array a run-time loop carries (carry.py) is
a where-chain entry like any write: its block tensor, or a gather of it at the lane holding the element.
A pattern that is neither (or a read of another thread's write without a barrier) is not lifted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from xlate.cir import ctype as ctyping
from xlate.cir import ir
from xlate.translate.triton import sym as S
from xlate.translate.triton.sym import NotConcrete, Sym
from xlate.translate.triton.values import LaneTokens, LiftError, SharedArr, SharedRead, Tok, WriteRec

if TYPE_CHECKING:
    from xlate.translate.triton.host import Block

FLT_MAX = 3.4028234663852886e38


BAD = Tok(None, {}, bad=True)


def _is_identity(value: float, op: str) -> bool:
    if op == "sum":
        return value == 0
    if op == "max":
        return value <= -FLT_MAX
    if op == "min":
        return value >= FLT_MAX
    return False


def combine(a: Tok, b: Tok, op: str) -> Tok:
    if a.bad or b.bad:
        return BAD
    if op in ("max", "min") and any(t.const is not None and not _is_identity(t.const, op) for t in (a, b)):
        return _floored(a, b, op)
    if a.const is not None:
        if not _is_identity(a.const, op):
            return BAD
        return Tok(op, b.masks, b.const) if b.const is None or _is_identity(b.const, op) else BAD
    if b.const is not None:
        return combine(b, a, op)
    if a.op not in (None, op) or b.op not in (None, op):
        return BAD
    masks = dict(a.masks)
    for rid, m in b.masks.items():
        if rid in masks:
            if op == "sum" and masks[rid] & m:
                return BAD  # a value counted twice
            masks[rid] |= m
        else:
            masks[rid] = m
    return Tok(op, masks)


def _floored(a: Tok, b: Tok, op: str) -> Tok:
    """A max (min) that takes a constant besides per-thread values: the threads past a block's warps reading
    `-1e20f` instead of a warp's partial maximum. Both are idempotent, so the token is the op of its values and
    of the largest (smallest) constant, and a value seen twice does not matter."""
    if a.op not in (None, op) or b.op not in (None, op):
        return BAD
    consts = [t.const for t in (a, b) if t.const is not None]
    masks = dict(a.masks)
    for rid, m in b.masks.items():
        masks[rid] = masks.get(rid, 0) | m
    return Tok(op, masks, max(consts) if op == "max" else min(consts))


def floor_sym(op: str, red: Sym, const: float, ctype: str) -> Sym:
    """max(red, const) (min): fmaxf's choice where red is NaN, the constant."""
    c = S.const(const, ctype)
    return S.where(S.op("gt" if op == "max" else "lt", "bool", red, c), red, c, ctype)


class NotTokenizable(Exception):
    pass


# -- lanes ---------------------------------------------------------------------------------------------------


def lane_env(L: Block) -> dict[str, np.ndarray]:
    if not L.nlanes:
        raise NotConcrete("a block sized at launch")
    b = L.nlanes
    flat = np.arange(b, dtype=np.int64)
    return {"x": (flat % L.bx).astype(np.uint32), "y": (flat // L.bx).astype(np.uint32)}


def concrete_env(L: Block) -> dict[str, np.ndarray]:
    """Thread indices (and tl.dot axes being evaluated) as arrays, for evaluating conditions on every thread."""
    out: dict[str, np.ndarray] = {k: v[None, :] for k, v in lane_env(L).items()}
    for axis, size in L.st.red_axes.items():
        out[axis] = np.arange(size, dtype=np.int32)[:, None]
    return out


def concrete(L: Block, s: Sym) -> np.ndarray:
    v = S.evaluate(s, lane_env(L))
    return np.broadcast_to(np.asarray(v), (L.nlanes,))


def active_lanes(L: Block, pred: tuple[Sym, ...] | list[Sym], reader: tuple[Sym, ...] | None = None) -> np.ndarray:
    """Threads for which `pred` holds, from its thread-index conjuncts. Uniform conjuncts must also hold for
    `reader` (they then hold for the whole block); a data-dependent per-thread conjunct raises."""
    if not L.nlanes:
        raise NotTokenizable("a block sized at launch")
    act = np.ones(L.nlanes, dtype=bool)
    reader_keys = {c.key() for c in reader} if reader is not None else None
    for c in pred:
        if c.is_const:
            if not c.value:
                act[:] = False
            continue
        if c.concrete:
            try:
                act &= concrete(L, c).astype(bool)
                continue
            except (NotConcrete, ZeroDivisionError):
                pass
        if c.uniform and (reader_keys is None or c.key() in reader_keys):
            continue
        raise NotTokenizable(f"condition {c!r}")
    return act


# -- tokens --------------------------------------------------------------------------------------------------


def tokenize(L: Block, v: Any) -> LaneTokens:
    """Tokens of any per-thread value: shared reads through their slots, data as a fresh per-thread record."""
    if not L.nlanes:
        raise NotTokenizable("a block sized at launch")
    if isinstance(v, LaneTokens):
        return v
    if isinstance(v, SharedRead):
        return token_view(L, v)
    if isinstance(v, Sym):
        if v.is_const:
            t = Tok(None, {}, const=float(v.value))
            return LaneTokens([t] * L.nlanes, v.ctype)
        rec = L.st.pseudo.get(v.id)
        if rec is None:
            rec = WriteRec(L.next_id(), None, (), (), v, L.st.epoch)
            L.st.pseudo[v.id] = rec
            L.st.records[rec.id] = rec
        return LaneTokens([Tok(None, {rec.id: 1 << i}) for i in range(L.nlanes)], v.ctype, alt=lambda v=v: v)
    raise NotTokenizable(type(v).__name__)


def thread_private(L: Block, lt: LaneTokens, pred: tuple[Sym, ...]) -> bool:
    """Whether every thread under `pred` holds a token that combines values of that thread only (or constants):
    no exchange between threads."""
    try:
        act = active_lanes(L, pred)
    except NotTokenizable:
        act = np.ones(len(lt.toks), dtype=bool)
    for lane_i in np.nonzero(act)[0]:
        t = lt.toks[int(lane_i)]
        if t.bad or any(m != 1 << int(lane_i) for m in t.masks.values()):
            return False
    return True


def reads_carried(L: Block, lt: LaneTokens) -> bool:
    """Whether tokens combine a run-time loop's carried content of a shared array (carry.py)."""
    return any(L.st.records[rid].chunk >= 0 for t in lt.toks for rid in t.masks if rid in L.st.records)


def assuming(s: Sym, pred: tuple[Sym, ...]) -> Sym:
    """An index with its top-level selects on a condition of `pred` (or its negation) decided: a store under
    `if (t < n)` of an index that `if (t < n) k += d;` updated reads `k + d`, an affine index again."""
    keys = {c.key() for c in pred}
    while s.op == "where" or (s.op == "cast" and s.args[0].op == "where" and ctyping.is_int(s.ctype)):
        w = s if s.op == "where" else s.args[0]
        c, a, b = w.args
        if c.key() in keys:
            pick = a
        elif (c.op == "lnot" and c.args[0].key() in keys) or S.lnot(c).key() in keys:
            pick = b
        else:
            return s
        s = pick if s.op == "where" else S.cast(pick, s.ctype)
    return s


def token_binary(L: Block, op: str, a: Any, b: Any, data_alt: Callable[[], Sym]) -> LaneTokens:
    ta, tb = tokenize(L, a), tokenize(L, b)
    toks = [combine(x, y, op) for x, y in zip(ta.toks, tb.toks)]
    ctype = ctyping.arith(ta.ctype, tb.ctype) if op == "sum" else ta.ctype
    return LaneTokens(toks, ctype, alt=data_alt)


def token_select(L: Block, cond: np.ndarray, a: Any, b: Any, data_alt: Callable[[], Sym] | None) -> LaneTokens:
    ta, tb = tokenize(L, a), tokenize(L, b)
    toks = [x if c else y for c, x, y in zip(cond, ta.toks, tb.toks)]
    return LaneTokens(toks, ta.ctype, alt=data_alt)


def shuffle(L: Block, v: Any, kind: str, arg: Any, width: int, loc: ir.Loc | None) -> LaneTokens:
    """__shfl_*_sync / tile.shfl_*: every thread takes the token of its source thread."""
    if not L.nlanes:
        raise LiftError("XL2003", "warp shuffle in a block sized at launch", loc)
    if L.by > 1 and L.lane_guard is not None:
        raise LiftError("XL2003", "warp shuffle in a 2-D block padded to powers of two (its warps are not rows)", loc)
    t = tokenize(L, v)
    n = L.nlanes
    lanes = np.arange(n)
    seg = (lanes // width) * width
    pos = lanes % width
    if kind == "idx":
        if not isinstance(arg, Sym) or not arg.concrete:
            raise LiftError("XL2003", "__shfl_sync with a data-dependent source lane", loc)
        src_lane = concrete(L, arg).astype(np.int64) % width
        src = seg + src_lane
    else:
        if not isinstance(arg, Sym) or not arg.is_const:
            raise LiftError("XL2003", f"shuffle ({kind}) with a non-constant offset", loc)
        d = int(arg.value)
        if kind == "down":
            src = np.where(pos + d < width, lanes + d, lanes)
        elif kind == "up":
            src = np.where(pos - d >= 0, lanes - d, lanes)
        else:
            src = seg + ((pos ^ d) % width)
    src = np.where(src < n, src, lanes)
    # a condition that is the same on every thread and the thread it reads (a warp's row, `warp_id < n`, or a
    # group of 8 lanes, `(gid >> 3) < n`, that an xor of 1..7 exchanges within) leaves no thread that takes part
    # reading one that does not
    pred = [c for c in L.full_pred() if c.concrete or not lanes_agree(L, c, src)]
    try:
        act = active_lanes(L, pred)
    except NotTokenizable as exc:
        raise LiftError("XL2003", f"warp shuffle under a data-dependent condition ({exc})", loc) from None
    if np.any(act & ~act[src]):
        raise LiftError("XL2003", "warp shuffle reads a thread that does not take part", loc)
    alt = None
    if L.by == 1 and (isinstance(v, Sym) or (isinstance(v, LaneTokens) and v.alt is not None)):
        src_x = _source_lane(kind, arg, width, n)
        made = list(L.full_pred())

        def alt(v: Any = v, src_x: Sym = src_x, src: np.ndarray = src, made: list[Sym] = made) -> Sym:
            return _shuffled_data(L, v, src_x, src, made, loc)  # no reduction or scan: the source's value

    return LaneTokens([t.toks[int(s)] for s in src], t.ctype, alt=alt)


# The lanes on which a value being built must be right, where that is not the threads of the statement that
# needs it. An exchange's data is built lazily, when a later statement asks for it (`if (tid == 0) out = v;`
# after a butterfly), and a shuffle reads its operand at its source lanes: built for the asking threads alone
# (lane 0), one lane's reduction stands for its segment's and the gather at lanes 16, 8, ... reads garbage (a
# two-level block max lifted that way took one warp's maximum for the block's). None: the statement's threads.
_NEEDED: list[np.ndarray | None] = []


@contextmanager
def needing(lanes: np.ndarray | None) -> Iterator[None]:
    _NEEDED.append(lanes)
    try:
        yield
    finally:
        _NEEDED.pop()


def needed_lanes(L: Block) -> np.ndarray:
    """The lanes a value now being built must be right on (see _NEEDED)."""
    if _NEEDED and _NEEDED[-1] is not None:
        return _NEEDED[-1]
    try:
        return active_lanes(L, [c for c in L.full_pred() if c.concrete])
    except NotTokenizable:
        return np.ones(L.nlanes, dtype=bool)


def _shuffled_data(L: Block, v: Sym | LaneTokens, src_x: Sym, src: np.ndarray, made: list[Sym],
                   loc: ir.Loc | None) -> Sym:
    """The value a shuffle reads, where it forms no reduction or scan: thread-index arithmetic recomputed for the
    source lane; loaded data, or what an earlier exchange produced, taken from the block the threads computed at
    the source lane (`tl.gather`): recomputing it would load again, and would nest a chain of exchanges (a
    sorting network's) once per step, doubling the expression each time. A value that cannot be recomputed
    for another lane (a segment's reduction, a loop-carried register) is gathered likewise: the names it reads
    are not reassigned before the gather (a loop updates its carried variables after its body)."""
    if isinstance(v, Sym):
        d = v
    else:
        sources = np.zeros(L.nlanes, dtype=bool)
        sources[src[needed_lanes(L)]] = True
        with needing(sources):
            d = v.alt()
    if d.lanes - {"x", "*"} or L.st.red_axes or L.st.defer:
        raise LiftError("XL2010", "values exchanged between threads form no complete reduction, scan or gather", loc)
    if not d.opaque and not _reads_data(d):
        return L.issue(S.substitute(d, {"x": src_x}), S.land(*L.full_pred()), loc)
    block = L.issue(d, S.land(*made), loc)  # the block as the threads that shuffled computed it (the sources)
    return lane_gather(L, d.ctype, block, S.cast(src_x, "int"), "-1")


MAX_GROUP = 32  # lanes of an aligned group whose member is picked within a warp (tl.sum: shuffles, no barrier)


def lane_gather(L: Block, ctype: str, block: Sym, index: Sym, mode: str) -> Sym:
    """Element `index` of `block` along lane axis `mode` (`tl.gather`). Where every thread reads member j of its
    own aligned group of w threads (index = (x / w) * w + j: a group's leader broadcasting, a dot product over
    a group's elements), the gather is marked (w, j): emitted as the block seen as [BX / w, w] rows, member j
    kept by an integer sum over the row (the others 0; a float's bit pattern summed) and spread back, which
    Triton does with warp shuffles; its tl.gather goes through shared memory with barriers. Exact for integer
    and floating types; a template or bool type keeps tl.gather."""
    plain = S.op("gather", ctype, block, index, fn=mode)
    group = _aligned_group(L, index) if mode == "-1" and L.by == 1 and L.nlanes == L.bx else None
    if group is None or ctype == "bool" or ctyping.is_symbolic(ctype) or plain.op != "gather":
        return plain
    return Sym("gather", ctype, plain.args, name=mode, value=group)


def _aligned_group(L: Block, index: Sym) -> tuple[int, int] | None:
    """(w, j) where `index` is (x / w) * w + j on every thread, w a power of two up to MAX_GROUP dividing the
    block, 0 <= j < w; None otherwise (or where the index is not thread arithmetic)."""
    if index.opaque or not index.concrete or not L.nlanes:
        return None
    try:
        idx = np.asarray(concrete(L, index)).astype(np.int64)
    except (NotConcrete, ZeroDivisionError):
        return None
    lane = np.arange(L.nlanes, dtype=np.int64)
    w = 2
    while w <= min(MAX_GROUP, L.bx) and L.bx % w == 0:
        j = int(idx[0])
        if 0 <= j < w and np.array_equal(idx, (lane // w) * w + j):
            return w, j
        w *= 2
    return None


def _reads_data(v: Sym) -> bool:
    """Whether `v` reads global memory or another lane's value (a load or a lane gather in its DAG)."""
    seen: set[int] = set()
    stack = [v]
    while stack:
        x = stack.pop()
        if x.id in seen:
            continue
        seen.add(x.id)
        if x.op in ("load", "gather"):
            return True
        stack.extend(x.args)
    return False


def _source_lane(kind: str, arg: Sym, width: int, n: int) -> Sym:
    """The thread a shuffle reads, as thread-index arithmetic of the reading thread (as `shuffle` computes it)."""
    ut = "unsigned int"
    x = S.lane("x")
    w = S.const(width, ut)
    pos = S.op("mod", ut, x, w)
    seg = S.op("mul", ut, S.op("div", ut, x, w), w)
    if kind == "idx":
        src = S.op("add", ut, seg, S.op("mod", ut, S.cast(arg, ut), w))
    elif kind == "down":
        d = S.const(int(arg.value), ut)
        src = S.where(S.op("lt", "bool", S.op("add", ut, pos, d), w), S.op("add", ut, x, d), x, ut)
    elif kind == "up":
        d = S.const(int(arg.value), ut)
        src = S.where(S.op("ge", "bool", pos, d), S.op("sub", ut, x, d), x, ut)
    else:
        src = S.op("add", ut, seg, S.op("mod", ut, S.op("xor", ut, pos, S.const(int(arg.value), ut)), w))
    return S.where(S.op("lt", "bool", src, S.const(n, ut)), src, x, ut)


OPAQUE_OPS = frozenset({"var", "load", "reduce", "scan", "call_opaque", "red"})


def segment_uniform(L: Block, c: Sym, width: int) -> bool:
    """Whether `c` has one value on all threads of each aligned segment of `width` threads (for any values of the
    uniform unknowns it reads)."""
    w = min(width, L.nlanes)
    if not w or L.nlanes % w:
        return c.uniform
    lanes = np.arange(L.nlanes)
    return lanes_agree(L, c, (lanes // w) * w)


def lanes_agree(L: Block, c: Sym, partner: np.ndarray) -> bool:
    """Whether `c` has the same value on every thread t and on thread partner[t], for any values of the uniform
    unknowns it reads: thread-index arithmetic is evaluated on every thread; a shift or power-of-two division
    (`(t + blockIdx.x * 128) >> 3`), or a comparison with a uniform multiple of 2**j (`t < (n / 4) * 4`), agrees
    where the bits above the lowest it drops do (`_high_bits_agree`); any other node is a pure function of
    agreeing arguments."""
    if c.uniform:
        return True
    if c.concrete:
        try:
            v = concrete(L, c)
        except (NotConcrete, ZeroDivisionError):
            return False
        return bool(np.all(v == v[partner]))
    if c.op in OPAQUE_OPS or c.opaque or not c.args:
        return False
    k = _pow2_divisor(c)
    if k is not None and _high_bits_agree(L, c.args[0], k, partner):
        return True
    if c.op in ("lt", "ge", "gt", "le") and len(c.args) == 2:
        a, b = c.args if c.op in ("lt", "ge") else c.args[::-1]
        # a < B with B a multiple of 2**j: a and a with its j lowest bits changed lie in one aligned block of
        # 2**j, which no multiple of 2**j (B, or a wrap or sign boundary of the type) splits
        j = _alignment(b) if b.uniform and ctyping.is_int(b.ctype) and ctyping.is_int(a.ctype) else 0
        if j > 0 and _high_bits_agree(L, a, min(j, 63), partner):
            return True
    return all(lanes_agree(L, a, partner) for a in c.args)


def _high_bits_agree(L: Block, s: Sym, k: int, partner: np.ndarray) -> bool:
    """Whether `s >> k` (the bits of integer `s` above its k lowest) agrees on every thread and its partner."""
    if not ctyping.is_int(s.ctype) or k >= ctyping.bits(s.ctype):
        return False
    if k == 0:
        return lanes_agree(L, s, partner)
    d = _pow2_divisor(s)
    if d is not None and _high_bits_agree(L, s.args[0], k + d, partner):
        return True  # (a >> d) >> k is a >> (d + k), arithmetic or logical
    if s.op == "cast" and s.args and ctyping.is_int(s.args[0].ctype) and _high_bits_agree(L, s.args[0], k, partner):
        return True  # truncating keeps, and extending (by sign or zero) adds, bits fixed by those above k
    split = _uniform_split(L, s)
    if split is not None and split[0] >= k:
        q = np.right_shift(split[1], k)  # floor: the aligned block of 2**k the thread-index part falls in
        return bool(np.all(q == q[partner]))
    return lanes_agree(L, s, partner)


def _pow2_divisor(c: Sym) -> int | None:
    """k where `c` is `a >> k` or `a / 2**k` that rounds down (a unsigned or not negative), k a constant."""
    if c.op not in ("shr", "div") or len(c.args) != 2 or not c.args[1].is_const or not ctyping.is_int(c.ctype):
        return None
    d = int(c.args[1].value)
    if c.op == "shr":
        k = d
    elif d > 0 and d & (d - 1) == 0 and (ctyping.is_unsigned(c.args[0].ctype) or c.args[0].nonneg):
        k = d.bit_length() - 1
    else:
        return None
    return k if 0 <= k < ctyping.bits(c.args[0].ctype) else None


SPLIT_OPS = frozenset({"add", "sub", "mul", "shl", "cast"})


def _uniform_split(L: Block, s: Sym) -> tuple[int, np.ndarray] | None:
    """(a, v): `s` is U + v[t] on thread t modulo 2**bits of its type, U uniform and a multiple of 2**a, v exact
    integers; None where `s` is not such a sum. Only ring operations (and casts that do not widen) are followed,
    which keep the sum's residue: `(U + v) >> k` then agrees on two threads whose v lies in one aligned block of
    2**k (U moves every such block onto another whole block, also across a wrap of the type)."""
    if not ctyping.is_int(s.ctype):
        return None
    if s.uniform:
        return _alignment(s), np.zeros(L.nlanes, dtype=np.int64)
    if s.concrete:
        try:
            return 64, concrete(L, s).astype(np.int64)
        except (NotConcrete, ZeroDivisionError):
            return None
    if s.op not in SPLIT_OPS or s.opaque:
        return None
    if s.op == "cast":
        src = s.args[0].ctype
        if not ctyping.is_int(src) or ctyping.bits(s.ctype) > ctyping.bits(src):
            return None  # a widening cast extends the residue by its sign: not a sum any more
        return _uniform_split(L, s.args[0])
    a, b = s.args
    if s.op in ("mul", "shl"):
        if s.op == "mul" and a.is_const:
            a, b = b, a
        if not b.is_const:
            return None
        sa = _uniform_split(L, a)
        m = int(b.value)
        if sa is None or (s.op == "shl" and not 0 <= m < 64):
            return None
        m = 1 << m if s.op == "shl" else m
        return sa[0] + _tz(m), sa[1] * m
    sa, sb = _uniform_split(L, a), _uniform_split(L, b)
    if sa is None or sb is None:
        return None
    return min(sa[0], sb[0]), (sa[1] + sb[1] if s.op == "add" else sa[1] - sb[1])


def _tz(m: int) -> int:
    """Trailing zero bits of m (64 for 0, a multiple of everything)."""
    return 64 if m == 0 else (m & -m).bit_length() - 1


def _alignment(u: Sym) -> int:
    """A number a such that the uniform integer `u` is a multiple of 2**a (0 where nothing is known)."""
    if u.is_const:
        return _tz(int(u.value)) if ctyping.is_int(u.ctype) else 0
    if u.op == "mul" and len(u.args) == 2:
        return min(64, _alignment(u.args[0]) + _alignment(u.args[1]))
    if u.op == "shl" and len(u.args) == 2 and u.args[1].is_const:
        return min(64, _alignment(u.args[0]) + max(0, int(u.args[1].value)))
    if u.op in ("add", "sub") and len(u.args) == 2:
        return min(_alignment(u.args[0]), _alignment(u.args[1]))
    if u.op == "cast" and u.args and ctyping.is_int(u.args[0].ctype):
        return _alignment(u.args[0])
    return 0


def token_view(L: Block, r: SharedRead) -> LaneTokens:
    if r.tokens is not None:
        return r.tokens
    if not L.nlanes:
        raise NotTokenizable("a block sized at launch")
    arr = r.arr
    if r.before_loop:
        raise NotTokenizable("shared array written before the loop")
    recs, _ = live_records(r.recs)
    n = L.nlanes
    for s in r.idx:
        if not s.concrete:
            raise NotTokenizable("index")
    table: dict[int, tuple[WriteRec, int]] = {}
    for rec in recs:
        if any(not s.concrete for s in rec.idx):
            raise NotTokenizable("write index")
        act = active_lanes(L, rec.pred, r.pred)
        if rec.chunk >= 0 and arr.dims[0] is not None:  # a carried tensor's lanes past the array hold nothing
            act &= rec.chunk * L.nlanes + np.arange(L.nlanes) < arr.dims[0]
        slots = _flat(L, arr, rec.idx, rec.loc, act)
        live = np.nonzero(act)[0]
        vals = slots[live]
        if len(np.unique(vals)) != len(vals) and not _same_values(rec, live, vals, L):
            raise LiftError("XL2009", f"several threads write the same element of shared array '{arr.name}'", rec.loc)
        for lane_i, slot in zip(live, vals):
            if int(slot) not in table or table[int(slot)][0] is not rec:  # of equal writes, the first thread's
                table[int(slot)] = (rec, int(lane_i))
    try:
        ract = active_lanes(L, [c for c in r.pred if c.concrete])
    except NotTokenizable:
        ract = np.ones(n, dtype=bool)
    rslots = _flat(L, arr, r.idx, r.loc, ract)
    toks: list[Tok] = []
    for lane_i in range(n):
        entry = table.get(int(rslots[lane_i])) if ract[lane_i] else None
        if entry is None:
            toks.append(BAD)
            continue
        rec, wl = entry
        if rec.chunk >= 0:
            carried_use(L, r, rec)
        elif wl != lane_i and rec.epoch == r.epoch:
            raise LiftError("XL2009", f"'{arr.name}' is read from another thread without a __syncthreads after its write", r.loc)
        if isinstance(rec.value, LaneTokens):
            toks.append(rec.value.toks[wl])
        else:
            toks.append(Tok(None, {rec.id: 1 << wl}))
    r.tokens = LaneTokens(toks, arr.ctype, alt=lambda r=r: data_view(L, r, allow_tokens=False))
    return r.tokens


def _same_values(rec: WriteRec, live: np.ndarray, slots: np.ndarray, L: Block | None = None) -> bool:
    """Whether the threads of one write that store to the same element all store the same value (every lane of a
    warp storing its warp's sum, `s[warp] = cg::reduce(...)`): the same token, or a value of no thread index, or
    a value of the thread index along axes on which the threads storing to one element agree (`bias[tx] =
    b[tx]` in a 2-D block: the rows store the same values; the value is a pure function of those lanes, its
    loads included, as a non-opaque symbol is)."""
    v = rec.value
    if isinstance(v, Sym):
        if not v.opaque and (v.uniform or not _varies_unmasked(v, frozenset({"x", "y"}), rec.pred)):
            return True
        if v.opaque or L is None or not v.lanes <= {"x", "y"}:
            return False
        env = lane_env(L)
        keys = [slots.astype(np.int64)] + [env[a][live].astype(np.int64) for a in sorted(v.lanes)]
        pairs = np.stack(keys, axis=1)
        return len(np.unique(pairs, axis=0)) == len(np.unique(slots))
    first: dict[int, Tok] = {}
    for lane_i, slot in zip(live, slots):
        t = v.toks[int(lane_i)]
        if t.bad:
            return False
        f = first.setdefault(int(slot), t)
        if not f.same(t):
            return False
    return True


def _flat(L: Block, arr: SharedArr, idx: tuple[Sym, ...], loc: ir.Loc | None, active: np.ndarray) -> np.ndarray:
    """Flat element index per thread (-1 for threads not in `active`); out-of-bounds on an active thread raises."""
    flat = np.zeros(L.nlanes, dtype=np.int64)
    if len(idx) != len(arr.dims):
        raise LiftError("XL2004", f"shared array '{arr.name}' indexed with {len(idx)} subscripts, declared with {len(arr.dims)}", loc)
    for d, (s, size) in enumerate(zip(idx, arr.dims)):
        v = concrete(L, s).astype(np.int64)
        if size is not None and (np.any((v < 0) & active) or np.any((v >= size) & active)):
            raise LiftError("XL2004", f"index {d} of shared array '{arr.name}' leaves its bounds [0, {size})", loc)
        flat = flat * (size or 1) + v
    return np.where(active, flat, -1)


# -- materialisation -----------------------------------------------------------------------------------------


def materialize(L: Block, lt: LaneTokens, active: np.ndarray, loc: ir.Loc | None, note: str = "") -> Sym:
    """The data value of tokens on the active threads: a reduction, a scan, or a gather from other threads."""
    idx = np.nonzero(active)[0]
    if len(idx) == 0:
        return S.const(0, lt.ctype if not ctyping.is_symbolic(lt.ctype) else "int")
    toks = [lt.toks[i] for i in idx]
    full = thread_bits(L)  # every thread of the block (not the lanes padding it)
    first = toks[0]
    if not any(t.bad for t in toks):
        if all(t.same(first) for t in toks):
            if first.const is not None and not first.masks:
                return S.const(first.const, lt.ctype)
            if len(first.masks) == 1:
                rid, m = next(iter(first.masks.items()))
                rec = L.st.records[rid]
                if m == full and first.op in ("sum", "max", "min"):
                    L.idiom(f"block {first.op} over {full.bit_count()} threads" + (f" ({note})" if note else ""), loc)
                    red = reduce_sym(first.op, guarded(L, rec.value, first.op), lt.ctype)
                    if first.const is not None and not _is_identity(first.const, first.op):
                        return floor_sym(first.op, red, first.const, lt.ctype)
                    return red
                if m & (m - 1) == 0 and first.op is None:
                    j = m.bit_length() - 1
                    return value_at(L, rec, j, loc)
        seg = _segment_kind(L, toks, idx, full)
        if seg is not None:
            op, width, rid = seg
            L.idiom(f"{op} over each {width} threads" + (f" ({note})" if note else ""), loc)
            return segreduce_sym(op, width, guarded(L, L.st.records[rid].value, op), lt.ctype)
        scan = _scan_kind(toks, idx, full)
        if scan is not None:
            rid = scan[1]
            L.idiom(f"block {scan[0]} scan over {full.bit_count()} threads", loc)
            return scan_sym(scan[0], guarded(L, L.st.records[rid].value, "sum"), L)
        g = _gather(L, lt, idx, loc) if L.by == 1 else None
        if g is not None:
            return g
    failed: LiftError | None = None  # the data path's refusal, where it has one
    if lt.alt is not None:
        try:
            return lt.alt()
        except LiftError as exc:
            if exc.code not in ("XL2004", "XL2010"):
                raise
            failed = exc
    if L.by != 1 and not any(t.bad for t in toks):  # tried last: a port the data path lifted stays as it was
        g = _gather_rows(L, lt, idx, loc)
        if g is not None:
            return g
    if failed is not None and failed.code == "XL2010":
        raise failed
    raise LiftError("XL2010", "values exchanged between threads form no complete reduction, scan or gather: "
                    + _what_threads_hold(toks, full, L.by != 1), loc)


def _what_threads_hold(toks: list[Tok], full: int, rows: bool) -> str:
    """What the threads that use an exchanged value hold, by kind (the refusal says why no idiom fits)."""
    kinds: dict[str, int] = {}
    for t in toks:
        if t.bad:
            kind = "a value that counts one thread twice or mixes operators"
        elif not t.masks:
            kind = "a constant"
        elif t.op is None:
            kind = "one thread's value"
        elif len(t.masks) == 1 and next(iter(t.masks.values())) == full:
            kind = f"the complete {t.op} over the block"
        else:
            kind = f"a partial {t.op}"
        kinds[kind] = kinds.get(kind, 0) + 1
    held = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items(), key=lambda kv: -kv[1]))
    gather = " (the threads that read one write at one shift do not fill a box of the block)" \
        if rows and "one thread's value" in kinds else ""
    return f"of the {len(toks)} threads that use it, {held}{gather}"


def thread_bits(L: Block) -> int:
    """The lanes that are threads of the block, as a bit mask over the lanes."""
    if L.lane_guard is None:
        return (1 << L.nlanes) - 1
    act = concrete(L, L.lane_guard).astype(bool)
    return sum(1 << int(i) for i in np.nonzero(act)[0])


def guarded(L: Block, v: Sym, op: str) -> Sym:
    """`v` on the threads, the identity of `op` on the lanes padding the block (a reduction reads every lane)."""
    if L.lane_guard is None or ctyping.is_symbolic(v.ctype):
        return v
    return S.where(L.lane_guard, v, S.const(identity(op, v.ctype), v.ctype), v.ctype)


def identity(op: str, ctype: str) -> float | int:
    """The value that leaves a sum, max or min of `ctype` values unchanged."""
    if op == "sum":
        return 0
    if ctyping.is_float(ctype):
        return float("-inf") if op == "max" else float("inf")
    info = np.iinfo(ctyping.np_dtype(ctype))
    return int(info.min) if op == "max" else int(info.max)


def reduce_sym(op: str, base: Sym, ctype: str) -> Sym:
    s = Sym("reduce", ctype, (base,), value=op)
    s.lanes = frozenset()
    s.opaque = False
    s.concrete = False
    return s


def segreduce_sym(op: str, width: int, base: Sym, ctype: str) -> Sym:
    s = Sym("segreduce", ctype, (base,), value=(op, width))
    s.lanes = frozenset({"*"})
    s.opaque = True
    s.concrete = False
    return s


def _segment_kind(L: Block, toks: list[Tok], idx: np.ndarray, threads: int) -> tuple[str, int, int] | None:
    """(op, width, record) where every active thread holds the op-combination of one per-thread value over the
    threads of its aligned segment of `width` lanes (a shuffle butterfly over part of a warp, or over a warp of
    a larger block); None otherwise. Segments run along x: a 2-D block's rows must hold whole segments."""
    first = toks[0]
    if first.op not in ("sum", "max", "min") or first.const is not None or len(first.masks) != 1:
        return None
    rid, m0 = next(iter(first.masks.items()))
    width = 0
    w = 2
    while w < L.nlanes:
        lo = (int(idx[0]) // w) * w
        if m0 == (((1 << w) - 1) << lo) & threads:
            width = w
            break
        w *= 2
    if not width or (L.by > 1 and width > L.bx):
        return None
    for t, lane_i in zip(toks, idx):
        lo = (int(lane_i) // width) * width
        if t.bad or t.op != first.op or t.const is not None or t.masks != {rid: (((1 << width) - 1) << lo) & threads}:
            return None
    return first.op, width, rid


def scan_sym(kind: str, base: Sym, L: Block) -> Sym:
    s = Sym("scan", base.ctype, (base,), value=kind)
    s.lanes = frozenset({"*"})
    s.opaque = True
    s.concrete = False
    return s


def _scan_kind(toks: list[Tok], idx: np.ndarray, threads: int) -> tuple[str, int] | None:
    rid = None
    kind = None
    for t, lane_i in zip(toks, idx):
        if t.bad or t.op not in (None, "sum"):
            return None
        if t.const is not None:
            if t.const != 0 or t.masks:
                return None
            m, r = 0, rid
        else:
            if len(t.masks) != 1:
                return None
            r, m = next(iter(t.masks.items()))
        if rid is not None and r is not None and r != rid:
            return None
        rid = rid if r is None else r
        incl, excl = ((1 << (int(lane_i) + 1)) - 1) & threads, ((1 << int(lane_i)) - 1) & threads
        k = "inclusive" if m == incl else "exclusive" if m == excl else None
        if k is None or (kind is not None and k != kind):
            return None
        kind = k
    if rid is None or kind is None:
        return None
    return kind, rid


def value_at(L: Block, rec: WriteRec, j: int, loc: ir.Loc | None) -> Sym:
    """Record `rec`'s value as thread j computed it (every reader reads the same element)."""
    v = rec.value
    if isinstance(v, LaneTokens):
        raise LiftError("XL2010", "broadcast of a combined value", loc)
    mapping = {"x": S.const(j % L.bx, "unsigned int"), "y": S.const(j // L.bx, "unsigned int")}
    if not (v.lanes - {"x", "y"}) and not v.opaque:
        out = S.substitute(v, mapping)
        return L.issue(out, S.land(*L.full_pred()), loc)
    if v.uniform:
        return v
    raise LiftError("XL2004", "one thread's value read by all threads cannot be recomputed (it depends on a loop-carried value)", loc)


def _single_sources(lt: LaneTokens, idx: np.ndarray) -> list[tuple[int, int, int]] | None:
    """(reader lane, record, writer lane) for each active thread, where each reads one value one thread stored;
    None where a thread's value combines several or is a constant."""
    out = []
    for lane_i in idx:
        t = lt.toks[lane_i]
        if t.op is not None or t.const is not None or len(t.masks) != 1:
            return None
        rid, m = next(iter(t.masks.items()))
        if m & (m - 1):
            return None
        out.append((int(lane_i), rid, m.bit_length() - 1))
    return out


def _gather(L: Block, lt: LaneTokens, idx: np.ndarray, loc: ir.Loc | None) -> Sym | None:
    """Every active thread reads one other thread's per-thread value: a where-chain of shifted recomputations."""
    if L.by != 1:
        return None
    sources = _single_sources(lt, idx)
    if sources is None:
        return None
    groups: dict[tuple[int, int], list[int]] = {}
    for lane_i, rid, src in sources:
        groups.setdefault((rid, src - lane_i), []).append(lane_i)
    result: Sym | None = None
    for (rid, off), lanes in sorted(groups.items(), key=lambda kv: kv[1][0]):
        lo, hi = lanes[0], lanes[-1] + 1
        if lanes != list(range(lo, hi)):
            return None
        rec = L.st.records[rid]
        v = rec.value
        if not isinstance(v, Sym):
            return None
        lane_x = S.lane("x")
        inside = S.land(S.op("ge", "bool", lane_x, S.const(lo, "unsigned int")), S.op("lt", "bool", lane_x, S.const(hi, "unsigned int")))
        if off:
            if v.opaque:
                return None
            shifted = S.Sym("cast", "unsigned int", (S.op("add", "int", S.cast(lane_x, "int"), S.const(off, "int")),), nonneg=True)
            v = L.issue(S.substitute(v, {"x": shifted}), S.land(*L.full_pred(), inside), loc)
        result = v if result is None else S.where(inside, v, result, lt.ctype)
    return result


def _gather_rows(L: Block, lt: LaneTokens, idx: np.ndarray, loc: ir.Loc | None) -> Sym | None:
    """`_gather` in a block of several rows (a 3-D halo tile read at its neighbours): the threads that read the
    same write at the same shift (dx, dy, dz) from themselves must fill a box of threads, each box one
    recomputation of the stored value at (x + dx, y + dy, z + dz) under the box's bounds (the y lanes hold
    y + by * z)."""
    dims = (L.block_dim("y"), L.block_dim("z"))
    if not all(d.is_const for d in dims) or int(dims[0].value) * int(dims[1].value) != L.by:
        return None  # y lanes padded past the block's rows (or a block sized at launch)
    by, bz = int(dims[0].value), int(dims[1].value)
    env = lane_env(L)
    lx, ly = env["x"].astype(np.int64), env["y"].astype(np.int64)
    coords = np.stack([lx, ly % by, ly // by], axis=1)
    sources = _single_sources(lt, idx)
    if sources is None:
        return None
    groups: dict[tuple[int, int, int, int], list[int]] = {}
    for lane_i, rid, src in sources:
        d = coords[src] - coords[lane_i]
        groups.setdefault((rid, int(d[0]), int(d[1]), int(d[2])), []).append(lane_i)
    y_lane = S.cast(S.lane("y"), "int")
    axis_of = {0: S.cast(S.lane("x"), "int"), 1: S.op("mod", "int", y_lane, S.const(by, "int")),
               2: S.op("div", "int", y_lane, S.const(by, "int"))}
    result: Sym | None = None
    for (rid, dx, dy, dz), lanes in sorted(groups.items(), key=lambda kv: kv[1][0]):
        c = coords[lanes]
        lo, hi = c.min(axis=0), c.max(axis=0) + 1
        if len(lanes) != int(np.prod(hi - lo)):  # distinct threads inside the box: they fill it
            return None
        v = L.st.records[rid].value
        if not isinstance(v, Sym) or ((dx or dy or dz) and v.opaque):
            return None
        inside = S.land(*(S.op(cmp, "bool", axis_of[a], S.const(int(b), "int"))
                          for a in range(3) if (lo[a], hi[a]) != (0, (L.bx, by, bz)[a])
                          for cmp, b in (("ge", lo[a]), ("lt", hi[a]))))
        moved = {a: S.Sym("cast", "unsigned int", (S.op("add", "int", S.cast(S.lane(a), "int"), S.const(d, "int")),),
                          nonneg=True) for a, d in (("x", dx), ("y", dy + by * dz)) if d}
        if moved:
            v = L.issue(S.substitute(v, moved), S.land(*L.full_pred(), inside), loc)
        result = v if result is None else S.where(inside, v, result, lt.ctype)
    return result


# -- forwarding ----------------------------------------------------------------------------------------------


def solve(w_idx: tuple[Sym, ...], r_idx: tuple[Sym, ...], axes: dict[str, int],
          rec: WriteRec | None = None, threads: dict[str, int] | None = None) -> tuple[dict[str, Sym], list[Sym]] | None:
    """The writer thread t' with w(t') = r(t) per lane axis, and the equalities the other subscripts need. An
    axis the subscripts do not name is fixed by the write's condition (`if (ty == 0) s[tx] = ...`: t'.y = 0).
    `threads`: the block's threads per axis where fewer than its lanes (`axes`, padded to powers of two)."""
    sol: dict[str, Sym] = {}
    eqs: list[Sym] = []
    for w, r in zip(w_idx, r_idx):
        aff = S.affine(w)
        if aff is None:
            return None
        coefs, rest = aff
        coefs = {a: c for a, c in coefs.items() if a in axes}
        if not coefs:
            eqs.append(S.op("eq", "bool", S.cast(r, "int"), S.cast(w, "int")))
            continue
        if len(coefs) == 2 and not any(a in sol for a in coefs):
            mixed = _solve_mixed(coefs, r, w, rest, threads or axes)
            if mixed is None:
                return None
            sol.update(mixed[0])
            eqs.extend(mixed[1])
            continue
        if len(coefs) != 1:
            return None
        (axis, coef), = coefs.items()
        if not isinstance(coef, int) or coef == 0 or axis in sol:
            return None
        t = S.op("sub", "int", S.cast(r, "int"), S.cast(rest, "int"))
        if coef < 0:
            t = S.op("neg", "int", t)
        if abs(coef) != 1:  # `s[3 * tx + k]`: the writer of element e is (e - k) / 3, where 3 divides e - k
            eqs.append(S.op("eq", "bool", S.op("mod", "int", t, S.const(abs(coef), "int")), S.const(0, "int")))
            t = S.op("div", "int", t, S.const(abs(coef), "int"))
        sol[axis] = t
    for axis, size in axes.items():
        if size > 1 and axis not in sol:
            pinned = _pinned_lane(rec, axis) if rec is not None else None
            if pinned is None and rec is not None and sol and _free_of(rec, axis):
                pinned = S.const(0, "int")  # every thread along `axis` stores the same value: the first's
            if pinned is None:
                return None  # every thread along `axis` writes the same element: no unique writer
            sol[axis] = pinned
    return sol, eqs


def _span(L: Block, idx: tuple[Sym, ...], pred: list[Sym]) -> tuple[int, int] | None:
    """Lowest and highest element a 1-D thread-index subscript names on the threads under `pred` (None: not
    known from thread indices alone, or no thread)."""
    if not L.nlanes or len(idx) != 1 or not idx[0].concrete:
        return None
    try:
        act = active_lanes(L, pred)
        v = concrete(L, idx[0]).astype(np.int64)[act]
    except (NotTokenizable, NotConcrete, ZeroDivisionError):
        return None
    return (int(v.min()), int(v.max())) if len(v) else None


def _disjoint(L: Block, rec: WriteRec, span: tuple[int, int]) -> bool:
    """Whether write `rec` stores no element in [span] (its own span computed once)."""
    if rec.span is None:
        rec.span = _span(L, rec.idx, [c for c in rec.pred if c.concrete]) or (-(1 << 62), 1 << 62)
    return rec.span[1] < span[0] or span[1] < rec.span[0]


def _misses(L: Block, solved: tuple[dict[str, Sym], list[Sym]], axes: dict[str, int], r: SharedRead) -> bool:
    """Whether no thread that makes the read names an element the write stores (its writer solved out of range,
    or a subscript equality false): decided from thread indices alone (a sub-array carved from the same buffer)."""
    if not L.nlanes:
        return False
    sol, eqs = solved
    conds = list(eqs)
    for a, t in sol.items():
        if a in axes and not _is_lane(t, a):
            conds += [S.op("ge", "bool", t, S.const(0, "int")), S.op("lt", "bool", t, S.const(axes[a], "int"))]
    try:
        hit = active_lanes(L, [c for c in r.pred if c.concrete])
        for c in conds:
            if not c.concrete:
                return False
            hit &= concrete(L, c).astype(bool)
    except (NotTokenizable, NotConcrete, ZeroDivisionError):
        return False
    return not hit.any()


def _solve_mixed(coefs: dict[str, int], r: Sym, w: Sym, rest: Sym,
                 threads: dict[str, int]) -> tuple[dict[str, Sym], list[Sym]] | None:
    """The writer of element e of a subscript linear in two thread axes, `s[ty * m + tx]` (a tile indexed by the
    thread's number in the block, or a padded row pitch m): with inner coefficient c and outer c * m, where m is at
    least the inner axis's extent, every element has at most one writer: u = (e - rest) / c, inner = u % m,
    outer = u / m; the caller's range checks on both axes reject the gaps of a padded pitch."""
    (ia, ic), (oa, oc) = sorted(coefs.items(), key=lambda kv: abs(kv[1]))
    if ic <= 0 or oc <= 0 or oc % ic or oc // ic < threads[ia] or threads[ia] >= 1 << 30:
        return None
    if S.canon(S.cast(r, "int")) == S.canon(S.cast(w, "int")):
        return {ia: S.lane(ia), oa: S.lane(oa)}, []  # the thread's own element
    m = oc // ic
    u = S.op("sub", "int", S.cast(r, "int"), S.cast(rest, "int"))
    eqs = [S.op("ge", "bool", u, S.const(0, "int"))]  # C's % and / truncate: a negative u has no writer
    if ic != 1:
        eqs.append(S.op("eq", "bool", S.op("mod", "int", u, S.const(ic, "int")), S.const(0, "int")))
        u = S.op("div", "int", u, S.const(ic, "int"))
    return {ia: S.op("mod", "int", u, S.const(m, "int")), oa: S.op("div", "int", u, S.const(m, "int"))}, eqs


def _writer_extents(L: Block, rec: WriteRec, threads: dict[str, int]) -> dict[str, int]:
    """Per lane axis, one past the highest lane of a thread that can make write `rec` (its thread-index conditions:
    `if (ty >= 10) return;` leaves ty < 10): a pitch of 10 then gives each element one writer, though the block
    has more threads along y. Conditions not decided from thread indices alone are dropped: they only remove
    writers. The writer's condition is re-checked for the thread solved (forward), so a lane past it never counts."""
    if not L.nlanes:
        return threads
    act = np.ones(L.nlanes, dtype=bool)
    for c in rec.pred:
        act &= _maybe_true(L, c)
    if not act.any():
        return threads
    env = lane_env(L)
    return {a: min(n, int(env[a][act].max()) + 1) if a in env else n for a, n in threads.items()}


def _why_no_writer(L: Block, rec: WriteRec, axes: dict[str, int]) -> str:
    """Why `solve` finds no unique writer for write `rec`, in the user's terms (the refusal names it)."""
    for w in rec.idx:
        if not w.lanes:
            continue
        aff = S.affine(w)
        if aff is None:
            return _non_affine_part(w)
        coefs = {a: c for a, c in aff[0].items() if a in axes}
        if any(not isinstance(c, int) for c in coefs.values()):
            return "it scales the thread index by a run-time value"
        if len(coefs) == 2:
            (ia, ic), (oa, oc) = sorted(coefs.items(), key=lambda kv: abs(kv[1]))
            extent = _writer_extents(L, rec, {ia: axes[ia]}).get(ia, axes[ia])
            if ic > 0 and oc > 0 and oc % ic == 0 and oc // ic < extent:
                return (f"two threads store one element (the step {oc // ic} along {_AXIS_NAME[oa]} is less than "
                        f"the {extent} writing threads along {_AXIS_NAME[ia]})")
            return "it combines two thread axes in a way that is not a row pitch"
        if len(coefs) > 2:
            return "it combines more than two thread axes"
    named = {a for w in rec.idx for a in (S.affine(w) or ({}, None))[0]}
    for a, n in axes.items():
        if n > 1 and a not in named:
            return (f"the threads along {_AXIS_NAME[a]} store the same element with values that may differ "
                    "(which one lands is unspecified)")
    return "no thread index names the element written"


_AXIS_NAME = {"x": "x", "y": "y (and z)"}
_SPLITTING = {"div": "/", "mod": "%", "shr": ">>", "shl": "<<", "and": "&", "or": "|", "xor": "^"}


def _non_affine_part(w: Sym) -> str:
    """The operation that keeps a thread-index subscript from being affine."""
    stack = [w]
    seen: set[int] = set()
    while stack:
        x = stack.pop()
        if id(x) in seen or not x.lanes:
            continue
        seen.add(id(x))
        if x.op in _SPLITTING:
            return f"it applies `{_SPLITTING[x.op]}` to the thread index (the elements' writers are not a linear map)"
        if x.op == "where":
            return "it picks between subscripts per thread (a select on the thread index)"
        if x.op == "mul" and not any(a.is_const for a in x.args):
            return "it multiplies the thread index by a run-time value"
        if x.op in ("load", "call", "var") or x.opaque:
            return "it depends on values the threads load or compute at run time"
        stack.extend(x.args)
    return "it is not linear in the thread index"


MAX_ATOMS = 4  # conditions not decided from thread indices, each tried true and false (2^4 evaluations at most)


def _maybe_true(L: Block, c: Sym) -> np.ndarray:
    """The threads for which `c` may hold, whatever the conditions in it that thread indices alone do not decide
    (`!(i >= n || (ty >= 10 && i < n))` may hold only where ty < 10): each such condition is tried both ways."""
    atoms: dict[tuple, Sym] = {}

    def collect(x: Sym) -> None:
        if x.op in S.LOGIC:
            for a in x.args:
                collect(a)
        elif not x.concrete:
            atoms.setdefault(x.key(), x)

    def value(x: Sym, assign: dict[tuple, bool]) -> np.ndarray:
        if x.op == "lnot":
            return ~value(x.args[0], assign)
        if x.op == "land":
            return value(x.args[0], assign) & value(x.args[1], assign)
        if x.op == "lor":
            return value(x.args[0], assign) | value(x.args[1], assign)
        if not x.concrete:
            return np.full(L.nlanes, assign[x.key()])
        return concrete(L, x).astype(bool)

    collect(c)
    anywhere = np.ones(L.nlanes, dtype=bool)
    if len(atoms) > MAX_ATOMS:
        return anywhere
    keys = list(atoms)
    out = np.zeros(L.nlanes, dtype=bool)
    try:
        for bits in range(1 << len(keys)):
            out |= value(c, {k: bool(bits >> i & 1) for i, k in enumerate(keys)})
    except (NotConcrete, ZeroDivisionError):
        return anywhere
    return out


def _reads_own_write(L: Block, sol: dict[str, Sym], r: SharedRead) -> bool:
    """Whether every thread that makes the read is the writer it solved for (`if (t == 0) { s = a; b = s; }`)."""
    try:
        act = active_lanes(L, [c for c in r.pred if c.concrete])
        for axis, t in sol.items():
            same = concrete(L, S.op("eq", "bool", S.cast(t, "int"), S.cast(S.lane(axis), "int"))).astype(bool)
            if not np.all(same[act]):
                return False
        return True
    except (NotConcrete, NotTokenizable, ZeroDivisionError):
        return False


def _free_of(rec: WriteRec, axis: str) -> bool:
    """Whether a write's value and condition are the same for every thread along `axis` (neither reads that thread
    index, nor anything per-thread unknown): its threads along `axis` store one value to each element."""
    v = rec.value
    if not isinstance(v, Sym) or v.opaque or axis in v.lanes or "*" in v.lanes:
        return False
    return all(not c.opaque and axis not in c.lanes and "*" not in c.lanes for c in rec.pred)


def _pinned_lane(rec: WriteRec, axis: str) -> Sym | None:
    """c where the write's condition includes `lane(axis) == c` (c free of thread indices)."""
    for c in rec.pred:
        stack = [c]
        while stack:
            x = stack.pop()
            if x.op == "land":
                stack.extend(x.args)
            elif x.op == "eq":
                for a, b in (x.args, x.args[::-1]):
                    aff = S.affine(a)
                    if aff is not None and aff[0] == {axis: 1} and not b.lanes and not b.opaque:
                        return S.op("sub", "int", S.cast(b, "int"), S.cast(aff[1], "int"))
    return None


def data_view(L: Block, r: SharedRead, allow_tokens: bool = True) -> Sym:
    if r.data is not None:
        return r.data
    arr = r.arr
    recs = r.recs
    if allow_tokens and any(isinstance(rec.value, LaneTokens) for rec in recs):
        try:
            lt = token_view(L, r)
            act = active_lanes(L, [c for c in r.pred if c.concrete])
        except NotTokenizable as exc:
            try:  # an index of run-time values: each combination stored is forwarded as the data it is
                r.data = forward(L, r, recs)
            except _Unsolvable:
                raise LiftError("XL2004", f"combined shared-memory values read with a non-thread-index pattern ({exc})", r.loc) from None
            return r.data
        r.data = materialize(L, lt, act, r.loc, note=f"shared array '{arr.name}'")
        return r.data
    try:
        r.data = forward(L, r, recs)
    except _Unsolvable as exc:
        if not allow_tokens:
            raise LiftError("XL2004", f"read of shared array '{arr.name}': {exc}", r.loc) from None
        try:
            lt = token_view(L, r)
            act = active_lanes(L, [c for c in r.pred if c.concrete])
        except NotTokenizable:
            raise LiftError("XL2004", f"read of shared array '{arr.name}': {exc}", r.loc) from None
        r.data = materialize(L, lt, act, r.loc, note=f"shared array '{arr.name}'")
    return r.data


class _Unsolvable(Exception):
    pass


def stored_data(L: Block, rec: WriteRec) -> Sym:
    """The data value of a combination stored to shared memory (`s[t] = s[a(t)] + s[b(t)]`, no reduction
    recognised), as each storing thread computed it: its tokens' data, evaluated under the store's conditions
    (a gather is exact on the threads that stored, whatever the reader's conditions)."""
    lt = rec.value
    assert isinstance(lt, LaneTokens)
    if lt.data is None:
        if lt.alt is None:
            raise _Unsolvable("combined values")
        if _STORED_DEPTH[0] >= MAX_STORED_DEPTH:  # a tree of exchanges (a scan's sweeps): recomputing it per
            raise _Unsolvable("combined values of combined values, too deep to recompute")  # element explodes
        saved = L.st.pred
        L.st.pred = list(rec.pred)
        _STORED_DEPTH[0] += 1
        try:
            with needing(None):  # right on the threads that stored it: the write's own conditions
                lt.data = lt.alt()
        except LiftError as exc:
            if exc.code not in ("XL2004", "XL2010"):
                raise
            raise _Unsolvable(f"combined values ({exc.what})") from None
        finally:
            L.st.pred = saved
            _STORED_DEPTH[0] -= 1
    return lt.data


# nodes of a stored value (and its write's conditions) recomputed for another thread: each forwarding stage of
# a tree of data-dependent selects (an argmin through shared memory) doubles it, and rebuilding it for every read
# ran for minutes; of the lifted corpus kernels with shared memory, the largest recompute under 8,000 (nw)
MAX_RECOMPUTED = 50_000
MAX_STORED_DEPTH = 3  # stages of stored exchanges recomputed within one another (a winograd transform has two)
_STORED_DEPTH = [0]


def forward(L: Block, r: SharedRead, recs: list[WriteRec]) -> Sym:
    arr = r.arr
    axes = {"x": L.bx if L.nlanes else 1 << 30, "y": L.by}  # a block sized at launch: any number of threads
    threads = axes  # the block's threads per lane axis (the y lanes hold y and z)
    if L.nlanes:
        threads = {"x": int(L.block_dim("x").value), "y": int(L.block_dim("y").value) * int(L.block_dim("z").value)}
    chain: list[tuple[list[Sym], Sym]] = []
    recs, covered = live_records(recs)  # carried content (carry.py) holds every element: nothing before it shows
    reader_keys = {c.key() for c in r.pred}
    read_span = _span(L, r.idx, [c for c in r.pred if c.concrete])
    for rec in reversed(recs):
        if read_span is not None and _disjoint(L, rec, read_span):
            continue  # a thread-index write elsewhere in the array (another sub-array): cheaper than solving
        solved = solve(rec.idx, r.idx, axes, rec, _writer_extents(L, rec, threads))
        if isinstance(rec.value, LaneTokens) and solved is not None and _misses(L, solved, axes, r):
            continue
        if isinstance(rec.value, LaneTokens):
            rec = replace(rec, value=stored_data(L, rec))
        if solved is None:
            same = _same_value_write(L, rec, r, axes)
            if same is None:
                raise _Unsolvable("the write index is not an invertible affine map of the thread index: "
                                  + _why_no_writer(L, rec, axes))
            kept, state = _simplify_conds(L, same)
            if state == "never":
                continue
            chain.append((kept, rec.value))
            if state == "always":
                covered = True
                break
            continue
        sol, eqs = solved
        identity = all(sol.get(a) is not None and _is_lane(sol[a], a) for a, n in axes.items() if n > 1)
        if not identity and _misses(L, solved, axes, r):
            continue  # another part of the array (a sub-array carved from one buffer)
        if rec.chunk >= 0:  # a carried tensor: the element is in lane sol(x) (its barriers: carry.check)
            carried_use(L, r, rec)
            kept, value = _carried_chain(L, rec, sol, eqs, identity, axes)
            if kept is None:
                continue
            chain.append((kept, value))
            if not kept:
                covered = True
                break
            continue
        if not identity and rec.epoch == r.epoch and not _reads_own_write(L, sol, r):
            raise LiftError("XL2009", f"'{arr.name}' is read from another thread without a __syncthreads after its write", r.loc)
        conds: list[Sym] = list(eqs)
        mapping: dict[str, Sym] = {}
        if not identity and isinstance(rec.value, Sym) and S.dag_size([rec.value, *rec.pred], MAX_RECOMPUTED) > MAX_RECOMPUTED:
            raise _Unsolvable(f"the value stored is recomputed for the reading thread and has more than {MAX_RECOMPUTED:,} "
                              "operations (exchanges of data-dependent values stored into each other)")
        if not identity:
            for a, t in sol.items():
                conds.append(S.op("ge", "bool", t, S.const(0, "int")))
                lanes = S.const(axes[a], "int") if L.nlanes else S.cast(L.block_dim(a), "int")
                conds.append(S.op("lt", "bool", t, lanes))
                # a writer known at lift time (thread 0 of a tree reduction) folds: the recomputed value is then
                # free of the thread-index arithmetic, which otherwise compounds with every forwarding stage
                mapping[a] = S.cast(t, "unsigned int") if t.is_const else S.Sym("cast", "unsigned int", (t,), nonneg=True)
        for c in rec.pred:
            if c.uniform and c.key() in reader_keys:
                continue
            if identity:
                conds.append(c)
            else:
                try:
                    conds.append(S.substitute(c, mapping))
                except NotConcrete:
                    raise _Unsolvable("the write's condition depends on a loop-carried value") from None
        value = rec.value if isinstance(rec.value, Sym) else None
        if value is None:
            raise _Unsolvable("not a value")
        if not identity:
            try:
                value = S.substitute(value, mapping)
                value = _gathered(L, rec, sol, axes, r.loc) or value
            except NotConcrete:
                value = _lane_gather(L, rec, value, sol, axes, r.loc)
                if value is None:
                    raise _Unsolvable("the stored value depends on a loop-carried value and is read by another thread") from None
        kept, state = _simplify_conds(L, conds)
        if state == "never":
            continue
        chain.append((kept, value))
        if state == "always":
            covered = True
            break
    chain = _merge_same(L, chain, r)
    covered = covered or any(not kept for kept, _ in chain)
    if not covered and r.before_loop:
        why = carry_obstacle(L, arr) if carry_obstacle is not None else None
        raise _Unsolvable("some elements may come from an earlier loop iteration"
                          + (f" (a run-time loop carries a shared array as block tensors, not this one: {why})" if why else ""))
    # Elements no write covers are uninitialised shared memory in CUDA: any value is a faithful result.
    # (of the array's type: a template element type's 0 is cast to it, where a float 0.0 made tl.where promote
    # an int8 minimum to float, and its cast to uint32 turned -128 into 0)
    result: Sym = (S.const(0, arr.ctype) if not ctyping.is_symbolic(arr.ctype)
                   else S.cast(S.const(0, "int"), arr.ctype))
    for kept, value in reversed(chain):
        valid = S.land(*kept)
        masked_load = value.op == "load" and value.temp is None and value.ctype == result.ctype
        value = L.issue(value, S.land(*r.pred, valid), r.loc)
        if (valid.is_const and valid.value) or (masked_load and result.is_const and result.value == 0):
            result = value  # a load under `valid` with other=0 is already 0 where `valid` fails
        else:
            result = S.where(valid, value, result, arr.ctype)
    return result


def live_records(recs: list[WriteRec]) -> tuple[list[WriteRec], bool]:
    """The records a read can see: from the last carried content on (carry.py: it holds every element), and
    whether there is such content."""
    for i in range(len(recs) - 1, -1, -1):
        if recs[i].chunk == 0:
            return recs[i:], True
    return recs, False


# carry.py (which imports this module, and alone makes carried content) sets these: what a read of carried
# content notes for its loop's barrier check, and why an array cannot be carried (for the refusal)
on_carried_use: Callable[[Block, SharedRead, WriteRec], None] | None = None
carry_obstacle: Callable[[Block, SharedArr], str | None] | None = None


def carried_use(L: Block, r: SharedRead, rec: WriteRec) -> None:
    """A read sees carried content `rec` (carry.py): noted for the loop's barrier check. Content a loop left
    with no barrier after its last writes is seen by no other thread in the same barrier interval."""
    if on_carried_use is not None:
        on_carried_use(L, r, rec)


def _carried_chain(L: Block, rec: WriteRec, sol: dict[str, Sym], eqs: list[Sym], identity: bool,
                   axes: dict[str, int]) -> tuple[list[Sym] | None, Sym]:
    """The where-chain entry of a carried tensor: the reader's element is in lane sol(x) of it (where that lane
    exists): the tensor itself, or `tl.gather` of it at that lane (clamped into the block elsewhere)."""
    value = rec.value
    conds: list[Sym] = list(eqs)
    if not identity:
        t = S.cast(sol["x"], "int")
        inside = S.land(S.op("ge", "bool", t, S.const(0, "int")), S.op("lt", "bool", t, S.const(axes["x"], "int")))
        conds.append(inside)
        value = lane_gather(L, value.ctype, value, S.where(inside, t, S.const(0, "int"), "int"), "-1")
    kept, state = _simplify_conds(L, conds)
    return (None if state == "never" else kept), value


def _lane_gather(L: Block, rec: WriteRec, value: Sym, sol: dict[str, Sym], axes: dict[str, int],
                 loc: ir.Loc | None) -> Sym | None:
    """Another thread's stored value that cannot be recomputed for it (it reads a loop-carried per-thread value:
    `s[t] = acc; __syncthreads(); ... s[t + 1]`): the value as the block computed it, in its writers' lanes, taken
    at the writer (`tl.gather`). Its names are not reassigned before the read: a loop updates its carried
    variables after its body, and what a loop body wrote is not read after the loop (or is carried: carry.py).
    One lane axis moves (the other is the reader's own); None otherwise, or where the block is not known."""
    if not L.nlanes or L.st.defer or L.st.red_axes:
        return None
    moved = {a: t for a, t in sol.items() if axes.get(a, 1) > 1 and not _is_lane(t, a)}
    if not moved:
        return value
    if set(moved) == {"x"}:
        mode, index, bound = "-1", moved["x"], L.bx
    elif set(moved) == {"y"}:
        mode, index, bound = "-2", moved["y"], L.by
    else:
        return None
    index = S.cast(index, "int")
    inside = S.land(S.op("ge", "bool", index, S.const(0, "int")), S.op("lt", "bool", index, S.const(bound, "int")))
    index = S.where(inside, index, S.const(0, "int"), "int")
    block = L.issue(value, S.land(*rec.pred), loc)
    return lane_gather(L, value.ctype, block, index, mode)


def _gathered(L: Block, rec: WriteRec, sol: dict[str, Sym], axes: dict[str, int], loc: ir.Loc | None) -> Sym | None:
    """A read of another thread's stored global data (`s[t] = in[i]; sync; ... s[g(t)]`) as one block of the
    stored value, in its writers' lanes, gathered at the solved writer (`tl.gather`): the tile is loaded once
    and reused by every read, as CUDA's shared memory is, instead of one shifted global gather per read. The
    caller's conditions still select where a writer exists; the index is clamped into the block elsewhere (the
    gathered element is then discarded). One lane axis moves: a 2-D read whose writer differs on both axes (a
    tiled transpose) keeps the re-issued load, which layout.py turns into one coalesced tile and tl.trans. None
    also where re-evaluating at the writer is as cheap (no load in the value, a writer the same for every thread)
    or the block is not known (sized at launch, an idiom's axes)."""
    src = rec.value
    if not isinstance(src, Sym) or src.opaque or not src.lanes or not S.loads_in(src):
        return None
    if not L.nlanes or L.st.defer or L.st.red_axes:
        return None
    moved = {a: t for a, t in sol.items() if axes.get(a, 1) > 1 and not _is_lane(t, a)}
    if not moved or not any(t.lanes for t in moved.values()):
        return None
    if L.by == 1 or set(moved) == {"x"}:
        mode, index, bound = "-1", moved["x"], L.bx
    elif set(moved) == {"y"}:
        mode, index, bound = "-2", moved["y"], L.by
    else:  # both axes move (a tiled transpose): the writers' load turned with tl.trans is cheaper (layout.py)
        return None
    index = S.cast(index, "int")
    inside = S.land(S.op("ge", "bool", index, S.const(0, "int")), S.op("lt", "bool", index, S.const(bound, "int")))
    try:
        clamp = not concrete(L, inside).all()
    except (NotConcrete, ZeroDivisionError):
        clamp = True
    if clamp:
        index = S.where(inside, index, S.const(0, "int"), "int")
    block = L.issue(src, S.land(*rec.pred), loc)
    return lane_gather(L, src.ctype, block, index, mode)


def _same_value_write(L: Block, rec: WriteRec, r: SharedRead, axes: dict[str, int]) -> list[Sym] | None:
    """The conditions under which a read sees `rec`, where every writing thread stored one and the same value at
    one element (`s = x[blockIdx.x];` by all threads, a block's atomics on one element): which thread wrote it
    does not matter, only that one did. None when the write is not of that kind."""
    value = rec.value
    if not isinstance(value, Sym) or value.opaque or _varies_unmasked(value, frozenset(axes), rec.pred):
        return None
    if any(i.opaque or S.varies(i, frozenset(axes)) for i in rec.idx):
        return None
    conds = [S.op("eq", "bool", S.cast(ri, "int"), S.cast(wi, "int")) for wi, ri in zip(rec.idx, r.idx)]
    if any(c.is_const and not c.value for c in conds):
        return [S.const(0, "bool")]  # another element
    if rec.epoch == r.epoch and (rec.pred or rec.atomic):  # other threads may not have written (or added) yet
        raise LiftError("XL2009", f"'{r.arr.name}' is read from another thread without a __syncthreads after its write", r.loc)
    lane_conds = [c for c in rec.pred if c.opaque or S.varies(c, frozenset(axes))]
    conds += [c for c in rec.pred if c not in lane_conds]
    if lane_conds:
        try:  # conditions on thread indices alone: decided now
            act = active_lanes(L, lane_conds)
        except NotTokenizable:
            act = None
        if act is not None:
            return conds if act.any() else [S.const(0, "bool")]
    if lane_conds:  # some thread wrote it
        flag = S.where(S.land(*lane_conds), S.const(1, "int"), S.const(0, "int"), "int")
        conds.append(S.op("gt", "bool", reduce_sym("max", flag, "int"), S.const(0, "int")))
    return conds


def _varies_unmasked(v: Sym, axes: frozenset[str], pred: tuple[Sym, ...]) -> bool:
    """S.varies, except that a load masked by nothing but the write's own condition (the lanes padding the
    block, `if (t < n)`) loads the same element on every thread that stores: the others store nothing."""
    keys = {c.key() for c in pred}
    seen: dict[int, bool] = {}

    def own_mask(m: Sym) -> bool:
        stack = [m]
        while stack:
            c = stack.pop()
            if c.key() in keys or (c.is_const and c.value):
                continue
            if c.op != "land":
                return False
            stack.extend(c.args)
        return True

    def dep(s: Sym) -> bool:
        hit = seen.get(s.id)
        if hit is None:
            if s.op == "load":
                masked = s.mask is not None and not own_mask(s.mask)
                hit = S.varies(s, axes) if masked else any(S.varies(a, axes) for a in s.args)
            elif s.op == "reduce" or not s.args or "*" in s.lanes:
                hit = S.varies(s, axes) or "*" in s.lanes
            else:
                hit = any(dep(a) for a in s.args)
            seen[s.id] = hit
        return hit

    return dep(v)


def _merge_same(L: Block, chain: list[tuple[list[Sym], Sym]], r: SharedRead) -> list[tuple[list[Sym], Sym]]:
    """Writes that stored the same function of the element index in disjoint parts of the array (a tile filled
    in several rows per thread: `for (j = 0; j < T; j += BY) s[ty + j][tx] = in[...]`) read back as one value:
    its thread-index conditions are joined, and dropped where they cover every reading thread. Without this
    each read would be a where-chain of one masked load per write."""
    if len(chain) < 2:
        return chain
    try:
        reader = active_lanes(L, [c for c in r.pred if c.concrete])
    except NotTokenizable:
        reader = np.ones(L.nlanes, dtype=bool)
    parts = []
    for kept, value in chain:
        lane_conds = [c for c in kept if c.concrete and c.lanes]
        try:
            act = np.ones(L.nlanes, dtype=bool)
            for c in lane_conds:
                act &= concrete(L, c).astype(bool)
        except (NotConcrete, ZeroDivisionError):
            return chain
        rest = [c for c in kept if not (c.concrete and c.lanes)]
        memo: dict = {}
        parts.append((act, lane_conds, rest, (S.canon(value, memo), frozenset(S.canon(c, memo) for c in rest))))
    if np.any(sum(a.astype(np.int64) for a, _, _, _ in parts) > 1):
        return chain  # overlapping writes: which one a thread sees depends on their order
    groups: dict = {}
    for (act, lane_conds, rest, key), (_, value) in zip(parts, chain):
        groups.setdefault(key, []).append((act, lane_conds, rest, value))
    out: list[tuple[list[Sym], Sym]] = []
    for members in groups.values():
        act = np.logical_or.reduce([m[0] for m in members])
        simplest = min(members, key=lambda m: S.spelling_length(m[3]))  # the same value: its shortest spelling
        rest, value = simplest[2], simplest[3]
        if len(members) == 1:
            out.append((members[0][1] + rest, value))
        elif np.all(act | ~reader):
            out.append((list(rest), value))
        else:
            either = S.const(0, "bool")
            for m in members:
                either = S.op("lor", "bool", either, S.land(*m[1]))
            out.append(([either, *rest], value))
    return out


def _is_lane(t: Sym, axis: str) -> bool:
    aff = S.affine(t)
    if aff is None:
        return False
    coefs, rest = aff
    return coefs == {axis: 1} and rest.is_const and rest.value == 0


def _simplify_conds(L: Block, conds: list[Sym]) -> tuple[list[Sym], str]:
    """Drop conditions true on every thread; 'never' when one is false on every thread."""
    kept: list[Sym] = []
    try:
        env = concrete_env(L)
    except NotConcrete:  # a block sized at launch: nothing is decided by enumerating threads
        return [c for c in conds if not (c.is_const and c.value)], "sometimes"
    for c in conds:
        if c.is_const:
            if not c.value:
                return [], "never"
            continue
        if c.concrete:
            try:
                v = np.asarray(S.evaluate(c, env)).astype(bool)
                if v.all():
                    continue
                if not v.any():
                    return [], "never"
            except (NotConcrete, ZeroDivisionError):
                pass
        kept.append(c)
    return kept, ("always" if not kept else "sometimes")
