"""What one `xlate migrate` run was asked to do."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import Any


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


@dataclass
class MigrateOptions:
    source: str  # a folder, or a compile_commands.json
    target: str
    output: str
    jobs: int = field(default_factory=default_jobs)
    executor: str = "local"  # local | ray
    analysis_only: bool = False
    verify: bool = True
    force: bool = False  # also write rejected ports and partial ports (kernels the rules could not translate)
    verified_only: bool = False  # write verified ports (and kernel-less translations) only: no candidates, no copies
    keep_names: bool = False  # x.cu stays x.cu (default: naming.yaml renames the CUDA-specific suffixes)
    examples: int = 50
    seed: int = 0
    arch: str | None = None
    rules_files: list[str] = field(default_factory=list)
    golden: str | None = None  # a folder of <stem>.<kernel>.xg golden files (or one file)
    engine: str = "auto"
    model: str | None = None
    timeout: float = 60.0  # seconds per kernel run (the verifier's)
    task_timeout: float | None = 1800.0  # seconds per file task, whole pipeline
    benchmark: bool = False  # not in result_options: timings are taken after the tasks, in every run
    compile_check: bool = False  # compile each port for its target (useful where it cannot be verified)
    # CUDA -> HIP choices (xlate/config.py, HIPIFY's): the ROCm the port targets (None: the newest the mapping
    # tables know), roc* libraries instead of hip*, and the launch syntax (ggl | chevron)
    rocm: str | None = None
    roc: bool = False
    launch_syntax: str = "ggl"
    resume: bool = True  # reuse results committed to the cache (False: --fresh)
    report_dir: str | None = None
    cache_path: str | None = None
    include_dirs: list[str] = field(default_factory=list)
    root: str | None = None  # compile-database mode: the library root (default: the units' common folder)
    gpus_per_task: float = 0.0  # ray: GPUs each task asks for
    ray_address: str | None = None
    progress: bool = True

    def resolved_report_dir(self) -> str:
        return os.path.abspath(self.report_dir or os.path.join(self.output, "xlate-report"))

    def resolved_cache_path(self) -> str:
        return os.path.abspath(self.cache_path or os.path.join(self.output, ".xlate", "migrate.sqlite"))

    def result_options(self) -> dict[str, Any]:
        """The options a task's result depends on (its cache key); how the run is executed is not among them."""
        return {"mode": "analysis" if self.analysis_only else "port", "target": self.target, "verify": self.verify,
                "force": self.force, "examples": self.examples, "seed": self.seed, "arch": self.arch,
                "engine": self.engine, "model": self.model, "timeout": self.timeout,
                "compile_check": self.compile_check, "verified_only": self.verified_only, "keep_names": self.keep_names,
                "rocm": self.rocm, "roc": self.roc, "launch_syntax": self.launch_syntax}

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
