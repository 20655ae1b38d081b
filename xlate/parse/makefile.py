"""A Makefile read as make reads it with its own defaults: the one reader behind the compile route's flags
(xlate.parse.buildflags) and inference's macro table (xlate.parse.ppscan), their policies as parameters.

Read: variables (`=`, `:=`/`::=`, `?=`, `+=`, with `override`/`export`), `$(VAR)`/`${VAR}`/`$V` references,
backslash continuations, comments, and `ifeq`/`ifneq`/`ifdef`/`ifndef` ... `else [ifeq ...]` ... `endif` decided
with the Makefile's defaults. As in make, an unset variable is empty: `ifeq ($(DEBUG),yes)` with no DEBUG is not
taken, and its `else` is. A variable given only on make's command line is not known here, so the defaults are
what a plain `make` builds. A condition that needs a make function (`$(shell ...)`, `$(findstring ...)`) cannot be
decided; `undecided` says what its branches become:
- "drop": left out. The compile route's choice: a flag we are unsure of must not break a build that compiles
  without it.
- "keep": read as if taken. Inference's choice: a macro the program may be built with is never lost (the macro
  table marks what it cannot decide by itself).
Lines in a rule's recipe (tab-led lines after `target: ...`) are shell commands: they assign nothing, but the
`-D` flags written on them reach the compiler as much as those in a flags variable do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

Undecided = Literal["drop", "keep"]

ASSIGN = re.compile(r"^(?:override\s+|export\s+)?([A-Za-z_][\w.]*)\s*(::=|[:?+]?=)\s*(.*?)\s*$")
REF = re.compile(r"\$[({]([A-Za-z_][\w.]*)[)}]|\$([A-Za-z_])")
FUNCTION = re.compile(r"\$[({]")  # what is left of a reference after expansion: a make function call
COND = re.compile(r"^(?:(else)\s+)?(ifeq|ifneq|ifdef|ifndef)\b\s*(.*)$|^(else|endif)\b")
# `-DNAME` or `-DNAME=VALUE` anywhere on a line; a value may hold `$(VAR)` references (expanded later)
DEFINE_FLAG = re.compile(r"(?<![\w$])-D([A-Za-z_]\w*)(?:=((?:\$[({][^)}\s]*[)}]|[^\s'\")$])+))?")


@dataclass(frozen=True)
class DefineFlag:
    name: str
    value: str | None  # as written, references unexpanded; None: `-DNAME` (nvcc defines it as 1)
    line: int  # 1-based line of the Makefile


@dataclass
class MakeRead:
    """What a plain `make` sees of a Makefile: its variables and its live lines (those its conditions keep)."""

    variables: dict[str, str] = field(default_factory=dict)  # `:=` values expanded when assigned, `=` as written
    lines: list[tuple[int, str]] = field(default_factory=list)  # (1-based line, text) of every live line

    def expand(self, text: str, *, keep_unset: bool = False, depth: int = 0) -> str:
        """`text` with its variable references expanded. An unset variable is empty, as in make; with
        `keep_unset` its reference stays (a value it sets may come from make's command line, so a flag built
        from it is not known here). A make function call stays in place either way (its `$(` tells)."""
        if depth > 10 or "$" not in text:
            return text

        def sub(m: re.Match[str]) -> str:
            name = m.group(1) or m.group(2)
            if name not in self.variables:
                return m.group(0) if keep_unset else ""
            return self.expand(self.variables[name], keep_unset=keep_unset, depth=depth + 1)

        return REF.sub(sub, text)

    def define_flags(self) -> list[DefineFlag]:
        """Every `-D` flag written on a live line, in file order (flags variables, rules' recipes, anywhere)."""
        return [DefineFlag(m.group(1), m.group(2), line) for line, text in self.lines
                for m in DEFINE_FLAG.finditer(text)]


def read_makefile(text: str, undecided: Undecided) -> MakeRead:
    """Read `text` as make would with its defaults; `undecided` as the module's docstring says."""
    read = MakeRead()
    stack: list[list[bool | None]] = []  # per open conditional: [this branch taken?, an earlier branch taken?]
    recipe = False
    raw = text.split("\n")
    i = 0
    while i < len(raw):
        start, line = i + 1, raw[i]
        i += 1
        while line.endswith("\\") and i < len(raw):
            line = line[:-1] + " " + raw[i]
            i += 1
        if line.startswith("\t") and recipe:
            if _live(stack, undecided):
                read.lines.append((start, line))
            continue
        s = line.split("#", 1)[0].strip()
        if not s:
            continue
        recipe = False
        cond = COND.match(s)
        if cond is not None:
            _conditional(stack, cond, read)
            continue
        if not _live(stack, undecided):
            continue
        read.lines.append((start, s))
        m = ASSIGN.match(s)
        if m is None:
            recipe = ":" in s  # `target: prerequisites`: the tab-led lines after it are its recipe
            continue
        name, op, value = m.groups()
        if op == "?=" and name in read.variables:
            continue
        if op in (":=", "::="):
            value = read.expand(value, keep_unset=True)  # a command-line variable may still set it
        read.variables[name] = f"{read.variables[name]} {value}" if op == "+=" and name in read.variables else value
    return read


def _live(stack: list[list[bool | None]], undecided: Undecided) -> bool:
    return all(taken is True or (taken is None and undecided == "keep") for taken, _ in stack)


def _conditional(stack: list[list[bool | None]], m: re.Match[str], read: MakeRead) -> None:
    """Open, switch or close a conditional. A branch is True (taken), False, or None (cannot tell); an `else`
    is taken when no earlier branch was, unknown when an earlier one may have been."""
    if m.group(4) == "endif":
        if stack:
            stack.pop()
        return
    if m.group(4) == "else" or m.group(1):
        if not stack:
            return
        frame = stack[-1]
        earlier = frame[1]
        test = _test(m.group(2), m.group(3), read) if m.group(2) else True
        if earlier is True or test is False:
            frame[0] = False
        elif earlier is False:
            frame[0] = test
        else:  # an earlier branch may have been taken
            frame[0] = None
        if earlier is not True:
            frame[1] = True if frame[0] is True else (None if None in (earlier, frame[0]) else False)
        return
    test = _test(m.group(2), m.group(3), read)
    stack.append([test, test])


def _test(kind: str, args: str, read: MakeRead) -> bool | None:
    """An `ifeq`/`ifneq`/`ifdef`/`ifndef` test's value; None where it needs a make function."""
    args = args.strip()
    if kind in ("ifdef", "ifndef"):
        if not re.fullmatch(r"[A-Za-z_][\w.]*", args):
            return None
        return bool(read.expand(read.variables.get(args, "")).strip()) == (kind == "ifdef")
    if args.startswith("(") and args.endswith(")") and args.count(",") == 1:
        a, b = args[1:-1].split(",")
    else:
        quoted = re.findall(r"'([^']*)'|\"([^\"]*)\"", args)
        if len(quoted) != 2:
            return None
        a, b = (x or y for x, y in quoted)
    ea, eb = read.expand(a).strip(), read.expand(b).strip()
    if FUNCTION.search(ea + eb):
        return None
    return (ea == eb) == (kind == "ifeq")
