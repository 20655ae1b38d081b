"""TEST-ONLY fault injection for the migration workers: makes chosen tasks crash, hang or fail so that the tests
can check that one task's failure never stops the batch. Inert unless XLATE_TEST_FAULTS is set.

XLATE_TEST_FAULTS="ACTION:GLOB[;ACTION:GLOB...]", matched against the file's path relative to the library root:
  segv      the worker process kills itself with SIGSEGV
  exit      the worker process exits at once (os._exit(3))
  hang      the worker sleeps forever (the task timeout must stop it)
  raise     the task raises RuntimeError
  sleep=S   the task sleeps S seconds first, then runs normally (to slow a run down for the kill-and-resume test)
"""

from __future__ import annotations

import fnmatch
import os
import signal
import time

ENV = "XLATE_TEST_FAULTS"


def current() -> str | None:
    """The driver's setting, carried inside each task so that workers on other machines (Ray) see it too."""
    return os.environ.get(ENV) or None


def inject(rel: str, spec: str | None) -> None:
    if not spec:
        return
    for item in spec.split(";"):
        action, _, pattern = item.partition(":")
        if not fnmatch.fnmatch(rel, pattern or "*"):
            continue
        if action == "segv":
            os.kill(os.getpid(), signal.SIGSEGV)
        elif action == "exit":
            os._exit(3)
        elif action == "hang":
            while True:
                time.sleep(3600)
        elif action == "raise":
            raise RuntimeError(f"injected fault for {rel} ({ENV})")
        elif action.startswith("sleep="):
            time.sleep(float(action.split("=", 1)[1]))
