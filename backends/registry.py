"""Backend discovery through the `xlate.backends` entry-point group (third-party packages can add one)."""

from __future__ import annotations

import functools
from importlib.metadata import entry_points

from xlate.backends.base import Backend

from xlate.errors import InputError


@functools.cache
def _entry_points() -> dict[str, object]:
    return {ep.name: ep for ep in entry_points(group="xlate.backends")}


def backend_names() -> list[str]:
    return sorted(_entry_points())


@functools.cache
def get_backend(name: str) -> Backend:
    ep = _entry_points().get(name)
    if ep is None:
        raise InputError(f"xlate: error: no backend named '{name}' (installed: {', '.join(backend_names()) or 'none'})")
    cls = ep.load()  # type: ignore[attr-defined]
    return cls()


def backend_for_language(language: str) -> Backend:
    """The backend that runs sources of `language` (cuda, hip, triton, ascendc)."""
    for name in backend_names():
        backend = get_backend(name)
        if language in backend.languages:
            return backend
    raise InputError(f"xlate: error: no installed backend runs {language} sources")
