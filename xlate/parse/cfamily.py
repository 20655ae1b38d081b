"""Build a KernelUnit from CUDA, HIP, AscendC or C++ source (tree-sitter-cuda / tree-sitter-cpp)."""

from __future__ import annotations

import bisect
import functools
import os
import re
from typing import Any

import tree_sitter as ts

from xlate.model import (
    ApiCall,
    AsmUse,
    AtomicUse,
    Function,
    HostFunction,
    HostVariable,
    Include,
    IntrinsicUse,
    KernelUnit,
    LaunchSite,
    Macro,
    Param,
    SharedDecl,
    TemplateParam,
)
from xlate.parse import languages, ppscan
from xlate.parse.access import AccessAnalyzer, Effects, resolve_interprocedural
from xlate.parse.consteval import ConstEvaluator
from xlate.parse.nodes import Source, annotation_above, declared_value, walk
from xlate.resources import data

EXEC_SPACE = ("__global__", "__device__", "__host__", "__aicore__")
# What keeps a file-scope declaration off the host: device memory spaces and execution spaces, compile-time
# constants (usable in device code), typedefs.
DEVICE_STORAGE = {"__device__", "__constant__", "__managed__", "__shared__", "__global__", "const", "constexpr",
                  "typedef"}
QUALIFIER_TOKENS = {
    "__global__",
    "__device__",
    "__host__",
    "__forceinline__",
    "__noinline__",
    "__inline__",
}


@functools.cache
def intrinsic_categories() -> dict[str, str]:
    table: dict[str, list[str]] = data("cuda_intrinsics.yaml")
    out: dict[str, str] = {}
    for category, names in table.items():
        for name in names:
            out.setdefault(name, category)
    return out


@functools.cache
def api_family_patterns() -> list[tuple[re.Pattern[str], str]]:
    return [(re.compile(rx), fam) for rx, fam in data("api_families.yaml")]


def api_family(name: str) -> str | None:
    for rx, fam in api_family_patterns():
        if rx.search(name):
            return fam
    return None


class SpanIndex:
    """Innermost enclosing range lookup by bisection (definitions do not overlap, except nesting)."""

    def __init__(self, spans: list[tuple[int, int, Any]]):
        self.spans = sorted(spans, key=lambda s: (s[0], -s[1]))
        self.starts = [s[0] for s in self.spans]

    def find(self, start: int, end: int) -> Any:
        i = bisect.bisect_right(self.starts, start) - 1
        while i >= 0:
            s, e, value = self.spans[i]
            if s <= start and end <= e:
                return value
            if e < start and i > 0 and self.spans[i - 1][1] < start:
                # no earlier span can contain this one unless spans nest; scan back a little for nesting
                j = i - 1
                while j >= 0 and j > i - 8:
                    s2, e2, v2 = self.spans[j]
                    if s2 <= start and end <= e2:
                        return v2
                    j -= 1
                return None
            i -= 1
        return None


def _wrapper(node: ts.Node) -> ts.Node:
    """The outermost node that belongs to a definition (template_declaration, linkage_specification)."""
    cur = node
    while cur.parent is not None and cur.parent.type in ("template_declaration", "linkage_specification"):
        cur = cur.parent
    return cur


class CFamilyBuilder:
    def __init__(self, src: Source, language: str, grammar: str, blanked: list[tuple[int, str]]):
        self.src = src
        self.language = language
        self.grammar = grammar
        self.blanked = sorted(blanked)
        self.blanked_at = [offset for offset, _ in self.blanked]
        self.cats = intrinsic_categories()

    # -- entry ---------------------------------------------------------------------------------------------
    def build(self, root: ts.Node) -> KernelUnit:
        self.root = root
        names = ["functions", "instantiations", "includes", "macros", "constants", "calls", "asm"]
        if self.grammar == "cuda":
            names += ["identifiers", "shared", "launches"]
        self.found = languages.matches_many(self.grammar, names, root)
        unit = KernelUnit(path=self.src.path, language=self.language, size_bytes=len(self.src.data))  # type: ignore[arg-type]
        unit.includes = self._includes(root)
        unit.macros = self._macros(root)
        unit.constants = self._constants(root)
        self.consteval = ConstEvaluator(self.src, self.grammar, unit.macros, unit.constants, self.outer_macros)

        fn_nodes = [m["function"][0] for m in self.found["functions"]]
        functions: list[tuple[Function, ts.Node]] = []
        host_nodes: list[tuple[str, ts.Node]] = []
        for node in fn_nodes:
            qualifiers = self._qualifiers(node)
            name = self._function_name(node)
            if name is None:
                continue
            if "__global__" in qualifiers:
                kind = "kernel"
            elif "__device__" in qualifiers or "__aicore__" in qualifiers:
                kind = "device"
            else:
                host_nodes.append((name, node))
                continue
            functions.append((self._function(node, name, kind, qualifiers), node))
        device_names = {f.name for f, _ in functions if f.kind == "device"}
        self.macro_atomics = self._macro_atomics(unit.macros)
        self._analyse_bodies(functions, device_names)
        _inherit_atomics([f for f, _ in functions])
        unit.kernels = [f for f, _ in functions if f.kind == "kernel"]
        unit.device_functions = [f for f, _ in functions if f.kind == "device"]
        unit.host_functions = [HostFunction(name, self.src.span(_wrapper(n))) for name, n in host_nodes]
        host_names = {name for name, _ in host_nodes}
        for m in self.found["instantiations"]:
            inst = m["instantiation"][0]
            name = self._declarator_name(m["declarator"][0])
            if name in host_names:
                unit.host_functions.append(HostFunction(name, self.src.span(inst)))

        self._device_nodes = [n for _, n in functions]
        self._device_words: str | None = None
        unit.host_variables = self._host_variables(root)
        spans = SpanIndex([(_wrapper(n).start_byte, n.end_byte, name) for name, n in host_nodes] + [
            (n.start_byte, n.end_byte, f.name) for f, n in functions
        ])
        kernel_names = {k.name for k in unit.kernels}
        unit.launches = self._launches(root, spans, kernel_names)
        unit.api_calls = self._api_calls(root, spans)
        return unit

    def _host_variables(self, root: ts.Node) -> list[HostVariable]:
        """File-scope declarations that are host-only: variables without a device memory space, and prototypes
        of functions without an execution space (NVRTC refuses both)."""
        out: list[HostVariable] = []
        stack = list(root.children)
        while stack:
            node = stack.pop()
            if node.type in ("namespace_definition", "linkage_specification"):
                body = node.child_by_field_name("body")
                if body is not None and body.type == "declaration_list":
                    stack.extend(body.children)
                elif body is not None:  # extern "C" void f(void);
                    stack.append(body)
                continue
            if node.type.startswith("preproc_") and node.type not in ("preproc_def", "preproc_function_def",
                                                                          "preproc_include", "preproc_call"):
                stack.extend(node.children)  # #if/#ifdef bodies (include guards)
                continue
            outer = node
            if node.type == "template_declaration":  # template <class T> void f(T);
                node = next((c for c in node.named_children
                             if c.type in ("declaration", "struct_specifier", "class_specifier")), node)
            if node.type in ("struct_specifier", "class_specifier") or (
                    node.type == "declaration" and not node.children_by_field_name("declarator")):
                host_class = self._host_only_class(node)
                if host_class is not None:
                    out.append(HostVariable(host_class, self.src.span(outer)))
                continue
            if node.type != "declaration":
                continue
            declarators = node.children_by_field_name("declarator")
            if not declarators:
                continue
            first = min(d.start_byte for d in declarators)
            words = {self.src.text(c) for c in node.children if c.start_byte < first}
            words |= {c.type for c in node.children if c.start_byte < first}
            prev = node.prev_sibling  # qualifier macros blanked before parsing sit before the node
            i = bisect.bisect_left(self.blanked_at, prev.end_byte if prev is not None else 0)
            while i < len(self.blanked) and self.blanked[i][0] < first:
                words.add(self.blanked[i][1])
                i += 1
            if words & DEVICE_STORAGE and not ("const" in words and self._mutable_pointer(declarators[0])
                                               and not words & (DEVICE_STORAGE - {"const"})):
                continue
            out.append(HostVariable(self._variable_name(declarators[0]), self.src.span(outer)))
        out.sort(key=lambda v: v.span.start_byte)
        return out

    def _host_only_class(self, node: ts.Node) -> str | None:
        """`class C { C(); void f(); ... };` at file scope whose member functions are all host functions (or a
        struct of standard-library members) and whose name no device code mentions: the device compiler refuses
        its member declarations."""
        spec = node if node.type in ("struct_specifier", "class_specifier") else next(
            (c for c in node.named_children if c.type in ("struct_specifier", "class_specifier")), None)
        if spec is None:
            return None
        name_node, body = spec.child_by_field_name("name"), spec.child_by_field_name("body")
        if name_node is None or body is None:
            return None
        members = [c for c in body.named_children if c.type in ("field_declaration", "declaration", "function_definition")
                   and any(d.type == "function_declarator" for d in walk(c) if d.start_byte < c.end_byte)]
        if any(self._device_member(m) for m in members):
            return None
        # plain data holding standard-library objects (`struct Option { std::string file; }`): the device compiler
        # has no <string>/<vector>; plain data of numbers stays (a kernel may take it by value)
        if not members and not re.search(r"\bstd::", self.src.text(body)):
            return None
        name = self.src.text(name_node)
        if re.search(rf"\b{re.escape(name)}\b", self._device_text()):
            return None
        return name

    def _device_member(self, member: ts.Node) -> bool:
        # spelled out, or through a project qualifier macro blanked before parsing (`HD T& operator[](int)`)
        return bool({"__device__", "__global__"} & set(self._qualifiers(member)))

    def _device_text(self) -> str:
        if self._device_words is None:
            self._device_words = "\n".join(self.src.text(n) for n in self._device_nodes)
        return self._device_words

    def _mutable_pointer(self, d: ts.Node) -> bool:
        """`const char *name = "..."`: the const is the pointee's, the variable itself is a host variable
        (`const char *const name` is a constant, which device code may use)."""
        cur: ts.Node | None = d
        innermost = None
        while cur is not None and cur.type not in ("identifier", "field_identifier", "qualified_identifier"):
            if cur.type == "pointer_declarator":
                innermost = cur
            cur = cur.child_by_field_name("declarator")
        return innermost is not None and not any(
            c.type == "type_qualifier" and self.src.text(c) == "const" for c in innermost.children)

    def _variable_name(self, d: ts.Node) -> str:
        cur: ts.Node | None = d
        while cur is not None and cur.type not in ("identifier", "field_identifier", "qualified_identifier"):
            cur = cur.child_by_field_name("declarator") or next(iter(cur.named_children), None)
        return self.src.text(cur) if cur is not None else self.src.text(d)

    @staticmethod
    def _is_function_declarator(d: ts.Node) -> bool:
        cur: ts.Node | None = d
        while cur is not None:
            if cur.type == "function_declarator":
                return True
            if cur.type == "init_declarator":
                return False
            cur = cur.child_by_field_name("declarator")
        return False

    # -- file-level facts ---------------------------------------------------------------------------------
    def _includes(self, root: ts.Node) -> list[Include]:
        out = []
        for m in self.found["includes"]:
            path = m["path"][0]
            text = self.src.text(path)
            out.append(Include(text.strip('<>"'), path.type == "system_lib_string", self.src.span(m["include"][0])))
        return out

    def _macro_atomics(self, macros: list[Macro]) -> dict[str, str]:
        """Function-like macros whose body calls an atomic (directly or through another such macro): name -> the
        atomic, so a kernel using one has atomics like a kernel calling it."""
        atomic_names = {n for n, c in self.cats.items() if c == "atomic"}
        bodies = {m.name: m.value for m in macros if m.params is not None and m.value}
        out: dict[str, str] = {}
        for _ in range(4):  # macros using macros, a few levels
            for name, body in bodies.items():
                if name in out:
                    continue
                for called in re.findall(r"\b([A-Za-z_]\w*)\s*\(", body):
                    if called in atomic_names or called in out:
                        out[name] = called if called in atomic_names else out[called]
                        break
        return out

    def _macros(self, root: ts.Node) -> list[Macro]:
        """The file's `#define`s the preprocessor reaches (xlate.parse.ppscan): a definition in a `#if` branch the
        compiler does not take is left out where the name is defined otherwise (another branch, a header the file
        includes, a `-D` flag of the build); one under a condition that cannot be decided stays, as all did before.
        `self.outer_macros`: the values of names whose own definitions were all left out, from those others."""
        out = []
        for m in self.found["macros"]:
            params = None
            if "params" in m:
                params = [self.src.text(c) for c in m["params"][0].named_children]
            value = self.src.text(m["value"][0]).strip() if "value" in m else ""
            out.append(Macro(self.src.text(m["name"][0]), params, value, self.src.span(m["macro"][0])))
        self.outer_macros: dict[str, str] = {}
        if not out or ppscan.CONDITIONAL.search(self.src.data) is None:
            return out
        path = self.src.path
        flags = {n: v for n, (v, _, _) in ppscan.build_flags(os.path.dirname(path)).items()} if os.path.isfile(
            path) else {}
        status, table = ppscan.file_status(path, self.src.data.decode("utf-8", "replace"), flags)
        if ppscan.OFF not in status.values():
            return out
        kept_names = {m.name for m in out if status.get(m.span.line) != ppscan.OFF}
        keep = []
        for m in out:
            if status.get(m.span.line) != ppscan.OFF:
                keep.append(m)
            elif m.name in kept_names:
                continue
            elif m.name in table and ppscan.readable(table[m.name]):  # a header or a -D flag defines it
                if m.params is None and table[m.name] is not None:
                    self.outer_macros.setdefault(m.name, str(table[m.name]))
            else:
                kept_names.add(m.name)  # defined nowhere else: its first definition stays, as before
                keep.append(m)
        return keep

    def _constants(self, root: ts.Node) -> dict[str, str]:
        out: dict[str, str] = {}
        for m in self.found["constants"]:
            qualifiers = {self.src.text(q) for q in m.get("qualifier", [])}
            if "qualifier" in m and not qualifiers & {"const", "constexpr"}:
                continue
            out[self.src.text(m["name"][0])] = self.src.text(m["value"][0])
        return out

    # -- functions -----------------------------------------------------------------------------------------
    def _qualifiers(self, node: ts.Node) -> list[str]:
        out: list[str] = []
        wrapper = _wrapper(node)
        if wrapper.type == "linkage_specification" or (
            node.parent is not None and node.parent.type == "linkage_specification"
        ):
            out.append('extern "C"')
        declarator = node.child_by_field_name("declarator")
        stop = declarator.start_byte if declarator is not None else node.end_byte
        # Qualifier macros blanked before parsing sit between the previous definition and the declarator.
        prev = wrapper.prev_sibling
        region_start = prev.end_byte if prev is not None else 0
        i = bisect.bisect_left(self.blanked_at, region_start)
        while i < len(self.blanked) and self.blanked[i][0] < stop:
            out.append(self.blanked[i][1])
            i += 1
        for child in node.children:
            if child.start_byte >= stop:
                break
            if child.type in QUALIFIER_TOKENS:
                out.append(child.type)
            elif child.type in ("storage_class_specifier", "type_qualifier", "virtual", "explicit_function_specifier"):
                out.append(self.src.text(child))
        return out

    def _function_declarator(self, node: ts.Node) -> ts.Node | None:
        cur = node.child_by_field_name("declarator")
        while cur is not None and cur.type != "function_declarator":
            cur = cur.child_by_field_name("declarator")
        return cur

    def _declarator_name(self, declarator: ts.Node) -> str | None:
        cur: ts.Node | None = declarator
        while cur is not None and cur.type != "function_declarator":
            cur = cur.child_by_field_name("declarator")
        name = cur.child_by_field_name("declarator") if cur is not None else None
        if name is not None and name.type == "template_function":
            name = name.child_by_field_name("name")
        return self.src.text(name) if name is not None else None

    def _function_name(self, node: ts.Node) -> str | None:
        fdecl = self._function_declarator(node)
        if fdecl is None:
            return None
        name = fdecl.child_by_field_name("declarator")
        return self.src.text(name) if name is not None else None

    def _template_params(self, node: ts.Node) -> list[TemplateParam]:
        parent = node.parent
        if parent is None or parent.type != "template_declaration":
            return []
        plist = parent.child_by_field_name("parameters")
        out: list[TemplateParam] = []
        for p in plist.named_children if plist else []:
            if p.type in ("type_parameter_declaration", "optional_type_parameter_declaration", "variadic_type_parameter_declaration"):
                name_node = p.child_by_field_name("name") or next(
                    (c for c in p.named_children if c.type == "type_identifier"), None
                )
                default = p.child_by_field_name("default_type")
                out.append(TemplateParam("type", self.src.text(name_node), None, self.src.text(default) or None))
            elif p.type in ("parameter_declaration", "optional_parameter_declaration"):
                decl = p.child_by_field_name("declarator")
                default = p.child_by_field_name("default_value")
                out.append(
                    TemplateParam("value", self.src.text(decl), self.src.text(p.child_by_field_name("type")), self.src.text(default) or None)
                )
        return out

    def _params(self, fdecl: ts.Node, template_types: set[str]) -> list[Param]:
        plist = fdecl.child_by_field_name("parameters")
        out: list[Param] = []
        for p in plist.named_children if plist else []:
            if p.type not in ("parameter_declaration", "optional_parameter_declaration"):
                continue
            out.append(self._param(p, template_types))
        return out

    def _param(self, p: ts.Node, template_types: set[str]) -> Param:
        type_node = p.child_by_field_name("type")
        base = self.src.text(type_node)
        top_const = any(
            c.type == "type_qualifier" and self.src.text(c) in ("const", "constexpr") for c in p.children
        )
        depth = 0
        restrict = False
        reference = False
        pointer_const = False
        name_node = None
        cur = p.child_by_field_name("declarator")
        while cur is not None:
            if cur.type == "pointer_declarator":
                depth += 1
                for c in cur.children:
                    if c.type == "type_qualifier":
                        q = self.src.text(c)
                        if q in ("__restrict__", "__restrict", "restrict"):
                            restrict = True
                        elif q == "const" and depth == 1:
                            pointer_const = True
                cur = cur.child_by_field_name("declarator")
            elif cur.type == "reference_declarator":
                reference = True
                cur = next((c for c in cur.named_children), None)
            elif cur.type == "array_declarator":
                depth += 1
                cur = cur.child_by_field_name("declarator")
            elif cur.type in ("identifier", "field_identifier"):
                name_node = cur
                break
            else:
                cur = cur.child_by_field_name("declarator") or next(iter(cur.named_children), None)
        text = self.src.text(p)
        if name_node is not None:
            a = name_node.start_byte - p.start_byte
            b = name_node.end_byte - p.start_byte
            raw = p.text or b""
            text = (raw[:a] + raw[b:]).decode("utf-8", "replace")
        type_text = " ".join(text.replace("*", " * ").split()).replace(" *", "*").replace("* *", "**")
        words = set(re.findall(r"[A-Za-z_]\w*", base))
        return Param(
            name=self.src.text(name_node) if name_node is not None else "",
            type=type_text,
            base_type=base,
            pointer_depth=depth,
            is_const=top_const if depth else (top_const or pointer_const),
            is_restrict=restrict,
            is_reference=reference,
            is_template_dependent=bool(words & template_types),
            span=self.src.span(p),
        )

    def _function(self, node: ts.Node, name: str, kind: str, qualifiers: list[str]) -> Function:
        fdecl = self._function_declarator(node)
        tparams = self._template_params(node)
        template_types = {t.name for t in tparams if t.kind == "type"}
        params = self._params(fdecl, template_types) if fdecl is not None else []
        ret = self.src.text(node.child_by_field_name("type"))
        outer = node.child_by_field_name("declarator")
        if outer is not None and outer.type == "pointer_declarator":
            ret += "*"
        launch_bounds = None
        for child in node.children:
            if child.type == "launch_bounds":
                launch_bounds = [self.src.text(c) for c in child.named_children]
        wrapper = _wrapper(node)
        marker = "// xlate:"
        annotation, notes, ann_span = annotation_above(self.src, wrapper, marker)
        body = node.child_by_field_name("body")
        return Function(
            name=name,
            kind=kind,  # type: ignore[arg-type]
            qualifiers=qualifiers,
            return_type=ret,
            params=params,
            template_params=tparams,
            launch_bounds=launch_bounds,
            annotation=annotation,
            annotation_span=ann_span,
            notes=notes,
            span=self.src.span(wrapper),
            body_span=self.src.span(body) if body is not None else None,
            signature_span=self.src.span_bytes(wrapper.start_byte, body.start_byte if body is not None else node.end_byte),
        )

    # -- bodies ----------------------------------------------------------------------------------------------
    def _callee(self, call: ts.Node) -> tuple[str, str]:
        """(full name as written, base name) of a call's function."""
        fn = call.child_by_field_name("function")
        if fn is None:
            return "", ""
        if fn.type == "template_function":
            name_node = fn.child_by_field_name("name")
            full = self.src.text(name_node)
        elif fn.type == "field_expression":
            field = fn.child_by_field_name("field")
            full = self.src.text(field)
        else:
            full = self.src.text(fn)
        full = "".join(full.split())
        return full, full.rsplit("::", 1)[-1]

    def _args(self, arglist: ts.Node | None) -> list[str]:
        if arglist is None:
            return []
        return [self.src.text(c) for c in arglist.named_children if c.type != "comment"]

    def _analyse_bodies(self, functions: list[tuple[Function, ts.Node]], device_names: set[str]) -> None:
        cats = self.cats
        analyzer = AccessAnalyzer(
            self.src,
            device_names,
            atomics={n for n, c in cats.items() if c == "atomic"},
            loads={n for n, c in cats.items() if c == "load"},
            stores={n for n, c in cats.items() if c == "store"},
        )
        effects: dict[str, Effects] = {}
        param_names: dict[str, list[str]] = {}
        bodies = [(node.child_by_field_name("body"), fn) for fn, node in functions]
        index = SpanIndex([(b.start_byte, b.end_byte, fn) for b, fn in bodies if b is not None])
        buckets: dict[str, dict[str, list[dict[str, list[ts.Node]]]]] = {}
        names = ["calls", "asm"] + (["identifiers", "shared"] if self.grammar == "cuda" else [])
        for qname in names:
            for m in self.found[qname]:
                first = next(iter(m.values()))[0]
                owner = index.find(first.start_byte, first.end_byte)
                if owner is not None:
                    buckets.setdefault(owner.name, {}).setdefault(qname, []).append(m)
        for fn, node in functions:
            body = node.child_by_field_name("body")
            if body is None:
                continue
            mine = buckets.get(fn.name, {})
            for m in mine.get("calls", []):
                call = m["call"][0]
                full, base = self._callee(call)
                args = self._args(m["args"][0])
                span = self.src.span(call)
                if base in device_names and base not in fn.calls and base != fn.name:
                    fn.calls.append(base)
                category = cats.get(base)
                if category == "atomic":
                    fn.atomics.append(AtomicUse(base, args, fn.name, span))
                elif base in self.macro_atomics:  # RECORD(...) whose body does `atomicAdd(err, 1)`
                    fn.atomics.append(AtomicUse(self.macro_atomics[base], args, fn.name, span))
                elif category == "barrier":
                    fn.intrinsics.append(IntrinsicUse(base, category, args, fn.name, span))
                    if base == "__syncthreads" or base.startswith("__syncthreads_"):
                        fn.barriers += 1
                elif category == "cooperative_groups":
                    callee = call.child_by_field_name("function")
                    is_cg = "::" in full or (callee is not None and callee.type == "field_expression") or (
                        "cooperative_groups" in full
                    )
                    if is_cg:
                        fn.intrinsics.append(IntrinsicUse(full if "::" in full else base, category, args, fn.name, span))
                        if base == "sync":
                            fn.barriers += 1
                elif category is not None and category not in ("load", "store"):
                    fn.intrinsics.append(IntrinsicUse(base, category, args, fn.name, span))
            for m in mine.get("identifiers", []):
                ident = m["id"][0]
                parent = ident.parent
                if parent is not None and parent.type == "call_expression":
                    continue
                fn.intrinsics.append(IntrinsicUse(self.src.text(ident), "warpsize", [], fn.name, self.src.span(ident)))
            fn.intrinsics.sort(key=lambda u: u.span.start_byte)
            if self.grammar == "cuda":
                for m in mine.get("shared", []):
                    fn.shared.extend(self._shared(m["shared"][0], fn.name))
            for m in mine.get("asm", []):
                asm = m["asm"][0]
                code = asm.child_by_field_name("assembly_code")
                text = self.src.text(code) if code is not None else self.src.text(asm)
                fn.asm.append(AsmUse(text.strip('"'), fn.name, self.src.span(asm)))
            pointers = [p.name for p in fn.params if p.is_pointer and p.name]
            effects[fn.name] = analyzer.analyse(body, pointers)
            param_names[fn.name] = [p.name for p in fn.params]
        resolved = resolve_interprocedural(effects, param_names)
        for fn, _ in functions:
            reads, writes = resolved.get(fn.name, (set(), set()))
            for p in fn.params:
                if p.is_pointer:
                    p.reads = p.name in reads
                    p.writes = p.name in writes
            for root, callee in effects.get(fn.name, Effects()).unknown_calls:
                fn.notes.append(f"pointer '{root}' is passed to '{callee}', whose effect is unknown: assumed read and written")

    def _shared(self, decl: ts.Node, function: str) -> list[SharedDecl]:
        dynamic = any(c.type == "storage_class_specifier" and self.src.text(c) == "extern" for c in decl.children)
        type_text = self.src.text(decl.child_by_field_name("type"))
        out = []
        for d in decl.children_by_field_name("declarator"):
            dims: list[str] = []
            dim_nodes: list[ts.Node | None] = []
            cur = d
            if cur.type == "init_declarator":
                cur = cur.child_by_field_name("declarator")
            while cur is not None and cur.type == "array_declarator":
                size = cur.child_by_field_name("size")
                dim_nodes.append(size)
                dims.append(self.src.text(size) if size is not None else "")
                cur = cur.child_by_field_name("declarator")
            name = self.src.text(cur) if cur is not None else ""
            dims.reverse()  # array_declarator nests outermost last: tile[A][B] -> ((tile[A])[B])
            dim_nodes.reverse()
            size_bytes = None
            if not dynamic:
                elem = self.consteval.sizeof(type_text)
                count = 1
                for n in dim_nodes:
                    v = self.consteval.eval_node(n) if n is not None else None
                    if v is None:
                        count = None
                        break
                    count *= v
                if elem is not None and count is not None:
                    size_bytes = elem * count
            out.append(SharedDecl(name, type_text, [x for x in dims if x], dynamic, size_bytes, function, self.src.span(decl)))
        return out

    # -- host side ------------------------------------------------------------------------------------------
    def _enclosing(self, spans: SpanIndex, node: ts.Node) -> str | None:
        return spans.find(node.start_byte, node.end_byte)

    def _kernel_ref(self, node: ts.Node) -> tuple[str, list[str]]:
        """Kernel name and template arguments of `k`, `k<float>`, `(void*)k`, `HIP_KERNEL_NAME(k<T>)`, `&k`."""
        cur = node
        while True:
            if cur.type in ("cast_expression",):
                cur = cur.child_by_field_name("value")
            elif cur.type in ("parenthesized_expression", "pointer_expression"):
                cur = cur.named_children[-1]
            elif cur.type == "call_expression" and self.src.text(cur.child_by_field_name("function")) == "HIP_KERNEL_NAME":
                args = cur.child_by_field_name("arguments")
                cur = args.named_children[0] if args is not None and args.named_children else cur
                if cur.type == "call_expression":
                    break
            else:
                break
        if cur.type == "template_function":
            targs = cur.child_by_field_name("arguments")
            return self.src.text(cur.child_by_field_name("name")), [self.src.text(c) for c in targs.named_children] if targs else []
        return self.src.text(cur), []

    def _kernel_alias(self, call: ts.Node, name: str, kernels: set[str]) -> tuple[str, list[str]] | None:
        """The kernel a local variable launched as `name<<<...>>>` holds (`auto name = &k<T>;`)."""
        value = declared_value(call, name, self.src.text)
        if value is None:
            return None
        kname, targs = self._kernel_ref(value)
        return (kname, targs) if kname in kernels else None

    def _launches(self, root: ts.Node, spans: SpanIndex, kernels: set[str]) -> list[LaunchSite]:
        out: list[LaunchSite] = []
        if self.grammar != "cuda":
            return out
        for m in self.found["launches"]:
            if "config" in m:
                call = m["launch"][0]
                name, targs = self._kernel_ref(m["kernel"][0])
                if name not in kernels and not targs:
                    name, targs = self._kernel_alias(call, name, kernels) or (name, targs)
                config = [self.src.text(c) for c in m["config"][0].named_children if c.type != "comment"]
                config += [None] * (4 - len(config))  # type: ignore[list-item]
                out.append(
                    LaunchSite(name, "chevron", targs, config[0], config[1], config[2], config[3],
                               self._args(m["args"][0]), self._enclosing(spans, call), self.src.span(call))
                )
            else:
                call = m["api_launch"][0]
                api = self.src.text(m["api"][0])
                arg_nodes = [c for c in m["args"][0].named_children if c.type != "comment"]
                if not arg_nodes:
                    continue
                name, targs = self._kernel_ref(arg_nodes[0])
                args = [self.src.text(c) for c in arg_nodes]
                if api == "hipLaunchKernelGGL":
                    rest = args[1:] + [None] * 4  # type: ignore[list-item]
                    site = LaunchSite(name, "hipLaunchKernelGGL", targs, rest[0], rest[1], rest[2], rest[3], args[5:],
                                      self._enclosing(spans, call), self.src.span(call))
                else:  # cudaLaunchKernel(func, grid, block, args, shmem, stream)
                    rest = args[1:] + [None] * 5  # type: ignore[list-item]
                    form = "cudaLaunchCooperativeKernel" if "Cooperative" in api else "cudaLaunchKernel"
                    site = LaunchSite(name, form, targs, rest[0], rest[1], rest[3], rest[4],
                                      [rest[2]] if rest[2] else [], self._enclosing(spans, call), self.src.span(call))
                out.append(site)
        return out

    def _api_calls(self, root: ts.Node, spans: SpanIndex) -> list[ApiCall]:
        out = []
        for m in self.found["calls"]:
            call = m["call"][0]
            full, _ = self._callee(call)
            family = api_family(full)
            if family is None:
                continue
            out.append(ApiCall(full, family, self._enclosing(spans, call), self.src.span(call)))
        return out


def build_unit(src: Source, language: str, grammar: str, root: ts.Node, blanked: list[tuple[int, str]]) -> KernelUnit:
    return CFamilyBuilder(src, language, grammar, blanked).build(root)


def _inherit_atomics(functions: list[Function]) -> None:
    """A kernel (or device function) calling device functions that use atomics has those atomics too, named with the
    function they are in: the gate's tolerance of order-dependent results keys on them."""
    direct = {f.name: list(f.atomics) for f in functions}
    calls = {f.name: list(f.calls) for f in functions}
    for f in functions:
        seen = {f.name}
        todo = list(calls.get(f.name, []))
        while todo:
            callee = todo.pop()
            if callee in seen:
                continue
            seen.add(callee)
            f.atomics.extend(direct.get(callee, []))
            todo.extend(calls.get(callee, []))
