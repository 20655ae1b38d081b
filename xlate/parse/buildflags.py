"""The -D and -I flags a program's Makefile gives the compiler: what nvcc sees and NVRTC would not.

The Makefile is read by xlate.parse.makefile (make's variables and conditionals with the Makefile's own defaults:
`DEBUG = no` leaves the `ifeq ($(DEBUG),yes)` block out); only the compiler flag variables count here. Anything
it cannot evaluate (a shell call, a variable given only on make's command line) is left out rather than guessed.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
from dataclasses import dataclass

from xlate.parse.makefile import read_makefile

MAKEFILES = ("Makefile", "makefile", "GNUmakefile")
FLAG_VARS = ("CFLAGS", "CXXFLAGS", "CPPFLAGS", "NVCCFLAGS", "CUDAFLAGS", "CUFLAGS", "NVFLAGS")


@dataclass(frozen=True)
class BuildFlags:
    defines: tuple[tuple[str, str], ...] = ()  # (name, value): `-DN` is ("N", "1"), as nvcc has it
    include_dirs: tuple[str, ...] = ()  # absolute

    def preamble(self) -> str:
        """`#define` lines for the defines (line-preserving use: put a `#line` after them)."""
        return "".join(f"#define {n} {v}\n" for n, v in self.defines)


def makefile_near(path: str, levels: int = 2) -> str | None:
    """The Makefile of the directory of `path`, or of one of its `levels` parents (a program whose sources sit
    in src/ and whose Makefile beside them or above)."""
    d = os.path.dirname(os.path.abspath(path))
    for _ in range(levels + 1):
        for name in MAKEFILES:
            f = os.path.join(d, name)
            if os.path.isfile(f):
                return f
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return None


def build_flags(path: str) -> BuildFlags:
    """The -D/-I flags that the Makefile nearest to the source `path` compiles it with (none without one)."""
    mk = makefile_near(path)
    if mk is None:
        return BuildFlags()
    try:
        mtime = os.stat(mk).st_mtime_ns
    except OSError:
        return BuildFlags()
    return _flags_of(mk, mtime)


@functools.lru_cache(maxsize=64)
def _flags_of(makefile: str, _mtime: int) -> BuildFlags:
    try:
        with open(makefile, encoding="utf-8", errors="replace") as fh:
            text = fh.read(200000)
    except OSError:
        return BuildFlags()
    return parse_makefile(text, os.path.dirname(makefile))


def parse_makefile(text: str, folder: str) -> BuildFlags:
    """The -D/-I flags of the compiler flag variables of a Makefile's text; -I dirs resolved against `folder`.
    A conditional block that cannot be decided is left out (xlate.parse.makefile's "drop")."""
    read = read_makefile(text.replace("\r\n", "\n"), "drop")
    env = read.variables
    defines: dict[str, str] = {}
    dirs: list[str] = []
    for var in FLAG_VARS:
        if var not in env:
            continue
        flags = read.expand(env[var], keep_unset=True)
        try:
            tokens = shlex.split(flags)
        except ValueError:
            tokens = flags.split()
        i = 0
        while i < len(tokens):
            tok = tokens[i]
            if tok in ("-D", "-I") and i + 1 < len(tokens):  # `-D NAME`, `-I dir`
                tok = tok + tokens[i + 1]
                i += 1
            i += 1
            if "$" in tok or "`" in tok:
                continue  # a variable given on the command line, a shell call: not known here
            if tok.startswith("-D") and len(tok) > 2:
                name, _, value = tok[2:].partition("=")
                if re.fullmatch(r"[A-Za-z_]\w*", name):
                    defines.setdefault(name, value if "=" in tok else "1")
            elif tok.startswith("-I") and len(tok) > 2:
                d = os.path.normpath(os.path.join(folder, tok[2:]))
                if os.path.isdir(d) and d not in dirs:
                    dirs.append(d)
    return BuildFlags(tuple(defines.items()), tuple(dirs))
