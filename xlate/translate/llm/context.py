"""What a prompt shows of the source: one kernel and only what it needs (the device functions it calls, the
macros, constants, `__constant__` data, typedefs and types it names, the file's includes), in source order.

Top-level items come from tree-sitter (C family) or `ast` (Triton modules; parsed, never executed); what a
kernel needs is the closure over the identifiers its text names.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from xlate.model import KernelUnit
from xlate.parse import languages
from xlate.targets import of_language

IDENT = re.compile(r"[A-Za-z_]\w*")


@dataclass
class Item:
    kind: str  # include, macro, function, declaration, prototype, type, import, other
    names: list[str]
    start: int  # byte offsets into the text (Python: line-based)
    end: int
    line: int
    text: str


@dataclass
class KernelContext:
    kernel: str
    language: str
    code: str  # the excerpt shown to the model
    needed: list[str] = field(default_factory=list)  # names of the items included besides the kernel
    line: int = 1


# -- C family -------------------------------------------------------------------------------------------------


def _declarator_names(node) -> list[str]:
    """Identifiers a declarator introduces (`x`, `*p`, `a[4]`, `f(int)`, `x = 3`)."""
    out: list[str] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type in ("identifier", "type_identifier", "field_identifier"):
            out.append(n.text.decode())
            continue
        if n.type in ("parameter_list", "initializer_list", "argument_list", "template_argument_list"):
            continue
        inner = n.child_by_field_name("declarator")
        if inner is not None:
            stack.append(inner)
        elif n.type in ("init_declarator",):
            stack.extend(n.children[:1])
        elif n.type in ("array_declarator", "pointer_declarator", "reference_declarator", "qualified_identifier"):
            stack.extend(c for c in n.children if c.is_named)
    return out


def _has_function_declarator(node) -> bool:
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "function_declarator":
            return True
        if n.type in ("compound_statement", "initializer_list"):
            continue
        stack.extend(n.children)
    return False


def _classify(node) -> tuple[str, list[str]]:
    t = node.type
    if t == "preproc_include":
        path = node.child_by_field_name("path")
        return "include", [path.text.decode().strip('<>"')] if path is not None else []
    if t in ("preproc_def", "preproc_function_def"):
        name = node.child_by_field_name("name")
        return "macro", [name.text.decode()] if name is not None else []
    if t == "function_definition":
        decl = node.child_by_field_name("declarator")
        names = _declarator_names(decl) if decl is not None else []
        return "function", names[:1]
    if t in ("template_declaration", "linkage_specification"):
        inner = [c for c in node.children if c.type in ("function_definition", "declaration", "struct_specifier",
                                                         "class_specifier", "type_definition", "alias_declaration",
                                                         "declaration_list")]
        if inner:
            target = inner[-1]
            if target.type == "declaration_list":
                names = [n for c in target.children if c.is_named for n in _classify(c)[1]]
                return "function" if any(c.type == "function_definition" for c in target.children) else "declaration", names
            return _classify(target)
        return "other", []
    if t in ("struct_specifier", "class_specifier", "union_specifier", "enum_specifier"):
        name = node.child_by_field_name("name")
        if name is not None and name.type == "template_type":  # a specialisation: struct AccType<double>
            name = name.child_by_field_name("name")
        names = [name.text.decode()] if name is not None else []
        body = node.child_by_field_name("body")
        if t == "enum_specifier" and body is not None:
            names += [e.child_by_field_name("name").text.decode() for e in body.children if e.type == "enumerator"]
        return "type", names
    if t in ("type_definition", "alias_declaration"):
        decl = node.child_by_field_name("declarator") or node.child_by_field_name("name")
        names = _declarator_names(decl) if decl is not None else []
        type_node = node.child_by_field_name("type")
        if type_node is not None and type_node.type in ("struct_specifier", "enum_specifier"):
            names += _classify(type_node)[1]
        return "type", names
    if t == "declaration":
        if _has_function_declarator(node) and node.child_by_field_name("value") is None:
            return "prototype", [n for d in node.children_by_field_name("declarator") for n in _declarator_names(d)]
        names = [n for d in node.children_by_field_name("declarator") for n in _declarator_names(d)]
        type_node = node.child_by_field_name("type")
        if type_node is not None and type_node.type in ("struct_specifier", "class_specifier", "enum_specifier"):
            names += _classify(type_node)[1]
        return "declaration", names
    if t == "comment":
        return "comment", []
    return "other", []


def c_items(text: str, language: str) -> list[Item]:
    grammar = of_language(language).grammar
    raw = text.encode("utf-8")
    data, _ = languages.blank_qualifiers(raw, grammar)
    tree = languages.parser(grammar).parse(data)
    items: list[Item] = []
    for node in tree.root_node.children:
        kind, names = _classify(node)
        chunk = raw[node.start_byte : node.end_byte].decode("utf-8", errors="replace")
        if kind == "type" and not chunk.rstrip().endswith(";"):
            chunk += ";"
        items.append(Item(kind, names, node.start_byte, node.end_byte, node.start_point[0] + 1, chunk.rstrip("\n")))
    return items


# -- Python (Triton modules) ----------------------------------------------------------------------------------


def py_items(text: str) -> list[Item]:
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for ln in lines:
        offsets.append(offsets[-1] + len(ln.encode("utf-8")))
    items: list[Item] = []
    for node in ast.parse(text).body:
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        last = node.end_lineno or node.lineno
        if isinstance(node, ast.Import | ast.ImportFrom):
            kind, names = "import", [a.asname or a.name.split(".")[0] for a in node.names]
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            kind, names = "function", [node.name]
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            kind, names = "declaration", [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        else:
            kind, names = "other", []
        chunk = "".join(lines[first - 1 : last])
        items.append(Item(kind, names, offsets[first - 1], offsets[last], first, chunk.rstrip("\n")))
    return items


# -- the closure ----------------------------------------------------------------------------------------------


def _comment_above(text_lines: list[str], line: int, marker: str) -> int:
    """First line of the comment block directly above `line` (1-based), or `line` itself."""
    first = line
    while first - 2 >= 0 and text_lines[first - 2].lstrip().startswith(marker):
        first -= 1
    return first


def kernel_context(unit: KernelUnit, kernel: str) -> KernelContext:
    text = unit.text
    is_py = unit.language == "triton"
    items = py_items(text) if is_py else c_items(text, unit.language)
    host = {h.name for h in unit.host_functions}
    other_kernels = {k.name for k in unit.kernels if k.name != kernel}
    target = next((i for i in items if i.kind == "function" and kernel in i.names), None)
    if target is None:
        raise ValueError(f"{unit.path}: no definition of '{kernel}' found")
    chosen = {id(target)}
    wanted = set(IDENT.findall(target.text))
    changed = True
    while changed:
        changed = False
        for it in items:
            if id(it) in chosen or it.kind in ("include", "import", "comment", "other", "prototype"):
                continue
            if set(it.names) & (host | other_kernels) and it.kind == "function":
                continue
            if set(it.names) & wanted:
                chosen.add(id(it))
                wanted |= set(IDENT.findall(it.text))
                changed = True
    lines = text.splitlines()
    marker = "#" if is_py else "//"
    out, prev_single = "", False
    for it in items:
        if it.kind in ("include", "import") or id(it) in chosen:
            first = _comment_above(lines, it.line, marker) if it.kind == "function" else it.line
            lead = "\n".join(lines[first - 1 : it.line - 1])
            chunk = (lead + "\n" if lead else "") + it.text
            # one-line items (includes, macros, constants) stay together; definitions get a blank line
            single = "\n" not in chunk
            out += ("\n" if single and prev_single else "\n\n") + chunk if out else chunk
            prev_single = single
    needed = list(dict.fromkeys(n for it in items if id(it) in chosen and it is not target for n in it.names))
    return KernelContext(kernel, unit.language, out.strip() + "\n", needed, target.line)
