"""Where the CUDA toolkit is: its headers (for NVRTC, and for the sandbox's read-only view) and nvcc. Found
without importing a compiler, so the sandbox and the compilers that run inside it both use it."""

from __future__ import annotations

import functools
import os
import shutil
from pathlib import Path

__all__ = ["cuda_include_dirs", "nvcc_path"]


@functools.cache
def nvcc_path() -> str | None:
    return shutil.which("nvcc") or next(
        (p for p in ("/usr/local/cuda/bin/nvcc",) if os.path.exists(p)), None
    )


@functools.cache
def cuda_include_dirs() -> tuple[str, ...]:
    """CUDA headers for NVRTC: the toolkit's, or the nvidia-cuda-runtime/-cccl wheels'."""
    candidates: list[Path] = []
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            candidates.append(Path(os.environ[var]) / "include")
    candidates.append(Path("/usr/local/cuda/include"))
    try:
        import nvidia

        for root in nvidia.__path__:
            candidates.extend(sorted(Path(root).glob("cu*/include")))
            candidates.append(Path(root) / "cuda_runtime" / "include")
    except ImportError:
        pass
    found: list[str] = []
    for c in candidates:
        if (c / "cuda_fp16.h").exists():
            found.append(str(c))
            if (c / "cccl").is_dir():
                found.append(str(c / "cccl"))
            break
    return tuple(found)
