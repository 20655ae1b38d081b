"""Pick the rule translator for (source language, target) from xlate/data/translators.yaml, and from packages
that add one through the `xlate.translators` entry-point group (named `source->target`, e.g. `cuda->npy`)."""

from __future__ import annotations

import functools
import importlib
from importlib.metadata import entry_points

from xlate.errors import InputError
from xlate.resources import data
from xlate.translate.base import Translator


@functools.cache
def translators() -> dict[str, dict[str, str]]:
    """source language -> target -> "module:Class" (shipped pairs cannot be replaced by a package)."""
    table = {source: dict(pairs) for source, pairs in data("translators.yaml").items()}
    for ep in entry_points(group="xlate.translators"):
        source, _, target = ep.name.partition("->")
        table.setdefault(source.strip(), {}).setdefault(target.strip(), ep.value)
    return table


def rule_translator(source_language: str, target: str) -> Translator:
    table = translators()
    ref = table.get(source_language, {}).get(target)
    if ref is None:
        pairs = ", ".join(f"{s}->{t}" for s, ts in table.items() for t in ts)
        raise InputError(f"xlate: error: no rule translator from {source_language} to {target} (available: {pairs})")
    module, cls = ref.split(":")
    return getattr(importlib.import_module(module), cls)()
