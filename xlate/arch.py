"""Architecture specs (templates/arch/*.yaml): warp/wavefront size, memories, limits, with their sources."""

from __future__ import annotations

import functools
from typing import Any

from xlate.errors import InputError
from xlate.resources import load_yaml, templates_dir
from xlate.targets import all_targets


@functools.cache
def all_specs() -> dict[str, dict[str, Any]]:
    specs = {}
    for path in sorted((templates_dir() / "arch").glob("*.yaml")):
        spec = load_yaml(path)
        if isinstance(spec, dict) and "name" in spec:
            specs[path.stem] = spec
    return specs


def find_arch(name: str) -> dict[str, Any]:
    """A spec by file stem, name, alias or compiler target (case-insensitive)."""
    key = name.lower()
    for stem, spec in all_specs().items():
        names = {stem, str(spec.get("name", "")).lower()} | {str(a).lower() for a in spec.get("aliases", [])}
        if key in names and key != str(spec.get("target", "")).lower():
            return spec
    # A bare compiler target several chips share (sm_90, gfx90a): the file marked default_for_target.
    by_target = [s for s in all_specs().values() if str(s.get("target", "")).lower() == key]
    if by_target:
        return next((s for s in by_target if s.get("default_for_target")), by_target[0])
    known = ", ".join(sorted(all_specs()))
    raise InputError(f"xlate: error: unknown --arch '{name}' (known: {known}; or a compiler target like gfx90a, sm_90)")


def default_arch(backend: str) -> dict[str, Any] | None:
    """The spec a target assumes without --arch (its `default_arch` in data/targets.yaml)."""
    known = all_targets().get(backend)
    return all_specs().get(known.default_arch) if known and known.default_arch else None


def wavefront_size(arch: str | None, backend: str = "hip") -> int:
    """Warp/wavefront width for a target; gfx9 (CDNA/GCN) is 64, gfx10+ (RDNA) 32, NVIDIA 32."""
    if arch is None:
        spec = default_arch(backend)
        return int(spec.get("warp_size", 64 if backend == "hip" else 32)) if spec else (64 if backend == "hip" else 32)
    try:
        return int(find_arch(arch).get("warp_size", 32))
    except InputError:
        a = arch.lower()
        if a.startswith("gfx9"):
            return 64
        if a.startswith(("gfx10", "gfx11", "gfx12", "sm_")):
            return 32
        raise


def compiler_target(arch: str | None, backend: str) -> str | None:
    if arch is None:
        spec = default_arch(backend)
        return spec.get("target") if spec else None
    try:
        return find_arch(arch).get("target", arch)
    except InputError:
        if arch.lower().startswith(("gfx", "sm_")):
            return arch.lower()
        raise
