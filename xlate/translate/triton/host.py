"""What comm.py and idioms.py may use of the lifter: two narrow protocols. The analyses of communication and
of block idioms depend on these members only (tests/test_triton_lift.py checks that they use nothing else), so
the lifter's job modules can change underneath them."""

from __future__ import annotations

from typing import Any, Protocol

from xlate.cir import ir
from xlate.translate.triton.emit import Ctx, Emitter
from xlate.translate.triton.state import Binding, LiftState
from xlate.translate.triton.sym import Sym


class Block(Protocol):
    """What comm.py needs: the block's shape (lanes, the threads among them, blockDim) and the program point's
    predicate, the state's write records (`st.records`, `st.pseudo`), barrier count (`st.epoch`) and tl.dot axes
    (`st.red_axes`), and three services."""

    bx: int
    by: int
    nlanes: int
    st: LiftState
    lane_guard: Sym | None  # which lanes are threads, where the block is padded to powers of two

    def block_dim(self, axis: str) -> Sym: ...

    def next_id(self) -> int: ...

    def full_pred(self) -> list[Sym]: ...

    def issue(self, value: Sym, mask: Sym, loc: ir.Loc | None) -> Sym: ...

    def idiom(self, text: str, loc: ir.Loc | None) -> None: ...


class LoopHost(Block, Protocol):
    """What idioms.py needs beyond Block: the loop's variable, a scope of its own to evaluate the loop body's
    operands in (`st.fork()` to give up, `st.defer` to build loads without issuing them, `st.red_axes` for
the tl.dot axis), and the emitter to write the idiom."""

    ctx: Ctx

    @property
    def em(self) -> Emitter: ...

    def loop_var(self, s: ir.For) -> str | None: ...

    def lookup(self, name: str) -> Binding | None: ...

    def resolve_type(self, name: str, loc: ir.Loc | None) -> str: ...

    def bind(self, name: str, ct: ir.CType, val: Any) -> None: ...

    def rebind(self, name: str, val: Any) -> None: ...

    def push_scope(self) -> None: ...

    def pop_scope(self) -> None: ...

    def ev(self, e: ir.Expr) -> Any: ...

    def data(self, v: Any, loc: ir.Loc | None) -> Sym: ...
