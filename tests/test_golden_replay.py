"""Golden files recorded from the CUDA originals on an H200 replay on this CPU machine: the hand-written Triton
ports of examples/triton/ are verified against them, and a broken port is rejected by the same files."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import KERNELS, ROOT
from xlate.parse import parse_file
from xlate.verify.api import verify

GOLDEN = ROOT / "examples" / "golden"
TRITON = ROOT / "examples" / "triton"

PAIRS = []
for g in sorted(GOLDEN.glob("*.xg")):
    stem, kernel = g.name[: -len(".xg")].split(".", 1)
    port = TRITON / f"{stem}.py"
    if port.exists() and re.search(rf"^def {re.escape(kernel)}\(", port.read_text(), re.M):
        PAIRS.append((stem, kernel))


def test_every_hand_port_has_its_golden_file():
    """The replay below runs what it finds: every launcher of examples/triton must be found (no port, golden file
    or launcher may vanish and leave the replay passing with nothing to run)."""
    launchers = [(p.stem, k) for p in sorted(TRITON.glob("*.py")) for k in parse_file(p).kernel_names()]
    assert len(launchers) >= 20 and sorted(PAIRS) == sorted(launchers)
    assert ("vector_add", "vector_add") in PAIRS  # the broken-port check below needs it


@pytest.mark.parametrize("stem, kernel", PAIRS, ids=[f"{s}:{k}" for s, k in PAIRS])
def test_hand_port_verified_against_h200_golden(stem, kernel):
    v = verify(str(KERNELS / f"{stem}.cu"), str(TRITON / f"{stem}.py"), kernel=kernel,
               golden=str(GOLDEN / f"{stem}.{kernel}.xg"))
    assert v.status == "verified", v.summary()
    assert v.examples >= 8 and v.oracle.startswith("golden:")


def test_broken_port_is_rejected_by_the_golden(tmp_path):
    text = (TRITON / "vector_add.py").read_text()
    broken = text.replace("offs, a + b", "offs, a - b", 1)
    assert broken != text
    p = Path(tmp_path / "vector_add.py")
    p.write_text(broken)
    v = verify(str(KERNELS / "vector_add.cu"), str(p), kernel="vector_add", golden=str(GOLDEN / "vector_add.vector_add.xg"))
    assert v.status == "rejected" and v.counterexample.failure == "mismatch"
