"""bench/spec_coverage.py: a run over some programs never replaces the committed whole-corpus results."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from spec_coverage import main  # noqa: E402


def _corpus(tmp_path: Path) -> Path:
    prog = tmp_path / "corpus" / "src" / "scale-cuda"
    prog.mkdir(parents=True)
    (prog / "main.cu").write_text(
        "__global__ void scale(float* y, const float* x, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) y[i] = 2.0f * x[i];\n}\n"
        "int main() { int n = 1000; float *x, *y; cudaMalloc(&x, n * sizeof(float)); cudaMalloc(&y, n * sizeof(float));\n"
        "  scale<<<(n + 255) / 256, 256>>>(y, x, n); return 0; }\n")
    return tmp_path / "corpus"


def test_a_programs_run_writes_only_where_told(tmp_path, monkeypatch):
    committed = ROOT / "bench" / "results" / "spec_coverage_cpu.md"
    before = committed.read_bytes() if committed.exists() else None
    corpus = _corpus(tmp_path)
    assert main([str(corpus), "--programs", "scale"]) == 0
    assert (committed.read_bytes() if committed.exists() else None) == before
    out = tmp_path / "cov.json"
    assert main([str(corpus), "--programs", "scale", "--json", str(out)]) == 0
    assert out.exists() and out.with_suffix(".md").exists()
    assert "**1 of 1 kernels (100.0 %) get a complete spec**" in out.with_suffix(".md").read_text()
    assert (committed.read_bytes() if committed.exists() else None) == before
