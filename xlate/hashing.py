"""Content keys: one hash of several parts (bytes, or anything JSON can write), for caches of every layer."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def content_key(*parts: Any) -> str:
    h = hashlib.sha256()
    for part in parts:
        blob = part if isinstance(part, bytes) else json.dumps(part, sort_keys=True, default=str).encode()
        h.update(len(blob).to_bytes(8, "little"))
        h.update(blob)
    return h.hexdigest()[:32]
