"""The lifter's data tables (xlate/translate/triton/maps/*.yaml), loaded once."""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

from xlate.resources import load_yaml

MAPS = Path(__file__).parent / "maps"


@functools.cache
def types_table() -> dict[str, Any]:
    return load_yaml(MAPS / "types.yaml")


@functools.cache
def math_table() -> dict[str, Any]:
    return load_yaml(MAPS / "math.yaml")


@functools.cache
def diagnostics_table() -> dict[str, dict[str, Any]]:
    return load_yaml(MAPS / "diagnostics.yaml")


QUALIFIERS = re.compile(r"\b(const|volatile|__restrict__|__restrict|restrict|struct|__device__|__shared__|static|"
                        r"register|inline|__forceinline__)\b")


def canonical_type(spelling: str) -> str:
    """'unsigned' -> 'unsigned int', 'uint32_t' -> 'unsigned int', 'half' -> '__half'; other names unchanged."""
    t = " ".join(QUALIFIERS.sub(" ", spelling).split())
    t = t.replace("cuda::std::", "").replace("std::", "")
    aliases = types_table()["aliases"]
    return aliases.get(t, t)


def scalar_info(ctype: str) -> dict[str, Any] | None:
    return types_table()["types"].get(ctype)


def vector_info(ctype: str) -> dict[str, Any] | None:
    return types_table()["vectors"].get(ctype)


def tl_dtype(ctype: str) -> str | None:
    info = scalar_info(ctype)
    return info["tl"] if info else None


def named_constant(name: str) -> tuple[str, float | int] | None:
    entry = types_table()["constants"].get(name)
    if entry is None:
        return None
    ctype, value = entry
    if isinstance(value, str):
        value = float(value)
    return ctype, value


def math_entry(name: str) -> dict[str, Any] | None:
    # std::sqrt, ::fmaf and cuda::std::max are the same functions as sqrt, fmaf and max
    return math_table()["functions"].get(name.removeprefix("cuda::").removeprefix("std::").removeprefix("::"))


def atomic_entry(name: str) -> dict[str, Any] | None:
    return math_table()["atomics"].get(name)


def helper_source(name: str) -> str:
    return math_table()["helpers"][name]
