"""Kill -9 in the middle of `xlate migrate`, run it again: the final report equals an uninterrupted run's."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time

from tests.test_migrate_support import MIGRATE, ROOT, load_report, make_lib, run_subprocess, tree_digest
from xlate.migrate.report import comparable


def _committed(db: str) -> int:
    if not os.path.exists(db):
        return 0
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1.0)
        try:
            return int(con.execute("SELECT COUNT(*) FROM results").fetchone()[0])
        finally:
            con.close()
    except sqlite3.Error:  # the driver is creating the schema
        return 0


def test_kill_and_resume_gives_the_uninterrupted_report(tmp_path):
    root = tmp_path / "lib"
    lib = make_lib(root, 16)
    tasks = len(lib.files) + 1  # the units and the shared header
    args = ["--to", "hip", "-j", "2", "--no-verify"]

    reference = tmp_path / "uninterrupted"
    done = run_subprocess(str(root), "-o", str(reference), *args)
    assert done.returncode == 1, done.stderr  # the library holds inline PTX the rules cannot port

    out = tmp_path / "resumed"
    db = str(out / ".xlate" / "migrate.sqlite")
    # Slow every task down (TEST-ONLY hook) so that the kill lands in the middle of the run.
    env = {**os.environ, "XLATE_TEST_FAULTS": "sleep=0.4:*"}
    proc = subprocess.Popen([*MIGRATE, str(root), "-o", str(out), *args, "--no-progress"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while _committed(db) < 4:
            assert proc.poll() is None, "the run finished before it could be killed"
            assert time.monotonic() < deadline, "no task was committed in time"
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the driver and its workers, like kill -9 of the job
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    committed = _committed(db)
    assert 4 <= committed < tasks
    assert not (out / "xlate-report" / "report.json").exists()

    resumed = run_subprocess(str(root), "-o", str(out), *args, "--resume")
    assert resumed.returncode == done.returncode, resumed.stderr
    a, b = load_report(reference), load_report(out)
    assert b["run"]["cache_hits"] == committed  # every committed result (its output in place) is reused
    assert b["run"]["executed"] == tasks - b["run"]["cache_hits"]
    assert comparable(a) == comparable(b)
    skip = ("xlate-report", ".xlate")
    assert tree_digest(reference, skip) == tree_digest(out, skip)
