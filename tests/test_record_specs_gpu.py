"""Records on a GPU (H200): a CUDA kernel reading a buffer of mixed-field structs and a by-value struct (with
alignas, a bool, a double, a fixed array) under its inferred spec, fuzzed against ports through CUDA and
HIP-on-NVIDIA: a right port is verified, a wrong field is a mismatch naming it, an unwritten field is named.
Kernels written for these tests."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from xlate.parse import parse_string
from xlate.specs import resolve_spec

pytestmark = pytest.mark.gpu

SOURCE = textwrap.dedent("""
    #include <cstdio>
    struct Option { float S; double X; int T; bool call; };
    struct alignas(16) Params { float dt; bool flip; double scale; float w[3]; };
    struct Res { float v; int k; double d; };

    __global__ void price(const Option* opts, Res* res, Params p, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) {
        Option o = opts[i];
        float v = o.S * p.dt + (float)(o.X * p.scale) + p.w[1];
        res[i].v = (o.call != p.flip) ? v : -v;
        res[i].k = o.T * 3 + (o.call ? 1 : 0);
        res[i].d = o.X * 2.0 + p.w[2];
      }
    }

    int main() {
      const int n = 3000;
      Option* d_o; Res* d_r; Params p; p.dt = 0.5f; p.flip = false; p.scale = 2.0;
      cudaMalloc(&d_o, n * sizeof(Option)); cudaMalloc(&d_r, n * sizeof(Res));
      price<<<(n + 127) / 128, 128>>>(d_o, d_r, p, n);
      return 0;
    }
""").lstrip()

# the same kernel written another way: a struct copy out, fields in another order
def _mutant(text: str, old: str, new: str) -> str:
    """`text` with `old` replaced; a mutation that does not apply would test nothing (the source against itself)."""
    assert old in text, old
    return text.replace(old, new)


RIGHT = _mutant(SOURCE, """    res[i].v = (o.call != p.flip) ? v : -v;
    res[i].k = o.T * 3 + (o.call ? 1 : 0);
    res[i].d = o.X * 2.0 + p.w[2];""", """    Res r;
    r.d = o.X * 2.0 + p.w[2];
    r.k = 3 * o.T + (int)o.call;
    r.v = (o.call ^ p.flip) ? v : -v;
    res[i] = r;""")


def _spec(tmp_path: Path):
    path = tmp_path / "price.cu"
    path.write_text(SOURCE)
    res = resolve_spec(parse_string(SOURCE, str(path), "cuda"), "price")
    assert res.complete, res.holes
    assert "p: scalar as {dt: float32, flip: bool, scale: float64, w: float32[3]} align(16)" in res.annotation()
    return res.spec, str(path)


def _fuzz(tmp_path: Path, text: str, language: str = "cuda"):
    from xlate.verify.engine import FuzzConfig, Fuzzer, run_fuzz
    from xlate.verify.runner import Side

    spec, path = _spec(tmp_path)
    source = Side(path, "price", label="source")
    cand = Side(str(tmp_path / ("port.cu" if language == "cuda" else "port.hip")), "price", text=text,
                language=language, label="candidate")
    return run_fuzz(Fuzzer(spec, cand, source, config=FuzzConfig(examples=30)), budget=1 << 20, size_cap=1 << 16)


def _hip(text: str) -> str:
    return "#include <hip/hip_runtime.h>\n" + text.replace("cudaMalloc", "hipMalloc")


@pytest.mark.parametrize("language", ["cuda", "hip"])
def test_a_right_port_of_a_record_kernel_is_verified(tmp_path, monkeypatch, language):
    monkeypatch.setenv("XLATE_HIP_PLATFORM", "nvidia")
    result = _fuzz(tmp_path, RIGHT if language == "cuda" else _hip(RIGHT), language)
    assert result.failure is None, result.failure.describe() if result.failure else ""
    assert result.examples >= 30


def test_a_wrong_field_is_a_mismatch_that_names_it(tmp_path):
    cx = _fuzz(tmp_path, _mutant(RIGHT, "r.k = 3 * o.T + (int)o.call;", "r.k = 3 * o.T;")).failure
    assert cx is not None and cx.failure == "mismatch" and cx.buffer == "res"
    assert f"'res[{cx.flat_index}].k'" in cx.message


def test_a_field_left_unwritten_is_named(tmp_path):
    cx = _fuzz(tmp_path, _mutant(SOURCE, "    res[i].d = o.X * 2.0 + p.w[2];\n", "")).failure
    assert cx is not None and cx.failure == "unwritten output" and ".d'" in cx.message


def test_a_by_value_field_read_at_the_wrong_offset_is_caught(tmp_path):
    # a port that declares the struct without alignas reads `scale` and `w` from other bytes
    cx = _fuzz(tmp_path, _mutant(_mutant(RIGHT, "struct alignas(16) Params", "struct Params"),
                                 "float dt; bool flip; double scale; float w[3];",
                                 "float dt; bool flip; float w[3]; double scale;")).failure
    assert cx is not None and cx.failure == "mismatch"
