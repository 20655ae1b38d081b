"""Tile sizes from the architecture spec (templates/arch/<soc>.yaml, read by xlate.backends.ascendc_soc) and the tiling
policy (xlate/data/ascendc/tiling.yaml).

Elementwise kernels: every TQue holds BUFFER_NUM tiles (double buffering), the temporary buffer one tile per
slot; the tile is the largest multiple of one vector repeat (256 B) that fits the Unified Buffer and that one
vector instruction covers (max_repeat_times x 256 B). Row kernels hold one whole row (padded to 32 B) per tile.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from xlate.backends.ascendc_soc import SocInfo, soc_info
from xlate.parse.consteval import ctype_sizes
from xlate.translate.ascendc.tables import tiling_policy


class TilingError(Exception):
    def __init__(self, message: str, need: int = 0, capacity: int = 0):
        super().__init__(message)
        self.message = message
        self.need = need
        self.capacity = capacity


@dataclass
class Tiling:
    soc: SocInfo
    ctype: str  # AscendC element type
    elem_bytes: int
    buffer_num: int
    queues: int  # TQue objects (inputs + outputs)
    tmp_slots: int
    tile_length: int  # elements per tile (elementwise) / per padded row (rows)
    align_elems: int  # elements per 32-byte block
    repeat_elems: int  # elements per 256-byte repeat
    work_elems: int = 0  # rows: the reduction work buffer
    reduce_slots: int = 0  # rows: 32-byte result slots
    max_cols: int = 0  # rows: the longest row

    @property
    def tile_bytes(self) -> int:
        return self.tile_length * self.elem_bytes

    @property
    def buffers(self) -> list[tuple[str, int]]:
        """(what, bytes) of every TPipe::InitBuffer the templates emit, in order."""
        out = [(f"queue {i}", self.buffer_num * self.tile_bytes) for i in range(self.queues)]
        if self.tmp_slots:
            out.append(("temporaries", self.tmp_slots * self.tile_bytes))
        if self.work_elems:
            out.append(("reduction work", _round_up(self.work_elems * self.elem_bytes, self.soc.align_bytes)))
        if self.reduce_slots:
            out.append(("reduction results", self.reduce_slots * self.soc.align_bytes))
        return out

    @property
    def ub_used(self) -> int:
        return sum(b for _, b in self.buffers)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["ub_used"] = self.ub_used
        d["tile_bytes"] = self.tile_bytes
        return d


def _round_up(v: int, m: int) -> int:
    return -(-v // m) * m


def _elem_bytes(ctype: str) -> int:
    size = ctype_sizes().get(ctype)
    if size is None:
        raise TilingError(f"unknown element type '{ctype}'")
    return size


def elementwise_tiling(soc: str | None, ctype: str, queues: int, tmp_slots: int) -> Tiling:
    info = soc_info(soc)
    eb = _elem_bytes(ctype)
    buffer_num = int(tiling_policy()["buffer_num"])
    repeat = info.repeat_bytes // eb
    per_elem = (queues * buffer_num + tmp_slots) * eb
    tile = info.ub_usable // per_elem
    tile = min(tile, info.max_repeat * repeat)  # one vector instruction per operation per tile
    tile = tile // repeat * repeat
    if tile < repeat:
        raise TilingError(f"{queues} queues x {buffer_num} buffers and {tmp_slots} temporaries do not fit one "
                          f"{info.repeat_bytes}-byte repeat each into the {info.ub_bytes}-byte UB of {info.name}",
                          per_elem * repeat, info.ub_usable)
    return Tiling(info, ctype, eb, buffer_num, queues, tmp_slots, tile, info.align_bytes // eb, repeat)


def reduce_work_elems(count: int, elem_bytes: int, repeat_bytes: int, align_bytes: int) -> int:
    """Work-buffer elements for level-2 ReduceMax/ReduceSum over `count` elements.

    The asc-devkit ReduceSum reference sizes the work space by the first pass: one partial per 256-byte repeat,
    rounded up to a 32-byte block (its example: 8320 half -> 65 repeats -> 80 elements). ReduceMax with an index
    keeps value and index per repeat, so two per repeat are reserved for either.
    """
    per_repeat = repeat_bytes // elem_bytes
    per_block = align_bytes // elem_bytes
    return _round_up(2 * -(-count // per_repeat), per_block)


def rows_tiling(soc: str | None, ctype: str, queues: int, tmp_slots: int, max_cols: int, reduce_slots: int) -> Tiling:
    info = soc_info(soc)
    eb = _elem_bytes(ctype)
    buffer_num = int(tiling_policy()["buffer_num"])
    align = info.align_bytes // eb
    row = _round_up(max(1, max_cols), align)
    work = reduce_work_elems(row, eb, info.repeat_bytes, info.align_bytes) if reduce_slots else 0
    t = Tiling(info, ctype, eb, buffer_num, queues, tmp_slots, row, align, info.repeat_bytes // eb, work, reduce_slots,
               max_cols)
    if max_cols * eb > info.max_block_len:
        raise TilingError(f"a row of {max_cols} x {ctype} is longer than one DataCopyPad block "
                          f"({info.max_block_len} bytes)", t.ub_used, info.ub_usable)
    if t.ub_used > info.ub_usable:
        raise TilingError(f"a row of {max_cols} x {ctype} with its buffers does not fit the UB of {info.name}",
                          t.ub_used, info.ub_usable)
    return t
