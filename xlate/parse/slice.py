"""The device slice of a file: what a device-only compiler (NVRTC, hiprtc) can build on its own.

Host function definitions and host-only includes are blanked with spaces, newlines kept, so compiler messages
about the slice point at the user's own lines and columns.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Sequence

from xlate.model import KernelUnit
from xlate.parse.bundle import bundle
from xlate.parse.source import to_bytes, to_text
from xlate.resources import data

INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"]+)[>"]', re.M)


@functools.cache
def _headers() -> dict:
    return data("device_headers.yaml")


def _blank(buf: bytearray, start: int, end: int) -> None:
    for i in range(start, end):
        if buf[i] not in (10, 13):
            buf[i] = 32


def device_slice(unit: KernelUnit, text: str, *, hip: bool = False, include_dirs: Sequence[str] = ()) -> str:
    """Return `text` with host functions and host-only includes blanked (HIP includes mapped for NVRTC), and
    the project headers it includes inlined, each sliced the same way (xlate/parse/bundle.py)."""
    out = _slice(unit, text, hip)
    if not include_dirs and not os.path.isfile(unit.path):
        return out

    def slice_header(header: str, path: str) -> str:
        from xlate.parse import parse_string

        return _slice(parse_string(header, path, unit.language), header, hip)

    return bundle(out, unit.path, include_dirs, slice_header)


def _slice(unit: KernelUnit, text: str, hip: bool) -> str:
    data_bytes = bytearray(to_bytes(text))
    for host in unit.host_functions:
        _blank(data_bytes, host.span.start_byte, host.span.end_byte)
    out = to_text(bytes(data_bytes))
    headers = _headers()
    drop = set(headers["drop"])
    replace = headers["replace_hip"] if hip else {}

    def repl(m: re.Match[str]) -> str:
        name = m.group(1)
        if name in replace:
            new = replace[name]
            line = f'#include "{new}"' if new else ""
            return line.ljust(len(m.group(0)))
        if name in drop:
            return " " * len(m.group(0))
        return m.group(0)

    return INCLUDE.sub(repl, out)
