"""The lifter's bounds on values that grow with unrolling: a sym's spelling is cut at REPR_LIMIT, and an inline
expression past MAX_INLINE characters is bound to a variable (the emitted code still computes the same value)."""

from __future__ import annotations

from xlate.parse import parse_string
from xlate.translate.base import TranslateOptions
from xlate.translate.triton import emit
from xlate.translate.triton import sym as S
from xlate.translate.triton.translator import CudaToTriton


def port(src: str):
    unit = parse_string(src, "k.cu", "cuda")
    return CudaToTriton().translate(unit, src, TranslateOptions())


def test_spelling_is_exact_when_short_and_cut_when_long():
    x = S.op("add", "int", S.cast(S.lane("x"), "int"), S.const(3, "int"))
    assert repr(S.op("lt", "bool", x, S.uni("n", "int"))) == "((cast(lane.x) + 3) < n)"
    assert repr(S.op("where", "int", S.uni("c", "bool"), x, S.const(0, "int"))) == "where(c, (cast(lane.x) + 3), 0)"
    v = x
    for _ in range(60):  # each level uses the one below three times: 3**60 leaves when spelled out
        v = S.op("mul", "int", S.op("add", "int", v, v), v)
    text = repr(v)
    assert len(text) <= S.REPR_LIMIT + 40 and text.endswith("…") and text.count("…") == 1  # a part may overrun


def _emitted(levels: int) -> tuple[list[str], str]:
    """Emit v_{k+1} = v_k * v_k - v_k (no variable names of its own: as forwarded values are) from a scalar."""
    em = emit.Emitter()
    v = S.uni("a", "float")
    for _ in range(levels):
        v = S.op("sub", "float", S.op("mul", "float", v, v), v)
    code = em.code(v, emit.Ctx("default", {"x": "lane_x"}, "[BX]"))
    return [line.strip() for line in em.lines], code


def _value(lines: list[str], code: str, a: float) -> float:
    env = {"a": a}
    for line in lines:
        exec(line, {}, env)
    return eval(code, {}, env)


def test_a_long_inline_expression_gets_a_variable_and_the_same_value(monkeypatch):
    lines, code = _emitted(12)  # spelled inline: 3**12 uses of `a`
    assert lines and max(map(len, [*lines, code])) <= 3 * emit.MAX_INLINE + 100
    expect = 0.3
    for _ in range(12):
        expect = expect * expect - expect  # the same operations in the same order: exact
    assert _value(lines, code, 0.3) == expect
    emit_limit = emit.MAX_INLINE
    monkeypatch.setattr(emit, "MAX_INLINE", 1 << 40)
    lines, code = _emitted(12)
    assert not lines and len(code) > 100 * emit_limit  # what the bound prevents: one expression of a megabyte
    assert _value(lines, code, 0.3) == expect
