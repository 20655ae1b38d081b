"""Shared arrays carried across the iterations of a run-time loop as block tensors.

A run-time loop lifts its body once, so a read inside it sees only the writes of its own iteration (loops.py:
`enter_loop_shared`); an element written in an earlier iteration, or before the loop, is refused. Here such an
array is carried instead: its content is `k` block tensors of the block's lanes (element `j * lanes + x` in lane x
of tensor j), loop-carried variables like any other. At the top of the body each tensor is one write record
(`WriteRec.chunk` = j) that every read falls back to (comm.forward gathers another lane's element with
`tl.gather`); at the end of the body each tensor becomes the array's content as the iteration's writes leave it
(the same forwarding, read for every element at once), and after the loop the array is those tensors.

Only the order of the threads' accesses is left to check, and it is checked, conservatively, by barrier counts:
  * a read that sees the carried content (a write of an earlier iteration, or from before the loop) needs a
    __syncthreads before it in its iteration, or one after every write of the body (and before the loop);
  * a write that may store an element another thread reads needs a barrier after that read: later in the same
    iteration when it follows the read, and anywhere between the read and the next iteration's write otherwise.
Reads and writes a thread makes only to its own elements, or that name no common element (decided on the block's
threads where the indices are thread-index arithmetic), need no barrier. A loop that fails any of these is
refused as before.

The lifter tries this only where a kernel was refused without it (translator.py lifts again with `carry_shared`),
so every kernel that lifts without carrying keeps its port.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from xlate.cir import ctype as ctyping
from xlate.translate.triton import comm
from xlate.translate.triton import sym as S
from xlate.translate.triton.sym import NotConcrete, Sym
from xlate.translate.triton.values import LiftError, SharedArr, SharedRead, WriteRec

if TYPE_CHECKING:
    from xlate.translate.triton.host import Block

MAX_CHUNKS = 16  # block tensors one carried array may take (a 2048-element array in a 128-thread block)
CARRIED_EPOCH = -1  # the epoch of carried content that a barrier separates from every read (never a real epoch)
CONTENT_EPOCH = -2  # the epoch of a read of the whole array by no thread (no race to check: this module checks)
# the refusals a carried array may lift: what the lifter says about a shared array a run-time loop writes
CARRY_REASONS = ("may come from an earlier loop iteration", "read after the run-time loop that wrote it",
                 "depends on a loop-carried value and is read by another thread")


@dataclass
class Plan:
    """One array the loop carries: its tensors' Python names once emitted (placeholders in dry runs)."""

    arr: SharedArr
    chunks: int
    names: list[str] | None = None
    tentative: bool = False  # only passed to a call, or stored to through a pointer the loop declares
    seen: bool = False  # a dry run of the body wrote it


@dataclass
class Carried:
    """What the body being lifted did to a carried array, for the barrier checks at its end."""

    start: int  # the barrier epoch at the top of the body
    base: int  # the index of the first carried record in arr.records
    chunks: int
    pre: list[WriteRec]  # the writes before the loop that the carried content starts from
    uses: list[tuple[int, tuple[Sym, ...], tuple[Sym, ...]]] = field(default_factory=list)  # reads that saw it: (epoch, idx, pred)
    # the threads' reads in the body: (the last record id then, epoch, idx, pred); a write of a larger id follows it
    reads: list[tuple[int, int, tuple[Sym, ...], tuple[Sym, ...]]] = field(default_factory=list)


def chunks_of(L: Block, arr: SharedArr) -> int | None:
    """How many lane-sized tensors hold `arr`; None where it cannot be carried (a block sized at launch or of
    several rows, an array of unknown or large size (an extern array is as large as a constant shmem of the
    spec), of a template type, or filled by a staging loop)."""
    k = _chunks(L, arr)
    return k if isinstance(k, int) else None


def obstacle(L: Block, arr: SharedArr) -> str | None:
    """Why a run-time loop cannot carry `arr` (for the refusal to name), None where it can be."""
    k = _chunks(L, arr)
    return k if isinstance(k, str) else None


def _chunks(L: Block, arr: SharedArr) -> int | str:
    """chunks_of, or the reason it is None."""
    if not L.nlanes:
        return "the block is sized at launch"
    if L.by > 1:
        return "the block has several rows"
    if arr.staged is not None:
        return "a staging loop fills it"
    if len(arr.dims) != 1:
        return "it has several dimensions"
    if ctyping.is_symbolic(arr.ctype) or ctyping.row(arr.ctype) is None:
        return "its element type is a template type"
    size = arr.dims[0]
    shmem = getattr(getattr(L, "kc", None), "shmem", None)
    if size is None and shmem:  # an extern array: the launch's dynamic shared memory, a constant in the spec
        size = shmem // max(1, ctyping.bits(arr.ctype) // 8)
    if size is None:
        return "its size is the launch's dynamic shared memory, not a constant"
    k = -(-int(size) // L.nlanes)
    if k <= 0:
        return "it is empty"
    return k if k <= MAX_CHUNKS else f"it holds more than {MAX_CHUNKS} times the block's threads"


def element(L: Block, j: int) -> Sym:
    """The element lane x of tensor j holds: j * lanes + x."""
    x = S.cast(S.lane("x"), "int")
    return x if j == 0 else S.op("add", "int", S.const(j * L.nlanes, "int"), x)


def content(L: Block, arr: SharedArr, recs: list[WriteRec], j: int, epoch: int) -> Sym:
    """Tensor j of `arr` as `recs` leave it (comm's forwarding, for every lane's element at once). The loop's
    barrier checks (`check`) order it with the threads' accesses, so it checks none itself (CONTENT_EPOCH); where
    an enclosing loop carries the array, its content is noted there as read by every thread now."""
    r = SharedRead(arr, (element(L, j),), (), CONTENT_EPOCH, None, True, list(recs))
    if epoch != CONTENT_EPOCH and arr.carry is not None:
        arr.carry.uses.append((epoch, r.idx, ()))
    return comm.data_view(L, r)


def plan(L: Any, ids: set[int]) -> list[Plan]:
    """The arrays among `ids` (a run-time loop writes them) that can be carried, with their content before the
    loop computable (checked in a dry run)."""
    out: list[Plan] = []
    for arr in L.st.shared:
        if id(arr) not in ids:
            continue
        k = chunks_of(L, arr)
        if k is None:
            continue
        visible = arr.records[arr.boundary:] if L.st.runtime_loops else list(arr.records)
        if arr.clobbered or (L.st.runtime_loops and arr.boundary > 0 and not _complete(visible)):
            continue  # an enclosing loop's earlier iterations wrote it, and that loop does not carry it
        with L.st.dry_run():
            try:
                for j in range(k):
                    content(L, arr, visible, j, CONTENT_EPOCH)
            except (LiftError, NotConcrete, comm.NotTokenizable):
                continue
        out.append(Plan(arr, k))
    return out


def _complete(recs: list[WriteRec]) -> bool:
    return any(r.chunk == 0 for r in recs)


def enter(L: Any, plans: list[Plan], dry: bool) -> list[tuple[SharedArr, Any]]:
    """The top of the body: each carried array's tensors as write records every read falls back to."""
    saved = []
    for p in plans:
        arr = p.arr
        saved.append((arr, arr.carry))
        pre = arr.records[arr.boundary:] if L.st.runtime_loops > 1 else list(arr.records)
        pre, _ = comm.live_records(pre)
        arr.boundary = len(arr.records)
        arr.carry = Carried(L.st.epoch, len(arr.records), p.chunks, [r for r in pre if r.epoch >= L.st.epoch])
        for j in range(p.chunks):
            name = f"__dry_{arr.name}_{j}" if dry or p.names is None else p.names[j]
            rec = WriteRec(L.next_id(), arr, (element(L, j),), (), S.var(name, arr.ctype, True), CARRIED_EPOCH,
                           arr.loc, chunk=j)
            L.st.records[rec.id] = rec
            arr.records.append(rec)
    return saved


# the writes no barrier followed when a loop left its carried content (by the content's record ids; ids are
# never reused): a read in the same barrier interval must not see another thread's
_PENDING: dict[int, list[WriteRec]] = {}


def leave(L: Any, plans: list[Plan], saved: list[tuple[SharedArr, Any]], before: dict[int, int],
          pending: dict[int, list[WriteRec]]) -> None:
    """After the loop: the array is its tensors; where writes are `pending` (no barrier after them), a read in
    the same barrier interval sees no other thread's."""
    for p, (arr, outer) in zip(plans, saved):
        del arr.records[before[id(arr)]:]
        waiting = pending.get(id(arr), [])
        epoch = L.st.epoch if waiting else CARRIED_EPOCH
        for j in range(p.chunks):
            rec = WriteRec(L.next_id(), arr, (element(L, j),), (), S.var(p.names[j], arr.ctype, True), epoch,
                           arr.loc, chunk=j)
            L.st.records[rec.id] = rec
            arr.records.append(rec)
            if waiting:
                _PENDING[rec.id] = waiting
        arr.carry = outer


def used(L: Block, r: SharedRead, rec: WriteRec, loc: Any) -> None:
    """A read sees carried content `rec`: noted for the barrier check; content a loop left with writes no barrier
    followed is read in the same interval only where no other thread made them."""
    if r.epoch == CONTENT_EPOCH:
        return
    if rec.epoch == r.epoch and any(_may_conflict(L, r.idx, r.pred, w) for w in _PENDING.get(rec.id, [rec])):
        raise LiftError("XL2009", f"'{r.arr.name}' is read after the run-time loop that wrote it without a "
                                  "__syncthreads after its last writes", loc)
    if r.arr.carry is not None:
        r.arr.carry.uses.append((r.epoch, r.idx, r.pred))


def noted_read(L: Any, arr: SharedArr, idx: tuple[Sym, ...], pred: tuple[Sym, ...], epoch: int) -> None:
    if arr.carry is not None:
        arr.carry.reads.append((L.st.ids, epoch, idx, pred))


def check(L: Block, arr: SharedArr, loc: Any, iter_names: set[str] = frozenset()) -> list[WriteRec]:
    """The barrier checks of the module docstring at the end of the body; the writes no barrier follows (in the
    loop's last iteration, or before the loop where it runs none), which a read after the loop must not see.
    `iter_names`: the variables that take a new value each iteration (the counter, the carried variables); a write
    of another iteration than the read's is compared with them renamed (`_earlier`), so `s[t + j]` read in
    iteration j meets `s[t + 1 + (j - 1)]`, written by thread t + 1 the iteration before."""
    c: Carried = arr.carry
    end = L.st.epoch
    first = c.base + c.chunks
    body = arr.records[first:]
    if comm.thread_bits(L).bit_count() <= 1:
        return []  # one thread: nothing to order
    if any(w.atomic for w in body):
        raise LiftError("XL2005", f"atomics on shared array '{arr.name}' in a loop that carries it", loc)
    synced_end = all(w.epoch < end for w in body)
    pre_synced = not c.pre
    for e, idx, pred in c.uses:
        if e > c.start or (synced_end and pre_synced):
            continue
        # no barrier between: only the reading thread itself may have written the element (`s[t] += v`), in an
        # earlier iteration (the body's last writes) or before the loop
        unsynced = [w for w in body if w.epoch >= end] + c.pre
        if any(_may_conflict_earlier(L, idx, pred, w, iter_names) for w in unsynced):
            raise LiftError("XL2009", f"'{arr.name}' is read in a loop where another thread may have written it in an "
                                      "earlier iteration, with no __syncthreads between the two", loc)
    for last, e_r, idx, pred in c.reads:
        for w in body:
            if w.id > last and not w.epoch > e_r and _may_conflict(L, idx, pred, w):
                raise LiftError("XL2009", f"'{arr.name}' is written in a loop where another thread may still read "
                                          "the element, with no __syncthreads between the two", w.loc)
            if not (e_r < end or w.epoch > c.start) and _may_conflict_earlier(L, idx, pred, w, iter_names):
                raise LiftError("XL2009", f"'{arr.name}' is written in a loop where another thread read the element "
                                          "in the iteration before, with no __syncthreads between the two", w.loc)
    return [w for w in body if w.epoch >= end] + c.pre


def _may_conflict_earlier(L: Block, idx: tuple[Sym, ...], pred: tuple[Sym, ...], w: WriteRec,
                          iter_names: set[str]) -> bool:
    """`_may_conflict` for a read and a write of different iterations: the write's per-iteration variables are
    renamed, so the two index expressions share only what the iterations share. A renamed variable read through
    memory (`s[idx[j]]`) cannot be renamed there: such a pair may conflict."""
    rename = {n: S.var(f"{n}__other_iteration", "int", True) for n in iter_names}
    hidden: list[bool] = []
    w_idx = tuple(_subst(s, rename, hidden) for s in w.idx)
    w_pred = tuple(_subst(s, rename, hidden) for s in w.pred)
    if any(hidden):
        return True
    return _may_conflict(L, idx, pred, replace(w, idx=w_idx, pred=w_pred))


MAX_ITERATION_PAIRS = 4096  # (read, write) iterations of constant-range loops enumerated by _may_conflict


def _may_conflict(L: Block, idx: tuple[Sym, ...], pred: tuple[Sym, ...], w: WriteRec) -> bool:
    """Whether a thread may write an element another thread reads, in any iterations of the run-time loops around
    them: where the indices or conditions read the variable of such a loop whose values are constants
    (`for (j = 0; j < 3; j++)` not unrolled), every value of it for the read against every value for the write
    (any two iterations, the same one included); otherwise as `_may_conflict_once`."""
    names = sorted(_loop_vars(L, (*idx, *pred, *w.idx, *w.pred)))
    if names:
        values = list(itertools.product(*(L.st.loop_ranges[n] for n in names)))
        if 0 < len(values) ** 2 <= MAX_ITERATION_PAIRS:
            for rv in values:
                at_r = dict(zip(names, rv))
                r_idx, r_pred = (tuple(_fix(s, at_r) for s in x) for x in (idx, pred))
                for wv in values:
                    at_w = dict(zip(names, wv))
                    w_at = replace(w, idx=tuple(_fix(s, at_w) for s in w.idx), pred=tuple(_fix(s, at_w) for s in w.pred))
                    if _may_conflict_once(L, r_idx, r_pred, w_at):
                        return True
            return False
        if not values:
            return False  # a loop that runs no iteration
    return _may_conflict_once(L, idx, pred, w)


def _loop_vars(L: Block, syms: tuple[Sym, ...]) -> set[str]:
    """The variables of constant-range run-time loops (`LiftState.loop_ranges`) that `syms` read."""
    return _loop_vars_in(*syms, names=set(getattr(L.st, "loop_ranges", {})))


def _loop_vars_in(*syms: Sym, names: set[str]) -> set[str]:
    """The variables among `names` that `syms` read, through loads and collectives too."""
    return {x.name for x in S.nodes(*syms) if x.op == "var" and x.name in names}  # type: ignore[misc]


def _fix(s: Sym, at: dict[str, int]) -> Sym:
    """`s` with the loop variables of `at` replaced by their values."""
    return _subst(s, {n: S.const(v, "int") for n, v in at.items()}, [])


_OPAQUE_OPS = ("load", "gather", "reduce", "scan", "segreduce")


def _subst(s: Sym, repl: dict[str, Sym], hidden: list[bool], memo: dict[int, Sym] | None = None) -> Sym:
    """`s` with the variables of `repl` replaced (a replacing constant takes the variable's C type); inside a
    load, gather or collective nothing is replaced: where one reads such a variable, True is appended to `hidden`."""
    memo = {} if memo is None else memo
    if s.id in memo:
        return memo[s.id]
    if s.op == "var" and s.name in repl:
        r = repl[s.name]
        out = S.const(r.value, s.ctype) if r.is_const else r
    elif not s.args:
        out = s
    elif s.op in _OPAQUE_OPS:
        if repl and _loop_vars_in(s, names=set(repl)):
            hidden.append(True)
        out = s
    else:
        args = tuple(_subst(a, repl, hidden, memo) for a in s.args)
        if all(a is b for a, b in zip(args, s.args)):
            out = s
        elif s.op == "cast":
            out = S.cast(args[0], s.ctype)
        else:
            out = S.op(s.op, s.ctype, *args, fn=s.name)
    memo[s.id] = out
    return out


def _may_conflict_once(L: Block, idx: tuple[Sym, ...], pred: tuple[Sym, ...], w: WriteRec) -> bool:
    """Whether a thread may write an element another thread reads: False where the indices, evaluated on the
    block's threads (thread-index arithmetic, or affine maps of the thread index whose other parts differ by a
    constant: `p[t - 55]` and `p[t]` for a pointer p into the array), name no common element for two different
    threads, or where both are the same injective map of the thread index."""
    try:
        ra = comm.active_lanes(L, [c for c in pred if c.concrete])
        wa = comm.active_lanes(L, [c for c in w.pred if c.concrete])
    except (comm.NotTokenizable, NotConcrete, ZeroDivisionError):
        ra = wa = np.ones(L.nlanes, dtype=bool)
    if (ra | wa).sum() <= 1:
        return False  # one thread reads and writes (`if (t == 0) for (...) s[0] += s[i];`)
    if len(idx) != 1 or len(w.idx) != 1:
        return True
    values = _lane_values(L, idx[0], w.idx[0])
    if values is None:
        ri, wi = idx[0], w.idx[0]
        aff = S.affine(wi)
        if aff is None or S.canon(S.cast(ri, "int")) != S.canon(S.cast(wi, "int")):
            return True
        coefs, rest = aff
        return not (set(coefs) == {"x"} and coefs["x"] != 0 and rest.uniform and not rest.opaque)
    rv, wv = values
    lanes = np.arange(L.nlanes)
    writers: dict[int, set[int]] = {}
    for t in lanes[wa]:
        writers.setdefault(int(wv[t]), set()).add(int(t))
    return any(writers.get(int(rv[t]), set()) - {int(t)} for t in lanes[ra])


def _lane_values(L: Block, ri: Sym, wi: Sym) -> tuple[np.ndarray, np.ndarray] | None:
    """The element each thread reads and writes, up to one common unknown (None where not known so)."""
    try:
        if ri.concrete and wi.concrete:
            return comm.concrete(L, ri).astype(np.int64), comm.concrete(L, wi).astype(np.int64)
        ra, wa = S.affine(ri), S.affine(wi)
        if ra is None or wa is None or not set(ra[0]) | set(wa[0]) <= {"x"}:
            return None
        diff = S.poly(S.op("sub", "int", S.cast(ra[1], "int"), S.cast(wa[1], "int")))
        if diff is None or set(diff) - {()}:
            return None
        x = comm.lane_env(L)["x"].astype(np.int64)
        return ra[0].get("x", 0) * x + diff.get((), 0), wa[0].get("x", 0) * x
    except (NotConcrete, ZeroDivisionError):
        return None


comm.carry_obstacle = obstacle
comm.on_carried_use = lambda L, r, rec: used(L, r, rec, r.loc)
