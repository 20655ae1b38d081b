"""The -D and -I flags a program's Makefile gives the compiler: what nvcc sees and NVRTC would not.

A small reading of make's language, enough for the flag lines of ordinary Makefiles: variables (`=`, `:=`, `?=`,
`+=`), `$(VAR)`/`${VAR}` expansion, and `ifeq`/`ifneq`/`ifdef`/`ifndef` ... `else` ... `endif` taken with the
Makefile's own defaults (`DEBUG = no` leaves the `ifeq ($(DEBUG),yes)` block out). Anything it cannot evaluate
(a shell call, a variable given only on the command line) is left out rather than guessed.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
from dataclasses import dataclass

MAKEFILES = ("Makefile", "makefile", "GNUmakefile")
FLAG_VARS = ("CFLAGS", "CXXFLAGS", "CPPFLAGS", "NVCCFLAGS", "CUDAFLAGS", "CUFLAGS", "NVFLAGS")
ASSIGN = re.compile(r"^(?:override\s+|export\s+)?([A-Za-z_][\w.]*)\s*([:?+]?=|::=)\s*(.*)$")
REF = re.compile(r"\$[({]([A-Za-z_][\w.]*)[)}]|\$([A-Za-z_])")
COND = re.compile(r"^(ifeq|ifneq)\s*(.*)$|^(ifdef|ifndef)\s+(\S+)\s*$")


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


def _expand(value: str, env: dict[str, str], depth: int = 0) -> str:
    if depth > 10 or "$" not in value:
        return value

    def sub(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2)
        return _expand(env[name], env, depth + 1) if name in env else m.group(0)

    return REF.sub(sub, value)


def _cond_true(line: str, env: dict[str, str]) -> bool | None:
    """An `ifeq`/`ifneq`/`ifdef`/`ifndef` line's value under `env`; None: cannot tell (a reference unset here)."""
    m = COND.match(line)
    if m is None:
        return None
    if m.group(3):
        defined = bool(env.get(m.group(4), ""))
        return defined if m.group(3) == "ifdef" else not defined
    args = m.group(2).strip()
    pair = re.match(r"^\((.*),(.*)\)$", args) or re.match(r"""^["'](.*)["']\s+["'](.*)["']$""", args)
    if pair is None:
        return None
    a, b = (_expand(x.strip(), env) for x in pair.groups())
    if "$" in a + b:
        return None
    same = a == b
    return same if m.group(1) == "ifeq" else not same


def parse_makefile(text: str, folder: str) -> BuildFlags:
    """The -D/-I flags of the compiler flag variables of a Makefile's text; -I dirs resolved against `folder`."""
    text = text.replace("\\\r\n", " ").replace("\\\n", " ")
    env: dict[str, str] = {}
    stack: list[tuple[bool, bool]] = []  # (this branch taken, the enclosing branch taken)
    recipe = False  # inside a rule's recipe: tab-led lines are shell commands, not make's
    for raw in text.splitlines():
        if raw.startswith("\t") and recipe:
            continue
        s = raw.split("#", 1)[0].strip()
        if not s:
            continue
        recipe = False
        live = all(t for t, _ in stack)
        if COND.match(s):
            value = _cond_true(s, env) if live else False
            stack.append((bool(value), live))  # undecidable: the block is left out
            continue
        if s.startswith("else") and stack:
            taken, outer = stack.pop()
            rest = s[4:].strip()
            if rest and COND.match(rest):  # `else ifeq (...)`
                value = not taken and outer and bool(_cond_true(rest, env))
                stack.append((value, outer and not taken))
            else:
                stack.append((not taken and outer, outer))
            continue
        if s == "endif" and stack:
            stack.pop()
            continue
        if not live:
            continue
        m = ASSIGN.match(s)
        if m is None:
            recipe = ":" in s  # `target: prerequisites`
            continue
        name, op, value = m.groups()
        if op == "?=" and name in env:
            continue
        if op in (":=", "::="):
            value = _expand(value, env)
        env[name] = f"{env[name]} {value}" if op == "+=" and name in env else value
    defines: dict[str, str] = {}
    dirs: list[str] = []
    for var in FLAG_VARS:
        if var not in env:
            continue
        flags = _expand(env[var], env)
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
