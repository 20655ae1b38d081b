"""The program a kernel belongs to: its file and the files beside it (the launcher in main.cu, the kernel in
kernels.cu, sizes in a header), parsed with the CUDA grammar and indexed for the interpreters: macros, function
definitions, file-scope declarations."""

from __future__ import annotations

import contextlib
import functools
import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sympy as sp
import tree_sitter as ts

from xlate.cir.cond import DEVICE_MACROS, Undecidable, evaluate
from xlate.model import KernelUnit
from xlate.parse import ppscan
from xlate.resources import data
from xlate.specs.model import normalise_ctype
from xlate.specs.text import split_top

CONTEXT_SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".hh", ".cpp", ".cc", ".cxx", ".c", ".inl", ".hip")
MAX_CONTEXT_FILES = 48
MAX_FILE_BYTES = 2 << 20


@dataclass
class MacroDef:
    name: str
    params: list[str] | None
    body: str
    path: str
    line: int


@dataclass
class FuncDef:
    name: str
    node: ts.Node  # the function_definition
    path: str
    params: list[tuple[str, str, bool]]  # (name, type text, is pointer/reference/array)
    space: str  # "kernel", "device", "host" (host also for __host__ __device__)
    template_params: list[str] = field(default_factory=list)
    return_type: str = ""
    cls: str = ""  # the class of a method (defined in the class or as Class::name)
    template_defaults: dict[str, str] = field(default_factory=dict)  # `typename I = int`: I -> int


@dataclass
class SourceFile:
    path: str
    data: bytes
    tree: ts.Tree
    blanked: list[tuple[int, str]] = field(default_factory=list)  # (offset, qualifier) the front end blanked

    def line(self, node: ts.Node) -> int:
        return node.start_point[0] + 1

    def where(self, node: ts.Node) -> str:
        return f"{os.path.basename(self.path)}:{self.line(node)}"


def text(node: ts.Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", "replace")


class Program:
    def __init__(self, files: list[SourceFile]):
        self.files = files
        self.macros: dict[str, MacroDef] = {}
        self.functions: dict[str, list[FuncDef]] = {}
        self.globals: list[tuple[SourceFile, ts.Node]] = []  # file-scope declarations, in file order
        # every file-scope declaration with the #if conditions it stands under; settle_globals keeps in `globals`
        # those in branches the program's macros take (or that cannot be decided)
        self._all_globals: list[tuple[SourceFile, ts.Node, tuple[tuple[str, bool], ...]]] = []
        # analyses of other modules over `globals`, by name, read once per program (xlate.specs.infer.globals'
        # module variables); cleared when the declarations are settled again
        self.derived: dict[str, Any] = {}
        self.typedefs: dict[str, str] = {}
        self.enums: dict[str, list[int] | None] = {}  # enumerator values of each enum (None: not all known)
        # typedefs under #if/#ifdef: name -> [(conditions, type)]; settled by the macros (settle_typedefs)
        self._cond_typedefs: dict[str, list[tuple[tuple[tuple[str, bool], ...], str]]] = {}
        self._settled: set[str] = set()
        self.structs: dict[str, list[tuple[str, int]]] = {}
        self.struct_nodes: dict[str, ts.Node] = {}  # name -> the struct/class definition (record_of)
        self.array_typedefs: dict[str, tuple[str, list[str]]] = {}  # `typedef T Name[N][M]` -> (T, [N, M])
        self.classes: dict[str, dict[str, tuple[str, bool, ts.Node | None]]] = {}  # class -> member -> (type, pointer, init)
        self.class_tparams: dict[str, list[str]] = {}
        self._roots = {f.tree.root_node.id: f for f in files}
        # every #define and enumerator in the order the first of a name wins (ppscan decides which count)
        self._candidates: list[tuple[MacroDef, bool]] = []
        self._flags: dict[str, tuple[str, str, int]] = {}
        for f in files:
            self._index(f)
        self._settle_macros()
        self.settle_typedefs()
        self.settle_globals()
        for name, definition in data("spec_inference.yaml").get("system_types", {}).items():
            self.typedefs.setdefault(name, definition)

    # -- indexing ------------------------------------------------------------------------------------------------
    def add_build_macros(self, folder: Path) -> None:
        """`-DNAME=VALUE` from the program's Makefile or CMakeLists.txt: types and sizes chosen at build time. They
        hold before the first line of every file, so the `#if`s are decided again with them
        (`#ifndef BLOCK / #define BLOCK 64` gives way to `-DBLOCK=128`)."""
        flags = ppscan.build_flags(folder)
        if not flags:
            return
        self._flags = flags
        self._settle_macros()
        self.settle_typedefs()
        self.settle_globals()

    def _settle_macros(self) -> None:
        """`self.macros` as the preprocessor defines them (xlate.parse.ppscan): each file read from its includer
        down (a header where its includer includes it, the build's flags first), a `#define` in a `#if` branch not
        taken left out; one under a condition that cannot be decided counts, as every definition did before. Of
        the definitions that count, the first of a name (the kernel's own file first) wins, then the build's
        flags; a name whose only definitions are in branches not taken keeps its first (before a flag whose value
        is a make variable we could not expand)."""
        status = self._scan()
        self.macros = {}
        off: list[MacroDef] = []
        for md, enum in self._candidates:
            if enum and self._lines is not None and self._lines(md.path, md.line) == ppscan.OFF:
                off.append(md)  # an enumerator in an `#if` branch not taken (`#ifdef N_VALUE enum{N = N_VALUE};`)
            elif enum or status.get((md.path, md.line)) != ppscan.OFF:
                self.macros.setdefault(md.name, md)
            else:
                off.append(md)
        flags = [MacroDef(name, None, value, where, line) for name, (value, where, line) in self._flags.items()]
        for md in [*(f for f in flags if ppscan.readable(f.body)), *off, *flags]:
            self.macros.setdefault(md.name, md)  # a flag whose value names a make variable: after the files'

    def _scan(self) -> dict[tuple[str, int], str]:
        """The ppscan status of each `#define` line of the program's files, keyed by (path, line). A file no other
        file of the program includes is a translation unit, read from the build's flags; an included one is read
        where its includer includes it."""
        self._lines: Callable[[str, int], str | None] | None = None
        if not any(ppscan.CONDITIONAL.search(f.data) for f in self.files):
            return {}
        by_path = {os.path.abspath(f.path): f for f in self.files}
        texts: dict[str, str] = {}

        def source(f: SourceFile) -> str:
            if f.path not in texts:
                texts[f.path] = f.data.decode("utf-8", "replace")
            return texts[f.path]

        def resolve(including: str, rel: str) -> tuple[str, str] | None:
            where = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(including)), rel))
            f = by_path.get(where)
            return (f.path, source(f)) if f is not None else ppscan.disk_resolver(including, rel)

        included: set[str] = set()
        for f in self.files:
            for _, kind, rest in ppscan.directives(source(f)):
                m = ppscan.INCLUDE.match(rest) if kind == "include" else None
                if m is not None:
                    where = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(f.path)), m.group(1)))
                    if where in by_path and by_path[where] is not f:
                        included.add(by_path[where].path)
        scan = ppscan.Scan({n: v for n, (v, _, _) in self._flags.items()}, resolve)
        reached: set[str] = set()
        for f in [f for f in self.files if f.path not in included] + [f for f in self.files if f.path in included]:
            if f.path not in reached:
                scan.unit(f.path, source(f))
                reached |= scan.seen
        self._lines = scan.line_status
        return scan.status

    def _index(self, f: SourceFile) -> None:
        for node in _defines(f.tree.root_node):  # anywhere, a function body included
            self._macro(f, node)
        for node in _enumerator_lists(f.tree.root_node):
            self._enumerators(f, node)
        stack: list[tuple[ts.Node, tuple[tuple[str, bool], ...]]] = [(f.tree.root_node, ())]
        while stack:
            node, conds = stack.pop()
            group = node.type.startswith("preproc_") and node.type != "preproc_else"  # a group with a condition
            cond = _condition(node) if group else ""
            inner = (*conds, (cond, True)) if cond else conds  # its body's conditions
            skip = {h.id for h in (node.child_by_field_name("name"), node.child_by_field_name("condition")) if h} if group else set()
            alternative = node.child_by_field_name("alternative") if group else None
            for child in reversed(node.named_children):
                if alternative is not None and child.id == alternative.id:
                    stack.append((child, (*conds, (cond, False)) if cond else conds))
                    continue
                if child.id in skip or (group and child.type == "preproc_arg"):
                    continue  # the group's own name or #if expression, not its body
                t = child.type
                if t in ("preproc_def", "preproc_function_def"):
                    continue  # read by _defines
                elif t == "function_definition":
                    self._function(f, child)
                elif t == "type_definition":
                    tnode = child.child_by_field_name("type")
                    base = text(tnode)
                    for d in child.children_by_field_name("declarator"):
                        if d.type == "array_declarator":  # typedef unsigned int Row[16]: record members of it
                            sizes, cur = [], d
                            while cur is not None and cur.type == "array_declarator":
                                sizes.insert(0, text(cur.child_by_field_name("size")))
                                cur = cur.child_by_field_name("declarator")
                            if cur is not None and cur.type == "type_identifier":
                                self.array_typedefs.setdefault(text(cur), (base, sizes))
                        if d.type == "type_identifier":
                            if tnode is not None and tnode.type == "struct_specifier" and tnode.child_by_field_name("body"):
                                self._struct(text(d), tnode)
                            elif tnode is not None and tnode.type == "enum_specifier":
                                self._enum(text(d), tnode)
                            elif inner:
                                self._cond_typedefs.setdefault(text(d), []).append((inner, base))
                            else:
                                self.typedefs.setdefault(text(d), base)
                    if tnode is not None and tnode.type == "struct_specifier" and tnode.child_by_field_name("name"):
                        self._struct(text(tnode.child_by_field_name("name")), tnode)
                elif t == "enum_specifier" and child.child_by_field_name("name") is not None:
                    self._enum(text(child.child_by_field_name("name")), child)
                elif t in ("struct_specifier", "class_specifier", "declaration") and node.type == "translation_unit":
                    spec = child if t != "declaration" else child.child_by_field_name("type")
                    if spec is not None and spec.type == "enum_specifier" and spec.child_by_field_name("name") is not None:
                        self._enum(text(spec.child_by_field_name("name")), spec)
                    if spec is not None and spec.type in ("struct_specifier", "class_specifier") and (
                            spec.child_by_field_name("name") is not None and spec.child_by_field_name("body") is not None):
                        self._class(f, spec)
                    if t == "declaration":
                        self._all_globals.append((f, child, inner))
                elif t == "alias_declaration":
                    name = text(child.child_by_field_name("name"))
                    self.typedefs.setdefault(name, text(child.child_by_field_name("type")))
                elif t in ("template_declaration", "linkage_specification", "namespace_definition", "declaration_list",
                           "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef"):
                    stack.append((child, inner))
                elif t in ("class_specifier", "struct_specifier") and child.child_by_field_name("body") is not None:
                    self._class(f, child)
                elif t == "declaration" and node.type in ( "declaration_list", "preproc_if",
                                                          "preproc_ifdef", "preproc_else", "preproc_elif"):
                    self._all_globals.append((f, child, inner))

    def settle_typedefs(self) -> None:
        """A typedef written in several #if branches (`#ifdef USE_SP typedef float real; #else typedef double
        real;`) takes the branch the program's macros select, as the compiler would; an undecidable one takes
        the first."""
        macros = self.condition_macros()
        for name, alternatives in self._cond_typedefs.items():
            chosen = None
            for conds, base in alternatives:
                try:
                    if all(bool(evaluate(expr, macros)) == want for expr, want in conds):
                        chosen = base
                        break
                except Undecidable:
                    continue
            if chosen is None:
                chosen = alternatives[0][1]
            if name not in self.typedefs or name in self._settled:  # an unconditional typedef stands
                self.typedefs[name] = chosen
                self._settled.add(name)

    def condition_macros(self) -> dict[str, str | None]:
        """What `#if` conditions are decided against: the device pass's macros and the program's object-like ones
        (a function-like macro is defined but has no value)."""
        return {**DEVICE_MACROS, **{n: (m.body if m.params is None else None) for n, m in self.macros.items()}}

    def settle_globals(self) -> None:
        """File-scope declarations in `#if` branches the program's macros do not take are left out, as the
        compiler leaves them out (`#ifndef SMALL const int n = 1024; #else const int n = 4; #endif`: the host
        analysis ran both, and the last `n` won); a branch that cannot be decided keeps its declarations."""
        macros = self.condition_macros()

        def taken(conds: tuple[tuple[str, bool], ...]) -> bool:
            for expr, want in conds:
                try:
                    if bool(evaluate(expr, macros)) != want:
                        return False
                except Undecidable:
                    continue
            return True

        self.globals = sorted(((f, d) for f, d, conds in self._all_globals if taken(conds)),
                              key=lambda g: (self.files.index(g[0]), g[1].start_byte))
        self.__dict__.pop("initialisers", None)  # read from the declarations kept before
        self.derived.clear()

    def _class(self, f: SourceFile, node: ts.Node) -> None:
        """A class or struct with a body: its data members (name -> declared type, pointer or not) and the
        methods defined inside it."""
        name = text(node.child_by_field_name("name"))
        body = node.child_by_field_name("body")
        if not name or body is None:
            return
        fields = self.classes.setdefault(name, {})
        wrapper = node.parent
        if wrapper is not None and wrapper.type == "template_declaration":
            plist = wrapper.child_by_field_name("parameters")
            self.class_tparams[name] = [text(tp.child_by_field_name("name") or next(
                (c for c in tp.named_children if c.type in ("type_identifier", "identifier")), None))
                for tp in (plist.named_children if plist is not None else [])]
        for child in body.named_children:
            if child.type == "function_definition":
                self._function(f, child, cls=name)
            elif child.type in ("template_declaration",):
                inner = next((c for c in child.named_children if c.type == "function_definition"), None)
                if inner is not None:
                    self._function(f, inner, cls=name)
            elif child.type == "field_declaration":
                ftype = text(child.child_by_field_name("type"))
                for d in child.children_by_field_name("declarator"):
                    indirect = False
                    cur = d
                    while cur is not None and cur.type in ("pointer_declarator", "array_declarator", "reference_declarator"):
                        indirect = True
                        cur = cur.child_by_field_name("declarator") or next(
                            (c for c in cur.named_children if c.type == "field_identifier"), None)
                    if cur is not None and cur.type == "field_identifier":
                        fields[text(cur)] = (ftype, indirect, child.child_by_field_name("default_value"))
        if node.type in ("struct_specifier", "class_specifier"):
            self._struct(name, node)

    def method(self, cls: str, name: str, arity: int | None = None) -> FuncDef | None:
        """The method of that class the call runs: one with a body (not `Table() = delete;`) taking `arity`
        arguments where one does, as overload resolution would pick by count."""
        cands = [fd for fd in self.functions.get(name, []) if fd.cls == cls]
        bodied = [fd for fd in cands if fd.node.child_by_field_name("body") is not None]
        if arity is not None:
            fits = [fd for fd in bodied if len(fd.params) == arity] or [
                fd for fd in bodied if len(fd.params) > arity and _has_defaults(fd)]
            if fits:
                return fits[0]
        return next(iter(bodied or cands), None)

    def _struct(self, name: str, node: ts.Node) -> None:
        body = node.child_by_field_name("body")
        if body is None or name in self.structs:
            return
        self.struct_nodes[name] = node
        fields: list[tuple[str, int]] = []
        for fd in body.named_children:
            if "virtual" in text(fd).split("(")[0].split():
                fields.append(("?", 1))  # a vtable pointer: not plain data
                continue
            if fd.type in ("function_definition", "template_declaration", "access_specifier", "friend_declaration",
                           "comment", "declaration", "type_definition", "alias_declaration"):
                continue  # methods, constructors, `public:`, nested types: no bytes of the object
            if fd.type != "field_declaration":
                fields.append(("?", 1))
                continue
            if any(c.type == "storage_class_specifier" for c in fd.children) or any(
                    d.type == "function_declarator" for d in fd.children_by_field_name("declarator")):
                continue  # static members and method prototypes
            ftype = text(fd.child_by_field_name("type"))
            for d in fd.children_by_field_name("declarator"):
                count = 1
                cur = d
                while cur is not None and cur.type == "array_declarator":
                    size = text(cur.child_by_field_name("size"))
                    count *= int(size) if size.isdigit() else 0
                    cur = cur.child_by_field_name("declarator")
                if cur is None or cur.type != "field_identifier":
                    count = 0  # pointers, bit-fields...: not plain data
                fields.append((ftype, count))
        self.structs[name] = fields

    def _enum(self, name: str, node: ts.Node) -> None:
        """An enum is its underlying type in memory (`int` unless it says `: uint8_t`); its enumerators' values
        are kept where they are constant expressions of numbers and earlier enumerators."""
        base = node.child_by_field_name("base")
        self.typedefs.setdefault(name, text(base) if base is not None else "int")
        body = node.child_by_field_name("body")
        if body is None or name in self.enums:
            return
        values: list[int] | None = []
        known: dict[str, int] = {}
        nxt = 0
        for e in body.children:
            if e.type != "enumerator":
                continue
            value = e.child_by_field_name("value")
            v = nxt if value is None else _constant_int(text(value), known)
            if v is None:
                values = None
                break
            known[text(e.child_by_field_name("name"))] = v
            values.append(v)
            nxt = v + 1
        self.enums[name] = values

    def enum_values(self, ctype: str) -> list[int] | None:
        """The enumerator values of the enum `ctype` names (through `const`, qualifiers and aliases), or None."""
        t = re.sub(r"\b(const|volatile|enum)\b", " ", ctype).strip().split("::")[-1].strip()
        for _ in range(8):
            if t in self.enums:
                return self.enums[t]
            nxt = self.typedefs.get(t)
            if nxt is None or nxt == t:
                return None
            t = nxt.split("::")[-1].strip()
        return None

    def struct_lanes(self, name: str) -> tuple[str, int] | None:
        """A struct of one scalar type (`struct { float re, im; }`): (scalar type, how many); None otherwise."""
        from xlate.specs.model import ctypes_table

        fields = self.structs.get(name.removeprefix("struct ").strip())
        if not fields:
            return self._library_lanes(name)
        if any(count <= 0 for _, count in fields):
            return None
        types = {self.resolve_type(t) for t, _ in fields}
        if len(types) != 1:
            return None
        scalar = types.pop()
        info = ctypes_table().get(scalar)
        if info is None or info.get("numpy") is None:
            return None
        return scalar, sum(count for _, count in fields)

    def _library_lanes(self, name: str) -> tuple[str, int] | None:
        """A library's vector or matrix type (`glm::vec<3, float>`, through the program's `using vec3 = ...`):
        xlate/data/library_types.yaml. Only when the program does not define a type of that name itself."""
        from xlate.specs.model import ctypes_table

        resolved = self.resolve_type(name.removeprefix("struct ").strip())
        if resolved.split("<", 1)[0].split("::")[-1] in self.structs:
            return None
        found = _library_layout(resolved)
        if found is None:
            return None
        scalar = self.resolve_type(found[0])
        info = ctypes_table().get(scalar)
        return (scalar, found[1]) if info is not None and info.get("numpy") is not None else None

    def record_of(self, ctype: str, depth: int = 0, pointers: bool | dict[str, set[str]] = False,
                  ) -> tuple[str | None, str]:
        """A struct of numbers as a spec record type (xlate/specs/records.py): `({S: float32, T: int32}, "")`,
        fields in declaration order with their fixed arrays (`float m[3]` -> `m: float32[3]`), nested structs,
        vector types (`float4 v` -> `v: float32[4] align(16)`), `alignas`/`__align__`, template arguments bound
        (`Pair<float>`). `(None, why)` when it is not plain numbers: a pointer or reference member, a bit-field,
        a base class, virtual methods, a type we do not know. With `pointers`, a pointer member to numbers is a
        pointer field `data: in[1] as float32` (a placeholder buffer: its role and length come from the kernel and
        the host, xlate/specs/infer/pointer_records.py); a pointer to anything else, or a reference, is still why not.
        `pointers` may map field names to the pointer types the kernel casts them to (`reinterpret_cast<float*>(
        p.x_ptr)`): a `void*` field cast to one number type is a pointer field of that type."""
        from xlate.specs.model import ctypes_table

        t = normalise_ctype(ctype)
        m = re.fullmatch(r"([A-Za-z_][\w:]*)\s*<(.*)>", t)
        name, args = (m.group(1), _template_args(m.group(2))) if m else (t, [])
        name = self.resolve_type(name) if not args else name
        qualified, name = name, name.split("::")[-1]
        node = self.struct_nodes.get(name)
        if node is None and depth <= 4:
            found = self._library_record(qualified, args, pointers)
            if found is not None:
                return found
        if node is None or depth > 4:
            return None, f"no definition of '{t}' was found"
        tparams = self.class_tparams.get(name, [])
        binding = dict(zip(tparams, args, strict=False))
        clause = next((c for c in node.named_children if c.type == "base_class_clause"), None)
        base_fields: list[str] = []
        if clause is not None:
            base_fields, why = self._base_fields(clause, name, binding, depth, pointers)
            if why:
                return None, why
        end = node.child_by_field_name("body").start_byte  # type: ignore[union-attr]
        src = self.source_of(node)
        head = _original(src, node.start_byte, end) if src is not None else text(node)
        if node.parent is not None and node.parent.type == "type_definition" and src is not None:
            head += " " + _original(src, node.end_byte, node.parent.end_byte)  # `} site __attribute__((aligned));`
        align = _alignment(head, self)
        fields: list[str] = list(base_fields)
        members = self._members(node.child_by_field_name("body"))
        if members is None:
            return None, f"'{name}' has members under a #if xlate cannot decide"
        binding = {**binding, **_member_aliases(members, binding)}
        consts = _static_constants(members)  # `static constexpr int N = 6;`: array sizes may name it
        binding = {**binding, **_nested_enums(members)}  # `enum class Kind { A, B }; Kind kind;`: an int member
        for fd in members:
            if "virtual" in text(fd).split("(")[0].split():
                return None, f"'{name}' has virtual methods"
            if fd.type in ("function_definition", "template_declaration", "access_specifier", "friend_declaration",
                           "comment", "declaration", "type_definition", "alias_declaration",
                           "static_assert_declaration", "preproc_def", "preproc_function_def", "preproc_call"):
                continue  # methods, nested types, static_assert, #define: no bytes of the object
            if fd.type != "field_declaration":
                return None, f"'{name}' has a member xlate cannot read ({fd.type})"
            decls = fd.children_by_field_name("declarator")
            if any(c.type == "storage_class_specifier" for c in fd.children) or any(d.type == "function_declarator" for d in decls):
                continue
            if not decls:
                continue  # a nested type's definition (`enum class Kind { A, B };`): no bytes of the object
            if any(c.type == "bitfield_clause" for c in fd.children):
                return None, f"'{name}' has bit-fields"
            pointer = next((d for d in decls if d.type in ("pointer_declarator", "reference_declarator")), None)
            ftype = " ".join(text(c) for c in fd.children if c.type in ("primitive_type", "type_identifier",
                                                                           "sized_type_specifier", "template_type",
                                                                           "qualified_identifier", "struct_specifier"))
            ftype = binding.get(ftype.strip(), ftype.strip())
            if consts and "<" in ftype:  # `std::array<float, N>` with N the struct's own constant
                head_, _, targs = ftype.partition("<")
                ftype = head_ + "<" + re.sub(r"\b[A-Za-z_]\w*\b", lambda m: str(consts.get(m.group(0), m.group(0))), targs)
            if pointer is not None:
                const = any(c.type == "type_qualifier" and text(c) == "const" for c in fd.children)
                casts = pointers if isinstance(pointers, dict) else {}
                fields_of = self._pointer_fields(decls, ftype, const, casts) if pointers else None
                if fields_of is None:
                    return None, f"'{name}' holds a pointer or reference ('{text(pointer)}')"
                if isinstance(fields_of, str):
                    return None, f"'{name}' holds {fields_of}"
                fields.extend(fields_of)
                continue
            falign = _alignment(" ".join(text(c) for c in fd.children if c.type == "type_qualifier"), self)
            typedef_dims: list[int] = []
            if ftype in self.array_typedefs:  # a member of an array typedef: its element type, its sizes first
                ftype, sizes = self.array_typedefs[ftype]
                for size in sizes:
                    count = self._array_size(size, binding)
                    if count is None:
                        return None, f"the array type of a member of '{name}' has a size xlate cannot read ({size})"
                    typedef_dims.append(count)
            base = self.resolve_type(ftype)
            info = ctypes_table().get(base)
            shape0: list[int] = []
            library = _library_layout(base) if info is None and base.split("<")[0].split("::")[-1] not in (
                self.struct_nodes) else None
            library_info = ctypes_table().get(self.resolve_type(library[0])) if library is not None else None
            if library is not None and library_info is not None and library_info.get("numpy"):
                ftext = str(library_info["numpy"])  # `std::array<float, 6>`, `glm::vec3`: numbers laid out in order
                shape0 = [library[1]]
            elif info is not None and info.get("numpy"):
                ftext = str(info["numpy"])
            elif info is not None and info.get("scalar") and ctypes_table().get(str(info["scalar"]), {}).get("numpy"):
                lanes = int(info.get("lanes", 1))  # a vector type: its lanes, aligned as CUDA aligns it
                ftext = str(ctypes_table()[str(info["scalar"])]["numpy"])
                shape0 = [lanes]
                if lanes in (2, 4):
                    falign = max(falign, min(int(info["size"]), 16))
            else:
                inner, why = self.record_of(base, depth + 1)
                if inner is None:
                    return None, f"member of '{name}' of type '{ftype}': {why}" if "member" not in why else why
                ftext = inner
            for d in decls:
                shape: list[int] = []
                cur = d
                while cur is not None and cur.type == "array_declarator":
                    count = self._array_size(text(cur.child_by_field_name("size")), binding)
                    if count is None or count <= 0:
                        return None, f"member '{text(d)}' of '{name}' has an array size xlate cannot read"
                    shape.insert(0, count)
                    cur = cur.child_by_field_name("declarator")
                if cur is None or cur.type != "field_identifier":
                    return None, f"'{name}' holds a pointer or reference ('{text(d)}')"
                dims = shape + typedef_dims + shape0
                item = ftext + (f"[{', '.join(map(str, dims))}]" if dims else "")
                if falign:
                    item += f" align({falign})"
                fields.append(f"{text(cur)}: {item}")
        if not fields:
            return None, f"'{name}' has no data members"
        names = [f.split(":", 1)[0].strip() for f in fields]
        if len(set(names)) != len(names):
            return None, f"'{name}' declares a member of the same name as its base class"
        return "{" + ", ".join(fields) + "}" + (f" align({align})" if align else ""), ""

    def _library_record(self, name: str, args: list[str], pointers: bool) -> tuple[str | None, str] | None:
        """A library struct holding pointers that the code read does not define (ATen's TensorInfo<T, I>):
        xlate/data/library_types.yaml, its template arguments bound (C types as dtypes, the kernel's template
        parameters kept). None when the table has no such struct."""
        from xlate.specs.model import ctypes_table
        from xlate.specs.records import has_pointers, parse_record

        entry = library_pointer_record(name)
        if entry is None:
            return None
        binding = {}
        for param, arg in zip(entry["params"], args, strict=False):
            info = ctypes_table().get(self.resolve_type(normalise_ctype(arg)))
            binding[param] = str(info["numpy"]) if info is not None and info.get("numpy") else arg.strip()
        record = re.sub(r"\b[A-Za-z_]\w*\b", lambda m: binding.get(m.group(0), m.group(0)), entry["record"])
        if not pointers and has_pointers(parse_record(record)):
            return None, f"'{name.split('::')[-1]}' holds a pointer or reference (a struct of a library)"
        return record, ""

    def _base_fields(self, clause: ts.Node, name: str, binding: dict[str, str], depth: int,
                     pointers: bool | dict[str, set[str]]) -> tuple[list[str], str]:
        """The data members a single non-virtual base class contributes, first, when they lay out in the derived
        struct as in a struct of their own followed by the derived members: a base without tail padding (the
        Itanium ABI may put derived members into a non-POD base's tail padding) and without an `alignas` of its
        own, its field types known. An empty base takes no bytes."""
        from xlate.specs.records import layout, parse_record, type_names

        bases = [c for c in clause.named_children if c.type not in ("access_specifier", "comment")]
        if len(bases) != 1 or "virtual" in text(clause).split():
            return [], f"'{name}' derives from {'a virtual base' if len(bases) == 1 else 'several classes'}"
        btype = binding.get(text(bases[0]).strip(), text(bases[0]).strip())
        record, why = self.record_of(btype, depth + 1, pointers)
        if record is None:
            return ([], "") if why.endswith("has no data members") else ([], f"'{name}' derives from '{btype}': {why}")
        rec = parse_record(record)
        if rec.align or type_names(rec):
            return [], f"'{name}' derives from '{btype}', whose layout xlate cannot fix ({record})"
        dtype, _ = layout(rec)
        end = max(dtype.fields[f][1] + dtype.fields[f][0].itemsize for f in dtype.names)  # type: ignore[index]
        if end != dtype.itemsize:
            return [], f"'{name}' derives from '{btype}', which has tail padding (its layout in '{name}' may differ)"
        return split_top(record[1 : record.rindex("}")]), ""

    def _pointer_fields(self, decls: list[ts.Node], ftype: str, const: bool,
                        casts: dict[str, set[str]]) -> list[str] | str | None:
        """`const float* data, *w;` as placeholder pointer fields (`data: in[1] as float32`: `in` for a const
        pointee, else `inout`); None where a declarator is not one plain pointer (a pointer to pointers, a
        reference, an array of pointers) or the pointee is not a number type. A `void*` field takes the one number
        type `casts` names for it (the kernel's); why not, as a string, where it has none, several or another."""
        from xlate.specs.model import ctypes_table

        if self.resolve_type(ftype) == "void":
            return self._void_pointer_fields(decls, const, casts)
        info = ctypes_table().get(self.resolve_type(ftype))
        dtype = info.get("numpy") if info is not None else None
        if not dtype:
            return None
        out = []
        for d in decls:
            if d.type != "pointer_declarator":
                return None
            inner = d.child_by_field_name("declarator")
            while inner is not None and inner.type != "field_identifier" and inner.type == "type_qualifier":
                inner = inner.next_named_sibling
            if inner is None or inner.type != "field_identifier":
                return None  # `float** p`, `float* p[4]`
            out.append(f"{text(inner)}: {'in' if const else 'inout'}[1] as {dtype}")
        return out

    def _void_pointer_fields(self, decls: list[ts.Node], const: bool, casts: dict[str, set[str]]) -> list[str] | str:
        """`void* x_ptr;` fields as pointers to the number type the kernel casts each to (bytes where it never uses
        one); why not, as a string."""
        from xlate.specs.model import ctypes_table

        out = []
        for d in decls:
            inner = d.child_by_field_name("declarator") if d.type == "pointer_declarator" else None
            if inner is None or inner.type != "field_identifier":
                return f"an untyped pointer or reference ('{text(d)}')"
            name = text(inner)
            if name not in casts:  # the kernel never touches it: its bytes
                out.append(f"{name}: {'in' if const else 'inout'}[1] as uint8")
                continue
            types = sorted(casts[name])
            if len(types) != 1:
                return (f"an untyped pointer '{name}' (void*) the kernel "
                        + (f"casts to several types ({', '.join(t + '*' for t in types)})" if types
                           else "does not cast to a pointer of one type") + ": its elements have no type xlate knows")
            info = ctypes_table().get(self.resolve_type(types[0]))
            dtype = info.get("numpy") if info is not None else None
            if not dtype:
                return (f"an untyped pointer '{name}' (void*) the kernel casts to {types[0]}*, which is no number type "
                        "xlate resolves (a template's type, a struct)")
            out.append(f"{name}: {'in' if const else 'inout'}[1] as {dtype}")
        return out

    def _array_size(self, size: str, binding: dict[str, str]) -> int | None:
        """An array member's length: a number, or an expression of numbers and object-like macros (`N * 2`,
        `(NDIM + 1)`); None when it names anything else (a constexpr, sizeof): a wrong length is a wrong layout."""
        size = binding.get(size.strip(), size.strip())
        for _ in range(8):
            names = [n for n in re.findall(r"\b[A-Za-z_]\w*\b", re.sub(r"\b\d\w*", " ", size))]
            if not names:
                break
            for n in names:
                m = self.macros.get(n)
                if m is None or m.params is not None:
                    return None
                size = re.sub(rf"\b{n}\b", f"({m.body.strip()})", size)
        else:
            return None
        try:
            value = evaluate(size, {})
        except (Undecidable, ValueError, ZeroDivisionError, TypeError):
            return None
        return int(value) if value > 0 else None

    def _members(self, body: ts.Node | None) -> list[ts.Node] | None:
        """A struct body's members with `#if`/`#ifdef` groups settled by the program's macros, as the compiler
        would; None when a condition cannot be decided."""
        macros = self.condition_macros()
        out: list[ts.Node] = []

        def take(group: ts.Node) -> bool:
            node: ts.Node | None = group
            while node is not None:
                if node.type == "preproc_else":
                    chosen = list(node.named_children)
                else:
                    try:
                        hit = bool(evaluate(_condition(node) or "1", macros))
                    except Undecidable:
                        return False
                    if not hit:
                        node = node.child_by_field_name("alternative")
                        continue
                    skip = {h.id for h in (node.child_by_field_name("name"), node.child_by_field_name("condition"),
                                           node.child_by_field_name("alternative")) if h is not None}
                    chosen = [c for c in node.named_children if c.id not in skip]
                for c in chosen:
                    if c.type in ("preproc_if", "preproc_ifdef"):
                        if not take(c):
                            return False
                    else:
                        out.append(c)
                return True
            return True

        for c in body.named_children if body is not None else []:
            if c.type in ("preproc_if", "preproc_ifdef"):
                if not take(c):
                    return None
            else:
                out.append(c)
        return out

    def _enumerators(self, f: SourceFile, node: ts.Node) -> None:
        """`enum { NOCTANT = 8, NDIM };`: each enumerator is a named constant, read like an object-like macro; an
        enumerator of a named enum also under its qualified name (`Camera::PINHOLE`, which C++ allows for plain
        enums too and requires of scoped ones)."""
        prev: str | None = None
        owner = node.parent.child_by_field_name("name") if node.parent is not None and (
            node.parent.type == "enum_specifier") else None
        for e in node.named_children:
            if e.type != "enumerator":
                continue
            name = text(e.child_by_field_name("name"))
            value = e.child_by_field_name("value")
            body = text(value) if value is not None else (f"({prev}) + 1" if prev is not None else "0")
            if name:
                self._candidates.append((MacroDef(name, None, body, f.path, f.line(e)), True))
                if owner is not None:
                    self._candidates.append((MacroDef(f"{text(owner)}::{name}", None, body, f.path, f.line(e)), True))
            prev = name

    def _macro(self, f: SourceFile, node: ts.Node) -> None:
        name = text(node.child_by_field_name("name"))
        params_node = node.child_by_field_name("parameters")
        params = [text(c) for c in params_node.children if c.is_named or text(c) == "..."] if (
            params_node is not None) else None  # `...` is no named node: kept, or __VA_ARGS__ has nothing to take
        value = node.child_by_field_name("value")
        body = re.sub(r"\\\s*\n", " ", text(value))
        body = re.sub(r"/\*.*?\*/|//.*$", " ", body, flags=re.S | re.M).strip()  # comments after the value
        if name:
            self._candidates.append((MacroDef(name, params, body, f.path, f.line(node)), False))

    def _function(self, f: SourceFile, node: ts.Node, cls: str = "") -> None:
        decl = node.child_by_field_name("declarator")
        while decl is not None and decl.type not in ("function_declarator",):
            decl = decl.child_by_field_name("declarator")
        if decl is None:
            return
        name_node = decl.child_by_field_name("declarator")
        if name_node is not None and name_node.type == "template_function":
            name_node = name_node.child_by_field_name("name")
        full = text(name_node)
        name = full.split("::")[-1]
        if not name:
            return
        if not cls and "::" in full:  # Class::method defined outside its class
            cls = full.split("::")[-2].split("<")[0]
        head = f.data[node.start_byte:decl.start_byte].decode("utf-8", "replace") + " " + " ".join(
            w for off, w in f.blanked if node.start_byte - 64 <= off < decl.start_byte)  # `DEVICE void f()`
        wrapper = node.parent
        if wrapper is not None and wrapper.type == "template_declaration":
            head = text(wrapper)[: node.start_byte - wrapper.start_byte] + head
        space = "kernel" if "__global__" in head else ("device" if "__device__" in head and "__host__" not in head else "host")
        params: list[tuple[str, str, bool]] = []
        plist = decl.child_by_field_name("parameters")
        for p in plist.named_children if plist is not None else []:
            if p.type not in ("parameter_declaration", "optional_parameter_declaration"):
                continue
            d = p.child_by_field_name("declarator")
            indirect = False
            while d is not None and d.type in ("pointer_declarator", "reference_declarator", "array_declarator",
                                               "abstract_pointer_declarator"):
                indirect = True
                nxt = d.child_by_field_name("declarator")
                d = nxt if nxt is not None else next((c for c in d.named_children if c.type == "identifier"), None)
            pname = text(d) if d is not None and d.type == "identifier" else ""
            params.append((pname, text(p.child_by_field_name("type")), indirect))
        tparams: list[str] = []
        tdefaults: dict[str, str] = {}
        if wrapper is not None and wrapper.type == "template_declaration":
            plist2 = wrapper.child_by_field_name("parameters")
            for tp in plist2.named_children if plist2 is not None else []:
                ident = tp.child_by_field_name("name") or tp.child_by_field_name("declarator") or next(
                    (c for c in tp.named_children if c.type in ("type_identifier", "identifier")), None)
                if ident is not None:
                    tparams.append(text(ident))
                    default = tp.child_by_field_name("default_type") or tp.child_by_field_name("default_value")
                    if default is not None:
                        tdefaults[text(ident)] = text(default)
        ret = text(node.child_by_field_name("type"))
        self.functions.setdefault(name, []).append(FuncDef(name, node, f.path, params, space, tparams, ret, cls,
                                                           tdefaults))

    # -- queries -------------------------------------------------------------------------------------------------
    @functools.cached_property
    def initialisers(self) -> dict[str, tuple[ts.Node, bool]]:
        """File-scope variables with an initialiser, in every file: name -> (the value, whether the declaration is
        `const`/`constexpr`); the first declaration of a name wins."""
        out: dict[str, tuple[ts.Node, bool]] = {}
        for _, decl in self.globals:
            quals = {text(c) for c in decl.children if c.type in ("type_qualifier", "storage_class_specifier")}
            for d in decl.children_by_field_name("declarator"):
                value = d.child_by_field_name("value") if d.type == "init_declarator" else None
                name = d.child_by_field_name("declarator") if value is not None else None
                if name is not None and name.type == "identifier":
                    out.setdefault(text(name), (value, bool(quals & {"const", "constexpr"})))
        return out

    def function(self, name: str, space: str | None = None, arity: int | None = None) -> FuncDef | None:
        """A free function (not a method) of that name."""
        for fd in self.functions.get(name, []):
            if fd.cls or (space is not None and fd.space != space):
                continue
            if arity is not None and len(fd.params) != arity and not _has_defaults(fd):
                continue
            return fd
        return None

    def source_of(self, node: ts.Node) -> SourceFile | None:
        return self._roots.get(_root(node).id)

    def class_named(self, ctype: str) -> str | None:
        """`ctype` as the program spells the struct or class it names, the program's typedefs and `using` aliases
        inside it read (`real_gen` with `using real_gen = gen::Lcg<idx_t>` is `gen::Lcg<int>`); None when it names
        no struct or class the program defines. (Aliases local to a function are read where the launch is.)"""
        full = spell_type(normalise_ctype(ctype).replace("const ", "").strip(), self.typedefs)
        base = full.split("<")[0].strip().split("::")[-1]
        return full if base in self.struct_nodes or base in self.class_tparams else None

    def resolve_type(self, ctype: str) -> str:
        """A type through the program's typedefs, `using` aliases and type macros (`Real_t` -> `double`)."""
        from xlate.specs.model import ctypes_table, normalise_ctype

        t = normalise_ctype(ctype)
        for _ in range(8):
            if t in ctypes_table():
                return t
            words = t.split()
            head = [w for w in words if w not in ("unsigned", "signed", "long", "short")]
            key = head[0] if len(head) == 1 else t
            nxt = self.typedefs.get(key)
            if nxt is None:
                m = self.macros.get(key)
                nxt = m.body if m is not None and m.params is None and m.body and len(m.body.split()) <= 3 else None
            if nxt is None:
                return t
            t = normalise_ctype(t.replace(key, nxt, 1) if key != t else nxt)
        return t

    def host_functions(self) -> list[FuncDef]:
        return [fd for fds in self.functions.values() for fd in fds if fd.space == "host"]


def spell_type(type_text: str, aliases: dict[str, str], depth: int = 0) -> str:
    """`kiss::Kiss<data_t>` with every name `aliases` binds replaced by what it stands for, through aliases of
    aliases (`data_t` -> `std::uint64_t`); qualified names (`kiss::`, `::Kiss`) and calls are left as they are."""
    t = " ".join(type_text.replace("typename ", "").split())
    if depth > 8:
        return t
    if re.fullmatch(r"[A-Za-z_]\w*", t) and t in aliases:
        return spell_type(aliases[t], aliases, depth + 1)
    return re.sub(r"(?<![\w:])([A-Za-z_]\w*)(?![\w:(])", lambda m: spell_type(m.group(1), aliases, depth + 1)
                  if m.group(1) in aliases else m.group(1), t)


@functools.cache
@functools.lru_cache(maxsize=64)
def _file_bytes(path: str, size: int) -> bytes | None:
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None
    return data if len(data) == size else None


def _original(f: SourceFile, start: int, end: int) -> str:
    """The source text of a span as written: the front end blanks qualifiers (`__align__(16)`) in place."""
    data = _file_bytes(f.path, len(f.data)) or f.data
    return bytes(data[start:end]).decode("utf-8", "replace")


def _template_args(args: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in args:
        depth += (ch == "<") - (ch == ">")
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return [*out, cur.strip()] if cur.strip() else out


def _constant_int(expr: str, known: dict[str, int]) -> int | None:
    """The value of an enumerator's initialiser made of integer literals, earlier enumerators and C operators."""
    names = set(re.findall(r"\b[A-Za-z_]\w*\b", re.sub(r"\b(0[xX][0-9a-fA-F]+|\d+)[uUlL]*\b", " ", expr)))
    if names - set(known):
        return None  # `sizeof(T)`, a constant of another scope: the preprocessor's rule (unknown names are 0) is wrong here
    expr = re.sub(r"\b(0[xX][0-9a-fA-F]+|\d+)[uUlL]*\b", lambda m: str(int(m.group(1), 0)) if not (
        m.group(1).startswith("0") and m.group(1)[1:].isdigit()) else str(int(m.group(1), 8)), expr)
    try:
        return evaluate(expr, {k: str(v) for k, v in known.items()})
    except (Undecidable, ArithmeticError, ValueError):
        return None


def _nested_enums(members: list[ts.Node]) -> dict[str, str]:
    """The enums a struct defines inside itself: name -> the underlying type (`int` unless it says `: uint8_t`)."""
    out: dict[str, str] = {}
    for fd in members:
        spec = fd.child_by_field_name("type") if fd.type == "field_declaration" else None
        name = spec.child_by_field_name("name") if spec is not None and spec.type == "enum_specifier" else None
        if name is not None:
            base = spec.child_by_field_name("base")  # type: ignore[union-attr]
            out[text(name)] = text(base) if base is not None else "int"
    return out


def _static_constants(members: list[ts.Node]) -> dict[str, int]:
    """A struct's `static constexpr int N = 6;` members: name -> value (numbers only)."""
    out: dict[str, int] = {}
    for fd in members:
        value = fd.child_by_field_name("default_value") if fd.type == "field_declaration" else None
        name = fd.child_by_field_name("declarator") if value is not None else None
        if name is None or name.type != "field_identifier" or not any(
                c.type == "storage_class_specifier" and text(c) == "static" for c in fd.children):
            continue
        with contextlib.suppress(ValueError):
            out[text(name)] = int(text(value).rstrip("uUlL"), 0)
    return out


def _library_layout(ctype: str) -> tuple[str, int] | None:
    """(scalar C type, lanes) of a library type spelt `ctype` (`glm::vec<3, float>`, `Eigen::Vector3f`) from
    xlate/data/library_types.yaml, or None. A template argument that is not a positive literal (Eigen::Dynamic,
    a name) gives no fixed layout."""
    found = library_type(ctype)
    return None if found is None else (found[0], found[1])


def _library_row(ctype: str) -> tuple[dict[str, Any], dict[str, str] | None] | None:
    """The xlate/data/library_types.yaml row of a library type spelt `ctype`, with its template arguments by
    parameter name (None for a `names` row); None: no such type, or a template given fewer arguments than it has
    parameters (extra trailing ones, glm's qualifier or Eigen's options, do not change the layout)."""
    table = data("library_types.yaml")
    t = re.sub(r"\b(const|volatile|struct|class)\b", " ", ctype).strip().removeprefix("::")
    row = table["names"].get(t)
    if row is not None:
        return row, None
    m = re.fullmatch(r"([A-Za-z_][\w:]*)\s*<(.*)>", t)
    row = table["templates"].get(m.group(1)) if m else None
    if m is None or row is None:
        return None
    args = _template_args(m.group(2))
    return (row, dict(zip(row["params"], args))) if len(args) >= len(row["params"]) else None


def library_type(ctype: str) -> tuple[str, int, list[str]] | None:
    """(scalar C type, lanes, lane member names) of a library type spelt `ctype` (xlate/data/library_types.yaml);
    the names are empty for a type whose lanes are no members (a matrix, a quaternion). None: no such type."""
    found = _library_row(ctype)
    if found is None:
        return None
    row, bound = found
    if bound is None:
        return str(row["scalar"]), int(row["lanes"]), _lane_names(row, int(row["lanes"]))
    params: list[str] = row["params"]
    values = {sp.Symbol(n): int(v) for n, v in bound.items() if n != row["scalar"] and re.fullmatch(r"\d+", v)}
    if len(values) != len(params) - 1:
        return None
    lanes = sp.sympify(str(row["lanes"]), locals={n: sp.Symbol(n) for n in params}).subs(values)
    if not lanes.is_Integer or lanes <= 0:
        return None
    return bound[row["scalar"]], int(lanes), _lane_names(row, int(lanes))


def library_matrix(ctype: str) -> tuple[str, int, int] | None:
    """(scalar C type, columns, rows) of a library's column-major matrix spelt `ctype` (a `matrix` row of
    xlate/data/library_types.yaml: glm's `mat3`, `mat<3, 2, float>`); None for any other type."""
    found = _library_row(ctype)
    if found is None or not found[0].get("matrix"):
        return None
    row, bound = found
    if bound is None:
        return str(row["scalar"]), int(row["matrix"][0]), int(row["matrix"][1])
    dims = [bound.get(str(p), "") for p in row["matrix"]]
    if not all(re.fullmatch(r"\d+", d) for d in dims):
        return None
    return bound[row["scalar"]], int(dims[0]), int(dims[1])


def _lane_names(row: dict[str, Any], lanes: int) -> list[str]:
    names = list(row.get("fields", []))
    return names[:lanes] if lanes <= len(names) else []


def _alignment(head: str, program: Program) -> int:
    """`alignas(16)` / `__align__(16)` (a macro for the number included) in a declaration's text; 0: none."""
    if re.search(r"__attribute__\s*\(\s*\(\s*(?:__)?aligned(?:__)?\s*\)\s*\)", head):
        return 16  # `aligned` alone: the target's largest alignment (x86-64 hosts, which nvcc follows)
    m = re.search(r"\b(?:alignas|__align__|__attribute__\s*\(\s*\(\s*(?:__)?aligned(?:__)?)\s*\(\s*(\w+)\s*\)", head)
    if m is None:
        return 0
    value = program._array_size(m.group(1), {})
    return value if value and not value & (value - 1) else 0


def _define_query() -> ts.Query:
    from xlate.parse import languages

    return ts.Query(languages.language("cuda"), "(preproc_def) @d (preproc_function_def) @d")


@functools.cache
def _enum_query() -> ts.Query:
    from xlate.parse import languages

    return ts.Query(languages.language("cuda"), "(enumerator_list) @e")


def _enumerator_lists(root: ts.Node) -> list[ts.Node]:
    found = ts.QueryCursor(_enum_query()).captures(root).get("e", [])
    return sorted(found, key=lambda n: n.start_byte)


def _defines(root: ts.Node) -> list[ts.Node]:
    found = ts.QueryCursor(_define_query()).captures(root).get("d", [])
    return sorted(found, key=lambda n: n.start_byte)


def _root(node: ts.Node) -> ts.Node:
    cur = node
    while cur.parent is not None:
        cur = cur.parent
    return cur


@functools.lru_cache(maxsize=4096)
def default_args(node: ts.Node) -> tuple[ts.Node | None, ...]:
    """Each parameter's default argument (`int m = Align`), None where it has none."""
    decl = node.child_by_field_name("declarator")
    while decl is not None and decl.type != "function_declarator":
        decl = decl.child_by_field_name("declarator")
    plist = decl.child_by_field_name("parameters") if decl is not None else None
    return tuple(p.child_by_field_name("default_value") if p.type == "optional_parameter_declaration" else None
                 for p in (plist.named_children if plist is not None else [])
                 if p.type in ("parameter_declaration", "optional_parameter_declaration"))


def _has_defaults(fd: FuncDef) -> bool:
    plist = fd.node.child_by_field_name("declarator")
    return plist is not None and "=" in text(plist)


# -- loading -------------------------------------------------------------------------------------------------

_CACHE: dict[tuple[str, float, int], SourceFile] = {}
_LOCK = threading.Lock()


# a pointer cast of a parenthesised name: `(float *)(p) + 3 * g` reads to the grammar as a cast of `+3` to a type
# `p`, times g; `(float *) p  + 3 * g` (the same bytes but the parentheses) reads as written
_CAST_OF_NAME = re.compile(rb"(\(\s*(?:const\s+)?[A-Za-z_][\w:]*(?:\s*<[^<>()]*>)?\s*(?:const\s*)?\*+\s*(?:const\s*)?\))"
                           rb"(\s*)\((\s*[A-Za-z_]\w*\s*)\)")


def _unparen_cast_operands(data: bytes) -> bytes:
    """`(T *)(name)` as `(T *) name `: one byte for one, so every node keeps its line and column."""
    return _CAST_OF_NAME.sub(lambda m: m.group(1) + m.group(2) + b" " + m.group(3) + b" ", data)


def parse_source(path: str, data: bytes) -> SourceFile:
    """Parse bytes with the front end's CUDA reading (a superset of the C++ host files use): qualifier macros
    blanked, conditionals that split a statement flattened, grammar gaps contained (xlate.parse.frontend); a
    pointer cast's parenthesised operand unwrapped (_unparen_cast_operands)."""
    from xlate.parse.frontend import parse_c

    cp = parse_c(_unparen_cast_operands(data), path, "cuda")
    return SourceFile(path, cp.view, cp.tree, list(cp.blanked))


def _member_aliases(members: list[ts.Node], binding: dict[str, str]) -> dict[str, str]:
    """Types the struct names inside its body (`using index_t = uint32_t;`, `typedef float real;`), for its own
    members' types."""
    out: dict[str, str] = {}
    for m in members:
        if m.type == "alias_declaration":
            alias, target = m.child_by_field_name("name"), m.child_by_field_name("type")
        elif m.type == "type_definition":
            alias, target = m.child_by_field_name("declarator"), m.child_by_field_name("type")
        else:
            continue
        t = " ".join(text(target).split()) if target is not None else ""
        if alias is not None and alias.type == "type_identifier" and t and not re.search(r"[\[*&(]", t):  # no arrays
            out[text(alias)] = binding.get(t, out.get(t, t))  # (an array alias is read with the array typedefs)
    return out


def library_pointer_record(name: str) -> dict[str, Any] | None:
    """The library_types.yaml entry of a library struct holding pointers, by its qualified name or its last
    component (`TensorInfo` brought in by a `using`)."""
    table = data("library_types.yaml").get("pointer_records") or {}
    if name in table:
        return table[name]
    base = name.split("::")[-1]
    return next((v for k, v in table.items() if k.split("::")[-1] == base), None)


def load_file(path: str) -> SourceFile | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    if st.st_size > MAX_FILE_BYTES or st.st_size == 0:
        return None
    key = (os.path.abspath(path), st.st_mtime, st.st_size)
    with _LOCK:
        hit = _CACHE.get(key)
    if hit is not None:
        return hit
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None
    if b"\0" in data:
        return None
    sf = parse_source(path, data)  # bytes that are not UTF-8 (Latin-1 copyright signs) pass through
    with _LOCK:
        if len(_CACHE) > 4096:
            _CACHE.clear()
        _CACHE[key] = sf
    return sf


def context_paths(path: str) -> list[str]:
    """The files beside `path` that may hold its launch sites and sizes (same folder, bounded), and the quoted
    headers they include from elsewhere."""
    folder = Path(os.path.abspath(path)).parent
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    out = [str(folder / n) for n in names if n.endswith(CONTEXT_SUFFIXES) and (folder / n).is_file()]
    me = os.path.abspath(path)
    out = [p for p in out if p != me][:MAX_CONTEXT_FILES]
    # a kernel in src/ or include/ is launched from the program's main one folder up: those files that include
    # something from this folder belong to the program too
    parent = folder.parent
    try:
        above = sorted(os.listdir(parent)) if parent != folder else []
    except OSError:
        above = []
    for n in above:
        q = parent / n
        if not n.endswith(CONTEXT_SUFFIXES) or not q.is_file() or len(out) >= MAX_CONTEXT_FILES:
            continue
        try:
            head = q.read_bytes()[:200000].decode("utf-8", "replace")
        except OSError:
            continue
        if re.search(r'^\s*#\s*include\s*"' + re.escape(folder.name) + r"/", head, re.M):
            out.append(str(q))
    extra: list[str] = []
    search = _include_search_dirs(folder, me)
    for p in [me, *out]:
        try:
            head = Path(p).read_bytes()[:200000].decode("utf-8", "replace")
        except OSError:
            continue
        for inc in re.findall(r'^\s*#\s*include\s*"([^"]+)"', head, re.M):
            q = next((c for c in (os.path.normpath(os.path.join(d, inc)) for d in (os.path.dirname(p), *search))
                      if os.path.isfile(c)), None)
            if q is not None and q != me and q not in out and q not in extra and len(extra) < 16:
                extra.append(q)
    return out + extra


def _include_search_dirs(folder: Path, path: str) -> list[str]:
    """Where a quoted #include not beside its includer is looked for: the build's -I folders (Makefile), and the
    `include/` folders a project keeps beside or above its sources (`src/csrc/k.cu` including "Common.h" from
    `src/include/`, which setup.py or CMake passes with -I)."""
    from xlate.parse.buildflags import build_flags

    dirs = list(build_flags(path).include_dirs)
    for base in (folder, folder.parent, folder.parent.parent):
        for name in ("include", "inc"):
            cand = base / name
            if cand.is_dir() and str(cand) not in dirs:
                dirs.append(str(cand))
    return dirs


def program_for(unit: KernelUnit, context: list[KernelUnit] | None = None) -> Program:
    """The unit's own text first, then the context: the given units, or the files beside the unit's path."""
    from xlate.parse.source import to_bytes

    files = [parse_source(unit.path, to_bytes(unit.text))]
    seen = {os.path.abspath(unit.path)}
    if context is not None:
        for u in context:
            if os.path.abspath(u.path) in seen:
                continue
            seen.add(os.path.abspath(u.path))
            files.append(parse_source(u.path, to_bytes(u.text)))
    elif os.path.isfile(unit.path):
        for p in context_paths(unit.path):
            sf = load_file(p)
            if sf is not None:
                files.append(sf)
    program = Program(files)
    if os.path.isfile(unit.path):
        program.add_build_macros(Path(os.path.abspath(unit.path)).parent)
    return program


def _condition(node: ts.Node) -> str:
    """The #if expression a preprocessor group's body stands under ("" for #else and include guards)."""
    if node.type == "preproc_ifdef":
        name = node.child_by_field_name("name")
        if name is None:
            return ""
        negated = text(node).lstrip("#").lstrip().startswith("ifndef")
        first = next((c for c in node.named_children if c.id != name.id), None)
        if negated and first is not None and first.type == "preproc_def" and text(
                first.child_by_field_name("name")) == text(name):
            return ""  # #ifndef GUARD / #define GUARD: an include guard
        return f"{'!' if negated else ''}defined({text(name)})"
    if node.type in ("preproc_if", "preproc_elif"):
        cond = node.child_by_field_name("condition")
        return text(cond) if cond is not None else ""
    return ""
