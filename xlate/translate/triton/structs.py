"""Packed structs of the program: a struct or class whose data members are numbers of one type -- named
scalars (`struct { float re, im; }`) or a fixed array (`struct alignas(16) { T val[4]; }`) -- is read by the
lifter like a CUDA vector type: its lanes in declaration order, `val[k]` the lane of an array member.
Anything else (pointers, mixed types, base classes, virtual methods, bit-fields) is not packed: None."""

from __future__ import annotations

import re
from typing import Any

import tree_sitter as ts

from xlate.cir import ctype as ctyping

TEMPLATE_ARGS = re.compile(r"^\s*([A-Za-z_][\w:]*)\s*<(.*)>\s*$")
SELF = "__xl_self"  # the object a constructor's device function (_constructors) builds: its members set one by one


def _text(node: ts.Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text is not None else ""


def _split_args(args: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in args:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


class StructLayouts:
    """Packed-struct layouts of one program (xlate.specs.infer.program.Program), computed on demand."""

    def __init__(self, program: Any):
        self.program = program
        self._defs: dict[str, list[tuple[ts.Node, list[str]]]] | None = None
        self._layouts: dict[str, dict[str, Any] | None] = {}
        self._members: dict[str, dict[str, str] | None] = {}

    def _definitions(self) -> dict[str, list[tuple[ts.Node, list[str]]]]:
        """name -> [(struct/class node with a body, its template parameter names)]."""
        if self._defs is None:
            self._defs = {}
            for f in self.program.files:
                stack = [f.tree.root_node]
                while stack:
                    n = stack.pop()
                    if n.type in ("struct_specifier", "class_specifier") and n.child_by_field_name("body") is not None:
                        names = [_text(n.child_by_field_name("name"))]
                        if n.parent is not None and n.parent.type == "type_definition":  # typedef struct {...} T;
                            names += [_text(d) for d in n.parent.children_by_field_name("declarator")
                                      if d.type == "type_identifier"]
                        for name in filter(None, names):
                            tparams: list[str] = []
                            if n.parent is not None and n.parent.type == "template_declaration":
                                plist = n.parent.child_by_field_name("parameters")
                                for tp in plist.named_children if plist is not None else []:
                                    ident = tp.child_by_field_name("name") or next(
                                        (c for c in tp.named_children if c.type in ("type_identifier", "identifier")), None)
                                    tparams.append(_text(ident))
                            self._defs.setdefault(name, []).append((n, tparams))
                    if n.type in ("function_definition", "compound_statement"):
                        continue
                    stack.extend(n.named_children)
        return self._defs

    def layout(self, ctype: str) -> dict[str, Any] | None:
        """{"scalar": canonical lane type, "fields": lane names in memory order} of a packed struct; None."""
        if ctype not in self._layouts:
            self._layouts[ctype] = self._layout(ctype)
        return self._layouts[ctype]

    def _layout(self, ctype: str) -> dict[str, Any] | None:
        m = TEMPLATE_ARGS.match(ctype)
        name, args = (m.group(1), _split_args(m.group(2))) if m else (ctype.strip(), [])
        name = name.removeprefix("struct ").removeprefix("class ").strip()
        if name in ("std::pair", "pair") and len(args) == 2 and name not in self._definitions():
            a, b = (ctyping.canonical(self.program.resolve_type(t)) for t in args)  # the library's {first, second}
            if a == b and ctyping.row(a) is not None and a != "bool":
                return {"scalar": a, "fields": ["first", "second"]}
            return None
        for node, tparams in self._definitions().get(name, []):
            if len(args) != len(tparams) and args:
                continue
            out = self._packed(node, dict(zip(tparams, args)))
            if out is not None:
                if not tparams:
                    out["constructors"] = _constructors(node, name, set(out["fields"]))
                return out
        return None if name in self._definitions() else self._library_vector(ctype)

    def _library_vector(self, ctype: str) -> dict[str, Any] | None:
        """A library's vector the program does not define (`glm::vec<3, float>`, through `using vec3 = ...`) whose
        lanes are members (xlate/data/library_types.yaml `fields`): its lanes, and `lanewise` (its arithmetic is
        lane by lane, a number broadcast to every lane)."""
        from xlate.specs.infer.program import library_matrix, library_type
        from xlate.translate.triton.libmatrices import matrix_fields

        real = self.program.resolve_type(ctype)
        found, shape = library_type(real), library_matrix(real)
        if found is None or not (found[2] or shape):
            return None
        scalar = ctyping.canonical(self.program.resolve_type(found[0]))
        if ctyping.row(scalar) is None or scalar == "bool":
            return None
        if shape is not None:  # a column-major matrix: its numbers column after column (libmatrices.py)
            return {"scalar": scalar, "fields": matrix_fields(shape[1], shape[2]), "lanewise": True,
                    "matrix": (shape[1], shape[2])}
        return {"scalar": scalar, "fields": found[2], "lanewise": True}

    def members(self, ctype: str) -> dict[str, str] | None:
        """A struct's value as the lifter keeps a local of it: field -> C type in declaration order, for a struct
        (no template) of numbers, `bool`s, fixed arrays of numbers of one dimension (`m[k]`, each a field) and
        nested such structs, CUDA vectors or library vectors and matrices (the field's type is theirs). None for anything else, and for a
        struct with a constructor or a default member initialiser: a local declared without a value would not
        start as the zero the lifter gives it."""
        if ctype not in self._members:
            self._members[ctype] = None  # a struct holding itself: refused
            self._members[ctype] = self._members_of(ctype)
        return self._members[ctype]

    def _members_of(self, ctype: str) -> dict[str, str] | None:
        name = ctype.strip().removeprefix("struct ").removeprefix("class ").strip()
        defs = self._definitions().get(name, [])
        if len(defs) != 1 or defs[0][1] or "<" in name:
            return None
        node = defs[0][0]
        if any(c.type == "base_class_clause" for c in node.named_children):
            return None
        out: dict[str, str] = {}
        for fd in node.child_by_field_name("body").named_children:
            if fd.type in ("comment", "access_specifier"):
                continue
            if fd.type in ("function_definition", "declaration", "template_declaration", "friend_declaration"):
                head = _text(fd).split("(")[0].split()
                if "virtual" in head or (head and head[-1].split("::")[-1] == name):
                    return None  # virtual methods, constructors
                continue
            if fd.type != "field_declaration" or fd.child_by_field_name("default_value") is not None:
                return None
            if any(c.type == "storage_class_specifier" for c in fd.children):
                continue
            if any(c.type == "bitfield_clause" for c in fd.children):
                return None
            ftype = ctyping.canonical(self.program.resolve_type(_text(fd.child_by_field_name("type"))))
            number = ctyping.row(ftype) is not None
            if not number and ctyping.vector(ftype) is None and self.members(ftype) is None and \
                    self._library_vector(ftype) is None:  # a glm vector or matrix field: a value of its own
                return None
            for d in fd.children_by_field_name("declarator"):
                if d.type == "field_identifier":
                    out[_text(d)] = ftype
                elif d.type == "array_declarator" and number and d.child_by_field_name("declarator") is not None \
                        and d.child_by_field_name("declarator").type == "field_identifier":
                    count = self._count(_text(d.child_by_field_name("size")), {})
                    if count is None or count <= 0:
                        return None
                    out.update({f"{_text(d.child_by_field_name('declarator'))}[{k}]": ftype for k in range(count)})
                elif d.type == "function_declarator":
                    continue
                else:
                    return None  # pointers, references, arrays of structs or of several dimensions
        return out or None

    def _packed(self, node: ts.Node, binding: dict[str, str]) -> dict[str, Any] | None:
        if any(c.type == "base_class_clause" for c in node.named_children):
            return None
        body = node.child_by_field_name("body")
        fields: list[str] = []
        scalars: set[str] = set()
        initialised = False  # a default member initialiser or a constructor: a local without a value is not zero
        own = _text(node.child_by_field_name("name"))
        for fd in body.named_children:
            if fd.type in ("comment", "access_specifier", "function_definition", "template_declaration",
                           "type_definition", "alias_declaration", "declaration", "friend_declaration"):
                head = _text(fd).split("(")[0].split()
                if "virtual" in head:
                    return None
                initialised = initialised or bool(head and own and head[-1].split("::")[-1] == own)
                continue
            if fd.type != "field_declaration":
                return None
            if any(c.type == "storage_class_specifier" for c in fd.children):
                continue  # a static member: no bytes of the object
            if fd.child_by_field_name("default_value") is not None:
                initialised = True
            decls = fd.children_by_field_name("declarator")
            if any(d.type == "function_declarator" for d in decls):
                continue
            if any(c.type == "bitfield_clause" for c in fd.children):
                return None
            ftype = _text(fd.child_by_field_name("type"))
            ftype = binding.get(ftype, ftype)
            scalar = ctyping.canonical(self.program.resolve_type(ftype))
            if ctyping.row(scalar) is None or scalar == "bool":
                return None
            scalars.add(scalar)
            for d in decls:
                if d.type == "field_identifier":
                    fields.append(_text(d))
                elif d.type == "array_declarator" and d.child_by_field_name("declarator") is not None \
                        and d.child_by_field_name("declarator").type == "field_identifier":
                    count = self._count(_text(d.child_by_field_name("size")), binding)
                    if count is None or count <= 0:
                        return None
                    base = _text(d.child_by_field_name("declarator"))
                    fields.extend(f"{base}[{k}]" for k in range(count))
                else:
                    return None  # pointers, references, nested arrays
        if len(scalars) != 1 or not fields:
            return None
        return {"scalar": scalars.pop(), "fields": fields, "initialised": initialised}

    def _count(self, size: str, binding: dict[str, str]) -> int | None:
        size = binding.get(size.strip(), size.strip())
        for _ in range(8):
            if re.fullmatch(r"\d+[uUlL]*", size):
                return int(re.sub(r"[uUlL]+$", "", size))
            m = self.program.macros.get(size)
            if m is None or m.params is not None:
                return None
            size = m.body.strip().strip("()").strip()
        return None


def _constructors(node: ts.Node, name: str, fields: set[str]) -> dict[int, str]:
    """CUDA source of a device function per constructor of struct `name` defined in its body whose body is
    empty and whose members come from its initialiser list (`P(int a, int b) : x(a), y(b) {}`), keyed by its
    number of parameters: `__device__ P __xl_make_P(int a, int b) { P self; self.x = a; self.y = b; return
    self; }`. A member the list leaves out stays uninitialised, as in C++."""
    out: dict[int, str] = {}
    for fd in node.child_by_field_name("body").named_children:
        decl = fd.child_by_field_name("declarator") if fd.type == "function_definition" else None
        if decl is None or decl.type != "function_declarator" or _text(decl.child_by_field_name("declarator")) != name:
            continue
        body = fd.child_by_field_name("body")
        plist = decl.child_by_field_name("parameters")
        params = [p for p in plist.named_children if p.type in ("parameter_declaration", "optional_parameter_declaration")]
        if body is None or any(c.type != "comment" for c in body.named_children):
            continue  # a body with statements, `= default`, `= delete`
        sets = []
        inits = next((c for c in fd.named_children if c.type == "field_initializer_list"), None)
        for fi in inits.named_children if inits is not None else []:
            if fi.type == "comment":
                continue
            kids = fi.named_children
            value = kids[1].named_children if fi.type == "field_initializer" and len(kids) == 2 else []
            member = _text(kids[0]) if kids else ""
            if member not in fields or len(value) != 1:
                sets = None  # a base class, a member array, several values
                break
            sets.append(f"{SELF}.{member} = ({_text(value[0])});")
        if sets is not None and len(params) not in out:
            out[len(params)] = (f"__device__ {name} __xl_make_{name}({_text(plist)[1:-1]}) {{ {name} {SELF}; "
                                f"{' '.join(sets)} return {SELF}; }}")
    return out


def record_refusal(spec: Any) -> str | None:
    """Why the lifter cannot port a kernel whose spec has records passed by value (`p: scalar as {dt: float32,
    n: int32}`), or None. The gate hands such an argument to a port as one argument of its C bytes, and a Triton
    launcher takes no struct argument, so the port is refused with the parameters named rather than lifted into
    reads of the wrong type. Buffers of records (`opts: in[n] as {...}`) are read field by field (records.py);
    structs of one number type (lanes, `as float32`) are not records and stay supported."""
    from xlate.specs.records import is_record

    named = [p.name for p in getattr(spec, "params", []) if is_record(p.ctype) and not p.is_buffer]
    if not named:
        return None
    return (f"parameter{'s' if len(named) > 1 else ''} {', '.join(named)} {'are structs' if len(named) > 1 else 'is a struct'} "
            "of mixed field types passed by value (a record scalar); a Triton launcher takes no struct argument: port "
            "the kernel to CUDA or HIP, or pass the fields as parameters of their own")


def record_dtypes(spec: Any) -> dict[str, Any]:
    """The NumPy dtype (C's layout) of each buffer of records the spec lists, by parameter name; a template type
    of a field is the one dtype the spec fixes it to. ValueError naming the field type where it fixes none."""
    from xlate.specs.records import _base_dtype, is_record, record_dtype

    def resolve(t: str) -> Any:
        axes = spec.dtype_axes.get(t)
        if axes is not None and len(axes) != 1:
            raise ValueError(f"record field type {t} takes {len(axes)} dtypes in the spec (one port per dtype: fix it)")
        return _base_dtype(axes[0] if axes else t, None)

    return {p.name: record_dtype(p.ctype, resolve) for p in getattr(spec, "params", [])
            if is_record(p.ctype) and p.is_buffer}
