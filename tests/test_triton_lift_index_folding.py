"""Integer identities the lifter folds when it builds a value (sym.py `_fold_known`): an exact signed division
((k * 4) / 4, (k * 4 + 3) / 4 for k >= 0), (in)equality of values a constant apart, an alignment mask below a
multiple's known zero bits, a sign test of a non-negative value. A shared array staged with vector copies and
read back at a uniform index tests, for every element read, which iteration and lane wrote it: once unrolled,
those tests are such identities, and folding them leaves one candidate writer per read instead of one per lane.

Each rule is checked against the unfolded node evaluated on concrete thread indices (including negative values,
where a rule must not fire), and a kernel written here runs on the Triton interpreter against NumPy on sizes
that are not multiples of the block or of the vector width."""

from __future__ import annotations

import re

import numpy as np
import pytest
from xlate.backends.base import ScalarArg

from tests.test_triton_lift_layout import body
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, ported, rng, run
from xlate.translate.triton import sym as S

LANES = {"x": np.arange(64, dtype=np.uint32)}


def _raw(name: str, ctype: str, *args: S.Sym) -> S.Sym:
    """The node as built without any folding."""
    return S.Sym(name, ctype, args)


def _int_lane() -> S.Sym:
    return S.cast(S.lane("x"), "int")


def _shifted_lane(d: int) -> S.Sym:
    """threadIdx.x - d as an int: negative on the first d threads."""
    return S.op("sub", "int", _int_lane(), S.const(d, "int"))


def _same_values(folded: S.Sym, raw: S.Sym) -> None:
    np.testing.assert_array_equal(np.broadcast_to(S.evaluate(folded, LANES), (64,)),
                                  np.broadcast_to(S.evaluate(raw, LANES), (64,)))


@pytest.mark.parametrize("k, c", [(8, 8), (16, 4), (12, 4)])
def test_exact_signed_division_folds_for_any_sign(k, c):
    for x in (_int_lane(), _shifted_lane(20)):
        prod = S.op("mul", "int", x, S.const(k, "int"))
        folded = S.op("div", "int", prod, S.const(c, "int"))
        assert folded.op != "div", folded
        _same_values(folded, _raw("div", "int", prod, S.const(c, "int")))


def test_division_of_a_multiple_plus_a_remainder_folds_only_for_a_non_negative_multiple():
    for d in (1, 3):
        nonneg = S.op("add", "int", S.op("mul", "int", _int_lane(), S.const(4, "int")), S.const(d, "int"))
        folded = S.op("div", "int", nonneg, S.const(4, "int"))
        assert folded.op != "div"
        _same_values(folded, _raw("div", "int", nonneg, S.const(4, "int")))
        signed = S.op("add", "int", S.op("mul", "int", _shifted_lane(9), S.const(4, "int")), S.const(d, "int"))
        kept = S.op("div", "int", signed, S.const(4, "int"))
        assert kept.op == "div"  # (-9 * 4 + 3) / 4 truncates to -8, not -9
        _same_values(kept, _raw("div", "int", signed, S.const(4, "int")))


def test_unsigned_division_is_left_alone():
    x = S.cast(S.lane("x"), "unsigned int")
    prod = S.op("mul", "unsigned int", x, S.const(8, "unsigned int"))  # wraps: (x * 8) / 8 != x past 2^29
    assert S.op("div", "unsigned int", prod, S.const(8, "unsigned int")).op == "div"
    assert S.op("div", "unsigned int", x, S.const(1, "unsigned int")) is x


def test_equality_of_values_a_constant_apart():
    base = S.op("mul", "int", _shifted_lane(7), S.const(8, "int"))
    other = S.op("add", "int", base, S.const(3, "int"))
    for name, want in (("eq", 0), ("ne", 1)):
        folded = S.op(name, "bool", other, base)
        assert folded.is_const and folded.value == want
        _same_values(folded, _raw(name, "bool", other, base))
    back = S.op("sub", "int", other, S.const(3, "int"))
    assert S.op("eq", "bool", back, base).value == 1
    varying = S.op("eq", "bool", other, S.op("mul", "int", _int_lane(), S.const(2, "int")))
    assert not varying.is_const


def test_alignment_mask_below_known_zero_bits():
    offset = S.op("mul", "unsigned long", S.cast(S.op("mul", "int", _shifted_lane(5), S.const(8, "int")),
                                                  "unsigned long"), S.const(2, "unsigned long"))
    folded = S.op("and", "unsigned long", offset, S.const(15, "unsigned long"))
    assert folded.is_const and folded.value == 0
    _same_values(folded, _raw("and", "unsigned long", offset, S.const(15, "unsigned long")))
    four = S.op("mul", "int", _int_lane(), S.const(4, "int"))  # only two zero bits: & 7 keeps bit 2
    kept = S.op("and", "int", four, S.const(7, "int"))
    assert not kept.is_const
    _same_values(kept, _raw("and", "int", four, S.const(7, "int")))


def test_sign_test_of_a_non_negative_value_only():
    nonneg = S.op("mul", "int", _int_lane(), S.const(8, "int"))
    assert S.op("ge", "bool", nonneg, S.const(0, "int")).value == 1
    assert S.op("lt", "bool", nonneg, S.const(0, "int")).value == 0
    assert not S.op("ge", "bool", _shifted_lane(3), S.const(0, "int")).is_const
    # an unsigned argument made int may be negative: never folded, whatever its flag says
    n = S.uni("n", "unsigned int", nonneg=True)
    assert not S.op("ge", "bool", S.cast(n, "int"), S.const(0, "int")).is_const



def _counter(bound: S.Sym) -> S.Sym:
    """A counted loop's counter, as loops.py makes it for `for (v = 0; v < bound; v += 1)`."""
    v = S.var("v_it_test", "int", False, nonneg=True)
    v.below = bound
    return v


@pytest.mark.parametrize("b", [7, 1, 40])
def test_a_counted_loops_bound_settles_its_range_and_tail_tests_and_nothing_more(b):
    """Inside `for (v = 0; v < B; ++v)`: v < B, v <= B - 1 and 4v + j < 4B for j < 4 hold; v < B - 1,
    4v + 4 < 4B and anything without the counter stay tests. Checked against every value the counter takes
    (0 .. B-1) with B a run-time value, here each of a few."""
    bound = S.uni("quads_test", "int")
    v = _counter(bound)
    four_v = S.op("mul", "int", v, S.const(4, "int"))
    four_b = S.op("mul", "int", bound, S.const(4, "int"))
    folded = {
        "v < B": (S.op("lt", "bool", v, bound), lambda x: x < b),
        "v >= B": (S.op("ge", "bool", v, bound), lambda x: x >= b),
        "v <= B - 1": (S.op("le", "bool", v, S.op("sub", "int", bound, S.const(1, "int"))), lambda x: x <= b - 1),
        "v > B - 1": (S.op("gt", "bool", v, S.op("sub", "int", bound, S.const(1, "int"))), lambda x: x > b - 1),
        "4v+3-4B >= 0": (S.op("ge", "bool", S.op("sub", "int", S.op("add", "int", four_v, S.const(3, "int")), four_b),
                                 S.const(0, "int")), lambda x: 4 * x + 3 - 4 * b >= 0),
        "4v+3 < 4B": (S.op("lt", "bool", S.op("add", "int", four_v, S.const(3, "int")), four_b),
                      lambda x: 4 * x + 3 < 4 * b),
    }
    for what, (sym, truth) in folded.items():
        assert sym.is_const, what
        assert all(bool(sym.value) == truth(x) for x in range(b)), what  # true to every iteration
    kept = [S.op("lt", "bool", v, S.op("sub", "int", bound, S.const(1, "int"))),  # false on the last iteration
            S.op("lt", "bool", S.op("add", "int", four_v, S.const(4, "int")), four_b),
            S.op("gt", "bool", v, S.const(0, "int")),  # false on the first
            S.op("lt", "bool", S.op("mul", "int", v, S.const(-1, "int")), bound),  # negative coefficient: not used
            S.op("lt", "bool", S.uni("other_test", "int"), bound)]
    assert not any(k.is_const for k in kept)
    # an unsigned comparison wraps: never folded
    u = S.var("u_it_test", "unsigned int", False, nonneg=True)
    u.below = S.uni("un_test", "unsigned int")
    assert not S.op("lt", "bool", u, u.below).is_const

SCALE_ROWS = """
// xlate: a: in[n * c], b: in[c], out: out[n * c], n: size(1..300), c: size(1..64), grid: cdiv(n, 32), block: 32
__global__ void scale_rows(const float* a, const float* b, float* out, int n, int c) {
    __shared__ float weights[64];
    int quads = c / 4;
    for (int q = threadIdx.x; q < quads; q += blockDim.x) {
        float4 v = *reinterpret_cast<const float4*>(&b[q * 4]);
        *reinterpret_cast<float4*>(&weights[q * 4]) = v;
    }
    for (int e = quads * 4 + threadIdx.x; e < c; e += blockDim.x) weights[e] = b[e];
    __syncthreads();
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n) return;
    for (int q = 0; q < quads; ++q) {
        for (int j = 0; j < 4; ++j) {
            int col = q * 4 + j;
            out[row * c + col] = a[row * c + col] * weights[(col / 4) * 4 + j];
        }
    }
    for (int col = quads * 4; col < c; ++col) out[row * c + col] = a[row * c + col] * weights[col];
}
"""


@pytest.mark.parametrize("n, c", [(301, 23), (45, 8), (33, 3)])
def test_vector_staged_weights_read_back_with_one_writer_per_read(tmp_path, n, c):
    t = ported(SCALE_ROWS, "scale_rows")
    b = body(t.text, "scale_rows")
    quads = re.search(r"\n( +)for q_it in range.*?\n(?=\1\S)", b, re.S)
    assert quads, b
    # the unrolled reads name their writer directly: no per-lane `(col / 4) * 4 + j == ...` candidates left
    assert "// 4" not in quads.group(0) and ") == (" not in quads.group(0), quads.group(0)
    a = rng(3).standard_normal(n * c).astype(np.float32)
    w = rng(4).standard_normal(c).astype(np.float32)
    out = run(t.text, "scale_rows", [buf("a", a), buf("b", w), buf("out", poisoned(n * c, np.float32)),
                                     ScalarArg("n", n, "int32"), ScalarArg("c", c, "int32")], tmp_path)
    want = (a.astype(np.float64).reshape(n, c) * w.astype(np.float64)[None, :]).ravel()
    np.testing.assert_allclose(out["out"], want, rtol=1e-6, atol=1e-6)
    guards_intact(out, "out")
