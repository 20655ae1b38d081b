"""Shared memory between xlate and one worker process: array payloads are placed in an anonymous memory file
(memfd) both processes map, and only their offsets travel through the worker's pipe.

A fuzz case moves up to tens of MB per launch (every buffer with its guard bands, there and back, twice per
side). Through a pipe each byte is copied about six times (serialise, join, write, read, join, copy); here it is
copied once on each side. The parent owns the file and grows it; the child maps it again when a request says
its size changed. A request's arrays lie from offset 0, the reply's after them, so a reply never overwrites an
input a runtime may still hold a view of. The file descriptor reaches the child by inheritance (`pass_fds`),
which bubblewrap and prlimit keep; a child that cannot map it says so, and that worker keeps using the pipe.
"""

from __future__ import annotations

import contextlib
import mmap
import os

import numpy as np

ALIGN = 256  # each array starts 256-byte aligned (what device copies and vector loads like)
FD_ENV = "XLATE_ARENA_FD"
MIN_SIZE = 1 << 20


def aligned(n: int) -> int:
    return -(-n // ALIGN) * ALIGN


def payload_bytes(arrays: list[np.ndarray]) -> int:
    """Arena bytes a list of arrays takes, each aligned."""
    return sum(aligned(a.nbytes) for a in arrays)


class Arena:
    def __init__(self, fd: int, size: int):
        self.fd = fd
        self.size = 0
        self._map: mmap.mmap | None = None
        self.remap(size)

    @classmethod
    def create(cls, size: int = MIN_SIZE) -> Arena:
        fd = os.memfd_create("xlate-worker-arena", 0)  # inheritable: the worker gets it through pass_fds
        os.ftruncate(fd, size)
        return cls(fd, size)

    @classmethod
    def from_environment(cls, size: int) -> Arena:
        """The child's side: the inherited descriptor named in the environment."""
        return cls(int(os.environ[FD_ENV]), size)

    def remap(self, size: int) -> None:
        if size == self.size and self._map is not None:
            return
        # The old mapping is left to the garbage collector: a runtime may still hold views of it.
        self._map = mmap.mmap(self.fd, size) if size else None
        self.size = size

    def ensure(self, size: int) -> bool:
        """Parent: grow the file to hold `size` bytes (doubling); True if it changed."""
        if size <= self.size:
            return False
        new = max(aligned(size), 2 * self.size, MIN_SIZE)
        os.ftruncate(self.fd, new)
        self.remap(new)
        return True

    def fits(self, offset: int, nbytes: int) -> bool:
        return offset + nbytes <= self.size

    def put(self, offset: int, a: np.ndarray) -> None:
        assert self._map is not None
        raw = np.ascontiguousarray(a).view(np.uint8).reshape(-1)
        np.frombuffer(self._map, dtype=np.uint8, count=raw.size, offset=offset)[:] = raw

    def view(self, offset: int, nbytes: int, dtype: np.dtype, shape: list[int]) -> np.ndarray:
        assert self._map is not None
        return np.frombuffer(self._map, dtype=np.uint8, count=nbytes, offset=offset).view(dtype).reshape(shape)

    def close(self) -> None:
        self._map = None
        with contextlib.suppress(OSError):
            os.close(self.fd)
