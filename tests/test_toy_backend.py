"""A fifth backend and target installed the way a third-party package would install them (a dist-info with
entry points on sys.path, tests/toy_backend.py): the registry finds it, it satisfies the Backend protocol, and
the gate fuzzes its ports (through verify_candidate, as `xlate port` does) with no change to xlate's translators
or gate: a right port is verified against the CUDA kernel's reference, a wrong one rejected with a counterexample."""

from __future__ import annotations

import os

import pytest
from xlate.backends import registry

import tests.test_backend_protocol as protocol
from tests.conftest import KERNELS, ROOT
from xlate import targets
from xlate.verify.candidate import VerifyOptions, verify_candidate

ENTRY_POINTS = """[xlate.backends]
toy = tests.toy_backend:ToyBackend

[xlate.targets]
npy = tests.toy_backend:TARGET
"""

PORT = '''import numpy as np


def jit(fn):
    class Launchable:
        def __getitem__(self, grid):
            return fn
    return Launchable()


@jit
def _saxpy(n, a, x, y):
    y[:] = np.float32(a) * x + y


def saxpy(n, a, x, y):
    _saxpy[(1,)](n, a, x, y)
'''


def _clear_caches() -> None:
    registry._entry_points.cache_clear()
    registry.get_backend.cache_clear()
    targets.all_targets.cache_clear()


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The toy package's metadata on sys.path (this process and the worker processes)."""
    dist = tmp_path / "xlate_toy-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: xlate-toy\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(ENTRY_POINTS)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), str(ROOT), os.environ.get("PYTHONPATH", "")]))
    _clear_caches()
    yield
    _clear_caches()


def test_the_toy_is_registered_and_satisfies_the_protocol(toy):
    assert "toy" in registry.backend_names() and "npy" in targets.target_names()
    assert registry.backend_for_language("npy").name == "toy"
    protocol.test_backend_satisfies_the_protocol("toy")


def test_the_gate_verifies_a_right_toy_port_and_rejects_a_wrong_one(toy):
    source = str(KERNELS / "saxpy.cu")  # cannot run here: judged against its NumPy reference
    options = VerifyOptions(examples=12)
    right = verify_candidate(source, "saxpy", "npy", PORT, options)
    assert right.verdict.status == "verified", right.verdict.summary()
    assert right.verdict.candidate is not None and right.verdict.candidate.backend == "toy"
    assert right.verdict.examples >= 12 and right.verdict.oracle and "reference" in right.verdict.oracle

    wrong = verify_candidate(source, "saxpy", "npy", PORT.replace("* x + y", "* x - y"), options)
    assert wrong.verdict.status == "rejected" and wrong.verdict.counterexample is not None
    assert wrong.verdict.counterexample.failure == "mismatch" and wrong.verdict.counterexample.buffer == "y"

    broken = verify_candidate(source, "saxpy", "npy", PORT.replace("def saxpy(n, a, x, y):", "def saxpy(n, a, x, y)"),
                              options)
    assert broken.verdict.status == "rejected" and broken.verdict.counterexample.failure == "compile error"
