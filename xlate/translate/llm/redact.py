"""Keep secrets out of prompts, attempt records, caches and reports: the values of environment variables whose
names look like credentials are replaced wherever they would appear."""

from __future__ import annotations

import os
import re
from typing import Any

SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH", re.I)
MIN_LENGTH = 6  # shorter values ("1", "true") would redact ordinary text


def secret_values(extra_names: tuple[str, ...] = ()) -> list[str]:
    values = {v for k, v in os.environ.items() if (SECRET_NAME.search(k) or k in extra_names) and len(v) >= MIN_LENGTH}
    return sorted(values, key=len, reverse=True)  # longest first: a key containing another is replaced whole


def redact(text: str, extra_names: tuple[str, ...] = ()) -> str:
    for value in secret_values(extra_names):
        if value in text:
            text = text.replace(value, "[redacted]")
    return text


def redact_obj(obj: Any, extra_names: tuple[str, ...] = ()) -> Any:
    if isinstance(obj, str):
        return redact(obj, extra_names)
    if isinstance(obj, dict):
        return {k: redact_obj(v, extra_names) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [redact_obj(v, extra_names) for v in obj]
    return obj
