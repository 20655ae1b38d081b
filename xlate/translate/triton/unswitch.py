"""Loop unswitching on a test every thread of the program passes (issue #16).

A vectorised CUDA loop often branches on a per-thread test that no iteration changes: fma's row kernel tests the
alignment of its row (`(in * C + 8 * v) * 2 % 16 == 0`, the same for every v) and takes a 16-byte path or an
element-by-element fallback. CUDA threads take one side; a lifted loop runs both sides every iteration, the other
masked off -- on an H100 fma's row kernel spent 10 % of its time in the fallback no thread took (a copy of its
port with the loop in two versions: 1.257x CUDA -> 1.147x).

For a counted loop at the top of the kernel whose body has such an `if`, the port tests once, before the loop,
whether every thread that runs the loop passes it, and runs one of two versions of the loop:

    __xl_uniform = tl.max((runs & ~test).to(tl.int32)) == 0
    if __xl_uniform:
        for ...: <the body with the test taken as true on every thread: the other side gone>
    else:
        for ...: <the body as lifted: both sides, masked>

Exact: where the test holds on every thread that runs the loop, the first version computes what the second
would. The test is the body's condition with the counter set to the loop's start; it qualifies only where it is
the same on every iteration (sym.canon of it equals that of the condition itself -- the alignment test's
`16 * v` vanishes modulo 16), reads no memory the loop writes or loads (no load built in the loop), and the
loop carries no variable and writes no shared memory (the first version then needs nothing from the second).
Block batching keeps the general version alone (batchast.strip_skip_guards).
"""

from __future__ import annotations

from collections.abc import Callable

from xlate.cir import ir
from xlate.translate.triton import sym as S
from xlate.translate.triton.batchast import UNSWITCH
from xlate.translate.triton.emit import Emitter
from xlate.translate.triton.state import LiftState
from xlate.translate.triton.sym import Sym
from xlate.translate.triton.values import LiftError


class Unswitching:
    """Loop unswitching (mixed into the Lifter)."""

    st: LiftState

    @property
    def em(self) -> Emitter: ...

    def full_pred(self) -> list[Sym]: ...

    def some_thread(self, cond: Sym) -> tuple[Sym, str]: ...

    # while probing a loop's body: (ids of the body's top-level if statements, the conditions they evaluated)
    branch_probe: tuple[set[int], list[Sym]] | None = None

    def probe_branch(self, s: ir.If, c: Sym) -> None:
        """Called by if_stmt with each condition it evaluates."""
        if self.branch_probe is not None and id(s) in self.branch_probe[0]:
            self.branch_probe[1].append(c)

    def invariant_branch(self, body: list[ir.Stmt], counter: Sym, start: Sym, run: Callable[[], None],
                         changed: Callable[[], set[str]]) -> Sym | None:
        """The test of the first top-level `if` of a loop's body that is per-thread and the same on every
        iteration, as its value on the first iteration (`counter` = `start`); None where there is none. `run`
        lifts the body once (run dry here); `changed()`, after it, names the carried variables the iteration
        changed (a test reading one is not the same on every iteration)."""
        ifs = {id(x) for x in body if isinstance(x, ir.If)}
        if not ifs or counter.name is None:
            return None
        mark = next(S._ids)  # syms built from here on belong to the loop
        seen: list[Sym] = []
        self.branch_probe = (ifs, seen)
        try:
            with self.st.dry_run():
                self.st.runtime_loops += 1  # as the body is lifted inside the loop (undone with the dry run)
                run()
                moved = changed()
        except LiftError:
            return None
        finally:
            self.branch_probe = None
        for c in seen:
            if c.is_const or c.opaque or not c.lanes or c.concrete or not _built_before(c, mark, moved):
                continue  # a test of the thread index alone is the same in every program: nothing to unswitch
            first = S.replace_var(c, counter.name, start)
            if first is not None and S.canon(first) == S.canon(c):
                return first
        return None

    def unswitched(self, test: Sym, emit_loop: Callable[[], None]) -> None:
        """Emit the loop twice under the program's test of `test` (see the module's docstring); the general loop
        alone where the first version cannot be lifted (a check over every lane the test no longer masks)."""
        em = self.em
        at, level = len(em.lines), em.level
        mark = next(S._ids)
        fork = self.st.fork()
        log: list[Sym] = []
        em.temp_log = log
        em.level += 1  # inside `if __xl_uniform:` (written below, once this version is lifted)
        self.st.assumed = self.st.assumed | {S.canon(test)}
        lines: list[str] | None = None
        try:
            emit_loop()
            lines, used, counter = em.lines[at:], set(em.used), em.counter
        except LiftError:
            pass
        finally:
            em.temp_log = None
            fork.undo()
        for s in log:  # a sym built before the loop and first issued in this version: issued again in the other
            if s.id < mark:
                s.temp = None
        if lines is None:
            emit_loop()
            return
        em.used |= used  # the other version's names differ: Triton merges names both branches assign
        em.counter = max(em.counter, counter)
        runs = S.land(*self.full_pred())
        _, some_fail = self.some_thread(S.land(runs, S.lnot(test)))
        name = em.fresh(UNSWITCH)
        em.line(f"{name} = {some_fail} == 0")
        em.line(f"if {name}:")
        em.lines.extend(lines)
        em.line("else:")
        em.level += 1
        emit_loop()
        em.level = level

    def assumed_true(self, c: Sym) -> bool:
        """Whether `c` is a condition taken as true where it is evaluated (a loop's unswitched version)."""
        return bool(self.st.assumed) and not c.is_const and S.canon(c) in self.st.assumed


def _built_before(c: Sym, mark: int, moved: set[str]) -> bool:
    """Whether every value `c` reads was there before the loop: its loads, reductions and other results were
    built before it (ids below `mark`) and it names no carried variable the loop changes."""
    for x in S.nodes(c, masks=True):
        if x.op == "var" and x.name in moved:
            return False
        if x.op in S.RESULT_OPS and x.id >= mark:
            return False
    return True
