"""The data files of the AscendC translator (data/*.yaml), loaded once."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from xlate.resources import load_yaml

DATA = Path(__file__).parent / "data"


@functools.cache
def table(name: str) -> dict[str, Any]:
    return load_yaml(DATA / f"{name}.yaml")


def ops() -> dict[str, Any]:
    return table("ops")


def tiling_policy() -> dict[str, Any]:
    return table("tiling")


