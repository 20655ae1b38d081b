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


def test_a_spec_with_no_output_is_not_usable_by_the_gate():
    """A kernel that writes only __device__ globals (or prints): its spec names no out or inout buffer, the gate
    has nothing to compare ("could not verify"), so the coverage count calls it unusable."""
    from spec_coverage import gate_problem

    from xlate.parse import parse_string
    from xlate.specs import build_spec

    src = ("__device__ int table[64];\n"
           "// xlate: x: in[n], n: size(1..64), grid: 1, block: 64\n"
           "__global__ void k(const int* x, int n) { int i = threadIdx.x; if (i < n) table[i] = x[i]; }\n")
    spec = build_spec(parse_string(src, "k.cu", "cuda"), "k", None)
    assert "nothing to compare" in gate_problem(spec)
    written = build_spec(parse_string(src.replace("x: in[n]", "x: inout[n]"), "k.cu", "cuda"), "k", None)
    assert gate_problem(written) is None
