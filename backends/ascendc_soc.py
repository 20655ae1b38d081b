"""The facts about an Ascend SoC that AscendC code depends on (Unified Buffer, alignment, vector repeats, cores,
DataCopy features): from its architecture spec (templates/arch/<soc>.yaml) and the tiling policy
(xlate/data/ascendc/tiling.yaml). Shared by the static checker (ascendc_check.py) and the AscendC translator."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from xlate.arch import all_specs, find_arch
from xlate.errors import InputError
from xlate.resources import data


@functools.cache
def tiling_policy() -> dict[str, Any]:
    return data("ascendc/tiling.yaml")


@dataclass
class SocInfo:
    name: str  # spec name, e.g. "Ascend 910B"
    soc_version: str  # e.g. Ascend910B2
    target: str  # --cce-aicore-arch family, e.g. dav-c220
    npu_arch: str  # --npu-arch number, e.g. 2201
    core_layout: str
    ub_bytes: int
    align_bytes: int
    repeat_bytes: int
    max_repeat: int
    cores: int  # cores that run the vector code
    datacopy_pad: bool
    max_block_len: int

    @property
    def ub_usable(self) -> int:
        return self.ub_bytes - int(tiling_policy()["ub_reserve_bytes"])


def soc_info(soc: str | None) -> SocInfo:
    spec = find_arch(soc or "ascend910b")
    if spec.get("backend") != "ascendc":
        known = ", ".join(stem for stem, sp in all_specs().items() if sp.get("backend") == "ascendc")
        raise InputError(f"xlate: error: --arch '{soc}' is not an Ascend SoC (templates/arch gives it to the "
                         f"{spec.get('backend')} backend); AscendC targets: {known}")
    policy = tiling_policy()
    missing = [k for k in ("unified_buffer_bytes", "datacopy_alignment_bytes", "vector_repeat_bytes", "max_repeat_times")
               if k not in spec]
    if missing:
        raise InputError(f"xlate: error: the arch spec of {spec['name']} lacks {', '.join(missing)}")
    layout = str(spec.get("core_layout", "split"))
    core_field = policy["vector_core_field"].get(layout, "vector_cores")
    features = policy["features"].get(spec["name"], policy["default_features"])
    return SocInfo(
        name=spec["name"], soc_version=str(spec.get("soc_version", spec["name"])), target=str(spec.get("target", "")),
        npu_arch=str(spec.get("npu_arch", "")), core_layout=layout, ub_bytes=int(spec["unified_buffer_bytes"]),
        align_bytes=int(spec["datacopy_alignment_bytes"]), repeat_bytes=int(spec["vector_repeat_bytes"]),
        max_repeat=int(spec["max_repeat_times"]), cores=int(spec.get(core_field) or spec.get("vector_cores") or 1),
        datacopy_pad=bool(features.get("datacopy_pad", False)),
        max_block_len=int(spec.get("datacopy_max_block_len", policy["max_row_bytes"])),
    )
