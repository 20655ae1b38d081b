"""Run the benches against xlate as committed at a git revision (the working tree of a shared checkout may be
mid-edit): `git archive REV` into a folder that goes first on PYTHONPATH of every xlate subprocess."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def command() -> list[str]:
    exe = Path(sys.executable).parent / "xlate"
    return [str(exe)] if exe.exists() else [sys.executable, "-c", "from xlate.cli import main; main()"]


def environment(rev: str | None, dest: Path) -> tuple[dict[str, str], str]:
    """(environment for xlate subprocesses, the commit it runs). rev None: the working tree as it is."""
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    if rev is None:
        sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "xlate", "backends", "grammars", "templates"],
                               cwd=ROOT, capture_output=True, text=True).stdout
        return env, sha.strip() + (" + uncommitted changes" if dirty.strip() else "")
    sha = subprocess.run(["git", "rev-parse", "--short", rev], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout.strip()
    data = subprocess.run(["git", "archive", sha], cwd=ROOT, capture_output=True, check=True).stdout
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(dest, filter="data")
    env["PYTHONPATH"] = os.pathsep.join([str(dest), *filter(None, [os.environ.get("PYTHONPATH")])])
    return env, sha
