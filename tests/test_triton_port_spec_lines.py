"""A Triton port's `# xlate:` lines carry the whole spec its source was verified under, whatever inferred it:
value orders (`ascending by`), distinct values, permutations and `where:` constraints included. Without them
`xlate fuzz port.py ...` drew cases the source is not defined on and blamed it (deredundancy's offsets lost
`ascending by lengths`, and its source then 'wrote out of bounds' under the port's own spec)."""

from __future__ import annotations

from xlate.parse import parse_string
from xlate.specs.build import build_spec
from xlate.translate.triton.translator import _annotation

SOURCE = """
__global__ void gather_rows(const int* offsets, const int* lengths, const int* perm, const float* x, float* y,
                            int rows, int total, int stride) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float acc = 0.0f;
    for (int k = 0; k < lengths[r]; k++) acc += x[offsets[r] + k];
    y[perm[r]] = acc * stride;
}
"""

ITEMS = ("offsets: in[rows + 1](0..total ascending by lengths), lengths: in[rows](0..total), "
         "perm: in[rows](perm), x: in[total], y: out[rows], rows: size(1..300), total: size(1..4096), "
         "stride: size(1..64), grid: cdiv(rows, 64), block: 64, where: stride <= rows and total >= rows")


def test_the_port_spec_keeps_orders_permutations_and_constraints():
    unit = parse_string(SOURCE, "k.cu", "cuda")
    fn = unit.kernel("gather_rows")
    assert fn.annotation is None  # an inferred spec has no annotation text to copy
    spec = build_spec(unit, "gather_rows", ITEMS)
    text = " ".join(line.removeprefix("# xlate: ") for line in _annotation(fn, spec).splitlines())
    assert "offsets: in[rows + 1](0..total ascending by lengths) as int32" in text, text
    assert "perm: in[rows](perm) as int32" in text, text
    assert "where: stride <= rows and total >= rows" in text or ("where: stride <= rows" in text
                                                                and "total >= rows" in text), text
    # the lines read back as the same spec on the Triton side
    launcher = parse_string("\n".join(_annotation(fn, spec).splitlines()) + "\ndef gather_rows(offsets, lengths, "
                            "perm, x, y, rows, total, stride):\n    pass\n", "p.py", "triton")
    again = build_spec(launcher, "gather_rows")
    offsets = again.param("offsets")
    assert offsets.ascending and offsets.ascending_by == "lengths"
    assert again.param("perm").perm
    assert again.where
