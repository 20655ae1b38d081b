"""Helpers for the tests of `xlate migrate` (no tests here): generated libraries, running the command in a
subprocess or in-process, hashing trees."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "examples" / "kernels"
REFERENCES = ROOT / "examples" / "references"
# Small, quick corpus files: plain elementwise kernels, warp-level ones (wavefront notes) and inline PTX (the
# rules cannot port it: "not translated").
SIMPLE = ("vector_add", "saxpy", "relu", "warp_reduce", "inline_ptx", "ballot", "clamp", "gelu")
MIGRATE = [sys.executable, "-c", "from xlate.commands.migrate import command; command()"]


def make_lib(dest: Path, n: int, only: tuple[str, ...] = SIMPLE, **kw):
    from xlate.migrate.corpus import make_library

    return make_library(dest, n, KERNELS, REFERENCES, only=only, **kw)


def tree_digest(root: Path, skip: tuple[str, ...] = ()) -> dict[str, str]:
    """path -> sha256 of every file under root (names starting with a `skip` entry are left out)."""
    out = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and not any(rel.startswith(s) for s in skip):
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def run_cli(*args: str):
    from xlate.commands.migrate import command

    return CliRunner().invoke(command, [*args, "--no-progress"], catch_exceptions=False)


def run_subprocess(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([*MIGRATE, *args, "--no-progress"], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})}, cwd=ROOT)


def load_report(out: Path) -> dict:
    return json.loads((out / "xlate-report" / "report.json").read_text())


def by_path(report: dict) -> dict[str, dict]:
    return {f["path"]: f for f in report["files"]}


def has_hip_device() -> bool:
    from xlate.backends.registry import get_backend

    return bool(get_backend("hip").detect().can_run)
