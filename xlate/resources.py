"""Locations of the data shipped with xlate (grammars/, templates/, xlate/data/), installed or in a checkout."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import marshal
import os
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import yaml


def _package_dir(package: str) -> Path:
    return Path(str(resources.files(package)))


def grammars_dir() -> Path:
    return _package_dir("xlate.grammars")


def templates_dir() -> Path:
    return _package_dir("xlate.templates")


def data_dir() -> Path:
    """xlate/data/: the data root (tables, catalogues, schemas) of every part of xlate."""
    return Path(__file__).parent / "data"


# Packages installed from folders outside xlate/ (pyproject package-dir): found through importlib.
MAPPED = ("xlate.backends", "xlate.grammars", "xlate.templates")


def package_file(package: str, name: str) -> Path:
    """A data file kept inside a package's own folder (where its owner keeps it beside the code). The package is
    not imported: the catalogue of a translator is read without loading the translator."""
    top = next((m for m in MAPPED if package == m or package.startswith(m + ".")), None)
    if top is not None:
        return _package_dir(top).joinpath(*package[len(top):].split(".")[1:], name)
    if package != "xlate" and not package.startswith("xlate."):
        raise ValueError(f"not an xlate package: {package}")
    return Path(__file__).parent.joinpath(*package.split(".")[1:], name)


@functools.cache
def load_yaml(path: Path) -> Any:
    """A YAML file, parsed once per process. The parse itself is kept in the user's cache, keyed by the file's
    bytes: building the objects of the mapping tables took about 0.4 s in every process (each migrate worker)."""
    data = Path(path).read_bytes()
    key = hashlib.sha256(b"%s\0%s\0%d\0" % (yaml.__version__.encode(), sys.version.encode(), marshal.version))
    key.update(data)
    cached = _parsed_cache_file(key.hexdigest())
    if cached is not None:
        try:
            return marshal.loads(cached.read_bytes())
        except (OSError, EOFError, ValueError, TypeError):
            pass  # absent or unreadable: parse
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    value = yaml.load(data.decode("utf-8"), Loader=loader)
    if cached is not None:
        _store(cached, value)
    return value


def _parsed_cache_file(digest: str) -> Path | None:
    try:
        return cache_dir() / "yaml" / f"{digest}.marshal"
    except OSError:  # no writable cache folder: parse every time
        return None


def _store(path: Path, value: Any) -> None:
    """marshal: plain data only (a YAML timestamp is not: that file is not cached), and loading it runs no code."""
    import tempfile

    try:
        blob = marshal.dumps(value)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    except (OSError, ValueError):
        return
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(blob)
        os.replace(tmp, path)  # whole or absent: another process may read it at any time
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def data(name: str) -> Any:
    """A YAML file from xlate/data/, parsed once."""
    return load_yaml(data_dir() / name)


def cache_dir() -> Path:
    """The user's cache dir for compiles, completions, parsed data files and the Hypothesis database
    (XLATE_CACHE_DIR overrides)."""
    root = os.environ.get("XLATE_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "xlate"
    )
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path
