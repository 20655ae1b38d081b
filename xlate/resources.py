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
