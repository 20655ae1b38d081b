"""The tree-sitter queries of the CUDA <-> HIP passes, run together: one traversal of a file serves them all.

Each pass asks `Job.query(name, region)` (or `query_in` for one function) for the captures of its own query;
the first request runs every query of the file in a single QueryCursor pass over the combined patterns.
"""

from __future__ import annotations

import functools

import tree_sitter as ts

from xlate.parse import languages

QUERIES = {
    # every call by the shape of its callee: plain, member (obj.f()), qualified (ns::f())
    "calls": """
      (call_expression function: (identifier) @fn arguments: (argument_list)) @call
      (call_expression function: (field_expression field: (field_identifier) @member) arguments: (argument_list)) @mcall
      (call_expression function: (qualified_identifier name: (identifier) @qname) arguments: (argument_list)) @qcall
    """,
    "macros": """
      (preproc_def name: (identifier) @name value: (preproc_arg) @value)
      (preproc_function_def name: (identifier) @name value: (preproc_arg) @value)
      (preproc_include path: (_) @path) @include
    """,
    "constructs": """
      (gnu_asm_expression) @asm
      (declaration type: (template_type name: (type_identifier) @tex) declarator: (_) @texvar) @texdecl
      (call_expression function: (_) @kfn (kernel_call_syntax)) @launch
      (launch_bounds) @bounds
    """,
    "hazards": """
      (binary_expression left: (_) @left right: (number_literal) @lit) @bin
      (for_statement) @for
      (declaration (type_qualifier) @q declarator: (array_declarator) @arr) @shared
      (init_declarator declarator: (identifier) @var value: (call_expression function: (identifier) @src)) @init
      (assignment_expression left: (identifier) @avar right: (call_expression function: (identifier) @asrc)) @assign
    """,
    "assigns": """
      (init_declarator declarator: (identifier) @name value: (_) @value)
      (assignment_expression left: (identifier) @aname right: (_) @avalue)
    """,
    "literals": """
      (number_literal) @number
    """,
    # declarations whose scope hides a CUDA built-in of the same name (shadows.py); run on demand
    "declared": """
      (preproc_def name: (identifier) @macro)
      (preproc_function_def name: (identifier) @macro)
      (function_declarator declarator: (identifier) @fn)
      (init_declarator declarator: (identifier) @var)
      (declaration declarator: (identifier) @var)
      (parameter_declaration declarator: (identifier) @var)
      (optional_parameter_declaration declarator: (identifier) @var)
      (pointer_declarator declarator: (identifier) @var)
      (array_declarator declarator: (identifier) @var)
      (reference_declarator (identifier) @var)
      (enumerator name: (identifier) @var)
      (field_declaration declarator: (field_identifier) @member)
      (pointer_declarator declarator: (field_identifier) @member)
      (array_declarator declarator: (field_identifier) @member)
    """,
    # names the file defines (never reported as unknown vendor names); run only when there are candidates
    "definitions": """
      (preproc_def name: (identifier) @n)
      (preproc_function_def name: (identifier) @n)
      (function_declarator declarator: (identifier) @n)
      (init_declarator declarator: (identifier) @n)
      (declaration declarator: (identifier) @n)
      (parameter_declaration declarator: (identifier) @n)
      (pointer_declarator declarator: (identifier) @n)
      (array_declarator declarator: (identifier) @n)
      (type_definition declarator: (type_identifier) @n)
      (struct_specifier name: (type_identifier) @n)
      (class_specifier name: (type_identifier) @n)
      (enum_specifier name: (type_identifier) @n)
      (enumerator name: (identifier) @n)
      (alias_declaration name: (type_identifier) @n)
    """,
}
# What one pass over a file runs, per direction (the rest run on demand).
FORWARD = ("calls", "macros", "constructs", "hazards", "assigns")
REVERSE = ("calls", "macros", "constructs", "hazards", "literals", "assigns")

Captures = dict[str, list[ts.Node]]


@functools.cache
def combined(names: tuple[str, ...]) -> tuple[ts.Query, tuple[str, ...]]:
    """One query of all `names`, and the name each of its patterns belongs to."""
    parts = [QUERIES[n] for n in names]
    query = ts.Query(languages.language("cuda"), "\n".join(parts))
    return query, tuple(languages.pattern_owners(query, parts, names))


def run(names: tuple[str, ...], root: ts.Node) -> dict[str, list[tuple[int, Captures]]]:
    """name -> [(anchor byte, captures)] sorted by anchor (the first byte any capture starts at)."""
    query, owner = combined(names)
    out: dict[str, list[tuple[int, Captures]]] = {n: [] for n in names}
    for index, caps in ts.QueryCursor(query).matches(root):
        anchor = min(nodes[0].start_byte for nodes in caps.values())
        out[owner[index]].append((anchor, caps))
    for rows in out.values():
        rows.sort(key=lambda r: r[0])
    return out
