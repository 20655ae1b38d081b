"""`--executor ray` runs the same tasks on a (here: local, CPU-only) Ray instance and gives the same report as the
local process pool; a crashed Ray worker costs only its task."""

from __future__ import annotations

import pytest

from tests.test_migrate_support import by_path, load_report, make_lib, run_cli
from xlate.migrate.report import comparable

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


def test_ray_executor_matches_local(tmp_path, local_ray, monkeypatch):
    root = tmp_path / "lib"
    lib = make_lib(root, 4, only=("vector_add", "saxpy", "warp_reduce", "inline_ptx"), header_every=1000)
    local = tmp_path / "local"
    run_cli(str(root), "--to", "hip", "-o", str(local), "--executor", "serial", "--no-verify")
    victim = next(r for r in lib.files if "saxpy" in r)
    # The TEST-ONLY fault hook travels inside each task to the Ray workers.
    monkeypatch.setenv("XLATE_TEST_FAULTS", f"segv:{victim}")
    out = tmp_path / "ray"
    res = run_cli(str(root), "--to", "hip", "-o", str(out), "--executor", "ray", "-j", "2", "--no-verify")
    report = load_report(out)
    code = [f for f in report["files"] if f["kind"] not in ("asset", "build")]  # the others need no worker
    assert report["run"]["executor"] == "ray" and report["run"]["executed"] == len(code)
    crashed = by_path(report)[victim]
    assert crashed["error"]["kind"] == "crash" and crashed["error"]["code"] == "XL6006"
    assert res.exit_code == 1

    # Without the fault, the crashed file is retried (crashes are not cached) and the report equals the local one.
    monkeypatch.delenv("XLATE_TEST_FAULTS")
    run_cli(str(root), "--to", "hip", "-o", str(out), "--executor", "ray", "-j", "2", "--no-verify")
    again = load_report(out)
    assert again["run"]["executed"] == 1
    assert comparable(again) == comparable(load_report(local))
