"""Module globals: the `__device__`, `__constant__` and `__managed__` variables a kernel works on.

Real CUDA code keeps state at file scope (`__device__ int d_cost[N * N];`, `__device__ int d_count;`,
`__constant__ float coeffs[16];` filled by `cudaMemcpyToSymbol`). A kernel that writes only such variables has
no output parameter, and one that reads a `__constant__` table reads whatever the module holds. Each variable the
kernel reads or writes (in its body and in the device functions it calls) becomes a spec item
`NAME: global ROLE[LEN]`: its element type and length from its declaration (sizes are constant expressions of
the program's macros and constants), its role from the accesses (a `__constant__` is only read). The gate fills
it before each run (inputs drawn like a buffer's, outputs poisoned) and reads it back after, like a buffer.

What stays a hole: pointers and structs at file scope, arrays whose size the program does not fix, and integer
variables whose values index memory or bound the kernel's loops and guards in ways no range here keeps inside
(drawn freely, a correct kernel would fault).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from xlate.errors import SpecError
from xlate.model import Function, KernelUnit
from xlate.specs.infer.ceval import walk_tree
from xlate.specs.infer.program import Program, text
from xlate.specs.model import Origin, ParamSpec, ctypes_table, normalise_ctype

SPACES = {"__constant__": "constant", "__managed__": "managed", "__device__": "device"}
MAX_DEPTH = 8  # device functions followed from the kernel


@dataclass
class GlobalDecl:
    """A file-scope variable in device memory."""

    name: str
    space: str  # "device", "constant", "managed"
    ctype: str  # the declared element type, through the program's typedefs
    sizes: list[Any]  # each array dimension's size node ([] for a scalar variable)
    pointer: bool
    where: str
    detail: str  # the declaration's text
    initialised: bool = False  # `= {...}`: a table the program fixes
    extern: bool = False  # a declaration whose definition is elsewhere
    namespace: list[str] = field(default_factory=list)


@dataclass
class Use:
    reads: bool = False
    writes: bool = False
    index_like: list[str] = field(default_factory=list)  # why its values may address memory or bound control
    targets: set[str] = field(default_factory=set)  # globals whose subscripts it is directly (`a[g[i]]`)
    where: str = ""


def _space(f: Any, decl: Any) -> str | None:
    head = text(decl)
    first = decl.child_by_field_name("declarator")
    if first is not None:
        head = head[: first.start_byte - decl.start_byte]
    end = first.start_byte if first is not None else decl.end_byte
    # qualifiers the front end blanked (`MANAGED __device__ int n;`): before the declarator, after the previous one
    words = set(re.findall(r"__\w+__", head)) | {
        w for off, w in f.blanked if decl.start_byte - 64 <= off < end
        and not re.search(rb"[;}]", f.data[min(off, decl.start_byte) : decl.start_byte])}
    if "__shared__" in words or not words & set(SPACES):
        return None
    for q, space in SPACES.items():
        if q in words:
            return space
    return None


def _namespace(node: Any) -> list[str]:
    out: list[str] = []
    cur = node.parent
    while cur is not None:
        if cur.type == "namespace_definition":
            name = cur.child_by_field_name("name")
            if name is not None:
                out.insert(0, text(name))
        cur = cur.parent
    return out


def declarations(program: Program) -> dict[str, GlobalDecl]:
    """Every file-scope variable in device memory, by name (a definition wins over an `extern` declaration); read
    once per program (`Program.derived`)."""
    if "module_globals" not in program.derived:
        program.derived["module_globals"] = _declarations(program)
    return program.derived["module_globals"]


def _declarations(program: Program) -> dict[str, GlobalDecl]:
    out: dict[str, GlobalDecl] = {}
    for f, decl in program.globals:
        space = _space(f, decl)
        if space is None:
            continue
        tnode = decl.child_by_field_name("type")
        base = text(tnode)
        is_extern = any(c.type == "storage_class_specifier" and text(c) == "extern" for c in decl.children)
        for d in decl.children_by_field_name("declarator"):
            cur = d.child_by_field_name("declarator") if d.type == "init_declarator" else d
            sizes: list[Any] = []
            pointer = False
            while cur is not None and cur.type in ("array_declarator", "pointer_declarator", "reference_declarator"):
                if cur.type == "array_declarator":
                    sizes.append(cur.child_by_field_name("size"))
                else:
                    pointer = True
                cur = cur.child_by_field_name("declarator")
            if cur is None or cur.type != "identifier":
                continue  # a function prototype, a qualified redeclaration
            name = text(cur)
            if name in out and (is_extern or not out[name].extern):
                continue  # the first definition stands (the program's files come in order, the kernel's first)
            # `T a[N][M]`: the declarator nests outermost last; dimensions in source order
            out[name] = GlobalDecl(name, space, program.resolve_type(normalise_ctype(base)), list(reversed(sizes)),
                                   pointer, f.where(decl), " ".join(text(decl).split())[:160],
                                   namespace=_namespace(decl), initialised=d.type == "init_declarator",
                                   extern=is_extern)
    return out


# -- what a kernel does with them ------------------------------------------------------------------------------


def _declared_names(node: Any) -> set[str]:
    """Names a function declares itself (parameters, locals): they shadow file-scope variables."""
    out: set[str] = set()
    for n in walk_tree(node):
        if n.type in ("parameter_declaration", "declaration", "optional_parameter_declaration", "for_range_loop"):
            for d in n.children_by_field_name("declarator"):
                cur = d
                while cur is not None and cur.type != "identifier":
                    nxt = cur.child_by_field_name("declarator")
                    if nxt is None:
                        nxt = next((c for c in cur.named_children if c.type == "identifier"), None)
                    cur = nxt
                if cur is not None:
                    out.add(text(cur))
    return out


SCOPES = ("compound_statement", "for_statement", "for_range_loop", "function_definition", "lambda_expression",
          "catch_clause", "if_statement", "while_statement", "switch_statement")


def _shadowed(ident: Any, name: str, top: Any) -> bool:
    """Whether `ident` (a use of `name`) names a parameter or local of an enclosing scope declared before it, as
    C++ scoping has it, rather than the file-scope variable: a local of one block hides the global there only."""
    cur = ident.parent
    while cur is not None:
        if cur.type in SCOPES:
            for child in cur.named_children:
                if child.start_byte > ident.start_byte:
                    break
                declares = child.type in ("declaration", "parameter_list", "condition_clause") or (
                    cur.type in ("for_statement", "for_range_loop") and child.type != "compound_statement")
                if declares and name in _declared_names(child):
                    return True
                if child.type == "function_declarator":
                    params = child.child_by_field_name("parameters")
                    if params is not None and name in _declared_names(params):
                        return True
        if _same(cur, top):
            break
        cur = cur.parent
    return False


def _same(a: Any, b: Any) -> bool:
    return a is not None and b is not None and a.start_byte == b.start_byte and a.end_byte == b.end_byte and a.type == b.type


def _callee(node: Any) -> str | None:
    fn = node.child_by_field_name("function")
    if fn is None:
        return None
    if fn.type == "template_function":
        fn = fn.child_by_field_name("name")
    if fn is None or fn.type not in ("identifier", "qualified_identifier"):
        return None
    return text(fn).split("::")[-1]


COMPARISONS = {"<", "<=", ">", ">=", "==", "!="}
CONSTANT = re.compile(r"^[-+]?\s*(?:\d[\w.]*|'.'|true|false|[A-Z_][A-Z0-9_]*)$")


def _bounding(comparison: Any, side: Any) -> bool:
    """Does this comparison bound something by the value (`i < g`), rather than pick a branch on it (`g == 0`,
    `g > 0`, `g != EMPTY`: equality, or an order against a constant)?"""
    if text(comparison.child_by_field_name("operator")) in ("==", "!="):
        return False
    left, right = comparison.child_by_field_name("left"), comparison.child_by_field_name("right")
    other = right if _same(left, side) else left
    return other is None or not CONSTANT.match(" ".join(text(other).split()))


def _classify(ident: Any, decl: GlobalDecl, use: Use, where: str, alias: bool = False) -> tuple[Any | None, Any | None]:
    """Record what the occurrence `ident` of the global does (read, write). Returns (the node whose value is the
    global's value where it is read as an integer, for _value_use; the call_expression and the argument index
    where the variable's address is passed to a function of the program, followed into it). `alias`: `ident`
    is a pointer parameter of a device function that received the variable's address."""
    e = ident
    while e.parent is not None and e.parent.type == "qualified_identifier":  # `ns::hits`: the whole name is the use
        e = e.parent
    name = e
    while e.parent is not None and (
            (e.parent.type == "subscript_expression" and _same(e.parent.child_by_field_name("argument"), e))
            or (e.parent.type == "pointer_expression" and text(e.parent).lstrip().startswith("*"))
            or (e.parent.type == "field_expression" and _same(e.parent.child_by_field_name("argument"), e))
            or e.parent.type == "parenthesized_expression"):
        e = e.parent
    elements = alias or bool(decl.sizes)  # the name stands for the storage: its elements are read through it
    subscripted = e.type in ("subscript_expression", "pointer_expression", "field_expression") or (
        not elements and not _same(e, name))
    p = e.parent
    if p is None:
        return None, None
    if (subscripted or not elements) and p.type == "assignment_expression" and _same(p.child_by_field_name("left"), e):
        use.writes = True
        op = p.child_by_field_name("operator")
        if op is not None and text(op) != "=":
            use.reads = True
        return None, None
    if (subscripted or not elements) and p.type == "update_expression":
        use.reads = use.writes = True
        return None, None
    address = p.type == "pointer_expression" and text(p).lstrip().startswith("&")
    if address or (elements and not subscripted):  # its address: an atomic, a helper, a pointer
        node = p if address else e
        # through casts and parentheses (`(int*)&n`), and pointer arithmetic on an array (`counts + b`)
        while node.parent is not None and (node.parent.type in ("cast_expression", "parenthesized_expression") or (
                node.parent.type == "binary_expression" and text(node.parent.child_by_field_name("operator")) in "+-")):
            node = node.parent
        call = node.parent.parent if node.parent is not None and node.parent.type == "argument_list" else None
        if call is not None and call.type == "call_expression":
            name = _callee(call) or ""
            if name.startswith("atomic"):
                use.reads = use.writes = True
                # the old value it returns is the variable's value: where it is used, it is followed (an
                # append position `out[atomicAdd(&count, 1)]` makes a drawn counter write anywhere)
                used = call.parent is not None and call.parent.type != "expression_statement"
                return (call if used and _is_int(decl) else None), None
            if _same(node, p if address else e):
                index = next(i for i, a in enumerate(node.parent.named_children) if _same(a, node))
                return None, (call, index)
        use.reads = use.writes = True
        if _is_int(decl):
            use.index_like.append(f"its address is taken at {where}, and what is done with it is not followed")
        return None, None
    use.reads = True
    return (e if _is_int(decl) else None), None


def _value_use(e: Any, use: Use, where: str, what: str, exact: bool = True) -> None:
    """A value of an integer global (`what`: "it", or "a value computed from it") used at `e`: as an index, a
    loop condition or a bound in a comparison, a drawn value may break a correct kernel."""
    if _in_loop_condition(e):
        use.index_like.append(f"{what} decides when a loop ends at {where}")
        return
    cur, direct = e, exact
    while cur.parent is not None and cur.parent.type not in ("expression_statement", "compound_statement",
                                                             "function_definition", "declaration", "init_declarator"):
        parent = cur.parent
        if parent.type == "subscript_expression" and not _same(parent.child_by_field_name("argument"), cur):
            target = parent.child_by_field_name("argument")
            if direct and target is not None and target.type == "identifier":
                use.targets.add(text(target))
            else:
                use.index_like.append(f"{what} indexes memory at {where}")
            return
        if parent.type == "binary_expression" and text(parent.child_by_field_name("operator")) in COMPARISONS:
            if _bounding(parent, cur):
                use.index_like.append(f"{what} bounds a comparison at {where}")
            return
        if parent.type == "assignment_expression":
            return  # a copy: followed by the taint pass
        if parent.type not in ("parenthesized_expression", "cast_expression", "subscript_argument_list"):
            direct = False
        cur = parent


def _is_int(decl: GlobalDecl) -> bool:
    info = ctypes_table().get(decl.ctype) or {}
    np_name = str(info.get("numpy") or "")
    return np_name.startswith(("int", "uint"))


def _assigned(node: Any) -> tuple[str, Any, bool] | None:
    """(local name, value node, a plain `=`) of `T x = v` or `x = v` / `x op= v`."""
    plain = True
    if node.type == "init_declarator":
        name, value = node.child_by_field_name("declarator"), node.child_by_field_name("value")
        while name is not None and name.type in ("pointer_declarator", "reference_declarator"):
            name = name.child_by_field_name("declarator") or next(
                (c for c in name.named_children if c.type == "identifier"), None)
    elif node.type == "assignment_expression":
        name, value = node.child_by_field_name("left"), node.child_by_field_name("right")
        op = node.child_by_field_name("operator")
        plain = op is None or text(op) == "="
    else:
        return None
    if name is None or value is None or name.type != "identifier":
        return None
    return text(name), value, plain


def _strip(node: Any) -> Any:
    while node.type in ("parenthesized_expression", "cast_expression"):
        inner = node.child_by_field_name("value") if node.type == "cast_expression" else (
            node.named_children[0] if node.named_children else None)
        if inner is None:
            break
        node = inner
    return node


def _global_root(node: Any) -> str | None:
    """`g` of `g`, `g[i]`, `g[i][j]`: the variable an element read comes from."""
    while node.type == "subscript_expression":
        node = node.child_by_field_name("argument")
    return text(node) if node is not None and node.type == "identifier" else None


def kernel_uses(program: Program, fn_name: str, known: dict[str, GlobalDecl]) -> dict[str, Use]:
    """The module globals the kernel `fn_name` reads or writes, directly and through the functions it calls
    (also where it passes a variable's address to one: the callee's pointer parameter stands for it)."""
    uses: dict[str, Use] = {}
    kernels = [fd for fd in program.functions.get(fn_name, []) if fd.space == "kernel"]
    if not kernels or not known:
        return uses
    seen: set[tuple[int, tuple[tuple[str, str], ...]]] = set()
    todo: list[tuple[Any, int, dict[str, str]]] = [(kernels[0], 0, {})]
    while todo:
        fd, depth, aliases = todo.pop()
        key = (fd.node.id, tuple(sorted(aliases.items())))
        if key in seen:
            continue
        seen.add(key)
        src = program.source_of(fd.node)
        body = fd.node.child_by_field_name("body")
        if body is None:
            continue
        shadowed = _declared_names(fd.node)
        nodes = list(walk_tree(body))
        idents = [n for n in nodes if n.type == "identifier"]
        int_reads: set[str] = set()
        passed: list[tuple[Any, int, str]] = []
        # local pointers to a whole array (`volatile int* v = cover;`): the variable under another name
        aliases = dict(aliases)
        bound: set[tuple[int, int]] = set()
        for n in nodes:
            a = _assigned(n)
            if a is None or not a[2] or n.type != "init_declarator":
                continue
            value = _strip(a[1])
            g = text(value) if value.type == "identifier" else None
            g = aliases.get(g or "") or (g if g in known and not _shadowed(value, g, fd.node) and known[g].sizes
                                         else None)
            if g is not None and sum(1 for m in nodes if _assigned(m) is not None and _assigned(m)[0] == a[0]) == 1:
                aliases[a[0]] = g
                bound.add((value.start_byte, value.end_byte))
                bound.update((i.start_byte, i.end_byte) for i in walk_tree(n.child_by_field_name("declarator"))
                             if i.type == "identifier")
        for n in idents:
            name = text(n)
            if (n.start_byte, n.end_byte) in bound:
                continue  # the array named where a local pointer to it is declared
            g = aliases.get(name) or (name if name in known and not _shadowed(n, name, fd.node) else None)
            if g is None:
                continue
            where = src.where(n) if src is not None else fd.path
            use = uses.setdefault(g, Use(where=where))
            value, call = _classify(n, known[g], use, where, alias=name in aliases)
            if call is not None:
                passed.append((call[0], call[1], g))
            if value is not None:
                int_reads.add(name)
                atomic = value.type == "call_expression"
                _value_use(value, use, where, "the value an atomic returns" if atomic else "it", exact=not atomic)
        for call, index, g in passed:  # the variable's address handed to a function of the program
            callees = [c for c in program.functions.get(_callee(call) or "", []) if c.space != "kernel" and not c.cls
                       and len(c.params) > index and c.params[index][2]]
            if not callees or depth >= MAX_DEPTH:
                uses[g].reads = uses[g].writes = True
                if _is_int(known[g]):
                    uses[g].index_like.append(f"its address is passed at {src.where(call) if src else fd.path} to "
                                              "code that is not followed")
                continue
            for callee in callees:
                todo.append((callee, depth + 1, {callee.params[index][0]: g}))
        # locals computed from an integer global's values (transitively): their uses are the global's; an exact
        # copy (`int c = g[i];`) indexes as the global itself would, a computed value (`g[i] * 2 + 1`) does not
        tainted: dict[str, dict[str, bool]] = {}  # local -> global -> an exact copy of its value
        assignments = [a for a in (_assigned(n) for n in nodes) if a is not None]
        for _ in range(6):
            changed = False
            for name, value, plain in assignments:
                if name in int_reads or (name in known and name not in shadowed):
                    continue
                root = _strip(value)
                origin: dict[str, bool] = {}
                if plain and _global_root(root) in int_reads:
                    origin[aliases.get(_global_root(root) or "", _global_root(root) or "")] = True
                elif plain and root.type == "identifier" and text(root) in tainted:
                    origin.update(tainted[text(root)])
                else:
                    for i in walk_tree(value):
                        if i.type == "identifier" and text(i) in int_reads:
                            origin[aliases.get(text(i), text(i))] = False
                        elif i.type == "identifier" and text(i) in tainted:
                            origin.update(dict.fromkeys(tainted[text(i)], False))
                mine = tainted.setdefault(name, {})
                for g, exact in origin.items():
                    if g not in mine or (mine[g] and not exact):
                        mine[g] = exact
                        changed = True
            if not changed:
                break
        for n in idents:
            gs = tainted.get(text(n))
            if not gs:
                continue
            parent = n.parent
            if parent is not None and ((parent.type == "init_declarator" and _same(parent.child_by_field_name("declarator"), n))
                                       or (parent.type == "assignment_expression" and _same(parent.child_by_field_name("left"), n))):
                continue  # the copy being written
            where = src.where(n) if src is not None else fd.path
            for g, exact in gs.items():
                _value_use(n, uses[g], where, "a copy of it" if exact else "a value computed from it", exact)
        for use in uses.values():  # an index into an alias is an index into the variable
            use.targets = {aliases.get(t, t) for t in use.targets}
        if depth >= MAX_DEPTH:
            continue
        for n in nodes:
            if n.type == "call_expression":
                name = _callee(n)
                for callee in program.functions.get(name or "", []):
                    if callee.space != "kernel" and not callee.cls:
                        todo.append((callee, depth + 1, {}))
    return uses


def _in_loop_condition(node: Any) -> bool:
    """Is `node` inside the condition of a loop (a drawn value could make it never end)?"""
    cur, prev = node.parent, node
    while cur is not None and cur.type not in ("compound_statement", "function_definition"):
        if cur.type in ("while_statement", "do_statement", "for_statement") and _same(cur.child_by_field_name("condition"), prev):
            return True
        prev, cur = cur, cur.parent
    return False


# -- spec items -----------------------------------------------------------------------------------------------


def _length(decl: GlobalDecl, interp: Any) -> tuple[list[int] | None, str]:
    dims: list[int] = []
    for size in decl.sizes:
        if size is None:
            return None, "its declaration gives no size"
        value = None
        try:
            v = interp.ev(size, interp.globals) if interp is not None else None
            value = interp.concrete(v.e) if v is not None and hasattr(v, "e") else None
        except Exception:  # an expression the host interpreter cannot read
            value = None
        if value is None:
            from xlate.specs.infer.ceval import literal

            lit = literal(text(size))
            value = int(lit.e) if lit is not None and lit.e.is_Integer else None
        if value is None or value <= 0:
            return None, f"its size '{text(size)}' is not a constant the program fixes"
        dims.append(int(value))
    return (dims or [1]), ""


def numpy_name(ctype: str) -> str | None:
    info = ctypes_table().get(normalise_ctype(ctype)) or {}
    name = info.get("numpy")
    return str(name) if name else None


def infer_globals(fn: Function, program: Program, interp: Any, inf: Any) -> None:
    """Add an item (or a hole) to `inf` for every module global the kernel `fn` reads or writes."""
    known = declarations(program)
    if not known:
        return
    params = {p.name for p in fn.params}
    uses = kernel_uses(program, fn.name, {k: v for k, v in known.items() if k not in params})
    if not uses:
        return
    lengths: dict[str, int] = {}
    for name in uses:
        decl = known[name]
        dims, why = _length(decl, interp)
        if dims is not None:
            lengths[name] = 1
            for d in dims:
                lengths[name] *= d
    for name in sorted(uses):
        use, decl = uses[name], known[name]
        if name in inf.items or name in inf.holes:
            continue  # a parameter or another item of that name
        origin = Origin("kernel", decl.where, decl.detail)
        dtype = numpy_name(decl.ctype)
        if not use.writes and decl.initialised and not decl.pointer:
            # a table the program fixes in its declaration: both sides hold it as written, not drawn
            inf.notes.append(f"module variable '{name}' is read as the program initialises it ({decl.where}); "
                             "not fuzzed")
            continue
        if decl.pointer:
            inf.holes[name] = (f"cannot fuzz the module variable '{name}' of '{fn.name}' ({decl.detail}): a pointer "
                               "the host sets to memory of its own; annotate the kernel by hand or test it through a "
                               "wrapper")
            continue
        if dtype is None:
            if not use.writes:  # a struct read as the module holds it (zeros): weaker, never wrong
                inf.notes.append(f"module variable '{name}' ({decl.detail}) is read but not fuzzed: only numbers and "
                                 "arrays of numbers are drawn")
                continue
            inf.holes[name] = (f"cannot compare the module variable '{name}' of '{fn.name}' ({decl.detail}): only "
                               "numbers and arrays of numbers can be generated and compared; annotate the kernel by hand")
            continue
        dims, why = _length(decl, interp)
        if dims is None:
            inf.holes[name] = (f"cannot infer the length of the module variable '{name}' of '{fn.name}' ({why}): "
                               f"annotate it, e.g. '// xlate: {name}: global inout[1024]'")
            continue
        role = "in" if decl.space == "constant" or not use.writes else ("inout" if use.reads else "out")
        rng = ""
        if role != "out" and _is_int(decl) and (use.index_like or use.targets):
            # the values index variables of known length, or the kernel's buffers (their length in the spec)
            bounds = {t: str(lengths[t]) if t in lengths else _param_length(inf, t, params) for t in use.targets}
            if use.index_like or not bounds or any(b is None for b in bounds.values()):
                why = use.index_like[0] if use.index_like else (
                    f"its values index {', '.join(sorted(t for t, b in bounds.items() if b is None))}, whose length is "
                    "not known here")
                inf.holes[name] = (f"cannot fuzz the module variable '{name}' of '{fn.name}': {why}, and drawn freely "
                                   f"its values could make a correct kernel fault; give it a range by hand, e.g. "
                                   f"'// xlate: {name}: global {role}[{', '.join(map(str, dims))}](0..9)'")
                continue
            rng = f"(0..{_smallest(sorted(set(bounds.values())))} - 1)"
            if all(b.isdigit() for b in bounds.values()):
                rng = f"(0..{min(int(b) for b in bounds.values()) - 1})"
        inf.items[name] = (f"{name}: global {role}[{', '.join(map(str, dims))}]{rng} as {dtype}", origin)


def _param_length(inf: Any, name: str, params: set[str]) -> str | None:
    """The length the spec gives the kernel's buffer parameter `name` (one dimension of plain numbers), or None."""
    from xlate.specs.language import BUFFER

    if name not in params or name not in inf.items:
        return None
    value = inf.items[name][0].split(":", 1)[1].strip()
    m = BUFFER.match(value)
    if not m or m.group(6) or " as " in value or "," in m.group(2):
        return None
    return m.group(2).strip()


def _smallest(lengths: list[str]) -> str:
    out = f"({lengths[0]})" if len(lengths) == 1 and not re.fullmatch(r"\w+", lengths[0]) else lengths[0]
    for other in lengths[1:]:
        out = f"min({out}, {other})"
    return out


# -- the annotation side --------------------------------------------------------------------------------------


def global_param(unit: KernelUnit, context: list[KernelUnit] | None, name: str, value: str, where: str,
                 triton: bool = False) -> ParamSpec:
    """The ParamSpec of a `NAME: global ROLE[DIMS](LO..HI) as DTYPE` item; the element type, when `as` does not
    give it, and the variable's memory space come from its declaration in the program."""
    from xlate.specs.language import BUFFER, global_buffer, parse_values, split_record, split_top, value_order

    body = global_buffer(value) or ""
    body, record = split_record(body)
    if record is not None:
        raise SpecError(f"{where}error: the module variable '{name}' has a record type: only numbers are supported")
    m = BUFFER.match(body)
    if not m:
        raise SpecError(f"{where}error: cannot read spec for the module variable '{name}': '{value}' (expected "
                        f"global in[..], global out[..] or global inout[..])")
    dims = split_top(m.group(2))
    if not dims:
        raise SpecError(f"{where}error: the module variable '{name}' needs a length, e.g. {name}: global {m.group(1)}[1]")
    lo, hi, perm, distinct = parse_values(m.group(4), where)
    decl = None
    if not triton:
        try:
            from xlate.specs.infer import _program

            program, _ = _program(unit, context)
            decl = declarations(program).get(name)
        except SpecError:
            raise
        except Exception:  # the program cannot be read: the item must say its type
            decl = None
    ctype = m.group(6) or (decl.ctype if decl is not None else None)
    if not ctype:
        raise SpecError(f"{where}error: no module variable '{name}' is declared in the program: give its element "
                        f"type, e.g. '{name}: global {m.group(1)}[{', '.join(dims)}] as float32'")
    if decl is not None and decl.space == "constant" and m.group(1) != "in":
        raise SpecError(f"{where}error: '{name}' is a __constant__ variable: kernels only read it ({name}: global in[...])")
    ascending, by = value_order(m.group(4))
    if by:
        raise SpecError(f"{where}error: the module variable '{name}' cannot be 'ascending by' a buffer: say 'ascending'")
    return ParamSpec(name, m.group(1), -1, ctype, dims, 1, lo, hi, perm, distinct=distinct,  # type: ignore[arg-type]
                     module_global=True, ascending=ascending)
