"""Shared fixtures: paths to the corpus, a CLI runner, an isolated cache dir, GPU detection."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "examples" / "kernels"
REFERENCES = ROOT / "examples" / "references"


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    # One cache per test session (compiles are shared between tests), never the user's.
    cache = os.environ.get("XLATE_TEST_CACHE") or str(tmp_path_factory.getbasetemp() / "xlate-cache")
    monkeypatch.setenv("XLATE_CACHE_DIR", cache)


@pytest.fixture
def cli():
    from click.testing import CliRunner

    from xlate.cli import main

    runner = CliRunner()

    def invoke(*args: str, **kwargs):
        return runner.invoke(main, list(args), catch_exceptions=False, **kwargs)

    return invoke


def has_nvidia_gpu() -> bool:
    if shutil.which("nvidia-smi") is None:
        return False
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def pytest_collection_modifyitems(config, items):
    if has_nvidia_gpu():
        return
    skip = pytest.mark.skip(reason="no NVIDIA GPU (with CuPy) on this machine")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
