"""The data files of the AscendC translator (xlate/data/ascendc/*.yaml), loaded once."""

from __future__ import annotations

from typing import Any

from xlate.backends.ascendc_soc import tiling_policy
from xlate.resources import data

__all__ = ["ops", "tiling_policy"]


def ops() -> dict[str, Any]:
    return data("ascendc/ops.yaml")


