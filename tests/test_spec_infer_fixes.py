"""Spec inference fixes from the H200 run of the inferred specs (issue #15 [infer]): complete specs the gate could
not use, and specs under which a correct source faulted. Each test is a small host+kernel program written for it,
with the exact spec inferred, and the gate's own case strategy drawn from on the CPU (bench/spec_coverage.py's
probe) where the fault was that the gate could not use the spec."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

from xlate.parse import parse_string
from xlate.specs import resolve_spec

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from spec_coverage import gate_problem


def resolve(tmp_path: Path, text: str, kernel: str, name: str = "main.cu"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip())
    unit = parse_string(path.read_text(), str(path), "cuda")
    return resolve_spec(unit, kernel)


def usable(res) -> None:
    assert res.complete and res.spec is not None and res.error is None, (res.holes, res.error)
    assert gate_problem(res.spec) is None


# -- template types the launch gives through a launcher ------------------------------------------------------


def test_template_types_deduced_at_the_launchers_call_and_defaults(tmp_path):
    """`finish<T, I><<<...>>>` inside `run(float*, int, int)` called without template arguments: T and I are
    deduced at the call (T from the pointer, I from its default), so the buffer is `n` floats, not
    `4 * n / sizeof(T)`, and `n` is an int size, not a float scalar."""
    res = resolve(tmp_path, """
    template <typename T, typename I>
    __global__ void finish(T* acc, I n, I m) {
      I i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) acc[i] = acc[i] / m;
    }
    template <typename T, typename I = int>
    void run(T* acc, I n, I m) {
      finish<T, I><<<(n + 127) / 128, 128>>>(acc, n, m);
    }
    int main(int argc, char** argv) {
      int n = atoi(argv[1]);
      float* d;
      cudaMalloc((void**)&d, n * sizeof(float));
      run(d, n, 7);
    }
    """, "finish")
    assert res.annotation() == ("acc: inout[n], n: size(1..4096), m: scalar(0..14), T: float32, I: int32, "
                                "grid: cdiv(n, 128), block: 128")
    usable(res)


def test_template_type_through_a_typedef_and_an_int_argument(tmp_path):
    """A kernel launched with no template arguments from a launcher: `Off` from an `off_t2*` allocation
    (`using off_t2 = int`), `Idx` from the launcher's own `Idx` parameter, bound to int at its call."""
    res = resolve(tmp_path, """
    using off_t2 = int;
    template <typename Off, typename Idx>
    __global__ void count(int* hist, const Off* begins, Idx segs) {
      Idx g = blockIdx.x * blockDim.x + threadIdx.x;
      if (g < segs) atomicAdd(&hist[begins[g] & 7], 1);
    }
    template <typename Off, typename Idx>
    void launch(int* hist, const Off* begins, const Idx segs) {
      count<<<(segs + 255) / 256, 256>>>(hist, begins, segs);
    }
    int main(int argc, char** argv) {
      int segs = atoi(argv[1]);
      off_t2* b;
      int* h;
      cudaMalloc((void**)&b, sizeof(off_t2) * (segs + 1));
      cudaMalloc((void**)&h, 8 * sizeof(int));
      launch(h, b, segs);
    }
    """, "count")
    assert res.annotation() == ("hist: inout[8], begins: in[segs + 1], segs: size(1..4096), Off: int32, Idx: int32, "
                                "grid: cdiv(segs, 256), block: 256")
    usable(res)
