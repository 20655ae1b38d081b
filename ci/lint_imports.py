"""Check the layering of xlate (the contracts in .importlinter) with import-linter.

The top-level backends/ folder installs as `xlate.backends` (pyproject package-dir), which import-linter cannot
see from the source tree: it scans one folder per package. So the package is assembled as installed, from
links in a temporary folder, and import-linter reads that. Exit status: import-linter's (non-zero on a broken
contract).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# package-dir of pyproject.toml: the folders that install inside xlate under another name
MAPPED = {"backends": ROOT / "backends"}


def assemble(into: Path) -> Path:
    pkg = into / "xlate"
    pkg.mkdir()
    for entry in (ROOT / "xlate").iterdir():
        if entry.name != "__pycache__":
            (pkg / entry.name).symlink_to(entry)
    for name, folder in MAPPED.items():
        (pkg / name).symlink_to(folder)
    return into


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="xlate-layers-") as tmp:
        path = assemble(Path(tmp))
        env = dict(os.environ, PYTHONPATH=str(path))
        cmd = [str(Path(sys.executable).parent / "lint-imports"), str(ROOT / ".importlinter"), *sys.argv[1:]]
        # from the temporary folder: the checkout's root on sys.path would shadow the assembled package
        return subprocess.run(cmd, cwd=tmp, env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
