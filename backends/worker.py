"""Worker subprocesses: kernels run here, never in the xlate process.

The parent sends framed requests (a JSON header plus raw array payloads, no pickle) over the child's stdin and
reads replies from its stdout. A request that outlives its timeout gets the child killed (`timeout`); a child
that dies (segfault, abort, CUDA context loss) becomes `crash` with its exit signal and the tail of its stderr.
A dead worker is restarted on the next request; a loaded artifact stays loaded across requests.

Child side: `python -m xlate.backends.worker BACKEND` imports the backend's `WorkerRuntime` (on the first load),
which offers `load(artifact: dict) -> handle` and `run(handle, args, launch) -> (buffers, seconds, meta)`.

Untrusted code (see backends/sandbox.py) gets its own workers, started inside the sandbox: they see artifacts
only through a read-only inbox the parent copies them into, and they also run the in-process compilers (NVRTC,
hiprtc) on untrusted text (`remote_compile`), so that no compiler reads a file on the parent's behalf.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import math
import os
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from typing import Any, BinaryIO

import numpy as np
from xlate.backends import sandbox
from xlate.backends.arena import FD_ENV, Arena, aligned, payload_bytes
from xlate.backends.base import Arg, Artifact, BufferArg, LaunchConfig, RunResult, ScalarArg, WorkerRuntime

# -- framing -------------------------------------------------------------------------------------------------


def _dtype_name(a: np.ndarray) -> str:
    return a.dtype.name if a.dtype.name != "void16" else str(a.dtype)


def write_frame(stream: BinaryIO, header: dict[str, Any], arrays: list[np.ndarray] | None = None,
                arena: Arena | None = None, base: int = 0) -> None:
    """A JSON header, then each array's bytes; with an `arena`, arrays that fit from offset `base` on are placed
    there instead and the header carries their offsets."""
    arrays = arrays or []
    metas, inline, offset = [], [], base
    for a in arrays:
        meta: dict[str, Any] = {"dtype": _dtype_name(a), "shape": list(a.shape)}
        if arena is not None and a.size and arena.fits(offset, a.nbytes):
            arena.put(offset, a)
            meta["at"] = offset
            offset += aligned(a.nbytes)
        else:
            inline.append(a)
        metas.append(meta)
    blob = json.dumps(dict(header, arrays=metas)).encode()
    parts = [struct.pack("<I", len(blob)), blob]
    for a in inline:
        raw = np.ascontiguousarray(a).view(np.uint8).tobytes() if a.size else b""
        parts.append(struct.pack("<Q", len(raw)))
        parts.append(raw)
    stream.write(b"".join(parts))
    stream.flush()


def _read_exact(stream: BinaryIO, n: int) -> bytes:
    chunks = []
    while n:
        chunk = stream.read(n)
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _dtype(name: str) -> np.dtype:
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


MAX_HEADER = 16 << 20  # a JSON header is a few KB; more means something else wrote to the reply stream


def read_frame(stream: BinaryIO, arena: Arena | None = None, copy: bool = True) -> tuple[dict[str, Any], list[np.ndarray]]:
    """The inverse of write_frame. Arrays in the arena are copied out (`copy`), or views of it for the child,
    whose runtime consumes them before the next request."""
    (n,) = struct.unpack("<I", _read_exact(stream, 4))
    if n > MAX_HEADER:
        # e.g. a wrapping tool printing to the worker's stdout: fail now instead of waiting for n bytes
        raise ValueError(f"worker reply stream corrupted (header length {n}): something else wrote to it")
    header = json.loads(_read_exact(stream, n))
    if arena is not None and header.get("arena_size"):
        arena.remap(header["arena_size"])  # the parent grew it
    arrays = []
    for meta in header.pop("arrays", []):
        dt = _dtype(meta["dtype"])
        if "at" in meta:
            if arena is None:
                raise ValueError("worker frame refers to shared memory this side has not mapped")
            nbytes = dt.itemsize * math.prod(meta["shape"])
            view = arena.view(meta["at"], nbytes, dt, meta["shape"])
            arrays.append(view.copy() if copy else view)
            continue
        (size,) = struct.unpack("<Q", _read_exact(stream, 8))
        raw = _read_exact(stream, size) if size else b""
        arrays.append(np.frombuffer(raw, dtype=np.uint8).view(dt).reshape(meta["shape"]).copy() if size else np.zeros(meta["shape"], dt))
    return header, arrays


def encode_args(args: list[Arg]) -> tuple[list[dict[str, Any]], list[np.ndarray]]:
    meta, arrays = [], []
    for a in args:
        if isinstance(a, BufferArg):
            meta.append({"kind": "buffer", "name": a.name, "offset": a.offset, "length": a.length, "index": len(arrays),
                         "symbol": a.symbol, "slot": list(a.slot) if a.slot is not None else None})
            arrays.append(a.data)
        else:
            meta.append({"kind": "scalar", "name": a.name, "value": a.value, "dtype": a.dtype})
    return meta, arrays


def decode_args(meta: list[dict[str, Any]], arrays: list[np.ndarray]) -> list[Arg]:
    out: list[Arg] = []
    for m in meta:
        if m["kind"] == "buffer":
            slot = m.get("slot")
            out.append(BufferArg(m["name"], arrays[m["index"]], m["offset"], m["length"], m.get("symbol"),
                                 (str(slot[0]), int(slot[1])) if slot else None))
        else:
            out.append(ScalarArg(m["name"], m["value"], m["dtype"]))
    return out


# -- parent side ---------------------------------------------------------------------------------------------


class Worker:
    def __init__(self, backend: str, env: dict[str, str] | None = None, wrapper: list[str] | None = None,
                 sandboxed: bool = False):
        self.backend = backend
        self.env = dict(env or {})
        self.wrapper = list(wrapper or [])  # a command the worker runs under (e.g. compute-sanitizer)
        self.sandboxed = sandboxed
        self.inbox: str | None = None  # host folder the sandbox sees read-only at sandbox.INBOX
        self.proc: subprocess.Popen[bytes] | None = None
        self.loaded: set[str] = set()
        self._stderr = None
        self.starts = 0
        self.arena: Arena | None = None  # shared memory for array payloads, once the child has mapped it
        self._arena_file: Arena | None = None

    def _start(self) -> None:
        argv = [*self.wrapper, sys.executable, "-m", "xlate.backends.worker", self.backend]
        if self._arena_file is None:
            try:
                self._arena_file = Arena.create()
            except OSError:  # no memfd here: the pipe carries everything
                self._arena_file = None
        self.arena = None
        fd_env = {FD_ENV: str(self._arena_file.fd)} if self._arena_file is not None else {}
        if self.sandboxed:
            self._drop_inbox()
            self.inbox = tempfile.mkdtemp(prefix="xlate-inbox-")
            # -P: the private /tmp (the sandbox's cwd) never lands on sys.path
            # files the wrapping tool is told to write (compute-sanitizer's --log-file): their folder, writable
            outputs = {os.path.dirname(a) for a in self.wrapper
                       if a.startswith("/") and not os.path.exists(a) and os.path.isdir(os.path.dirname(a))}
            argv = sandbox.build([*self.wrapper, sys.executable, "-P", "-m", "xlate.backends.worker", self.backend],
                                 ro=[(self.inbox, sandbox.INBOX)], rw=[(d, d) for d in sorted(outputs)],
                                 env=sandbox.sandbox_env({**self.env, **fd_env}))
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}  # bwrap clears it anyway
        else:  # no credentials in a worker's environment, sandboxed or not: kernels could read them
            env = {k: v for k, v in os.environ.items() if not sandbox.SECRET_NAME.search(k)}
            env.update(self.env)
            env.update(fd_env)
            env.setdefault("PYTHONUNBUFFERED", "1")
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (lives as long as the worker)
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=env,
            start_new_session=True,  # its own process group: a timeout kills everything it started
            pass_fds=(self._arena_file.fd,) if self._arena_file is not None else (),
        )
        self.loaded = set()
        self.starts += 1
        self._map_arena()

    def _map_arena(self) -> None:
        """Ask the new child to map the shared memory; if it cannot (a wrapper closed the descriptor), the pipe
        carries its arrays."""
        if self._arena_file is None or self.proc is None or self.proc.stdin is None or self.proc.stdout is None:
            return
        try:
            write_frame(self.proc.stdin, {"op": "arena", "size": self._arena_file.size})
            if not self._wait_readable(180.0):
                return
            reply, _ = read_frame(self.proc.stdout)
        except (OSError, EOFError, ValueError, struct.error):
            return  # the next request finds the child dead and reports it
        if reply.get("status") == "ok":
            self.arena = self._arena_file

    def stage(self, artifact: Artifact) -> dict[str, Any]:
        """The artifact as this worker sees it: a sandboxed worker reads a copy in its read-only inbox."""
        d = artifact.to_dict()
        if not self.sandboxed or not artifact.path:
            return d
        if self.inbox is None or not self.alive():
            self._start()
        assert self.inbox is not None
        name = f"{artifact.key}{os.path.splitext(artifact.path)[1]}"
        target = os.path.join(self.inbox, name)
        if not os.path.exists(target):
            shutil.copyfile(artifact.path, target + ".part")
            os.replace(target + ".part", target)
        d["path"] = f"{sandbox.INBOX}/{name}"
        return d

    def _drop_inbox(self) -> None:
        if self.inbox is not None:
            shutil.rmtree(self.inbox, ignore_errors=True)
            self.inbox = None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.proc = None
        self._drop_inbox()

    def close(self) -> None:
        self.stop()
        if self._arena_file is not None:
            self._arena_file.close()
            self._arena_file = self.arena = None

    def finish(self, timeout: float = 120.0) -> str:
        """Close the worker's input so it exits normally (a wrapping tool then prints its summary); its stderr."""
        if self.proc is None:
            return ""
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.stop()
        text = self._stderr_tail(200_000)
        self.proc = None
        self._drop_inbox()
        return text

    def _stderr_tail(self, limit: int = 4000) -> str:
        if self._stderr is None:
            return ""
        try:
            self._stderr.seek(0, os.SEEK_END)
            size = self._stderr.tell()
            self._stderr.seek(max(0, size - limit))
            return self._stderr.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""

    def _wait_readable(self, timeout: float) -> bool:
        assert self.proc is not None and self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        return bool(ready)

    def request(self, header: dict[str, Any], arrays: list[np.ndarray] | None, timeout: float) -> tuple[str, dict[str, Any], list[np.ndarray]]:
        """Returns (status, reply header, arrays); status is ok, crash or timeout."""
        if not self.alive():
            self._start()
        assert self.proc is not None and self.proc.stdin is not None and self.proc.stdout is not None
        arena = self.arena if arrays else None
        if arena is not None:
            need = payload_bytes(arrays or [])
            arena.ensure(2 * need)  # the request's arrays, then room for a reply of the same size
            header = dict(header, arena_size=arena.size, reply_at=need)
        try:
            write_frame(self.proc.stdin, header, arrays, arena)
        except (BrokenPipeError, OSError):
            return self._crashed()
        if not self._wait_readable(timeout):
            self.stop()
            return "timeout", {"message": f"no answer within {timeout:.0f} s: killed"}, []
        try:
            reply, out = read_frame(self.proc.stdout, arena)
        except (EOFError, struct.error):
            return self._crashed()
        except ValueError as exc:  # a corrupted reply stream: the worker is useless from here on
            tail = self._stderr_tail()
            self.stop()
            return "crash", {"message": str(exc), "stderr": tail}, []
        if reply.get("fatal"):
            # The child reported an error that leaves its runtime unusable (e.g. a CUDA context error).
            self.stop()
        return reply.get("status", "ok"), reply, out

    def _crashed(self) -> tuple[str, dict[str, Any], list[np.ndarray]]:
        assert self.proc is not None
        try:
            code = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.stop()
            code = -signal.SIGKILL
        tail = self._stderr_tail()
        self.proc = None
        if code is not None and code < 0:
            try:
                what = f"killed by {signal.Signals(-code).name}"
            except ValueError:
                what = f"killed by signal {-code}"
        else:
            what = f"exited with status {code}"
        return "crash", {"message": f"worker {what}", "stderr": tail}, []


_POOL: dict[tuple[str, tuple[tuple[str, str], ...], tuple[str, ...], bool], Worker] = {}


def _key(backend: str, env: dict[str, str] | None, wrapper: list[str] | None, sandboxed: bool):
    return (backend, tuple(sorted((env or {}).items())), tuple(wrapper or ()), sandboxed)


def get_worker(backend: str, env: dict[str, str] | None = None, wrapper: list[str] | None = None,
               sandboxed: bool = False) -> Worker:
    key = _key(backend, env, wrapper, sandboxed)
    if key not in _POOL:
        _POOL[key] = Worker(backend, env, wrapper, sandboxed)
    return _POOL[key]


def finish_worker(backend: str, env: dict[str, str] | None = None, wrapper: list[str] | None = None) -> str:
    text = ""
    for sandboxed in (False, True):
        worker = _POOL.pop(_key(backend, env, wrapper, sandboxed), None)
        if worker is not None:
            text += worker.finish()
            worker.close()
    return text


def retire_workers(backend: str) -> None:
    """Close every worker of `backend` (any environment, wrapper or sandbox); the next request starts a new one."""
    for key in [k for k in _POOL if k[0] == backend]:
        _POOL.pop(key).close()


@atexit.register
def _stop_all() -> None:
    for w in _POOL.values():
        w.close()


def run_in_worker(
    artifact: Artifact,
    args: list[Arg],
    launch: LaunchConfig,
    *,
    timeout: float,
    env: dict[str, str] | None = None,
    bench: dict[str, int] | None = None,
    wrapper: list[str] | None = None,
) -> RunResult:
    worker = get_worker(artifact.backend, env, wrapper, sandboxed=sandbox.decide())
    if artifact.key not in worker.loaded or not worker.alive():
        # Starting the worker (imports, device context) and loading the module is not the kernel's time.
        staged = worker.stage(artifact)
        status, reply, _ = worker.request({"op": "load", "artifact": staged}, None, max(timeout, 180.0))
        if status != "ok":
            return RunResult(status, message="load: " + reply.get("message", ""), stderr=reply.get("stderr", ""))
        worker.loaded.add(artifact.key)
    meta, arrays = encode_args(args)
    header = {"op": "run", "key": artifact.key, "args": meta, "launch": {"grid": launch.grid, "block": launch.block, "shmem": launch.shmem}, "bench": bench}
    t0 = time.perf_counter()
    status, reply, out = worker.request(header, arrays, timeout)
    if status != "ok":
        return RunResult(status, message=reply.get("message", ""), stderr=reply.get("stderr", ""), seconds=time.perf_counter() - t0)
    names = reply.get("names", [])
    return RunResult("ok", dict(zip(names, out)), seconds=reply.get("seconds", 0.0), meta=reply.get("meta", {}))


COMPILE_TIMEOUT = 600.0


def remote_compile(tool: str, **kwargs: Any) -> dict[str, Any]:
    """Run an in-process compiler (`tool` in COMPILERS) on untrusted text inside the sandbox, in the sandboxed
    worker of the backend it serves. Returns the compiler's result fields; a crash or a hang is a failed
    compile with a log that says so."""
    worker = get_worker(COMPILERS[tool][0], sandboxed=True)
    status, reply, arrays = worker.request({"op": "compile", "tool": tool, "kwargs": kwargs}, None, COMPILE_TIMEOUT)
    if status != "ok":
        name = kwargs.get("name") or kwargs.get("path") or "<source>"
        return {"ok": False, "log": f"{name}: error: the compiler {'timed out' if status == 'timeout' else 'crashed'} "
                                    f"({str(reply.get('message', ''))[:200]})"}
    result = dict(reply["result"])
    for field_name, arr in zip(reply.get("binary", []), arrays):
        result[field_name] = arr.tobytes()
    return result


# compiler name -> (backend whose sandboxed worker runs it, module, function returning a dataclass)
COMPILERS = {"nvrtc": ("cuda", "xlate.backends.nvrtc", "compile_nvrtc"),
             "hiprtc": ("hip", "xlate.backends.hip", "hiprtc_compile")}


def _compile_here(tool: str, kwargs: dict[str, Any]) -> tuple[dict[str, Any], list[str], list[np.ndarray]]:
    import dataclasses
    import importlib

    _, module, fn = COMPILERS[tool]
    out = getattr(importlib.import_module(module), fn)(**kwargs)
    fields = dataclasses.asdict(out)
    binary = [k for k, v in fields.items() if isinstance(v, bytes | bytearray)]
    arrays = [np.frombuffer(bytes(fields.pop(k)), dtype=np.uint8) for k in binary]
    return fields, binary, arrays


# -- child side ----------------------------------------------------------------------------------------------


def _child(backend_name: str) -> None:
    # Replies go through the real stdout; anything the kernel or a library prints goes to stderr.
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    inp = sys.stdin.buffer
    from xlate.backends.registry import get_backend

    runtime: WorkerRuntime | None = None  # created on the first load: a compile-only worker needs no device
    handles: dict[str, Any] = {}
    arena: Arena | None = None
    while True:
        try:
            header, arrays = read_frame(inp, arena, copy=False)
        except EOFError:
            return
        op = header.get("op")
        reply_arena = arena if "reply_at" in header else None
        try:
            if op == "arena":
                arena = Arena.from_environment(header["size"])
                write_frame(out, {"status": "ok"})
            elif op == "compile":
                result, binary, blobs = _compile_here(header["tool"], header["kwargs"])
                write_frame(out, {"status": "ok", "result": result, "binary": binary}, blobs)
            elif op == "load":
                art = header["artifact"]
                if runtime is None:
                    runtime = get_backend(backend_name).worker_runtime()
                handles[art["key"]] = runtime.load(art)
                write_frame(out, {"status": "ok"})
            elif op == "run":
                handle = handles[header["key"]]
                launch = LaunchConfig(tuple(header["launch"]["grid"]), tuple(header["launch"]["block"]), header["launch"]["shmem"])
                args = decode_args(header["args"], arrays)
                buffers, seconds, meta = runtime.run(handle, args, launch, header.get("bench"))
                if (header.get("bench") or {}).get("discard_outputs"):
                    buffers = {}  # timing only: no runtime's outputs travel back
                names = list(buffers)
                write_frame(out, {"status": "ok", "names": names, "seconds": seconds, "meta": meta}, [buffers[n] for n in names],
                            reply_arena, header.get("reply_at", 0))
            elif op == "ping":
                write_frame(out, {"status": "ok", "pid": os.getpid()})
            else:
                write_frame(out, {"status": "error", "message": f"unknown op {op!r}"})
        except Exception as exc:  # reported to the parent, which decides what it means
            fatal = runtime is not None and runtime.is_fatal(exc)
            write_frame(out, {"status": "crash" if fatal else "error", "fatal": fatal, "message": f"{type(exc).__name__}: {exc}"})
            if fatal:
                return


if __name__ == "__main__":
    _child(sys.argv[1])
