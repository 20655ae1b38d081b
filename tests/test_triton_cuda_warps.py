"""One Triton thread per CUDA thread: a lifted kernel launches with the CUDA block's warps (num_warps = threads /
32), not Triton's usual 4. Packing two or more lanes into a thread gives the block's 1-D tensors (indices,
masks) another layout than the [BX, k] tensors of its vector types, and each conversion between the two goes
through shared memory behind a barrier -- inside a loop, every iteration (fma's row kernel: 80 barriers at 4
warps, 2 at 8, in the sm_90 code). The values are the same either way (checked against NumPy here); the
barrier is checked in the sm_90 PTX Triton's NVIDIA backend writes without a GPU. The packed launch (the lanes in 4
warps) stays a configuration the gate verifies and the launcher may choose by timing: some kernels are faster
that way (H100: crs's group-shuffling dot products)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from xlate.backends.base import ScalarArg

from tests.test_triton_lift_layout import _ptx
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, ported, rng, run
from xlate.translate.triton.translator import cuda_warps

KERNELS = Path(__file__).resolve().parents[1] / "examples" / "kernels"

SCALE = """
// xlate: x: in[n], y: out[n], n: size(1..5000), grid: cdiv(n, {B}), block: {B}
__global__ void scale_{B}(const float* x, float* y, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 3.0f * x[i];
}}
"""


def default_warps(text: str, kernel: str) -> int:
    """The num_warps of the port's default launch: the first entry of its configuration table, else the
    launch's keyword."""
    table = re.search(rf'"{kernel}": \[\{{"blocks": 1, "num_warps": (\d+)\}}', text)
    launch = re.search(rf"_{kernel}_kernel\[grid\]\([^\n]*\bnum_warps=(\d+)", text)
    assert table or launch, text
    return int((table or launch).group(1))  # type: ignore[union-attr]


@pytest.mark.parametrize("threads", [32, 64, 128, 256, 512, 1024])
def test_the_default_launch_has_the_cuda_blocks_warps(threads):
    kernel = f"scale_{threads}"
    t = ported(SCALE.format(B=threads), kernel)
    assert default_warps(t.text, kernel) == threads // 32


def test_warps_of_padded_and_tiny_blocks():
    assert cuda_warps(16) == 1 and cuda_warps(2048) == 32  # lanes padded to powers of two; CUDA's cap of 1024


GATHER4 = """
// xlate: idx: in[n](0..m - 1), x: in[m, 4], y: out[n, 4], n: size(1..3000), m: size(1..3000),
// xlate: grid: cdiv(n, 256), block: 256
__global__ void gather_mix4(const int* idx, const float4* x, float4* y, int n, int m) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float4 v = x[idx[i]];
        float4 w;
        w.x = v.y * 2.0f; w.y = v.x + v.w; w.z = v.z - v.x; w.w = v.w * v.y;
        y[i] = w;
    }
}
"""
SIG = {"idx": "*i32", "x": "*fp32", "y": "*fp32", "n": "i32", "m": "i32"}


def test_a_gathered_float4_row_needs_no_barrier_at_the_cuda_warps(tmp_path):
    t = ported(GATHER4, "gather_mix4")
    warps = default_warps(t.text, "gather_mix4")
    assert warps == 8
    own = _ptx(t.text, "gather_mix4", SIG, {"BX": 256}, tmp_path, num_warps=warps)
    packed = _ptx(t.text, "gather_mix4", SIG, {"BX": 256}, tmp_path, num_warps=4)
    assert "bar.sync" not in own
    assert "bar.sync" in packed  # two lanes a thread: the index's layout is converted through shared memory
    n, m = 301, 97  # neither a multiple of the block
    idx = rng(3).integers(0, m, size=n).astype(np.int32)
    x = rng(4).standard_normal(4 * m).astype(np.float32)
    out = run(t.text, "gather_mix4", [buf("idx", idx), buf("x", x), buf("y", poisoned(4 * n, np.float32)),
                                      ScalarArg("n", n, "int32"), ScalarArg("m", m, "int32")], tmp_path)
    v = x.reshape(m, 4)[idx].astype(np.float64)
    want = np.stack([v[:, 1] * 2.0, v[:, 0] + v[:, 3], v[:, 2] - v[:, 0], v[:, 3] * v[:, 1]], axis=-1)
    np.testing.assert_allclose(out["y"].reshape(n, 4), want, rtol=1e-6, atol=1e-6)
    guards_intact(out, "y")



@pytest.mark.gpu
def test_on_a_gpu_the_gate_verifies_every_configuration_of_the_cuda_warps_port(tmp_path):
    # the gate runs the CUDA source (NVRTC) and the port (Triton on the GPU, 8 warps by default) on the same
    # fuzzed inputs; each configuration it keeps, the default included, was verified there
    pytest.importorskip("cupy")
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no NVIDIA GPU here")
    from xlate.port import PortRequest, port_file

    src = tmp_path / "gather_mix4.cu"
    src.write_text(GATHER4)
    out = tmp_path / "gather_mix4_triton.py"
    res = port_file(PortRequest(source=str(src), target="triton", output=str(out), kernels=["gather_mix4"],
                                engine="rules"))
    assert res.status == "verified" and res.written, res.message
    assert default_warps(out.read_text(), "gather_mix4") == 8
    configs = res.kernels[0].configs
    assert configs is not None and not configs.discarded


def test_the_packed_configuration_of_a_kernel_that_cannot_be_batched_is_verified_by_the_gate(tmp_path):
    # dot_atomic (an atomic: no batching) at 256 threads: CUDA's 8 warps first, the lanes packed into 4 second;
    # the gate runs each against the kernel's reference on fresh inputs before the table may list it
    from xlate.port import PortRequest, port_file

    out = tmp_path / "dot_atomic.py"
    res = port_file(PortRequest(source=str(KERNELS / "dot_atomic.cu"), target="triton", output=str(out),
                                engine="rules", examples=12))
    assert res.status == "verified" and res.written, res.message
    report = res.kernels[0].configs
    assert report is not None and [o.config for o in report.outcomes] == [{"blocks": 1, "num_warps": 8},
                                                                          {"blocks": 1, "num_warps": 4}]
    assert report.kept == [0, 1]
    assert all(o.verdict.status == "verified" and o.verdict.examples >= 12 for o in report.outcomes[1:])
    assert default_warps(out.read_text(), "dot_atomic") == 8
