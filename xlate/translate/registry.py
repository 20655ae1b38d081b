"""Pick the rule translator for (source language, target) from xlate/data/translators.yaml."""

from __future__ import annotations

import importlib

from xlate.errors import InputError
from xlate.resources import data
from xlate.translate.base import Translator


def rule_translator(source_language: str, target: str) -> Translator:
    table: dict[str, dict[str, str]] = data("translators.yaml")
    ref = table.get(source_language, {}).get(target)
    if ref is None:
        pairs = ", ".join(f"{s}->{t}" for s, ts in table.items() for t in ts)
        raise InputError(f"xlate: error: no rule translator from {source_language} to {target} (available: {pairs})")
    module, cls = ref.split(":")
    return getattr(importlib.import_module(module), cls)()
