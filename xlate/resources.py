"""Locations of the data shipped with xlate (grammars/, templates/, xlate/data/), installed or in a checkout."""

from __future__ import annotations

import functools
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
    return Path(__file__).parent / "data"


@functools.cache
def load_yaml(path: Path) -> Any:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with open(path, encoding="utf-8") as fh:
        return yaml.load(fh, Loader=loader)


def data(name: str) -> Any:
    """A YAML file from xlate/data/, parsed once."""
    return load_yaml(data_dir() / name)


def cache_dir() -> Path:
    """The user's cache dir for compiles, completions and the Hypothesis database (XLATE_CACHE_DIR overrides)."""
    import os

    root = os.environ.get("XLATE_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "xlate"
    )
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path
