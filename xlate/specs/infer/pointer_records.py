"""By-value struct parameters that hold pointers (a tensor-info struct: a data pointer with its sizes and strides)
as records with pointer fields (xlate/specs/records.py): `x: scalar as {data: in[r * c] as float32, size:
int32[2] const(r, c), stride: int32[2] const(c, 1)}`.

Each pointer field's role comes from the kernel's accesses through it (`x.data[i]` read, `io.dst[i] = v` written,
also through a local pointer `const float* row = x.data + off` and the device functions the struct is handed to;
a `const` pointee is only read), its length from the allocation the host stores in the field before the launch
(`v.data = d_x` with `cudaMalloc(&d_x, r * c * sizeof(float))`). A number field the kernel uses where a drawn
value could break a correct kernel (an index, a loop bound, a guard: xlate/specs/infer/records.py) takes the
values the host gives it (`v.size[0] = r` -> `size: int32[2] const(r, c)`), so sizes and strides stay those of the
buffer's layout; the other number fields are drawn. Holes, with the reason: no launch that builds the struct, a
pointer field the host does not point at an allocation xlate follows, a pointer field whose values the kernel
uses as indices or loop bounds, and a risky number field the host gives no value xlate can write."""

from __future__ import annotations

from typing import Any

import sympy as sp
import tree_sitter as ts

from xlate.model import Function, Param
from xlate.specs.infer.program import Program, text
from xlate.specs.infer.records import (
    _MEMO,
    MATH,
    _callees,
    _risk,
    _root_name,
    _typed_names,
    _walk,
    number_fields,
    risky_fields,
)
from xlate.specs.infer.sym import FloorDiv
from xlate.specs.infer.values import Num, Obj, Ptr
from xlate.specs.model import Origin, normalise_ctype
from xlate.specs.records import Field, Pointee, Record, _base_dtype, parse_record, record_text

WRAPPERS = ("parenthesized_expression", "cast_expression")
CASTS = ("reinterpret_cast", "static_cast", "const_cast")  # `reinterpret_cast<float*>(p.x)`: the same buffer
MAX_FOLLOW = 3  # local pointers followed (`const float* row = x.data + off; row[j]`)


def pointer_record(program: Program, fn: Function, p: Param, launch: Any, mapper: Any, interp: Any,
                   ) -> tuple[str | None, str, Origin | None]:
    """(record text, "", origin) for struct parameter `p` holding pointers to numbers; (None, why, None) when it
    cannot be fuzzed soundly; (None, "", None) when `p`'s struct holds no such pointers."""
    record, why = program.record_of(p.base_type, pointers=_field_casts(program, fn, p) or True)
    if record is None:
        return None, why, None
    rec = parse_record(record)
    if not any(f.pointer is not None for f in rec.fields):
        return None, "", None
    if launch is None or mapper is None:
        return None, "it holds pointers, and no launch that fills them was found", None
    index = fn.params.index(p)
    arg = launch.args[index] if index < len(launch.args) else None
    if not isinstance(arg, Obj):
        given = launch.arg_texts[index] if index < len(launch.arg_texts) else ""
        return None, (f"it holds pointers, and the launch passes {f'{given!r}, ' if given else ''}a value xlate does "
                      "not follow (no struct the host fills field by field, nor one a library call fills from a "
                      "tensor xlate follows)"), None
    struct = program.resolve_type(normalise_ctype(p.base_type)).split("<")[0].split("::")[-1].strip()
    numbers = number_fields(record)
    risky = risky_fields(program, fn.name, numbers, p.name, struct, number_fields(record, "f"))
    opaque = _handed_to_unread(program, fn, p.name, struct)
    if opaque:  # `IndexToOffset<...>::get(i, info)` of a library: any number field may index there
        risky = {**{n: f"is read by '{opaque}', which xlate cannot read" for n in numbers}, **risky}
    fields: list[Field] = []
    for f in rec.fields:
        if f.pointer is not None:
            field, why = _pointer_field(program, fn, p, struct, f, arg.env.get(f.name), mapper)
            if field is not None and opaque and field.pointer is not None and field.pointer.role == "in" and (
                    f.pointer.role != "in"):  # a writable pointee handed to code not read: compared as written
                field = Field(field.name, field.type, pointer=Pointee("inout", field.pointer.dims))
        elif f.name in risky:
            field, why = _given_field(f, arg.env.get(f.name), mapper, interp, f"{p.name}.{f.name} {risky[f.name]}")
        elif isinstance(f.type, Record) and number_fields(record_text(Record((f,)))) & set(risky):
            field, why = None, f"its nested field {p.name}.{f.name} holds fields the kernel indexes or bounds loops with"
        else:
            field, why = f, ""
        if field is None:
            return None, why, None
        fields.append(field)
    why = _unreceived_lengths(fields, fn, p.name)
    if why:
        return None, why, None
    origin = Origin("host", launch.where, f"{p.name}: a {struct} the host fills before {launch.text}")
    return record_text(Record(tuple(fields), rec.align)), "", origin


def _field_casts(program: Program, fn: Function, p: Param) -> dict[str, set[str]]:
    """field -> the pointee types the kernel (and the device functions it hands `p` to) casts `p.field` to:
    `(float*)p.x_ptr`, `reinterpret_cast<const float*>(p.x_ptr)` give {"x_ptr": {"float"}}; a use of the field
    that is no such cast adds "" (a `void*` field used so has no one type); a test against null adds nothing."""
    fd = program.function(fn.name, "kernel")
    if fd is None:
        return {}
    struct = program.resolve_type(normalise_ctype(p.base_type)).split("<")[0].split("::")[-1].strip()
    callees = _callees(program, fd)
    typed = {p.name, *_typed_names(program, callees, struct, {p.name})}
    out: dict[str, set[str]] = {}
    for f in callees:
        body = f.node.child_by_field_name("body")
        for n in _walk(body) if body is not None else []:
            if n.type == "field_expression" and _root_name(n.child_by_field_name("argument")) in typed:
                pointee = _cast_pointee(n)
                if pointee is not None:
                    out.setdefault(text(n.child_by_field_name("field")), set()).add(pointee)
    return out


def _cast_pointee(node: ts.Node) -> str | None:
    """The pointee type of the pointer cast applied to `node` (`float` of `(const float*)x`); "" for another use;
    None for a test against null (`x == nullptr`, `if (x)`, `!x`), which reads no element."""
    cur = node
    while cur.parent is not None and cur.parent.type == "parenthesized_expression":
        cur = cur.parent
    parent = cur.parent
    if parent is not None and (parent.type == "condition_clause" or (
            parent.type == "conditional_expression" and cur == parent.child_by_field_name("condition")) or (
            parent.type == "unary_expression" and text(parent.child_by_field_name("operator")) == "!") or (
            parent.type == "binary_expression" and text(parent.child_by_field_name("operator")) in ("==", "!="))):
        return None
    written = None
    if parent is not None and parent.type == "cast_expression":
        written = parent.child_by_field_name("type")
    elif _cast_call(parent) is not None:
        written = _cast_call(parent)
    if written is None or written.type != "type_descriptor":
        return ""
    declarator = written.child_by_field_name("declarator")
    if declarator is None or declarator.type != "abstract_pointer_declarator" or declarator.named_child_count:
        return ""  # no pointer, or a pointer to pointers
    return normalise_ctype(text(written.child_by_field_name("type")))


def _cast_call(args: ts.Node | None) -> ts.Node | None:
    """The type written in `reinterpret_cast<T*>(...)` whose argument list `args` is; None for another call."""
    call = args.parent if args is not None and args.type == "argument_list" else None
    fn = call.child_by_field_name("function") if call is not None else None
    if fn is None or fn.type != "template_function" or text(fn.child_by_field_name("name")) not in CASTS:
        return None
    targs = fn.child_by_field_name("arguments")
    return targs.named_children[0] if targs is not None and len(targs.named_children) == 1 else None


def _handed_to_unread(program: Program, fn: Function, pname: str, struct: str) -> str:
    """The first function the code read does not define that gets the whole struct (`get(i, info)`), or ""."""
    fd = program.function(fn.name, "kernel")
    if fd is None:
        return ""
    callees = _callees(program, fd)
    typed = {pname, *_typed_names(program, callees, struct, {pname})}
    for f in callees:
        body = f.node.child_by_field_name("body")
        for n in _walk(body) if body is not None else []:
            if n.type != "argument_list":
                continue
            call = n.parent
            callee = text(call.child_by_field_name("function")) if call is not None else ""
            if program.function(callee.split("<")[0]) is not None or callee.split("::")[-1] in MATH:
                continue
            if any(a.type == "identifier" and text(a) in typed for a in n.named_children):
                return callee
    return ""


def _unreceived_lengths(fields: list[Field], fn: Function, pname: str) -> str:
    """Why a pointer field's length is not one the kernel can stay inside: the kernel's accesses through a field
    are not bounded here (only a parameter's are), so its length must be made of sizes the kernel receives (its
    parameters, or the struct's own computed fields: `data: in[r * c]` with `size: const(r, c)`), which its guards
    compare with; a size only the host knows (`src: in[m]` beside `n: const(n)`) may be drawn smaller than what
    the kernel reads."""
    from xlate.specs import expr

    received = {q.name for q in fn.params} | {n for f in fields for e in (f.const or ()) for n in expr.names(e)}
    for f in fields:
        if f.pointer is None or f.pointer.role == "null":
            continue
        outside = sorted(set().union(*(expr.names(d) for d in f.pointer.dims)) - received)
        if outside:
            return (f"the length of field {pname}.{f.name} ({', '.join(f.pointer.dims)}) uses {', '.join(outside)}, "
                    "which the kernel does not receive: xlate cannot tell that its accesses stay inside")
    return ""


def _pointer_field(program: Program, fn: Function, p: Param, struct: str, f: Field, value: Any,
                   mapper: Any) -> tuple[Field | None, str]:
    assert f.pointer is not None
    label = f"{p.name}.{f.name}"
    if isinstance(value, Ptr) and value.alloc.null:
        return Field(f.name, "uint8", pointer=Pointee("null")), ""
    if not isinstance(value, Ptr) or value.alloc.bytes is None:
        return None, f"the host does not point field {label} at an allocation xlate follows"
    reads, writes, why = field_accesses(program, fn, p.name, struct, f.name, str(f.type).startswith("float"))
    if why:
        return None, f"a value read through field {label} {why}: give its values a range by hand"
    if f.pointer.role == "in":  # a const pointee
        writes = False
    esize = _base_dtype(str(f.type), None).itemsize
    nbytes, missing = mapper.rewrite(value.alloc.bytes - value.offset)
    if nbytes is None:
        return None, f"the allocation behind field {label} is sized by {', '.join(missing)}, which the spec cannot name"
    length = sp.expand(nbytes / esize) if (nbytes / esize).is_integer else sp.expand(FloorDiv(nbytes, esize))
    role = "inout" if reads and writes else "out" if writes else "in"
    try:
        dims = (mapper.text(length),)
    except ValueError:  # an expression the spec language cannot write
        return None, f"the length of field {label} ({length}) is not an expression a spec can write"
    return Field(f.name, f.type, pointer=Pointee(role, dims)), ""


def _given_field(f: Field, value: Any, mapper: Any, interp: Any, why: str) -> tuple[Field | None, str]:
    """A risky number field with the values the host stores in it, as `const(...)`."""
    count = 1
    for d in f.shape:
        count *= d
    exprs: list[sp.Expr] = []
    if not f.shape and isinstance(value, Num):
        exprs = [value.e]
    elif f.shape and isinstance(value, Ptr) and interp is not None:
        elements = [interp._elements.get((id(value.alloc), interp._element_key(value, i))) for i in range(count)]
        given = len(elements)
        while given and elements[given - 1] is None:
            given -= 1  # elements the host never sets past the last it does: zero in the spec
        if all(isinstance(e, Num) for e in elements[:given]):
            exprs = [e.e for e in elements[:given]]  # type: ignore[union-attr]
    if not exprs:
        return None, f"field {why}, and the host gives it no value xlate follows: give it a range by hand"
    texts = []
    for e in exprs:
        r, missing = mapper.rewrite(e)
        if r is None:
            return None, f"field {why}, and the host sets it from {', '.join(missing)}, which the spec cannot name"
        try:
            texts.append(mapper.text(r))
        except ValueError:
            return None, f"field {why}, and the host sets it to {r}, which a spec cannot write"
    return Field(f.name, f.type, f.shape, None, None, f.align, const=tuple(texts)), ""


def field_accesses(program: Program, fn: Function, pname: str, struct: str, field: str,
                   flt: bool) -> tuple[bool, bool, str]:
    """(read, written, why not) of the memory behind pointer field `field` of parameter `pname`, in the kernel
    and the device functions it calls; `why` when a value loaded through it indexes a buffer, bounds a loop or
    guards the kernel (then its values need a range)."""
    fd = program.function(fn.name, "kernel")
    if fd is None:
        return True, True, ""
    _MEMO.clear()
    callees = _callees(program, fd)
    typed = {pname, *_typed_names(program, callees, struct, {pname})}
    reads = writes = False
    for f in callees:
        body = f.node.child_by_field_name("body")
        for n in _walk(body) if body is not None else []:
            if n.type != "field_expression" or text(n.child_by_field_name("field")) != field:
                continue
            if _root_name(n.child_by_field_name("argument")) not in typed:
                continue
            r, w, why = _pointer_uses(n, body, program, flt, 0)
            if why:
                return reads, writes, why
            reads, writes = reads or r, writes or w
    return reads, writes, ""


def _pointer_uses(node: ts.Node, body: ts.Node, program: Program, flt: bool, depth: int) -> tuple[bool, bool, str]:
    """How the pointer value at `node` is used: elements read, written, and why a loaded value is not data."""
    cur = node
    while cur.parent is not None:
        parent = cur.parent
        if parent.type in WRAPPERS or (parent.type == "binary_expression" and text(
                parent.child_by_field_name("operator")) in ("+", "-")):
            cur = parent  # pointer arithmetic: the same buffer
            continue
        if _cast_call(parent) is not None:
            cur = parent.parent  # `reinterpret_cast<float*>(p.x)`: the same buffer
            continue
        if parent.type == "subscript_expression" and cur == parent.child_by_field_name("argument"):
            return _element_use(parent, body, program, flt)
        if parent.type == "pointer_expression" and text(parent.child_by_field_name("operator")) == "*":
            return _element_use(parent, body, program, flt)
        if parent.type == "init_declarator" and cur == parent.child_by_field_name("value"):
            name = _declared(parent.child_by_field_name("declarator"))
            if name is None or depth >= MAX_FOLLOW:
                return True, True, ""  # kept somewhere xlate does not follow: compared as written
            return _local_uses(name, body, program, flt, depth + 1)
        if parent.type == "argument_list":
            return _handed_on(cur, parent, program, flt, depth)
        if parent.type == "assignment_expression" and cur == parent.child_by_field_name("right"):
            return True, True, ""  # stored in another variable: not followed
        return False, False, ""  # tested (`if (x.bias)`, `x.data != nullptr`): no element touched
    return False, False, ""


def _declared(d: ts.Node | None) -> str | None:
    while d is not None and d.type in ("pointer_declarator", "reference_declarator"):
        d = d.child_by_field_name("declarator")
    return text(d) if d is not None and d.type == "identifier" else None


def _handed_on(arg: ts.Node, args: ts.Node, program: Program, flt: bool, depth: int) -> tuple[bool, bool, str]:
    """The pointer handed to a function: a device function of the program is followed through its parameter; an
    atomic or a library call reads and writes the element (compared as written), and its integers may be anything
    there (`lookup(c.idx, i)` of code not read: a hole)."""
    call = args.parent
    callee = text(call.child_by_field_name("function")) if call is not None else ""
    fd = program.function(callee.split("<")[0])
    k = next((i for i, a in enumerate(args.named_children) if a.id == arg.id), None)
    body = fd.node.child_by_field_name("body") if fd is not None else None
    if fd is not None and body is not None and k is not None and k < len(fd.params) and depth < MAX_FOLLOW:
        return _local_uses(fd.params[k][0], body, program, flt, depth + 1)
    if flt or callee.split("::")[-1].startswith("atomic"):
        return True, True, ""
    return True, True, f"is handed to '{callee}', which xlate cannot read"


def _local_uses(name: str, body: ts.Node, program: Program, flt: bool, depth: int) -> tuple[bool, bool, str]:
    reads = writes = False
    for n in _walk(body):
        if n.type != "identifier" or text(n) != name:
            continue
        if n.parent is not None and n.parent.type in ("init_declarator", "pointer_declarator"):
            continue  # its declaration
        r, w, why = _pointer_uses(n, body, program, flt, depth)
        if why:
            return reads, writes, why
        reads, writes = reads or r, writes or w
    return reads, writes, ""


def _element_use(elem: ts.Node, body: ts.Node, program: Program, flt: bool) -> tuple[bool, bool, str]:
    """An element `x.data[i]` (or `*(x.data + i)`): written by `=`, read and written by `+=`, `++`, an atomic or
    its address handed on; otherwise read, and then its value must be plain data."""
    cur = elem
    while cur.parent is not None and cur.parent.type in WRAPPERS:
        cur = cur.parent
    parent = cur.parent
    if parent is not None and parent.type == "assignment_expression" and cur == parent.child_by_field_name("left"):
        return text(parent.child_by_field_name("operator")) != "=", True, ""
    if parent is not None and parent.type == "update_expression":
        return True, True, ""
    if parent is not None and parent.type == "pointer_expression" and text(parent.child_by_field_name("operator")) == "&":
        return True, True, ""
    why = _risk(elem, body, program, 0, flt) or (None if flt else _offsets_memory(elem, body, program, 0))
    return True, False, why or ""


def _offsets_memory(node: ts.Node, body: ts.Node, program: Program, depth: int) -> str | None:
    """Why an integer loaded through a pointer field may be an address offset: it flows (through arithmetic and
    local variables) into a dereference or into the arguments of a call (`atomicAdd(out + j, v)`, a helper
    taking `out + j * K`): uses records._risk does not see, as they are no subscript."""
    cur = node
    while cur.parent is not None and cur.parent.id != body.id:
        parent = cur.parent
        if parent.type in (*WRAPPERS, "binary_expression", "conditional_expression"):
            cur = parent
            continue
        if parent.type == "pointer_expression":
            return "offsets a pointer"
        if parent.type == "argument_list":
            call = parent.parent
            callee = text(call.child_by_field_name("function")) if call is not None else ""
            return None if callee.split("::")[-1] in MATH else f"is passed to '{callee}' (an address offset, maybe)"
        if parent.type in ("init_declarator", "assignment_expression"):
            target = parent.child_by_field_name("declarator") if parent.type == "init_declarator" else (
                parent.child_by_field_name("left") if cur == parent.child_by_field_name("right") else None)
            if target is None or target.type != "identifier":
                return None  # stored into memory: data
            if depth >= MAX_FOLLOW:
                return f"flows into '{text(target)}' further than xlate follows"
            for n in _walk(body):
                if n.type == "identifier" and text(n) == text(target) and n.id != target.id:
                    why = _offsets_memory(n, body, program, depth + 1)
                    if why:
                        return f"flows into '{text(target)}', which {why}"
            return None
        return None
    return None
