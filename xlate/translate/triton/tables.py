"""The lifter's data tables (xlate/data/triton/*.yaml), loaded once. C types are not here: they come
from the one table through xlate.cir.ctype."""

from __future__ import annotations

import functools
from typing import Any

from xlate.resources import data


@functools.cache
def math_table() -> dict[str, Any]:
    return data("triton/math.yaml")


@functools.cache
def constants_table() -> dict[str, list[Any]]:
    return data("triton/constants.yaml")


@functools.cache
def intrinsics_table() -> dict[str, dict[str, str]]:
    return data("triton/intrinsics.yaml")


def intrinsic_lowering(name: str) -> str | None:
    """barrier | none | shuffle | refuse for a CUDA intrinsic (by its category in xlate/data/cuda_intrinsics.yaml,
    or by name where maps/intrinsics.yaml says so); None for any other call."""
    from xlate.parse.cfamily import intrinsic_categories

    table = intrinsics_table()
    if name in table["names"]:
        return table["names"][name]
    category = intrinsic_categories().get(name)
    return table["categories"].get(category) if category else None


def named_constant(name: str) -> tuple[str, float | int] | None:
    entry = constants_table().get(name)
    if entry is None:
        return None
    ctype, value = entry
    if isinstance(value, str):
        value = float(value)
    return ctype, value


def math_entry(name: str) -> dict[str, Any] | None:
    # std::sqrt, ::fmaf and cuda::std::max are the same functions as sqrt, fmaf and max
    return math_table()["functions"].get(name.removeprefix("cuda::").removeprefix("std::").removeprefix("::"))


def vector_entry(name: str) -> dict[str, Any] | None:
    return math_table()["vectors"].get(name)


def atomic_entry(name: str) -> dict[str, Any] | None:
    return math_table()["atomics"].get(name)


def helper_source(name: str) -> str:
    return math_table()["helpers"][name]
