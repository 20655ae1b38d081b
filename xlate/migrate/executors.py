"""Executors run migration tasks and hand each result to the driver as it completes, in completion order.

local: a pebble ProcessPool of `jobs` spawned worker processes. pebble (unlike concurrent.futures) knows which
       task a dead worker held and kills a worker whose task overruns its timeout, so a segfault or a hang costs
       that one task (reported as XL6006 / XL6007), never the pool or the batch.
serial: in the driver process, one task at a time: for debugging (pdb works) and small runs; no isolation, so
       a crash or a hang of one task is the whole run's.
ray:   the same task function as Ray tasks (num_gpus per task when asked, so one GPU verifies one file's kernels
       at a time), for libraries larger than one machine. Connects to RAY_ADDRESS / --ray-address, or starts a
       local instance.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from collections.abc import Callable
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures import as_completed
from typing import Any, Protocol

from xlate.migrate.task import Task, error_result, run_task

OnDone = Callable[[Task, dict[str, Any]], None]


class Executor(Protocol):
    name: str

    def run(self, tasks: list[Task], on_done: OnDone) -> None: ...


def describe_exit(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            return f"killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exit code {exitcode}"


def _warm() -> None:
    # Import what every task needs once per worker, not once per task.
    import xlate.migrate.task
    import xlate.port  # noqa: F401


class LocalExecutor:
    name = "local"

    def __init__(self, jobs: int, task_timeout: float | None, max_tasks: int = 500):
        self.jobs = max(1, jobs)
        self.task_timeout = task_timeout
        self.max_tasks = max_tasks

    def run(self, tasks: list[Task], on_done: OnDone) -> None:
        if not tasks:
            return
        try:
            from pebble import ProcessExpired, ProcessPool
        except ImportError as exc:
            from xlate.errors import ToolchainMissing

            raise ToolchainMissing(f"the local executor needs pebble ({exc})",
                                   "pip install pebble (or run with --executor serial)") from None
        # spawn, not fork: the driver has threads (the progress display) and a fork could inherit held locks.
        pool = ProcessPool(max_workers=min(self.jobs, len(tasks)), max_tasks=self.max_tasks, initializer=_warm,
                           context=multiprocessing.get_context("spawn"))
        try:
            futures = {pool.schedule(run_task, args=(t,), timeout=self.task_timeout): t for t in tasks}
            for fut in as_completed(futures):
                t = futures[fut]
                try:
                    result = fut.result()
                except FutureTimeout:
                    result = error_result(t, "timeout", "XL6007", seconds=self.task_timeout or 0)
                except ProcessExpired as exc:
                    result = error_result(t, "crash", "XL6006", detail=describe_exit(exc.exitcode))
                except Exception as exc:  # e.g. a result that cannot be sent back
                    result = error_result(t, "internal", "XL6009", detail=f"{type(exc).__name__}: {exc}")
                on_done(t, result)
            pool.close()
        except BaseException:
            pool.stop()
            raise
        finally:
            pool.join()


class SerialExecutor:
    name = "serial"

    def run(self, tasks: list[Task], on_done: OnDone) -> None:
        for t in tasks:
            on_done(t, run_task(t))


class RayExecutor:
    name = "ray"

    def __init__(self, jobs: int, task_timeout: float | None, gpus_per_task: float = 0.0, address: str | None = None):
        self.jobs = max(1, jobs)
        self.task_timeout = task_timeout
        self.gpus = gpus_per_task
        self.address = address

    def _init(self) -> Any:
        try:
            import ray
        except ImportError as exc:
            from xlate.errors import ToolchainMissing

            raise ToolchainMissing(f"--executor ray needs Ray ({exc})", "pip install 'xlate[ray]'") from None
        if not ray.is_initialized():
            address = self.address or os.environ.get("RAY_ADDRESS")
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
            if address:
                kwargs["address"] = address
            else:
                kwargs["num_cpus"] = self.jobs
            ray.init(**kwargs)
        return ray

    def run(self, tasks: list[Task], on_done: OnDone) -> None:
        if not tasks:
            return
        ray = self._init()
        options: dict[str, Any] = {"num_cpus": 1, "num_gpus": self.gpus, "max_retries": 0}
        remote = ray.remote(run_task).options(**options)
        resources = ray.cluster_resources()
        if self.gpus and resources.get("GPU", 0) < self.gpus:
            from xlate.errors import ToolchainMissing

            raise ToolchainMissing(f"--gpus-per-task {self.gpus:g}: the Ray cluster has {resources.get('GPU', 0):g} GPU(s)",
                                   "join a cluster with GPUs (--ray-address) or drop --gpus-per-task")
        # Submit no more than the cluster can run at once, so that a task's deadline starts when it starts.
        slots = int(resources.get("GPU", 0) // self.gpus) if self.gpus else int(resources.get("CPU", self.jobs))
        slots = max(1, slots)
        pending = list(tasks)
        running: dict[Any, tuple[Task, float]] = {}
        while pending or running:
            while pending and len(running) < slots:
                t = pending.pop(0)
                running[remote.remote(t)] = (t, time.monotonic())
            done, _ = ray.wait(list(running), num_returns=1, timeout=1.0)
            for ref in done:
                t, _ = running.pop(ref)
                on_done(t, self._result(ray, ref, t))
            if self.task_timeout:
                now = time.monotonic()
                for ref, (t, started) in list(running.items()):
                    if now - started > self.task_timeout:
                        ray.cancel(ref, force=True)
                        running.pop(ref)
                        on_done(t, error_result(t, "timeout", "XL6007", seconds=self.task_timeout))

    @staticmethod
    def _result(ray: Any, ref: Any, t: Task) -> dict[str, Any]:
        try:
            return ray.get(ref)
        except ray.exceptions.WorkerCrashedError as exc:
            return error_result(t, "crash", "XL6006", detail=f"Ray worker crashed: {str(exc).splitlines()[0]}")
        except ray.exceptions.RayError as exc:
            return error_result(t, "crash", "XL6006", detail=f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}")


def make_executor(name: str, jobs: int, task_timeout: float | None, gpus_per_task: float = 0.0,
                  ray_address: str | None = None) -> Executor:
    if name == "ray":
        return RayExecutor(jobs, task_timeout, gpus_per_task, ray_address)
    if name == "serial":
        return SerialExecutor()
    return LocalExecutor(jobs, task_timeout)
