"""Build files for --to hip: Makefiles and CMake lists rewritten by the rules of
xlate/data/migrate/buildfiles.yaml.

nvcc becomes hipcc; `-arch=sm_XX`, `--gpu-architecture`, `-gencode` become `--offload-arch=<gfx>` (a variable
that held `sm_60` keeps its name and gets the gfx target); nvcc-only flags are mapped or dropped (`-Xcompiler X`
passes X to hipcc as it is, `--use_fast_math` is `-ffast-math`); CUDA libraries become ROCm's; file names and
suffix patterns (`%.cu`, `$(SRC:.cu=.o)`, `*.cu`) follow the names the migration writes. CMake: the CUDA language
becomes HIP (`project(... CUDA)`, `enable_language`, `LANGUAGE CUDA`, `$<COMPILE_LANGUAGE:CUDA>`), `CUDA::*`
targets and FindCUDA variables become ROCm's targets (with their find_package), `CUDA_ARCHITECTURES` becomes
`HIP_ARCHITECTURES <gfx>`. Whatever CUDA-specific text is left on a line after the rules is listed for a person,
line by line, with a suggestion (`manual`). Comments are never rewritten."""

from __future__ import annotations

import functools
import posixpath
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from xlate.resources import data

SEP = re.compile(r"(\\\n[ \t]*|[ \t\n]+)")


@functools.cache
def rules() -> dict[str, Any]:
    return data("migrate/buildfiles.yaml")


@dataclass
class Change:
    line: int
    old: str
    new: str


@dataclass
class Manual:
    line: int
    text: str
    suggestion: str


@dataclass
class BuildContext:
    folder: str  # the build file's folder, relative to the library root ("" at the root), POSIX
    renames: dict[str, str]  # rel of every code file of the tree -> its output rel
    suffixes: dict[str, str]  # suffix renames of the migration ({".cu": ".hip", ".cuh": ".hip.h"}; {} keeps names)
    gfx: str = "gfx90a"
    roc: bool = False


@dataclass
class BuildTranslation:
    tool: str  # make | cmake
    text: str
    changes: list[Change] = field(default_factory=list)
    manual: list[Manual] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "changes": [asdict(c) for c in self.changes], "manual": [asdict(m) for m in self.manual]}


def tool_of(rel: str) -> str:
    name = posixpath.basename(rel)
    return "cmake" if name == "CMakeLists.txt" or name.lower().endswith(".cmake") else "make"


def translate(text: str, rel: str, ctx: BuildContext) -> BuildTranslation:
    tool = tool_of(rel)
    return _Make(ctx).run(text) if tool == "make" else _CMake(ctx).run(text)


# -- words shared by both tools ----------------------------------------------------------------------------------


def _valued() -> dict[str, str]:
    """flag -> its class (arch, gencode, code, host, drop, default_stream, language)."""
    return {flag: cls for cls, flags in rules()["valued"].items() for flag in flags}


class _Words:
    """Rewrites the words of one line of build text (separators kept): compilers, nvcc flags, libraries, paths,
    file names. `arch_vars` are the make variables used as `-arch=$(VAR)`."""

    def __init__(self, ctx: BuildContext) -> None:
        self.ctx = ctx
        self.valued = _valued()
        self.flags: dict[str, list[str]] = rules()["flags"]
        self.libs: dict[str, dict[str, str | None]] = rules()["libraries"]
        self.prefix = re.compile(rules()["paths"]["prefix"])
        self.arch_vars: set[str] = set()
        order = sorted(ctx.suffixes, key=len, reverse=True)
        self.suffix_re = re.compile(r"[\w./+%*$(){}-]*(?:" + "|".join(re.escape(s) for s in order) + r")(?![\w])") if order else None

    # one word -> replacement words ([] drops it)
    def word(self, w: str) -> list[str]:
        if not w:
            return [w]
        lead, core, trail = _wrapped(w)
        new = self._core(core)
        if new is None:
            return [w]
        if not new:
            return [lead + trail] if lead or trail else []
        return [lead + new[0], *new[1:-1], new[-1] + trail] if len(new) > 1 else [lead + new[0] + trail]

    def _core(self, w: str) -> list[str] | None:
        compilers = rules()["compilers"]
        head, eq, tail = ("", "", w) if w.startswith("-") else w.rpartition("=")
        base = re.split(r"[/)}]", tail)[-1]
        if base in compilers and tail:
            return [head + eq + compilers[base]]
        if w in self.flags:
            return list(self.flags[w])
        if w.startswith("-l") and len(w) > 2:
            entry = self.libs.get(w[2:])
            if entry is not None:
                new = entry.get("roc" if self.ctx.roc else "hip")
                return [f"-l{new}"] if new else []
        w = self._embedded_flags(self._paths(w))
        return [self._names(w)]

    def _embedded_flags(self, w: str) -> str:
        """Flags inside a generator expression or a list ($<$<COMPILE_LANGUAGE:HIP>:--use_fast_math>)."""
        if ":" not in w and ";" not in w:
            return w
        for flag, repl in self.flags.items():
            w = re.sub(rf"(?<=[:;]){re.escape(flag)}(?=[>;]|$)", " ".join(repl), w)
        return w

    def _paths(self, w: str) -> str:
        rocm = rules()["paths"]["rocm"]
        new = self.prefix.sub(rocm, w)
        if new != w or re.search(r"\$[({]CUDA\w*[)}]", w):
            new = re.sub(r"(?<=[/)}])lib64\b", "lib", new)
        return new

    def _names(self, w: str) -> str:
        """Project file names and suffix patterns, as the migration names its outputs."""
        if self.suffix_re is None:
            return w

        def one(m: re.Match[str]) -> str:
            path = m.group(0)
            plain = path.lstrip("./") if not path.startswith("../") else path
            if not re.search(r"[%*$(){}]", path):
                rel = posixpath.normpath(posixpath.join(self.ctx.folder, plain))
                if rel in self.ctx.renames:
                    new_base = posixpath.basename(self.ctx.renames[rel])
                    return path[: len(path) - len(posixpath.basename(path))] + new_base
            for old in sorted(self.ctx.suffixes, key=len, reverse=True):
                if path.endswith(old):
                    return path[: -len(old)] + self.ctx.suffixes[old]
            return path

        return self.suffix_re.sub(one, w)

    def arch_value(self, value: str) -> str:
        m = re.fullmatch(r"\$[({](\w+)[)}]", value)
        if m:
            self.arch_vars.add(m.group(1))
            return value
        return self.ctx.gfx

    def line(self, text: str) -> str:
        """Rewrite every word of `text` (one logical line, continuations included)."""
        parts = SEP.split(text)
        words = parts[0::2]
        out: list[list[str]] = []
        i = 0
        seen_arch = False
        while i < len(words):
            lead, w, trail = _wrapped(words[i])
            if words[i].count('"') % 2 == 0:  # quotes of its own (code=\"sm_80,compute_80\"): they go with it
                lead, trail = lead.replace('"', ""), trail.replace('"', "")
            flag, eq, value = w.partition("=")
            cls = self.valued.get(flag) if w.startswith("-") else None
            if cls is None or (cls == "language" and eq):
                out.append(self.word(words[i]))
                i += 1
                continue
            j = i
            if not eq:  # the value is the next word
                j = i + 1
                while j < len(words) and not words[j]:
                    j += 1
                if j >= len(words):
                    out.append(self.word(words[i]))
                    i += 1
                    continue
                _, value, trail = _wrapped(words[j])
            if cls == "language" and value not in ("cu", "cuda"):
                out.append([words[i]])
                i += 1
                continue
            new = self._valued(cls, value, seen_arch)
            seen_arch = seen_arch or cls in ("gencode", "arch")
            if new:
                new = [lead + new[0], *new[1:]]
                new[-1] += trail
            elif lead or trail:
                new = [lead + trail]
            out.append(new)
            out.extend([[""] if not words[k] else [] for k in range(i + 1, j + 1)])
            i = j + 1
        return _tidy(_join(parts, out))

    def _valued(self, cls: str, value: str, seen_gencode: bool) -> list[str]:
        if cls == "arch":
            return [f"--offload-arch={self.arch_value(value)}"]
        if cls == "gencode":
            return [] if seen_gencode else [f"--offload-arch={self.ctx.gfx}"]
        if cls in ("code", "drop"):
            return []
        if cls == "host":
            inner = value.strip("\"'")
            return [x for x in re.split(r"[,\s]+", inner) if x]
        if cls == "default_stream":
            return ["-fgpu-default-stream=per-thread"] if "per-thread" in value else []
        if cls == "language":
            return ["-x", "hip"]
        return [value]


def _wrapped(w: str) -> tuple[str, str, str]:
    """(opening quotes and parentheses, the word, closing ones): CMake arguments are often `"-flag` or `x")`.
    Parentheses that the word itself balances ($(ARCH)) are the word's."""
    lead = re.match(r'["(]*', w).group(0)  # type: ignore[union-attr]
    trail = re.search(r'[")]*$', w).group(0)  # type: ignore[union-attr]
    core = w[len(lead): len(w) - len(trail)]
    while trail and trail[0] == ")" and core.count("(") > core.count(")"):
        core, trail = core + ")", trail[1:]
    while lead and lead[-1] == "(" and core.count(")") > core.count("("):
        core, lead = "(" + core, lead[:-1]
    return lead, core, trail


def _tidy(s: str) -> str:
    """Continuations left empty by dropped words: `a \\ \\ b` -> `a \\ b`; none at the end of the line."""
    s = re.sub(r"(\\\n[ \t]*)(?:\\\n[ \t]*)+", r"\1", s)
    return re.sub(r"[ \t]*\\\n[ \t]*$", "", s)


def _join(parts: list[str], words: list[list[str]]) -> str:
    """Put rewritten words back between the original separators; a dropped word takes its separator with it (a
    line continuation stays)."""
    seps = parts[1::2]
    s = ""
    for k, repl in enumerate(words):
        sep = seps[k] if k < len(seps) else ""
        if repl:
            s += " ".join(repl) + sep
        elif "\\\n" in sep:
            s = s.rstrip(" \t")
            s += (" " if s and not s.endswith("\n") else "") + sep.lstrip(" \t")
        elif k == len(words) - 1:
            s = s.rstrip(" \t")
    return s


def _code_and_comment(line: str, quotes: bool) -> tuple[str, str]:
    """Split a line at its comment (`#` outside quotes for CMake; any unescaped `#` for make)."""
    q = None
    for i, ch in enumerate(line):
        if quotes and ch == '"' and (i == 0 or line[i - 1] != "\\"):
            q = None if q else ch
        elif ch == "#" and q is None and (i == 0 or line[i - 1] != "\\"):
            return line[:i], line[i:]
    return line, ""


def _manual(lineno: int, code: str) -> list[Manual]:
    out = []
    seen = set()
    for rule in rules()["manual"]:
        if re.search(rule["pattern"], code) and rule["suggestion"] not in seen:
            seen.add(rule["suggestion"])
            out.append(Manual(lineno, " ".join(code.split())[:200], rule["suggestion"]))
    return out


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, text with its backslash continuations) for each logical line; the newline that ends
    it is not included."""
    out = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        start = i
        buf = lines[i]
        while buf.endswith("\\") and not buf.endswith("\\\\") and i + 1 < len(lines):
            i += 1
            buf += "\n" + lines[i]
        out.append((start + 1, buf))
        i += 1
    return out


# -- make --------------------------------------------------------------------------------------------------------

RULE = re.compile(r"^([^\s:=#][^:=]*?)\s*::?(?!=)(.*)$", re.S)  # targets: prerequisites
C_FILE = re.compile(r"(?:^|[\s%/*])[\w.+-]*\.c(?![\w.+-])")  # a C file (or %.c): not .cu, .cpp, .cc
ASSIGN = re.compile(r"^(\s*(?:export\s+|override\s+)?([A-Za-z_][\w.-]*)\s*(?:::?=|:::=|\?=|\+=|!=|=))(.*)$", re.S)
ARCH_VALUE = re.compile(r"^(?:(?:sm|compute|lto)_[0-9]+[a-z]?|[0-9]{2,3}[a-z]?|native|all|all-major)$")


class _Make:
    def __init__(self, ctx: BuildContext) -> None:
        self.words = _Words(ctx)

    def run(self, text: str) -> BuildTranslation:
        lines = _logical_lines(text)
        # The variables used as -arch=$(VAR) get the AMD target where they are assigned an NVIDIA one.
        for _, line in lines:
            code, _ = _code_and_comment(line, quotes=False)
            self.words.line(code)
        compilers = self._compiler_vars(lines)
        result = BuildTranslation("make", "")
        out = []
        c_rule = False  # the rule being read builds from C files
        arch_flags: set[str] = set()  # variables that hold --offload-arch
        for lineno, line in lines:
            code, comment = _code_and_comment(line, quotes=False)
            if not code.startswith("\t"):
                m = RULE.match(code)
                if m:
                    c_rule = bool(C_FILE.search(m.group(1)) or C_FILE.search(m.group(2)))
            new = self._assignment(code)
            if new is None:
                new = self.words.line(code)
            m = ASSIGN.match(new)
            if m and "--offload-arch" in m.group(3):
                arch_flags.add(m.group(2))
            if code.startswith("\t"):
                new = self._c_as_hip(new, compilers, c_rule)
                new = self._offload_arch(new, compilers, arch_flags)
            if new != code:
                result.changes.append(Change(lineno, code.rstrip(), new.rstrip()))
            result.manual += _manual(lineno, new)
            out.append(new + comment)
        result.text = "\n".join(out)
        return result

    def _compiler_vars(self, lines: list[tuple[int, str]]) -> set[str]:
        """Variables the Makefile assigns nvcc to (CC = nvcc, NVCC ?= /usr/local/cuda/bin/nvcc)."""
        out = set()
        for _, line in lines:
            m = ASSIGN.match(_code_and_comment(line, quotes=False)[0])
            if m and any(re.split(r"[/)}]", w)[-1] in rules()["compilers"] for w in m.group(3).split()):
                out.add(m.group(2))
        return out

    def _c_as_hip(self, recipe: str, compilers: set[str], c_rule: bool) -> str:
        """nvcc compiles a .c file with the host C compiler, which only warns about -std=c++17; clang refuses it.
        A recipe that compiles C files with the translated compiler compiles them as HIP (-x hip), as the HIP
        ports people write do."""
        words = recipe.split()
        if not words or "-c" not in words or "-x" in words or not (c_rule or C_FILE.search(recipe)):
            return recipe
        first = words[0]
        var = re.fullmatch(r"\$[({](\w+)[)}]", first)
        if not (first in rules()["compilers"].values() or (var and var.group(1) in compilers)):
            return recipe
        at = recipe.index(first) + len(first)
        return recipe[:at] + " -x hip" + recipe[at:]

    def _offload_arch(self, recipe: str, compilers: set[str], arch_flags: set[str]) -> str:
        """nvcc compiles for a default architecture; hipcc without --offload-arch asks the machine's GPU (and fails
        without one): a compile recipe of the translated compiler that names no target gets the AMD target."""
        words = recipe.split()
        if not words or "-c" not in words or "--offload-arch" in recipe:
            return recipe
        if any(f"$({v})" in recipe or f"${{{v}}}" in recipe for v in arch_flags):
            return recipe
        first = words[0]
        var = re.fullmatch(r"\$[({](\w+)[)}]", first)
        if not (first in rules()["compilers"].values() or (var and var.group(1) in compilers)):
            return recipe
        at = recipe.index(first) + len(first)
        return recipe[:at] + f" --offload-arch={self.words.ctx.gfx}" + recipe[at:]

    def _assignment(self, code: str) -> str | None:
        m = ASSIGN.match(code)
        if not m or m.group(2) not in self.words.arch_vars:
            return None
        values = [v for v in m.group(3).split() if v != "\\"]
        if not values or not all(ARCH_VALUE.match(v) for v in values):
            return None
        lead = re.match(r"\s*", m.group(3)).group(0)  # type: ignore[union-attr]
        return f"{m.group(1)}{lead}{self.words.ctx.gfx}"


# -- cmake -------------------------------------------------------------------------------------------------------

NEWLINE = "\x00"  # lines the rules add, joined to the line before until the changes are listed
COMMAND = re.compile(r"(?<![\w$])([A-Za-z_]\w*)[ \t]*\(")


def _commands(text: str) -> list[tuple[str, int, int]]:
    """(name, start of the name, end after the closing parenthesis) of each CMake command, comments and quoted
    arguments skipped."""
    out = []
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "#":
            i = text.find("\n", i)
            i = n if i < 0 else i
            continue
        m = COMMAND.match(text, i) if (ch.isalpha() or ch == "_") else None
        if m is None:
            i += 1
            continue
        depth, j, q = 1, m.end(), False
        while j < n and depth:
            c = text[j]
            if c == '"' and text[j - 1] != "\\":
                q = not q
            elif not q and c == "#":
                j = text.find("\n", j)
                j = n if j < 0 else j
                continue
            elif not q and c == "(":
                depth += 1
            elif not q and c == ")":
                depth -= 1
            j += 1
        out.append((m.group(1), m.start(), j))
        i = j
    return out


class _CMake:
    def __init__(self, ctx: BuildContext) -> None:
        self.ctx = ctx
        self.words = _Words(ctx)
        self.cm = rules()["cmake"]
        key = "roc" if ctx.roc else "hip"
        self.key = key
        self.packages: list[str] = []
        renames = dict(self.cm["words"])
        renames.update({t: v[key] for t, v in self.cm["targets"].items()})
        self.rename_re = re.compile(r"(?<![\w:])(" + "|".join(re.escape(k) for k in sorted(renames, key=len, reverse=True))
                                    + r")(?![\w:])")
        self.renames = renames
        self.var_re = re.compile(r"\$\{(" + "|".join(re.escape(v) for v in self.cm["variables"]) + r")\}")

    def _package_of(self, entry: dict[str, Any]) -> None:
        pkg = (entry.get("package") or {}).get(self.key)
        if pkg and pkg not in self.packages:
            self.packages.append(pkg)

    def run(self, text: str) -> BuildTranslation:
        for t, v in self.cm["targets"].items():
            if re.search(rf"(?<![\w:]){re.escape(t)}(?![\w:])", text):
                self._package_of(v)
        for name, v in self.cm["variables"].items():
            if "${" + name + "}" in text:
                self._package_of(v)
        new = self._commands_pass(text)
        new = self._lines_pass(new)
        if self.ctx.suffixes == {} and re.search(r"\.cu\b", _strip_comments(new)):
            body = new.rstrip("\n")
            new = body + (NEWLINE * 2) + KEEP_NAMES_BLOCK.rstrip("\n").replace("\n", NEWLINE) + new[len(body):]
        return self._result(text, new)

    def _commands_pass(self, text: str) -> str:
        """Command-level rewrites: languages, find_package, the minimum version, architecture values."""
        out = []
        last = 0
        have_hip_package = bool(re.search(r"find_package\s*\(\s*hip\b", text, re.I))
        inserted = False
        uses_hip_targets = bool(re.search(r"(?<![\w:])CUDA::\w+|\$\{CUDA_\w*LIBRAR", text))
        for name, start, end in _commands(text):
            low = name.lower()
            span = text[start:end]
            new = span
            if low in self.cm["languages"]:
                new = re.sub(r"(?<![\w$])CUDA(?![\w])", "HIP", span)
            elif low == "find_package" and re.match(r"find_package\s*\(\s*(" + "|".join(self.cm["find_packages"]) + r")\b", span):
                new = self._find_packages(span)
                inserted = True
            elif low == "cmake_minimum_required":
                new = self._min_version(span)
            new = self._arch_values(new)
            out.append(text[last:start] + new)
            last = end
            if low in ("project", "enable_language") and "HIP" in new and uses_hip_targets and not have_hip_package \
                    and not inserted and not re.search(r"find_package\s*\(\s*(CUDA|CUDAToolkit)\b", text):
                out.append(NEWLINE + self._find_packages("find_package(hip REQUIRED)"))
                inserted = True
        out.append(text[last:])
        return "".join(out)

    def _find_packages(self, span: str) -> str:
        lines = ["find_package(hip REQUIRED)"] + [f"find_package({p} REQUIRED)" for p in self.packages]
        return NEWLINE.join(lines)  # a new line once the changes are listed: line numbers stay the source's

    def _min_version(self, span: str) -> str:
        want = tuple(int(x) for x in self.cm["min_version"].split("."))

        def bump(m: re.Match[str]) -> str:
            have = tuple(int(x) for x in re.findall(r"\d+", m.group(1))[:2])
            return m.group(0) if have >= want else m.group(0).replace(m.group(1), self.cm["min_version"], 1)

        return re.sub(r"VERSION\s+([0-9][0-9.]*)", bump, span, count=1)

    def _arch_values(self, span: str) -> str:
        words = [self.renames.get(w, w) for w in self.cm["arch_words"]] + list(self.cm["arch_words"])
        words += [k for k, v in self.cm["words"].items() if v in self.cm["arch_words"]]
        pattern = re.compile(r"(?<![\w$])(" + "|".join(sorted(set(map(re.escape, words)), key=len, reverse=True)) +
                             r")(\s+)((?:\"[^\"]*\"|[^\s)\"]+)(?:\s+(?:\"[^\"]*\"|[^\s)\"]+))*)")

        def repl(m: re.Match[str]) -> str:
            values = re.findall(r"\"[^\"]*\"|[^\s\"]+", m.group(3))
            keep: list[str] = []
            arch: list[str] = []
            for v in values:
                bare = v.strip('"')
                is_arch = not keep and all(re.fullmatch(r"[0-9]{2,3}[a-z]?(-real|-virtual)?|native|all|all-major|\$\{\w+\}|sm_[0-9]+[a-z]?", x)
                                           for x in bare.split(";") if x)
                (arch if is_arch else keep).append(v)
            if not arch:
                return m.group(0)
            return m.group(1) + m.group(2) + " ".join([self.ctx.gfx, *keep])

        return pattern.sub(repl, span)

    def _lines_pass(self, text: str) -> str:
        out = []
        for line in text.split("\n"):
            code, comment = _code_and_comment(line, quotes=True)
            new = self.rename_re.sub(lambda m: self.renames[m.group(1)], code)
            new = re.sub(r"COMPILE_LANGUAGE:CUDA\b", "COMPILE_LANGUAGE:HIP", new)
            new = re.sub(r"COMPILE_LANG_AND_ID:CUDA\b", "COMPILE_LANG_AND_ID:HIP", new)
            new = re.sub(r"\bLANGUAGE(\s+)CUDA\b", r"LANGUAGE\1HIP", new)
            new = self.var_re.sub(lambda m: self.cm["variables"][m.group(1)][self.key], new)
            new = self._flag_words(new)
            out.append(new + comment)
        return "\n".join(out)

    def _flag_words(self, code: str) -> str:
        """nvcc flags, libraries and file names inside CMake arguments; quoted strings are split like arguments."""
        return self.words.line(code)

    def _result(self, old: str, new: str) -> BuildTranslation:
        """Changes and what is left for a person, by line of the source (every rewrite keeps the line count; added
        lines ride on the line they follow)."""
        result = BuildTranslation("cmake", new.replace(NEWLINE, "\n"))
        for k, (a, b) in enumerate(zip(old.split("\n"), new.split("\n"), strict=True), 1):
            b = b.replace(NEWLINE, "\n")
            if a != b:
                result.changes.append(Change(k, a, b))
            code, _ = _code_and_comment(b, quotes=True)
            result.manual += _manual(k, code)
        return result


KEEP_NAMES_BLOCK = """# xlate (--keep-names): the .cu sources are HIP sources.
file(GLOB_RECURSE XLATE_HIP_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cu)
set_source_files_properties(${XLATE_HIP_SOURCES} PROPERTIES LANGUAGE HIP)
"""


def _strip_comments(text: str) -> str:
    return "\n".join(_code_and_comment(line, quotes=True)[0] for line in text.split("\n"))


def context(rel: str, renames: dict[str, str], suffixes: dict[str, str], gfx: str, roc: bool) -> BuildContext:
    folder = posixpath.dirname(rel)
    return BuildContext(folder, renames, suffixes, gfx, roc)


