"""Cyclic garbage collection paused around work that builds many small acyclic objects.

A file's model, its tree-sitter query matches and its edits are hundreds of thousands of small objects with no
cycles; each full collection walks all of them, which makes large files cost more than linear time.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
