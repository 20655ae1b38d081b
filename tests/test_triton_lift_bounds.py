"""The lifter's bounds on values that grow with unrolling: a sym's spelling is cut at REPR_LIMIT, an inline
expression past MAX_INLINE characters is bound to a variable (the emitted code still computes the same value),
and a stored value past MAX_RECOMPUTED operations is not recomputed for another thread (refused, with its reason)."""

from __future__ import annotations

import numpy as np
from xlate.backends.base import BufferArg, CompileOptions, LaunchConfig, ScalarArg
from xlate.backends.registry import get_backend

from xlate.parse import parse_string
from xlate.translate.base import TranslateOptions
from xlate.translate.triton import comm, emit
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


def _argmin_src(block: int, per_thread: int) -> str:
    """Each block's first index of its smallest element: a thread keeps the best of its elements, then a tree
    of data-dependent selects through shared memory (value, then index on ties)."""
    return f"""
#include <climits>
// xlate: v: in[n], out: out[m], n: size(1..4096), m: size(1..64), grid: m, block: {block}
__global__ void argmin_block(const int* v, int* out, int n, int m) {{
    __shared__ int val[{block}];
    __shared__ int idx[{block}];
    int t = threadIdx.x;
    int best = INT_MAX, at = 0;
    for (int k = 0; k < {per_thread}; k++) {{
        int j = (blockIdx.x * {per_thread} + k) * {block} + t;
        if (j < n && v[j] < best) {{ best = v[j]; at = j; }}
    }}
    val[t] = best;
    idx[t] = at;
    __syncthreads();
    for (int s = {block} / 2; s > 0; s >>= 1) {{
        if (t < s) {{
            if (val[t + s] < val[t] || (val[t + s] == val[t] && idx[t + s] < idx[t])) {{
                val[t] = val[t + s];
                idx[t] = idx[t + s];
            }}
        }}
        __syncthreads();
    }}
    if (t == 0) out[blockIdx.x] = idx[0];
}}
"""


def test_a_small_tree_of_selects_is_forwarded_and_computes_the_argmin(tmp_path):
    t = port(_argmin_src(8, 1))
    assert t.kernels == ["argmin_block"]
    b = get_backend("triton")
    f = tmp_path / "argmin_block_triton.py"
    f.write_text(t.text)
    n, m = 21, 3  # the last block reads 5 of its 8 elements
    v = np.random.default_rng(5).integers(-5, 5, n).astype(np.int32)  # ties: the first index wins
    res = b.run(b.compile(t.text, "argmin_block", CompileOptions(), path=str(f)),
                [BufferArg("v", v, 0, n), BufferArg("out", np.full(m, -1, np.int32), 0, m), ScalarArg("n", n, "int32"),
                 ScalarArg("m", m, "int32")], LaunchConfig())
    assert res.status == "ok", res.message + res.stderr
    assert list(res.buffers["out"]) == [8 * k + int(np.argmin(v[8 * k:8 * k + 8])) for k in range(m)]


def test_a_large_tree_of_selects_is_refused_with_its_reason():
    """128 threads of 8 elements each: recomputing the stored selects for the reading thread doubles them at
    every stage; the lift stops at MAX_RECOMPUTED operations instead of running for minutes."""
    t = port(_argmin_src(128, 8))
    assert t.kernels == [] and t.needs_llm == ["argmin_block"]
    (d,) = [d for d in t.diagnostics if d.severity == "error"]
    assert d.code == "XL2004" and f"more than {comm.MAX_RECOMPUTED:,} operations" in d.message
