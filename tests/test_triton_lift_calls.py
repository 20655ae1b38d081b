"""Calls and names the CUDA -> Triton lifter resolves in real kernels: macros that paste or stringise, device
functions of headers whose qualifier macro depends on the compiler, and CUDA library functions (half2
conversions, compare-and-swap ...). Each case is a small kernel written here, run on the Triton interpreter
against NumPy, with sizes that are no multiple of the block and outputs poisoned before the run."""

from __future__ import annotations

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, ported, rng, run
from xlate.cir import cpre
from xlate.model import Macro

U64 = (1 << 64) - 1


# -- the preprocessor's # and ## ---------------------------------------------------------------------------------


def test_pasting_and_stringising_follow_c():
    ms = [Macro("CAT", ["a", "b"], "a ## b", None), Macro("XCAT", ["a", "b"], "CAT(a, b)", None),
          Macro("N", None, "7", None), Macro("STR", ["x"], "#x", None), Macro("Q", ["a", "b"], "q a##b", None),
          Macro("OBJ", None, "x ## y", None)]

    def flat(text: str) -> str:
        return cpre.expand(text, ms).text.strip()

    assert flat("CAT(img, _p)[i]") == "img_p [i]"
    assert flat("CAT(N, 1)") == "N1"  # an argument beside ## is not expanded first
    assert flat("XCAT(N, 1)") == "71"  # ... but is when it reaches ## through another macro
    assert flat("CAT(0x1f, ULL)") == "0x1fULL"
    assert flat("CAT(, z)") == "z" and flat("CAT(z, )") == "z" and flat("Q(, w)") == "q w"  # empty arguments
    assert flat('STR( a  +  "b\\n" )') == '"a + \\"b\\\\n\\""'
    assert flat("OBJ") == "xy"


def test_a_constant_macro_that_pastes_its_suffix(tmp_path):
    src = """
#define WIDE(x) (x##ULL)
#define MIX(h) h ^= h >> 33; h *= WIDE(0xff51afd7ed558ccd); h ^= h >> 29
// xlate: keys: in[n], out: out[n], n: size(1..2000), grid: cdiv(n, 128), block: 128
__global__ void scramble(const unsigned long long* keys, unsigned long long* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned long long h = keys[i] + WIDE(0x9e3779b97f4a7c15);
        MIX(h);
        out[i] = h;
    }
}
"""
    t = ported(src, "scramble")
    n = 777
    keys = rng(11).integers(0, 2**63, n, dtype=np.uint64) * np.uint64(3)
    out = run(t.text, "scramble", [buf("keys", keys), buf("out", poisoned(n, np.uint64)), ScalarArg("n", n, "int32")],
              tmp_path)
    want = []
    for k in keys.tolist():
        h = (k + 0x9E3779B97F4A7C15) & U64
        h ^= h >> 33
        h = (h * 0xFF51AFD7ED558CCD) & U64
        h ^= h >> 29
        want.append(h)
    assert out["out"].tolist() == want
    guards_intact(out, "out")
