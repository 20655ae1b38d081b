"""Discovery: the files of a library (a folder, or the translation units of a compile_commands.json and the
project headers they include), their roles, languages, include graph, output names and the names each defines.

Whole-tree targets (hip, cuda) take every file of a folder: C-family files are ported (or copied when already in
the target language), build files translated (buildfiles.py), every other file copied as it is (`asset`)."""

from __future__ import annotations

import json
import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from xlate.errors import InputError
from xlate.migrate import includes, naming
from xlate.migrate.diagnostics import diag_dict
from xlate.parse.source import detect_language
from xlate.targets import target as target_of


@dataclass
class SourceFile:
    rel: str  # POSIX path relative to the root
    path: str  # absolute
    data: bytes
    role: str  # source | header | build | other
    language: str | None  # None when the file cannot be read or has an unknown type
    kind: str = "port"  # port | copy | skip | error | build | asset
    output: str | None = None  # relative output path
    includes: dict[str, str] = field(default_factory=dict)  # include name as written -> rel of the project file
    rewrites: dict[str, str] = field(default_factory=dict)  # include name -> new name in the output
    diagnostics: list[dict] = field(default_factory=list)
    deps: list[str] = field(default_factory=list)  # rel of every project header reached, transitively
    defines: set[str] = field(default_factory=set)  # macros, functions and types the file defines (symbols.py)

    @property
    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")


@dataclass
class Library:
    root: str
    files: list[SourceFile]
    include_dirs: list[str]
    origin: str  # "folder" or the compile database's path
    skipped: list[str] = field(default_factory=list)  # compile-database units that are not CUDA/HIP

    def by_rel(self) -> dict[str, SourceFile]:
        index = self.__dict__.get("_by_rel")
        if index is None or len(index) != len(self.files):
            index = self.__dict__["_by_rel"] = {f.rel: f for f in self.files}
        return index


def discover(source: str, target: str, *, include_dirs: list[str] | None = None, root: str | None = None,
             exclude: list[str] | None = None, keep_names: bool = False) -> Library:
    src = os.path.abspath(source)
    if not os.path.exists(src):
        raise InputError(f"{source}: error: no such file or directory")
    user_dirs = [os.path.abspath(d) for d in include_dirs or []]
    if os.path.isfile(src):
        if not src.endswith(".json"):
            raise InputError(f"{source}: error: give a folder or a compile_commands.json (`xlate port` takes one file)")
        units, db_dirs, skipped = _compile_database(src)
        base = os.path.abspath(root) if root else os.path.commonpath([os.path.dirname(u) for u in units]) if units else os.path.dirname(src)
        lib = Library(base, [], [*user_dirs, *db_dirs, base], src, skipped)
        paths = units
        follow = True
    else:
        base = os.path.abspath(root or src)
        lib = Library(base, [], [*user_dirs, base], "folder")
        paths = _walk(src, set(exclude or []), target)
        follow = False
    _collect(lib, paths, follow, target)
    _plan(lib, target, keep_names)
    return lib


def _walk(top: str, exclude: set[str], target: str) -> list[str]:
    """Every file of the folder for a whole-tree target; the code files alone for the others."""
    everything = naming.ports_headers(target)
    out = []
    for d, dirs, names in os.walk(top):
        # Hidden folders (.git, .xlate) and excluded ones (the output tree) are not part of the library.
        dirs[:] = sorted(x for x in dirs if not x.startswith(".") and os.path.join(d, x) not in exclude)
        out.extend(os.path.join(d, n) for n in sorted(names)
                   if (everything or naming.wanted(n, target)) and os.path.isfile(os.path.join(d, n)))
    return out


def code_language(path: str, text: str, target: str) -> str:
    """The language a code file is ported from. Whole-tree targets read every C-family file (and every file a
    code file #includes) that is not already HIP or AscendC as CUDA, whatever its suffix: CUDA's grammar is C++'s
    plus CUDA's syntax, and a .cpp host file or a .c file calls the CUDA runtime as often as a .cu file does."""
    tree = naming.ports_headers(target)
    try:
        language = detect_language(path, text)
    except InputError:
        if not tree:
            raise
        language = "cuda"
    if tree and language in ("cpp", "cuda"):
        from xlate.parse.source import HIP_MARKERS

        hip = any(m in text for m in HIP_MARKERS) and "cuda_runtime" not in text
        language = "hip" if hip else "cuda"
    return language


def _compile_database(path: str) -> tuple[list[str], list[str], list[str]]:
    try:
        entries = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: error: not a readable compile database: {exc}") from None
    if not isinstance(entries, list):
        raise InputError(f"{path}: error: a compile database is a JSON list of {{directory, file, command}} entries")
    units: list[str] = []
    dirs: list[str] = []
    skipped: list[str] = []
    srcs, _ = naming.suffixes()
    for i, e in enumerate(entries):
        if not isinstance(e, dict) or "file" not in e or "directory" not in e:
            raise InputError(f"{path}: error: entry {i} lacks 'directory' or 'file'")
        file = os.path.normpath(os.path.join(e["directory"], e["file"]))
        args = e.get("arguments") or shlex.split(e.get("command", ""))
        for a, b in zip(args, [*args[1:], ""]):
            inc = b if a in ("-I", "-isystem", "-iquote") else a[2:] if a.startswith("-I") and len(a) > 2 else None
            if inc:
                d = os.path.normpath(os.path.join(e["directory"], inc))
                if d not in dirs:
                    dirs.append(d)
        # Only CUDA/HIP units (.cu, .hip); a .cpp compiled with `-x cuda` is listed as skipped.
        if os.path.splitext(file)[1].lower() in srcs:
            if file not in units:
                units.append(file)
        else:
            skipped.append(file)
    return units, dirs, skipped


def _role(rel: str, target: str) -> str:
    if naming.wanted(rel, target):
        return "header" if naming.is_header(rel) else "source"
    return "build" if naming.is_build_file(rel) else "other"


def _collect(lib: Library, paths: list[str], follow: bool, target: str) -> None:
    """Read every code file; with `follow`, add the project headers the files include (compile-database mode).
    A file that a code file #includes is code whatever its suffix (x.inc, x.cuinc). Other files are not read
    here (a data file may be large): the driver copies or translates them."""
    seen: dict[str, SourceFile] = {}
    included: set[str] = set()  # files some code file includes
    queue = [(p, False) for p in paths]
    while queue:
        path, again = queue.pop(0)
        old = seen.get(path)
        if old is not None and not (again and old.kind == "asset"):
            continue
        rel = Path(os.path.relpath(path, lib.root)).as_posix()
        role = _role(rel, target)
        if role == "other" and path in included:
            role = "header"
        f = SourceFile(rel, path, b"", role, None)
        seen[path] = f
        if f.role in ("build", "other"):
            f.kind = "build" if f.role == "build" else "asset"
            continue
        for found in _read_code(f, lib, target):
            included.add(found)
            if found in seen and seen[found].kind == "asset":
                queue.append((found, True))
            elif follow and found not in seen and (naming.is_c_family(found) if naming.ports_headers(target)
                                                   else naming.is_header(found)):
                queue.append((found, False))
    lib.files = sorted(seen.values(), key=lambda x: x.rel)
    known = {f.rel for f in lib.files if f.kind not in ("asset", "build")}
    for f in lib.files:
        # A resolved include that is not one of the library's code files (x.inl in folder mode) is not ported.
        f.includes = {k: v for k, v in f.includes.items() if v in known}


def _read_code(f: SourceFile, lib: Library, target: str) -> list[str]:
    """Read one code file: its language, the names it defines, its includes. Returns the project files it
    includes (absolute paths)."""
    try:
        f.data = Path(f.path).read_bytes()
    except OSError as exc:
        f.kind = "error"
        f.diagnostics.append(diag_dict("XL6004", f.rel, detail=exc.strerror or str(exc)))
        return []
    try:
        f.language = code_language(f.path, f.text, target)
    except InputError as exc:
        f.kind = "error"
        f.diagnostics.append(diag_dict("XL6004", f.rel, detail=exc.message))
        return []
    from xlate.migrate.symbols import defined_names

    f.defines = defined_names(f.text)
    out = []
    for inc in includes.scan(f.text):
        found = includes.resolve(inc, os.path.dirname(f.path), lib.include_dirs)
        if found is None:
            if not inc.system:
                f.diagnostics.append(diag_dict("XL6002", f.rel, inc.line, inc.col, include=inc.name))
            continue
        if os.path.commonpath([found, lib.root]) != lib.root:
            if not inc.system:
                f.diagnostics.append(diag_dict("XL6003", f.rel, inc.line, inc.col, include=inc.name, resolved=found))
            continue
        f.includes[inc.name] = Path(os.path.relpath(found, lib.root)).as_posix()
        out.append(found)
    return out


def _plan(lib: Library, target: str, keep_names: bool = False) -> None:
    """Decide per file: port, copy (already in the target language), skip (a header the target has no use for),
    build, asset or error; name the outputs; compute the include rewrites and the transitive header
    dependencies. Every include of a project file that gets an output is renamed to that output: the output is
    always written (the port, or the source copied unchanged when no port can be), so no include ever names a
    file that is not in the tree."""
    by_rel = lib.by_rel()
    target_language = target_of(target).language
    claimed: dict[str, str] = {}
    # Files that keep their names claim them first: a renamed port never takes the name of a file the user has.
    for f in sorted(lib.files, key=lambda x: naming.output_name(x.rel, target, keep_names=keep_names) != x.rel):
        if f.kind == "error":
            continue
        if f.kind in ("build", "asset"):
            f.output = f.rel
        elif f.language == target_language:
            f.kind = "copy"
            f.output = naming.output_name(f.rel, target, copy=True)
        elif f.role == "header" and not naming.ports_headers(target):
            f.kind = "skip"
            f.diagnostics.append(diag_dict("XL6010", f.rel, target=target))
            continue
        else:
            f.kind = "port"
            f.output = naming.output_name(f.rel, target, keep_names=keep_names)
        if f.output is None:
            f.kind = "skip"
            continue
        other = claimed.get(f.output)
        if other is not None:
            f.kind = "error"
            f.diagnostics.append(diag_dict("XL6001", f.rel, output=f.output, other=other))
            f.output = None
            continue
        claimed[f.output] = f.rel
    for f in lib.files:
        for name, rel in f.includes.items():
            dep = by_rel[rel]
            if dep.output and dep.kind in ("port", "copy") and naming.ports_headers(target):
                f.rewrites[name] = includes.renamed(name, Path(dep.output).name)
        f.deps = _closure(f.rel, by_rel)


def _closure(rel: str, by_rel: dict[str, SourceFile]) -> list[str]:
    seen: list[str] = []
    stack = list(by_rel[rel].includes.values())
    while stack:
        r = stack.pop()
        if r in seen or r == rel:
            continue
        seen.append(r)
        stack.extend(by_rel[r].includes.values())
    return sorted(seen)
