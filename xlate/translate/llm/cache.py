"""Completions on disk, keyed by (model, prompt hash, temperature): re-runs and CI replay them for free."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from xlate.fsutil import atomic_write_text
from xlate.resources import cache_dir


def cache_key(model: str, prompt_hash: str, temperature: float) -> str:
    return hashlib.sha256(json.dumps([model, prompt_hash, float(temperature)]).encode()).hexdigest()


class CompletionCache:
    def __init__(self, root: Path | None = None):
        self.root = root or cache_dir() / "llm"

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, model: str, prompt_hash: str, temperature: float) -> dict[str, Any] | None:
        path = self._path(cache_key(model, prompt_hash, temperature))
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return None  # absent or damaged: ask again
        ok = isinstance(entry, dict) and isinstance(entry.get("content"), str)
        return entry if ok and entry.get("prompt_hash") == prompt_hash else None

    def put(self, model: str, prompt_hash: str, temperature: float, entry: dict[str, Any]) -> None:
        record = {"model": model, "prompt_hash": prompt_hash, "temperature": float(temperature), **entry}
        atomic_write_text(self._path(cache_key(model, prompt_hash, temperature)), json.dumps(record, indent=1))
