"""The sandbox on a GPU machine: the device nodes are passed through, CUDA kernels (and the NVRTC compile of
untrusted text) run inside it, and the verdict of a fuzz run says it was sandboxed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from xlate.backends import sandbox

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.gpu

PROBE = """
import json, os
import cupy
print(json.dumps({"nodes": sorted(p for p in os.listdir("/dev") if p.startswith("nvidia")),
                  "devices": cupy.cuda.runtime.getDeviceCount()}))
"""


@pytest.fixture(autouse=True)
def _needs_sandbox():
    if not sandbox.available():
        pytest.skip(f"no sandbox here: {sandbox.detect().reason}")


def test_the_gpu_is_visible_inside_the_sandbox():
    proc = subprocess.run(sandbox.build([sys.executable, "-P", "-c", PROBE]), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout)
    assert "nvidiactl" in seen["nodes"] and seen["devices"] >= 1


def test_a_cuda_fuzz_run_inside_the_sandbox_is_verified_and_says_so():
    from xlate.backends.worker import _POOL

    from xlate.verify.api import verify

    verdict = sandbox.isolate(verify, str(ROOT / "examples/kernels/relu.cu"), str(ROOT / "examples/triton/relu.py"),
                              kernel="relu", examples=10)
    assert verdict.status == "verified", verdict.summary()
    assert any(c.startswith("isolation: sandboxed") for c in verdict.caveats)
    boxed = [w for w in _POOL.values() if w.sandboxed and w.alive()]
    assert {w.backend for w in boxed} >= {"cuda", "triton"}
    assert all(w.proc is not None and w.proc.args[0] == sandbox.detect().mechanism.tool for w in boxed)
