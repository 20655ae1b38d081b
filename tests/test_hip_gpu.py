"""HIP ports fuzz-verified against their CUDA originals on an NVIDIA GPU (the HIP-on-NVIDIA route).

Every corpus kernel the rules port (examples/kernels, all but inline PTX) and every safe warp rewrite
(tests/data/hip_cases/kernels) must come back `verified`. What this proves is limited by the route: HIP runs
on NVIDIA with 32-lane warps, so wavefront-64 behaviour is argued by tests/test_hip_wavefront.py (lane models
of CUDA and HIP 5.2) and compile-checked for gfx90a by tests/test_hip_compile.py, not run here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from xlate.parse import parse_file
from xlate.translate.base import TranslateOptions
from xlate.translate.hip import CudaToHip

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "examples" / "kernels").glob("*.cu")) + sorted(
    (ROOT / "tests" / "data" / "hip_cases" / "kernels").glob("*.cu"))


def _targets() -> list[tuple[Path, str]]:
    out = []
    for path in SOURCES:
        unit = parse_file(path)
        tr = CudaToHip().translate(unit, unit.text, TranslateOptions(arch="gfx90a"))
        out.extend((path, k.name) for k in unit.kernels if k.name not in tr.needs_llm)
    return out


TARGETS = _targets()


def test_the_gpu_suite_has_its_targets():
    """The GPU test below runs what _targets() finds: every corpus kernel without inline assembly, and the warp
    rewrites of tests/data/hip_cases, must be there (a vanished input fails here, on every machine)."""
    corpus = [(p, k.name) for p in SOURCES if p.parent.name == "kernels" and p.parent.parent.name == "examples"
              for u in [parse_file(p)] for k in u.kernels if not any(f.asm for f in u.reachable(k.name))]
    cases = [t for t in TARGETS if "hip_cases" in t[0].parts]
    assert len(corpus) >= 40 and set(corpus) <= set(TARGETS) and cases


@pytest.mark.gpu
@pytest.mark.parametrize("path, kernel", TARGETS, ids=[f"{p.stem}:{k}" for p, k in TARGETS])
def test_hip_port_verified_against_cuda(tmp_path, path, kernel):
    from xlate.verify.api import verify

    unit = parse_file(path)
    tr = CudaToHip().translate(unit, unit.text, TranslateOptions(arch="gfx90a"))
    hip_path = tmp_path / (path.stem + ".hip")
    hip_path.write_text(tr.text)
    verdict = verify(str(path), str(hip_path), kernel=kernel, examples=30, seed=0, arch="gfx90a")
    assert verdict.status == "verified", verdict.to_dict()
