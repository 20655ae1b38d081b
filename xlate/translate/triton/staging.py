"""Staging loops: a block copies a range of global memory (or any per-element value) into shared memory with a
lane-strided loop, then reads it back after a barrier.

    for (int k = threadIdx.x + c; k < bound; k += blockDim.x)
        if (cond(k)) s[k + d] = value(k);
    __syncthreads();
    ... s[j] ...

The threads of the block start at every residue of the stride, so together they run every k in [c, bound): after
the loop, s[e] holds value(e - d) where c <= e - d < bound and cond(e - d) held. The loop is not lifted as a loop;
each later read s[j] becomes value(j - d) (under that validity), the expressions evaluated again for the element
read, in the scopes the loop saw. That is exact when value and cond read only k and values the same for every
thread (never threadIdx, nor another shared array), when the memory they load is not stored to between the loop
and the read, and when every thread of the block runs the loop (no per-thread condition around it, no enclosing
run-time loop). An element the loop does not write is undefined in CUDA (the port reads 0). Anything else is left
to the ordinary lowering.

A loop whose body stores a run of elements per iteration -- a vector store under an alignment test with a
scalar fallback, several stores, loops into the same array one after the other -- is a StagedBody: the body is
run once (dry) for a symbolic k to find that iteration k writes [width * k + base, width * k + base + width),
every value, index and condition the same on every thread but for k, nothing but that array written, no shared
memory read; a read of element e runs the body again for iteration (e - base) / width and takes what it stored.
"""

from __future__ import annotations

from typing import Any

from xlate.cir import ctype as ctyping
from xlate.cir import ir
from xlate.translate.triton import sym as S
from xlate.translate.triton.comm import NotTokenizable
from xlate.translate.triton.emit import Ctx
from xlate.translate.triton.state import Binding, LiftState
from xlate.translate.triton.sym import NotConcrete, Sym
from xlate.translate.triton.values import LiftError, PtrVal, SharedArr, StagedBody, StagedCopy


class Staging:
    """Staging loops into shared memory (mixed into the Lifter)."""

    st: LiftState

    def staged_copy(self, s: ir.For, can: tuple[str, str, Sym, Sym] | None) -> bool:
        """Record `s` as a staging loop (nothing emitted) if it is one; False, the state untouched, otherwise."""
        return self.single_store_copy(s, can) or self.staged_body(s, can)

    def single_store_copy(self, s: ir.For, can: tuple[str, str, Sym, Sym] | None) -> bool:
        """`for (k = tid + c; k < bound; k += threads) [if (cond)] s[k + d] = value;` (StagedCopy)."""
        if can is None or self.st.runtime_loops or not (len(s.init) == 1 and isinstance(s.init[0], ir.Decl)):
            return False
        var, _, bound, step = can
        body = _single(s.body)
        cond: ir.Expr | None = None
        if isinstance(body, ir.If) and not body.other:
            cond, body = body.test, _single(body.then)
        if not (isinstance(body, ir.ExprStmt) and isinstance(body.expr, ir.Assign) and body.expr.op == "="):
            return False
        target = body.expr.target
        if not (isinstance(target, ir.Index) and isinstance(target.base, ir.Name)):
            return False
        b = self.lookup(target.base.id)
        arr, base_off = (b.val, S.const(0, "int")) if b is not None else (None, None)
        if isinstance(arr, PtrVal) and arr.shared and arr.offset.uniform:
            arr, base_off = arr.base, arr.offset
        if not isinstance(arr, SharedArr) or len(arr.dims) != 1 or arr.scalar or arr.records or arr.staged:
            return False
        shift_e = _shift(target.index, var)
        if shift_e is None:
            return False
        exprs = [body.expr.value, shift_e] + ([cond] if cond is not None else [])
        if not self.uniform_except(exprs, var):
            return False
        start = self.data(self.lookup(var).val, s.loc)
        threads = self.staging_threads(start, step)
        if threads is None:
            return False
        pred = [c for c in self.full_pred() if c is not self.lane_guard]
        if any(not c.uniform or c.opaque for c in pred):
            return False  # threads that skip the loop leave their iterations unwritten
        shift = S.op("add", "int", S.cast(self.data(self.ev(shift_e), s.loc), "int"), S.cast(base_off, "int"))
        if not shift.uniform:
            return False
        var_type = self.resolve_type(s.init[0].ctype.base, s.loc)
        if s.init[0].ctype.ptr or not ctyping.is_int(var_type):
            return False
        arr.staged = StagedCopy(
            var,
            var_type,
            body.expr.value,
            cond,
            S.cast(threads, "int"),
            S.cast(bound, "int"),
            shift,
            tuple(dict(sc) for sc in self.st.scopes),
            S.land(*pred),
            self.st.epoch,
            tuple(sorted(self.st.store_epoch.items())),
        )
        self.idiom(f"staging loop into shared array '{arr.name}' read back element by element", s.loc)
        return True

    def staging_threads(self, start: Sym, step: Sym) -> Sym | None:
        """c where `start` is threadIdx (linear over the block) + c and `step` the block's thread count."""
        aff = S.affine(start) if ctyping.is_int(start.ctype) else None
        if aff is None or not step.is_const or self.real_bx is None:
            return None
        coefs, rest = aff
        if not rest.uniform:
            return None
        if self.real_by == 1 and coefs == {"x": 1} and step.value == self.real_bx:
            return rest
        if coefs == {"x": 1, "y": self.real_bx} and step.value == self.real_bx * self.real_by:
            return rest
        return None

    def uniform_except(self, exprs: list[ir.Expr], var: str) -> bool:
        """Whether `exprs` read nothing but `var`, names whose values are the same on every thread (no shared
        memory), and no thread index; and assign nothing."""
        for e in exprs:
            if ir.has_effects(e):
                return False
            for n in ir.walk(e):
                if isinstance(n, ir.Builtin) and n.var == "threadIdx":
                    return False
                if isinstance(n, ir.Name) and n.id != var:
                    b = self.lookup(n.id)
                    if b is None:
                        continue  # a macro, constant or function of the program: the same everywhere
                    v = b.val
                    if isinstance(v, SharedArr) or (
                        isinstance(v, PtrVal) and (v.shared or not v.offset.uniform)
                    ):
                        return False
                    if isinstance(v, Sym) and (not v.uniform or v.opaque):
                        return False
                    if not isinstance(v, Sym | PtrVal):
                        return False
        return True

    # -- loops whose body stores a run of elements per iteration (StagedBody) ---------------------------------

    def staged_body(self, s: ir.For, can: tuple[str, str, Sym, Sym] | None) -> bool:
        """Record `s` as a StagedBody if it is one: a lane-strided loop run by every thread, whose body (the
        same on every thread but for k) writes one shared array, a run of `width` elements from `width * k +
        base`, and nothing else (no global store, no barrier, no other shared array, no run-time loop)."""
        if can is None or self.st.runtime_loops or not (len(s.init) == 1 and isinstance(s.init[0], ir.Decl)):
            return False
        var, _, bound, step = can
        var_type = self.resolve_type(s.init[0].ctype.base, s.loc)
        if s.init[0].ctype.ptr or not ctyping.is_int(var_type):
            return False
        threads = self.staging_threads(self.data(self.lookup(var).val, s.loc), step)
        pred = [c for c in self.full_pred() if c is not self.lane_guard]
        if threads is None or any(not c.uniform or c.opaque for c in pred):
            return False
        probe = self.probe_body(s, var, var_type)
        if probe is None:
            return False
        arr, width, base = probe
        arr.staged = StagedBody(var, var_type, s.body, S.cast(threads, "int"), S.cast(bound, "int"), base, width,
                                tuple(dict(sc) for sc in self.st.scopes), S.land(*pred), self.st.epoch,
                                tuple(sorted(self.st.store_epoch.items())), arr.staged)
        self.idiom(f"staging loop into shared array '{arr.name}' ({width} elements an iteration) read back element "
                   "by element", s.loc)
        return True

    def probe_body(self, s: ir.For, var: str, var_type: str) -> tuple[SharedArr, int, Sym] | None:
        """(array, width, base) of a StagedBody loop, found by running its body once (dry) for a symbolic k."""
        axis = f"stage{self.next_id()}"
        k = S.red(axis, 1)
        before = {id(a): len(a.records) for a in self.st.shared}
        ctx = self.ctx  # k spelled as a constant in what the dry run builds (and discards)
        self.ctx = Ctx(ctx.name, {**ctx.lanes, axis: "0"}, ctx.shape)
        try:
            return self._probe(s, var, var_type, axis, k, before)
        finally:
            self.ctx = ctx

    def _probe(self, s: ir.For, var: str, var_type: str, axis: str, k: Sym,
               before: dict[int, int]) -> tuple[SharedArr, int, Sym] | None:
        with self.st.dry_run():
            epoch, stores, npred = self.st.epoch, dict(self.st.store_epoch), len(self.st.pred)
            self.st.defer += 1  # loads built, never issued: k is no axis of the program
            self.push_scope()
            self.bind(var, ir.CType(var_type), S.cast(k, var_type))
            reads = self.shared_reads
            try:
                self.stmts(s.body)
            except (LiftError, NotConcrete, NotTokenizable):
                return None
            if self.st.epoch != epoch or self.st.store_epoch != stores or self.st.runtime_loops:
                return None
            if self.shared_reads != reads:
                return None  # what it read of shared memory would be read again later, changed since
            written = [a for a in self.st.shared if len(a.records) > before.get(id(a), 0)]
            if len(written) != 1:
                return None
            arr = written[0]
            if len(arr.dims) != 1 or arr.scalar or before.get(id(arr), 0):
                return None
            recs = arr.records[before.get(id(arr), 0):]
            return _runs(arr, recs, npred, axis, k)

    def body_staged_read(self, arr: SharedArr, sc: StagedBody, idx: tuple[Sym, ...], loc: ir.Loc) -> Sym:
        """s[e] of a StagedBody array: the loop's body run again for iteration (e - base) / width, under that
        iteration's validity, its stores to s taken as the value (where one wrote e; else what s held before)."""
        e = S.cast(idx[0], "int")
        rel = S.op("sub", "int", e, sc.base)
        k = S.op("div", "int", rel, S.const(sc.width, "int"))
        valid = S.land(sc.pred, S.op("ge", "bool", rel, S.const(0, "int")), S.op("ge", "bool", k, sc.start),
                       S.op("lt", "bool", k, sc.bound))
        if sc.prev is not None:
            arr.staged = sc.prev
            try:
                out: Sym = self.staged_read(arr, idx, loc)
            finally:
                arr.staged = sc
        else:
            out = S.const(0, arr.ctype)
        saved_scopes, saved_pred, n0 = self.st.scopes, len(self.st.pred), len(arr.records)
        self.st.scopes = [dict(x) for x in sc.scopes] + [{sc.var: Binding(ir.CType(sc.var_type), S.cast(k, sc.var_type))}]
        arr.staged = None  # the body's stores become records of this run, read back below and dropped
        self.st.defer += 1  # its loads are built, and issued below only where the read needs them
        try:
            self.st.pred.append(valid)
            self.stmts(sc.body)
            recs = arr.records[n0:]
        finally:
            self.st.defer -= 1
            self.st.scopes = saved_scopes
            del self.st.pred[saved_pred:]
            gone = {r.id for r in arr.records[n0:]}
            del arr.records[n0:]
            for rid in gone:
                self.st.records.pop(rid, None)
            for sid in [sid for sid, r in self.st.pseudo.items() if r.id in gone]:
                del self.st.pseudo[sid]
            arr.staged = sc
        for r in recs:
            if not isinstance(r.value, Sym):
                raise LiftError("XL2004", f"shared array '{arr.name}' staged with values read from other threads", loc)
        hits = [S.land(*r.pred, S.op("eq", "bool", S.cast(r.idx[0], "int"), e)) for r in recs]
        copied = _copied_from(recs, arr.ctype)
        if copied is not None:
            # every store of the body copies the same global element to e (a vector copy under an alignment
            # test, its scalar fallback): whichever ran, s[e] is that element, read once
            wrote = hits[0]
            for h in hits[1:]:
                wrote = S.op("lor", "bool", wrote, h)
            ld = copied(e, wrote)
            out = _one_load(ld, out, arr.ctype)
        else:
            for r, hit in zip(recs, hits):
                out = S.where(hit, S.cast(r.value, arr.ctype), out, arr.ctype)
        if not self.st.defer:
            for ld in sorted(S.loads_in(out), key=lambda x: x.id):  # in the order the body built them
                if ld.temp is None:
                    self.emit_global(ld, hint=ld.root or "v")
        stores = dict(sc.stores)
        for ld in S.loads_in(out):
            if ld.root and self.st.store_epoch.get(ld.root, 0) != stores.get(ld.root, 0):
                raise LiftError("XL2004", f"'{ld.root}' is written between the loop that staged '{arr.name}' and a "
                                          "read of it", loc)
        return out

    def staged_read(self, arr: SharedArr, idx: tuple[Sym, ...], loc: ir.Loc) -> Sym:
        """s[j] of a staged array: the staging loop's value for iteration j - d (0 where it wrote nothing)."""
        sc = arr.staged
        assert sc is not None
        if isinstance(sc, StagedBody):
            if arr.records:
                raise LiftError("XL2004", f"shared array '{arr.name}' is written after the loop that staged it", loc)
            if self.st.epoch == sc.epoch:
                raise LiftError("XL2009", f"'{arr.name}' is read from another thread without a __syncthreads after "
                                          "its write", loc)
            return self.body_staged_read(arr, sc, idx, loc)
        if arr.records:
            raise LiftError(
                "XL2004", f"shared array '{arr.name}' is written after the loop that staged it", loc
            )
        if self.st.epoch == sc.epoch:
            raise LiftError(
                "XL2009",
                f"'{arr.name}' is read from another thread without a __syncthreads after its write",
                loc,
            )
        k = S.op("sub", "int", S.cast(idx[0], "int"), sc.shift)
        valid = S.land(sc.pred, S.op("ge", "bool", k, sc.start), S.op("lt", "bool", k, sc.bound))
        saved_scopes, saved_pred = self.st.scopes, len(self.st.pred)
        self.st.scopes = [dict(x) for x in sc.scopes] + [
            {sc.var: Binding(ir.CType(sc.var_type), S.cast(k, sc.var_type))}
        ]
        try:
            self.st.pred.append(valid)
            if sc.cond is not None:
                valid = S.land(valid, self.cond(self.ev(sc.cond), loc))
                self.st.pred.append(valid)
            value: Any = S.cast(self.data(self.ev(sc.value), loc), arr.ctype)
        finally:
            self.st.scopes = saved_scopes
            del self.st.pred[saved_pred:]
        stores = dict(sc.stores)
        for ld in S.loads_in(value):
            if ld.root and self.st.store_epoch.get(ld.root, 0) != stores.get(ld.root, 0):
                raise LiftError(
                    "XL2004",
                    f"'{ld.root}' is written between the loop that staged '{arr.name}' and a read of it",
                    loc,
                )
        return S.where(valid, value, S.const(0, arr.ctype), arr.ctype)


def _copied_from(recs: list, ctype: str) -> Any:
    """Where every record stores a global load of `ctype` from one buffer at its own index plus one constant d
    (`s[i] = g[i + d]`, each path spelling the index alike: a vector copy `*(float4*)&s[4 * q] = *(float4*)&g[4 *
    q]` and its scalar fallback; a store of either of two such loads), its address computed without another load:
    a function of (e, the condition that some record wrote e) giving the load of g[e + d] under that condition.
    None otherwise."""
    first: Sym | None = None
    d0: int | None = None
    for idx, v in ((r.idx[0], v) for r in recs for v in _selected(r.value)):
        if v.op != "load" or v.ctype != ctype or S.loads_in(v.args[1]):
            return None
        d = _constant(S.op("sub", "int", S.cast(v.args[1], "int"), S.cast(idx, "int")))
        if d is None:
            return None
        d = d - (1 << 32) if d >= 1 << 31 else d  # the polynomial's coefficients wrap at int's 32 bits
        if first is None:
            first, d0 = v, d
        elif d != d0 or v.root != first.root or v.epoch != first.epoch or S.canon(v.args[0]) != S.canon(first.args[0]):
            return None
    if first is None or d0 is None:
        return None
    base, root, epoch, shift = first.args[0], first.root, first.epoch, S.const(d0, "int")
    return lambda e, wrote: S.load(base, S.op("add", "int", e, shift), wrote, ctype, root, epoch)


def _one_load(ld: Sym, before: Sym, ctype: str) -> Sym:
    """`ld` where it loaded, else `before` -- one load where `before` is itself the same element under another
    condition (`where(c, load(g + e, m), z)`: a vector staging loop's tail loop, which copied the elements the
    vector loop left): `load(g + e, ld.mask | (m & c))` where either loaded, else (c ? 0 : z), as before. Each
    lane's value is unchanged (a lane the merged mask adds read the same element); the port issues one load
    instead of two."""
    if before.op == "where":
        cond, prev, other = before.args
        if prev.op == "cast" and prev.ctype == prev.args[0].ctype:
            prev = prev.args[0]
        if (prev.op == "load" and prev.mask is not None and ld.mask is not None and prev.ctype == ld.ctype
                and prev.root == ld.root and prev.epoch == ld.epoch and S.canon(prev.args[0]) == S.canon(ld.args[0])
                and S.canon(prev.args[1]) == S.canon(ld.args[1])):
            mask = S.op("lor", "bool", ld.mask, S.land(prev.mask, cond))
            merged = S.load(ld.args[0], ld.args[1], mask, ld.ctype, ld.root, ld.epoch)
            return S.where(mask, merged, S.where(cond, S.const(0, ctype), other, ctype), ctype)
    return S.where(ld.mask, ld, before, ctype)


def _selected(v: Sym) -> list[Sym]:
    """The values a tree of selections (`where`, a store under if/else) picks from."""
    if v.op == "where":
        return _selected(v.args[1]) + _selected(v.args[2])
    return [v]


def _runs(arr: SharedArr, recs: list, npred: int, axis: str, k: Sym) -> tuple[SharedArr, int, Sym] | None:
    """(arr, width, base) where every record writes element `width * k + base + j`, 0 <= j < width, from values,
    indices and conditions the same on every thread but for k; None otherwise."""
    if not recs:
        return None
    offsets: list[Sym] = []
    width = None
    for r in recs:
        parts = [r.idx[0], *r.pred[npred:]] + ([r.value] if isinstance(r.value, Sym) else [])
        if not isinstance(r.value, Sym) or any(p.opaque or not p.lanes <= {axis} for p in parts):
            return None
        i = S.cast(r.idx[0], "int")
        a = _slope(i, axis, k)
        if a is None or a <= 0 or (width is not None and a != width):
            return None
        width = a
        offsets.append(S.substitute(i, {axis: S.const(0, "int")}))
    deltas = [_constant(S.op("sub", "int", o, offsets[0])) for o in offsets]
    if any(d is None for d in deltas):
        return None
    low = min(deltas)
    if max(deltas) - low >= width:
        return None  # runs of different iterations would overlap
    base = S.op("add", "int", offsets[0], S.const(low, "int"))
    return arr, width, base


SAMPLES = (1, 2, 3, 5, 8, 13, 64, 1000, 4099)  # iterations an index is compared at, where its form is not a polynomial


def _slope(i: Sym, axis: str, k: Sym) -> int | None:
    """a where `i` is a * k + (terms without k): exact where i is a polynomial in k; otherwise (divisions that
    cancel, `(4 * k) / 4 * 4`) where i(k = d) - i(k = 0) is a * d at every sampled iteration d."""
    try:
        step = _constant(S.op("sub", "int", S.substitute(i, {axis: S.op("add", "int", k, S.const(1, "int"))}), i))
        if step is not None and _constant(S.op("sub", "int", S.substitute(
                i, {axis: S.op("add", "int", k, S.const(2, "int"))}), i)) == 2 * step:
            return step
        at0 = S.substitute(i, {axis: S.const(0, "int")})
        diffs = [_constant(S.op("sub", "int", S.substitute(i, {axis: S.const(d, "int")}), at0)) for d in SAMPLES]
    except NotConcrete:
        return None
    if diffs[0] is None or any(x != diffs[0] * d for x, d in zip(diffs, SAMPLES)):
        return None
    return diffs[0]


def _constant(s: Sym) -> int | None:
    """The value of an integer sym that is a constant once simplified (its polynomial a constant)."""
    if s.is_const:
        return int(s.value)
    p = S.poly(s)
    if p is None or any(m != () for m in p):
        return None
    return int(p.get((), 0))


def _single(body: tuple[ir.Stmt, ...]) -> ir.Stmt | None:
    while len(body) == 1 and isinstance(body[0], ir.BlockStmt):
        body = body[0].body
    return body[0] if len(body) == 1 else None


def _shift(index: ir.Expr, var: str) -> ir.Expr | None:
    """d where `index` is `var + d`, `d + var` or `var - d` (d not reading var); None otherwise."""
    if isinstance(index, ir.Name) and index.id == var:
        return ir.Num(index.loc, 0, "int")
    if isinstance(index, ir.Binary) and index.op in ("+", "-"):
        left, right = index.left, index.right
        if isinstance(left, ir.Name) and left.id == var and var not in ir.names_in(right):
            return right if index.op == "+" else ir.Unary(index.loc, "-", right)
        if (
            index.op == "+"
            and isinstance(right, ir.Name)
            and right.id == var
            and var not in ir.names_in(left)
        ):
            return left
    return None
