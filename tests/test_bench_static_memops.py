"""bench/static_memops.py's signature of a port's kernel, from the port's text alone: buffer and scalar types
from its `# xlate:` spec lines, and a scalar the launcher boxes into a one-element tensor (a float64 scalar, a
template scalar of a buffer's type) as a pointer of that type -- building it as a scalar fails in Triton's
front end ("Unsupported ptr type")."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from static_memops import spec_types  # noqa: E402

PORT = """
# xlate: a: out[n] as float16, b: in[n], n: size(1..100), scale: float64, initA: float32
def init(a, b, n, scale, initA):
    scale = torch.full((1,), scale, dtype=torch.float64, device=a.device)
    initA = torch.full((1,), initA, dtype=a.dtype, device=a.device)
"""


def test_boxed_scalars_are_pointers_of_their_tensors_type():
    types = spec_types(PORT)
    assert types["a"] == "*fp16" and types["b"] == "*fp32" and types["n"] == "i32"
    assert types["scale"] == "*fp64"  # a float64 scalar, boxed
    assert types["initA"] == "*fp16"  # a template scalar boxed with a's element type
