"""What the driver writes itself so that the output tree is complete: files that are not code (copied as they
are), build files (translated, buildfiles.py) and, for a code file whose task wrote no port (the rules could not
port a kernel, the port was rejected, the worker crashed or timed out), the source copied unchanged in the port's
place with a header saying why. Every write is atomic; nothing is ever written into the source tree."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
from typing import Any

from xlate.migrate import includes
from xlate.migrate.diagnostics import diag_dict
from xlate.migrate.discover import SourceFile
from xlate.migrate.verdicts import fallback_header

CHUNK = 1 << 20


def _result(f: SourceFile, status: str, message: str) -> dict[str, Any]:
    return {"path": f.rel, "output": f.output, "role": f.role, "language": f.language or "", "kind": f.kind,
            "status": status, "written": False, "output_sha256": None, "message": message, "error": None,
            "engine": None, "diagnostics": list(f.diagnostics), "kernels": [], "includes_rewritten": [], "diff": "",
            "diff_truncated": False, "timings": {}}


def io_error(r: dict[str, Any], f: SourceFile, exc: OSError) -> dict[str, Any]:
    d = diag_dict("XL6005", f.rel, output=f.output or f.rel, detail=exc.strerror or str(exc))
    r.update(status="error", message=d["message"], error={"kind": "io", "code": "XL6005", "message": d["message"]})
    r["diagnostics"].append(d)
    return r


def _same(src: str, dst: str) -> bool:
    """The quick check rsync makes: same size and modification time (copies keep the source's)."""
    try:
        a, b = os.stat(src), os.stat(dst)
    except OSError:
        return False
    return a.st_size == b.st_size and a.st_mtime_ns == b.st_mtime_ns


def copy_file(src: str, dst: str) -> None:
    """Copy src to dst atomically (a temporary file beside dst, renamed over it), keeping src's times."""
    folder = os.path.dirname(dst)
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(dst)}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out, open(src, "rb") as inp:
            shutil.copyfileobj(inp, out, CHUNK)
        from xlate.migrate.task import file_mode

        os.chmod(tmp, file_mode() | (os.stat(src).st_mode & 0o111))  # scripts stay executable
        shutil.copystat(src, tmp, follow_symlinks=True)
        os.replace(tmp, dst)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def copy_asset(f: SourceFile, out: str) -> dict[str, Any]:
    """A file that is not code (data, scripts, docs): copied as it is."""
    r = _result(f, "copied", "not code: copied as it is")
    assert f.output is not None
    dst = os.path.join(out, f.output)
    try:
        if not _same(f.path, dst):
            copy_file(f.path, dst)
    except OSError as exc:
        return io_error(r, f, exc)
    r["written"] = True
    return r


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_fallback(result: dict[str, Any], f: SourceFile, out: str) -> dict[str, Any]:
    """No port was written for `f`: its source goes in the port's place, unchanged but for the header that says
    why and the includes of renamed project files (so the tree stays consistent). Bytes that are not UTF-8 are
    kept as they are."""
    from xlate.fsutil import atomic_write_bytes
    from xlate.migrate.task import file_mode

    if not f.output:
        return result
    failed = [k for k in result.get("kernels") or [] if k.get("status") in ("rejected", "not translated", "error")]
    reason = (f"{failed[0]['name']} {failed[0]['status']}: {failed[0].get('reason') or ''}" if failed else
              result.get("message") or (result.get("error") or {}).get("message") or "no port was written")
    data = f.data
    if not data:
        try:
            with open(f.path, "rb") as fh:
                data = fh.read()
        except OSError:
            return result
    text = data.decode("latin-1")  # one character per byte: the rewrite touches include names only
    new, changed = includes.rewrite(text, f.rewrites)
    body = fallback_header(os.path.basename(f.rel), reason).encode("utf-8") + new.encode("latin-1")
    r = dict(result)
    try:
        atomic_write_bytes(os.path.join(out, f.output), body, mode=file_mode())
    except OSError as exc:
        r["diagnostics"] = list(r.get("diagnostics") or [])
        return io_error(r, f, exc)
    r.update(fallback=True, output_sha256=_sha(body), includes_rewritten=changed)
    r["diagnostics"] = [*list(r.get("diagnostics") or []), diag_dict("XL6015", f.rel, output=f.output)]
    return r


def translate_build_file(f: SourceFile, out: str, ctx: Any) -> dict[str, Any]:
    """A Makefile or CMake list for --to hip: translated by buildfiles.py; the lines no rule translates safely are
    listed (line, text, what to change) in its entry and as XL6016 warnings."""
    from xlate.fsutil import atomic_write_bytes
    from xlate.migrate import buildfiles
    from xlate.migrate.task import file_mode

    r = _result(f, "translated", "")
    try:
        with open(f.path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        d = diag_dict("XL6004", f.rel, detail=exc.strerror or str(exc))
        r.update(status="error", message=d["message"], error={"kind": "input", "code": "XL6004", "message": d["message"]})
        r["diagnostics"].append(d)
        return r
    text = data.decode("utf-8", "surrogateescape")
    bt = buildfiles.translate(text, f.rel, ctx)
    r["build"] = bt.to_dict()
    r["diagnostics"] += [diag_dict("XL6016", f.rel, m.line, 1, at=m.line, text=m.text, suggestion=m.suggestion)
                         for m in bt.manual]
    new = bt.text.encode("utf-8", "surrogateescape")
    try:
        assert f.output is not None
        atomic_write_bytes(os.path.join(out, f.output), new, mode=file_mode() | (os.stat(f.path).st_mode & 0o111))
    except OSError as exc:
        return io_error(r, f, exc)
    changed = new != data
    r.update(written=True, output_sha256=_sha(new), status="translated" if changed else "copied",
             message=(f"{bt.tool}: {len(bt.changes)} line(s) translated" if changed else f"{bt.tool}: nothing CUDA-specific")
             + (f"; {len(bt.manual)} line(s) to change by hand" if bt.manual else ""))
    if changed:
        import difflib

        r["diff"] = "".join(difflib.unified_diff(text.splitlines(keepends=True), bt.text.splitlines(keepends=True),
                                                 fromfile=f.rel, tofile=f.output, n=1))[:200_000]
    return r
