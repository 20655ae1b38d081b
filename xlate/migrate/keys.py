"""Content keys of migration tasks: a task's result is a pure function of what goes into its key, so a key
already in the cache needs no work (incremental re-runs, resume after a kill)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from xlate import __version__
from xlate.errors import XlateError
from xlate.hashing import content_key
from xlate.migrate.discover import Library, SourceFile
from xlate.migrate.options import MigrateOptions

KEY_SCHEMA = "xlate.migrate.task/2"  # /2: partial ports are written (XL6018)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Hasher:
    """File digests and sidecar documents for one run, each read once (hundreds of files share one xlate.toml)."""

    def __init__(self) -> None:
        self._sha: dict[str, str | None] = {}
        self._sidecar: dict[str, tuple[dict[str, Any], str | None]] = {}

    def file(self, path: str | os.PathLike[str]) -> str | None:
        key = os.path.abspath(path)
        if key not in self._sha:
            try:
                self._sha[key] = sha(Path(key).read_bytes())
            except OSError:
                self._sha[key] = None
        return self._sha[key]

    def sidecar(self, source: str) -> tuple[dict[str, Any], str | None]:
        from xlate.specs import sidecar

        folder = os.path.dirname(os.path.abspath(source))
        if folder not in self._sidecar:
            try:
                self._sidecar[folder] = (sidecar(source), None)
            except XlateError as exc:
                self._sidecar[folder] = ({}, str(exc))
        return self._sidecar[folder]

    def oracle_inputs(self, f: SourceFile, options: MigrateOptions) -> dict[str, Any]:
        """What the verifier reads besides the source: the sidecar xlate.toml, the reference modules it names,
        and golden files for this stem."""
        out: dict[str, Any] = {}
        doc, error = self.sidecar(f.path)
        if error:
            out["sidecar_error"] = error
        if doc:
            base = Path(doc["__dir__"])
            out["sidecar"] = self.file(base / "xlate.toml")
            ref_dir = doc.get("references", {}).get("dir")
            if ref_dir:
                out["reference"] = self.file(base / ref_dir / (Path(f.path).stem + ".py"))
            mods = sorted({str(e["reference"]).partition(":")[0] for e in doc.get("kernels", {}).values()
                           if isinstance(e, dict) and e.get("reference")})
            out["kernel_references"] = [(m, self.file(base / m)) for m in mods]
        if options.golden:
            g = Path(options.golden)
            if g.is_dir():
                out["golden"] = [(p.name, self.file(p)) for p in sorted(g.glob(f"{Path(f.path).stem}.*.xg"))]
            else:
                out["golden"] = self.file(g)
        return out


def task_key(f: SourceFile, lib: Library, options: MigrateOptions, hasher: Hasher | None = None) -> str:
    hasher = hasher or Hasher()
    by_rel = lib.by_rel()
    parts = {
        "schema": KEY_SCHEMA, "xlate": __version__, "rel": f.rel, "role": f.role, "kind": f.kind, "output": f.output,
        "source": sha(f.data), "headers": [(d, sha(by_rel[d].data)) for d in f.deps],
        "rewrites": sorted(f.rewrites.items()), "options": options.result_options(),
        "rules": [(r, hasher.file(r)) for r in options.rules_files],
        "oracle": hasher.oracle_inputs(f, options) if not options.analysis_only and f.kind == "port" else {},
    }
    return content_key(parts)
