"""One translation in progress: the parsed file, its edits, diagnostics and stats, and helpers shared by the
passes (regions, enclosing functions, mask and declaration look-ups)."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import Any

import tree_sitter as ts

from xlate.model import Function, KernelUnit
from xlate.parse import languages
from xlate.parse.frontend import parse_c
from xlate.parse.nodes import Source
from xlate.parse.normalize import brace_debt
from xlate.parse.source import to_bytes
from xlate.translate.base import Diagnostic
from xlate.translate.hip import diagnostics, queries
from xlate.translate.hip.ctokens import identifiers as macro_identifiers
from xlate.translate.hip.edits import EditSet
from xlate.translate.hip.shadows import Shadows
from xlate.translate.hip.stats import Stats
from xlate.translate.hip.tables import MappingTables

MACRO_WRAPPERS = ((b"void __xlate_macro__() {\n", b"\n;}\n"), (b"", b"\n"))


@dataclass
class Region:
    """A parsed text: the whole file, or a macro body parsed on its own (`shift` maps its offsets to the file)."""

    data: bytes
    root: ts.Node
    shift: int = 0
    lo: int = 0  # the part of `data` that is the file's text (a macro body sits between wrapper bytes)
    hi: int = -1
    macro: str | None = None  # the macro's name, for a macro body

    def __post_init__(self) -> None:
        if self.hi < 0:
            self.hi = len(self.data)

    def start(self, node: ts.Node) -> int:
        return node.start_byte + self.shift

    def end(self, node: ts.Node) -> int:
        return node.end_byte + self.shift

    def text(self, node: ts.Node | None) -> str:
        if node is None:
            return ""
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "replace")


def args_of(call: ts.Node) -> list[ts.Node]:
    arglist = call.child_by_field_name("arguments")
    if arglist is None:
        return []
    return [c for c in arglist.named_children if c.type != "comment"]


_CAST = re.compile(r"^\((?:unsigned|unsignedint|uint32_t|uint64_t|unsignedlong|unsignedlonglong|int|long|longlong|signed)\)")
_STATIC_CAST = re.compile(r"^static_cast<[a-z0-9_]+>\((.*)\)$")
_SUFFIX = re.compile(r"^([~-]?(?:0x[0-9a-f]+|[0-9]+))[ul]+$")


def normalize_expr(text: str) -> str:
    """An expression's text without spaces, outer parentheses, integer casts and literal suffixes (lower case)."""
    t = "".join(text.split()).lower()
    for _ in range(8):
        prev = t
        while t.startswith("(") and t.endswith(")") and _balanced(t[1:-1]):
            t = t[1:-1]
        t = _CAST.sub("", t)
        m = _STATIC_CAST.match(t)
        if m:
            t = m.group(1)
        m = _SUFFIX.match(t)
        if m:
            t = m.group(1)
        if t.startswith("~") and _SUFFIX.match(t[1:]):
            t = "~" + _SUFFIX.match(t[1:]).group(1)  # type: ignore[union-attr]
        if t == prev:
            break
    return t


def _balanced(t: str) -> bool:
    depth = 0
    for ch in t:
        depth += ch == "("
        depth -= ch == ")"
        if depth < 0:
            return False
    return depth == 0


@dataclass
class Job:
    unit: KernelUnit
    text: str
    direction: str  # cuda->hip | hip->cuda
    tables: MappingTables
    wave: int
    arch: str | None
    rules: dict[str, Any]  # intrinsics.yaml
    options_extra: dict[str, Any] = field(default_factory=dict)
    rocm: str | None = None  # the user's ROCm (cuda->hip: always resolved; hip->cuda: None)
    roc: bool = False  # roc* library targets
    launch_syntax: str = "ggl"  # ggl | chevron
    project_names: frozenset[str] = frozenset()  # defined by the project in other files

    def __post_init__(self) -> None:
        self.path = self.unit.path
        self.data = to_bytes(self.text)  # bytes that are not UTF-8 pass through unchanged
        self.src = Source(self.path, self.data)
        # The front end's parse (shared with the model through its cache): grammar gaps repaired, inactive
        # branches of conditionals that split a statement masked (`self.masked`, translated on their own).
        parsed = parse_c(self.data, self.path, "cuda", self.unit.project_macros)
        self.tree = parsed.tree
        self.masked = list(parsed.masked)
        self.gaps = [(s, e) for s, e, missing in parsed.gaps if not missing]
        self.main = Region(self.data, self.tree.root_node)
        self.edits = EditSet(self.data, self.src)
        self.diags: list[Diagnostic] = []
        self.stats = Stats()
        self.helpers: set[str] = set()
        self.skip: list[tuple[int, int]] = []  # file ranges no pass may touch (a compat block being removed)
        self.by_body: dict[int, Function] = {f.body_span.start_byte: f for f in self.unit.functions if f.body_span}
        self.blocking_functions: set[str] = set()
        self.blocking_macros: set[str] = set()
        self._once: set[tuple[str, str, str]] = set()
        self._macro_values = {m.name: m.value for m in self.unit.macros if m.params is None}
        self._calls: dict[int, list[tuple[str, ts.Node, ts.Node]]] = {}
        self._decls: dict[tuple[int, int], dict[str, tuple[list[int], list[Declarator]]]] = {}
        self._call_starts: dict[tuple[int, int], list[int]] = {}
        self._queries: dict[int, dict[str, list[tuple[int, queries.Captures]]]] = {}
        self._query_starts: dict[tuple[int, str], list[int]] = {}
        self._object_macros = {**self.unit.constants, **self._macro_values}
        self._skip_sorted: tuple[int, list[int], list[int]] | None = None
        self._shadows: Shadows | None = None

    @property
    def shadows(self) -> Shadows:
        """Where the file's own declarations hide a CUDA built-in of the same name (shadows.py)."""
        if self._shadows is None:
            self._shadows = Shadows(self.data, self.tree.root_node, self.skipped)
        return self._shadows

    # -- where is a node -------------------------------------------------------------------------------------
    def skipped(self, start: int, end: int) -> bool:
        """Inside a range some pass deletes or replaces whole (bisection over the merged, sorted ranges; passes
        append to `skip` as they go, so new ranges are merged in one by one, not re-sorted per query)."""
        if not self.skip:
            return False
        seen, starts, ends = self._skip_sorted if self._skip_sorted is not None else (0, [], [])
        for a, b in self.skip[seen:]:
            _merge_range(starts, ends, a, b)
        self._skip_sorted = (len(self.skip), starts, ends)
        i = bisect.bisect_right(starts, start) - 1
        return i >= 0 and end <= ends[i] and start < ends[i]

    def function_node(self, node: ts.Node) -> ts.Node | None:
        cur = node.parent
        while cur is not None:
            if cur.type == "function_definition":
                return cur
            cur = cur.parent
        return None

    def function_of(self, region: Region, node: ts.Node) -> Function | None:
        """The kernel or __device__ function a node of the main region sits in (None: host code, file scope)."""
        if region.macro is not None:
            return None
        fn = self.function_node(node)
        body = fn.child_by_field_name("body") if fn is not None else None
        return self.by_body.get(body.start_byte) if body is not None else None

    def in_device(self, region: Region, node: ts.Node) -> bool:
        return region.macro is not None or self.function_of(region, node) is not None

    def users_own(self, region: Region, at: ts.Node | int, name: str) -> bool:
        """`name` here is the file's own declaration (a local variable, parameter, member, macro or function of
        that name in scope): no rule may rewrite it as the CUDA built-in. Notes it once per name; a function
        the file defines, or a macro only under a conditional, does not hide the built-in (shadows.py), but is
        worth a warning where the built-in is rewritten."""
        offset = region.start(at) if isinstance(at, ts.Node) else at
        kind = self.shadows.kind_at(name, offset)
        if kind is not None:
            self.diag("XL1014", region, at, rule=f"user:{name}", once=f"own:{name}", name=name, kind=kind)
            return True
        if self.shadows.also_defined(name):
            self.diag("XL1015", region, at, rule=f"user:{name}", once=f"cond:{name}", name=name)
        return False

    # -- diagnostics -----------------------------------------------------------------------------------------
    def diag(self, code: str, region: Region, node: ts.Node | int, *, rule: str | None = None,
             once: str | None = None, function: Function | None = None, **fields: Any) -> Diagnostic | None:
        """Emit `code` at a node (or file offset). `once`: emit only the first for this key and code."""
        offset = region.start(node) if isinstance(node, ts.Node) else node
        fn = function
        if fn is None and isinstance(node, ts.Node):
            fn = self.function_of(region, node)
        scope = fn.name if fn else (region.macro or "")
        if once is not None:
            key = (code, scope, once)
            if key in self._once:
                return None
            self._once.add(key)
        span = self.src.span_bytes(offset, offset)
        d = diagnostics.make(code, self.path, span.line, span.col, kernel=fn.name if fn and fn.kind == "kernel" else None,
                             rule=rule, **fields)
        self.diags.append(d)
        if d.severity == "error" or d.needs_llm:
            if fn is not None:
                self.blocking_functions.add(fn.name)
            elif region.macro is not None:
                self.blocking_macros.add(region.macro)
        return d

    # -- calls of a region -----------------------------------------------------------------------------------
    def query(self, name: str, region: Region) -> list[queries.Captures]:
        """The captures of queries.QUERIES[name] over a region (one traversal serves all of a direction's)."""
        return [c for _, c in self._query_rows(name, region)]

    def query_in(self, name: str, region: Region, node: ts.Node) -> list[queries.Captures]:
        """... restricted to the matches that start inside `node`."""
        rows = self._query_rows(name, region)
        key = (id(region.root), name)
        starts = self._query_starts.get(key)
        if starts is None:
            starts = self._query_starts[key] = [a for a, _ in rows]
        lo, hi = bisect.bisect_left(starts, node.start_byte), bisect.bisect_left(starts, node.end_byte)
        return [c for _, c in rows[lo:hi]]

    def _query_rows(self, name: str, region: Region) -> list[tuple[int, queries.Captures]]:
        key = id(region.root)
        table = self._queries.get(key)
        if table is None:
            group = queries.FORWARD if self.direction == "cuda->hip" else queries.REVERSE
            table = self._queries[key] = queries.run(group, region.root)
        if name not in table:
            table.update(queries.run((name,), region.root))
        return table[name]

    def calls(self, region: Region) -> list[tuple[str, ts.Node, ts.Node]]:
        """(kind, call node, name node) for every call of a region: kind fn (plain), member, qualified."""
        key = id(region.root)
        if key not in self._calls:
            out = []
            for m in self.query("calls", region):
                if "call" in m:
                    out.append(("fn", m["call"][0], m["fn"][0]))
                elif "mcall" in m:
                    out.append(("member", m["mcall"][0], m["member"][0]))
                elif "qcall" in m:
                    out.append(("qualified", m["qcall"][0], m["qname"][0]))
            out.sort(key=lambda t: t[1].start_byte)
            self._calls[key] = out
        return self._calls[key]

    def calls_in(self, region: Region, node: ts.Node) -> list[tuple[str, ts.Node, ts.Node]]:
        """The calls of `region` that start inside `node` (bisection over the sorted call list)."""
        calls = self.calls(region)
        key = (id(region.root), -1)
        starts = self._call_starts.get(key)
        if starts is None:
            starts = self._call_starts[key] = [c[1].start_byte for c in calls]
        lo = bisect.bisect_left(starts, node.start_byte)
        hi = bisect.bisect_left(starts, node.end_byte)
        return calls[lo:hi]

    @property
    def object_macros(self) -> dict[str, str]:
        """Object-like macros and file-scope constants, name -> value text."""
        return self._object_macros

    # -- values ----------------------------------------------------------------------------------------------
    def is_full_mask(self, region: Region, node: ts.Node) -> bool:
        full = set(self.rules["_full_masks"])
        if normalize_expr(region.text(node)) in full:
            return True
        if node.type == "identifier":
            return self._name_is_full(region, node, region.text(node), full, 0)
        return False

    def _name_is_full(self, region: Region, node: ts.Node, name: str, full: set[str], depth: int) -> bool:
        if depth > 8:
            return False
        value = self._macro_values.get(name) or self.unit.constants.get(name)
        if value is None:
            decl = self.local_declaration(region, node, name)
            if decl is not None and decl[2] is not None and (decl[3] or self._never_written(region, node, decl[1])):
                value = decl[2]
        if value is None:
            return False
        norm = normalize_expr(value)
        if norm in full:
            return True
        if re.fullmatch(r"[a-z_][a-z0-9_]*", norm, re.I):
            return self._name_is_full(region, node, value.strip(), full, depth + 1)
        return False

    def _never_written(self, region: Region, at: ts.Node, declarator: ts.Node) -> bool:
        """A local that is not const but keeps its initial value: after its declaration, nothing in its function
        assigns it, increments it, takes its address or hands it to a function of this file (which might take it
        by reference). `unsigned mask = 0xffffffff;` then reads as the full mask it is."""
        fn = self.function_node(at) if region.macro is None else None
        scope = fn if fn is not None else region.root
        name = region.text(declarator)
        own = {f.name for f in self.unit.functions} | {h.name for h in self.unit.host_functions}
        stack = [scope]
        while stack:
            n = stack.pop()
            if n.type in ("comment", "string_literal"):
                continue
            if n.type == "identifier" and n.start_byte > declarator.start_byte and region.text(n) == name:
                parent = n.parent
                if parent is None:
                    continue
                if parent.type == "assignment_expression" and parent.child_by_field_name("left") == n:
                    return False
                if parent.type == "update_expression":
                    return False
                if parent.type == "pointer_expression" and region.text(parent).lstrip().startswith("&"):
                    return False
                if parent.type == "argument_list" and parent.parent is not None:
                    callee = parent.parent.child_by_field_name("function")
                    if callee is None or region.text(callee) in own:
                        return False
                continue
            stack.extend(n.children)
        return True

    def local_declaration(self, region: Region, node: ts.Node, name: str) -> LocalDecl | None:
        """(type text, declarator node, initialiser text, const?) of `name` in the enclosing function or its
        parameters, the nearest declaration before `node`."""
        fn = self.function_node(node) if region.macro is None else None
        scope = fn if fn is not None else region.root
        key = (id(region.root), scope.start_byte)
        if key not in self._decls:
            self._decls[key] = _declaration_index(region, scope)
        starts, found = self._decls[key].get(name, ((), ()))
        i = bisect.bisect_right(starts, node.start_byte)  # the last one starting at or before the node
        if not i:
            return None
        decl, target, ident, value = found[i - 1]
        quals = [region.text(c) for c in decl.children if c.type == "type_qualifier"]
        pointer = target is not None and target.type in ("pointer_declarator", "reference_declarator")
        return (region.text(decl.child_by_field_name("type")) + ("*" if pointer else ""), ident,
                region.text(value) if value is not None else None, "const" in quals or "constexpr" in quals)

    def rename_text(self, text: str) -> str:
        """`text` with its identifiers renamed by the tables and the compat identifiers (for copied arguments)."""
        data = text.encode()
        out, pos = [], 0
        compat = self.rules.get("_compat_identifiers", {})
        for use in macro_identifiers(data):
            if use.member or use.pasted:
                continue
            name = use.token.text
            target = compat[name]["hip"] if name in compat else None
            if target is None:
                m = self.tables.lookup("identifier", name)
                target = m.target if m is not None else None
            if target and target != name:
                out.append(data[pos : use.token.start].decode())
                out.append(target)
                pos = use.token.end
        out.append(data[pos:].decode())
        return "".join(out)


def _merge_range(starts: list[int], ends: list[int], a: int, b: int) -> None:
    """Add [a, b) to disjoint sorted ranges, merging those it overlaps or touches."""
    i = bisect.bisect_right(starts, a) - 1
    lo = i if i >= 0 and a <= ends[i] else i + 1
    hi = bisect.bisect_right(starts, b) - 1
    if hi < lo:
        starts.insert(lo, a)
        ends.insert(lo, b)
        return
    new_a, new_b = min(a, starts[lo]), max(b, ends[hi])
    starts[lo : hi + 1] = [new_a]
    ends[lo : hi + 1] = [new_b]


LocalDecl = tuple[str, ts.Node, "str | None", bool]
Declarator = tuple[ts.Node, "ts.Node | None", ts.Node, "ts.Node | None"]  # declaration, target, identifier, value


def _declaration_index(region: Region, scope: ts.Node) -> dict[str, tuple[list[int], list[Declarator]]]:
    """name -> (start bytes, declarators) of every declaration of it under `scope`, in source order: one walk per
    scope (each of a file's many warp shuffles rescanned every declaration before it)."""
    index: dict[str, tuple[list[int], list[Declarator]]] = {}
    for decl in _declarations(scope):
        for d in decl.children_by_field_name("declarator"):
            target, value = d, None
            if d.type == "init_declarator":
                target, value = d.child_by_field_name("declarator"), d.child_by_field_name("value")
            ident = target
            while ident is not None and ident.type not in ("identifier", "field_identifier"):
                ident = ident.child_by_field_name("declarator")
            if ident is not None:
                starts, found = index.setdefault(region.text(ident), ([], []))
                starts.append(decl.start_byte)
                found.append((decl, target, ident, value))
    return index


def _declarations(scope: ts.Node):
    """Declarations and parameters under `scope`, in source order (iterative walk)."""
    stack = [scope]
    found = []
    while stack:
        n = stack.pop()
        if n.type in ("declaration", "parameter_declaration"):
            found.append(n)
        if n.type in ("comment", "string_literal"):
            continue
        stack.extend(reversed(n.children))
    found.sort(key=lambda n: n.start_byte)
    return found


def parse_branch(data: bytes, start: int, end: int) -> Region | None:
    """An inactive #if branch the front end masked, parsed on its own: as it is, or with the braces it leaves
    open (`if (y) {`) or closes (`}`) balanced by the wrapper; None when it is not C++ even then."""
    region = parse_macro_body(data, start, end, None)
    if region is not None:
        return region
    closes, opens = brace_debt(data[start:end])
    if not closes and not opens:
        return None
    prefix = b"void __xlate_branch__() {\n" + b"{" * closes
    wrapped = prefix + data[start:end] + b"\n;" + b"}" * opens + b"}\n"
    tree = languages.parser("cuda").parse(wrapped)
    if tree.root_node.has_error:
        return None
    return Region(wrapped, tree.root_node, shift=start - len(prefix), lo=len(prefix), hi=len(prefix) + end - start)


def parse_macro_body(data: bytes, start: int, end: int, name: str | None) -> Region | None:
    """A `#define` value parsed on its own (as statements in a function body, or at file scope); None when it
    is not C++ by itself (token pasting, partial declarations)."""
    body = data[start:end]
    parser = languages.parser("cuda")
    for prefix, suffix in MACRO_WRAPPERS:
        wrapped = prefix + body + suffix
        tree = parser.parse(wrapped)
        if not tree.root_node.has_error:
            return Region(wrapped, tree.root_node, shift=start - len(prefix), lo=len(prefix),
                          hi=len(prefix) + len(body), macro=name)
    return None
