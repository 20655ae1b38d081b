"""Discovery: the files of a library (a folder, or the translation units of a compile_commands.json and the
project headers they include), their roles, languages, include graph and output names."""

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
from xlate.port import TARGET_LANGUAGE


@dataclass
class SourceFile:
    rel: str  # POSIX path relative to the root
    path: str  # absolute
    data: bytes
    role: str  # source | header
    language: str | None  # None when the file cannot be read or has an unknown type
    kind: str = "port"  # port | copy | skip | error
    output: str | None = None  # relative output path
    includes: dict[str, str] = field(default_factory=dict)  # include name as written -> rel of the project file
    rewrites: dict[str, str] = field(default_factory=dict)  # include name -> new name in the output
    diagnostics: list[dict] = field(default_factory=list)
    deps: list[str] = field(default_factory=list)  # rel of every project header reached, transitively

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
             exclude: list[str] | None = None) -> Library:
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
        paths = _walk(src, set(exclude or []))
        follow = False
    _collect(lib, paths, follow)
    _plan(lib, target)
    return lib


def _walk(top: str, exclude: set[str]) -> list[str]:
    srcs, heads = naming.suffixes()
    wanted = srcs | heads
    out = []
    for d, dirs, names in os.walk(top):
        # Hidden folders (.git, .xlate) and excluded ones (the output tree) are not part of the library.
        dirs[:] = sorted(x for x in dirs if not x.startswith(".") and os.path.join(d, x) not in exclude)
        out.extend(os.path.join(d, n) for n in sorted(names) if os.path.splitext(n)[1].lower() in wanted)
    return out


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


def _collect(lib: Library, paths: list[str], follow: bool) -> None:
    """Read every file; with `follow`, add the project headers the files include (compile-database mode)."""
    seen: dict[str, SourceFile] = {}
    queue = list(paths)
    while queue:
        path = queue.pop(0)
        if path in seen:
            continue
        rel = Path(os.path.relpath(path, lib.root)).as_posix()
        f = SourceFile(rel, path, b"", "header" if naming.is_header(rel) else "source", None)
        seen[path] = f
        try:
            f.data = Path(path).read_bytes()
        except OSError as exc:
            f.kind = "error"
            f.diagnostics.append(diag_dict("XL6004", rel, detail=exc.strerror or str(exc)))
            continue
        try:
            f.language = detect_language(path, f.text)
        except InputError as exc:
            f.kind = "error"
            f.diagnostics.append(diag_dict("XL6004", rel, detail=exc.message))
            continue
        for inc in includes.scan(f.text):
            target = includes.resolve(inc, os.path.dirname(path), lib.include_dirs)
            if target is None:
                if not inc.system:
                    f.diagnostics.append(diag_dict("XL6002", rel, inc.line, inc.col, include=inc.name))
                continue
            if os.path.commonpath([target, lib.root]) != lib.root:
                if not inc.system:
                    f.diagnostics.append(diag_dict("XL6003", rel, inc.line, inc.col, include=inc.name, resolved=target))
                continue
            f.includes[inc.name] = Path(os.path.relpath(target, lib.root)).as_posix()
            if follow and target not in seen and naming.is_header(target):
                queue.append(target)
    lib.files = sorted(seen.values(), key=lambda x: x.rel)
    known = {f.rel for f in lib.files}
    for f in lib.files:
        # A resolved include that is not one of the library's files (x.inl in folder mode) is not ported.
        f.includes = {k: v for k, v in f.includes.items() if v in known}


def _plan(lib: Library, target: str) -> None:
    """Decide per file: port, copy (already in the target language), skip (a header the target has no use for),
    or error; name the outputs; compute the include rewrites and the transitive header dependencies."""
    by_rel = lib.by_rel()
    target_language = TARGET_LANGUAGE[target]
    claimed: dict[str, str] = {}
    for f in lib.files:
        if f.kind == "error":
            continue
        if f.language == target_language:
            f.kind = "copy"
            f.output = naming.output_name(f.rel, target, copy=True)
        elif f.role == "header" and not naming.ports_headers(target):
            f.kind = "skip"
            f.diagnostics.append(diag_dict("XL6010", f.rel, target=target))
            continue
        else:
            f.kind = "port"
            f.output = naming.output_name(f.rel, target)
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
