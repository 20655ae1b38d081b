"""Static checks of any AscendC source (written by the rules, the LLM or a person), each violation a coded
diagnostic (xlate/data/diagnostics/ascendc.yaml) at file:line:col:

  entry point   `extern "C" __global__ __aicore__ void k(GM_ADDR ...)`, kernel_operator.h included;
  queues        every TQue's AllocTensor has a FreeTensor, every EnQue a DeQue, every TQue/TBuf an InitBuffer,
                and in each function a tensor taken from a queue is handed back (EnQue/FreeTensor);
  UB budget     the TPipe::InitBuffer sizes of each kernel class against the SoC's Unified Buffer;
  alignment     DataCopy lengths are whole 32-byte blocks (constant, or guarded by `% ALIGN == 0`), DataCopyPad
                exists on the SoC, DataCopy(Ext)Params fields in range;
  repeats       level-0 vector instructions repeat at most max_repeat_times times; level-2 counts per instruction;
  block index   GetBlockIdx() flows into the global-memory split (SetGlobalBuffer or GM offsets);
  scalar reads  LocalTensor::GetValue after a vector instruction is preceded by a V_S sync.

Every check that ran also leaves an XL3000 note saying what it covered; what_was_checked() lists those.
The source is parsed with xlate's C++ grammar; `<<<...>>>` launches are turned into comments first (same byte
offsets), since tree-sitter-cpp does not know the kernel-call operator.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

import tree_sitter as ts
from xlate.backends.ascendc_soc import SocInfo, soc_info

from xlate.diagnostics import Diagnostic
from xlate.diagnostics import make as diag
from xlate.parse import parse_string
from xlate.parse.consteval import ConstEvaluator, ctype_sizes
from xlate.parse.frontend import parse_c
from xlate.parse.nodes import Source, syntax_errors, walk
from xlate.resources import data

LAUNCH = re.compile(rb"<<<(.*?)>>>", re.S)
TEMPLATE_ARGS = re.compile(r"<[^<>]*(?:<[^<>]*>[^<>]*)*>")


@functools.cache
def apis() -> dict:
    return data("ascendc/apis.yaml")


@functools.cache
def family_of() -> dict[str, dict]:
    out = {}
    for fam in apis()["families"].values():
        for name in fam["apis"]:
            out[name] = fam
    return out


@dataclass
class Call:
    node: ts.Node
    obj: str | None  # `pipe` in pipe.InitBuffer(...), None for free functions
    name: str  # the unqualified name without template arguments
    callee: str  # the callee text as written
    args: list[ts.Node]


@dataclass
class Ctx:
    path: str
    text: str
    src: Source
    root: ts.Node
    soc: SocInfo
    diags: list[Diagnostic] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    types: dict[str, str] = field(default_factory=dict)  # variable/member name -> declared type text
    launches: list[str] = field(default_factory=list)  # <<<...>>> configurations
    params: set[str] = field(default_factory=set)  # names declared only as function parameters

    def t(self, node: ts.Node | None) -> str:
        return self.src.text(node)

    def at(self, node: ts.Node) -> tuple[int, int]:
        span = self.src.span(node)
        return span.line, span.col

    def add(self, code: str, node: ts.Node | None, severity: str | None = None, **fields) -> None:
        line, col = self.at(node) if node is not None else (1, 1)
        self.diags.append(diag(code, self.path, line, col, severity=severity, **fields))

    def note(self, check: str, summary: str) -> None:
        self.diags.append(diag("XL3000", self.path, 1, 1, check=check, summary=summary))


def prepare_source(text: str) -> tuple[bytes, list[str]]:
    """Byte-for-byte same-length text with launches commented out and AscendC-only qualifiers blanked."""
    data = text.encode("utf-8")
    launches = [m.group(1).decode("utf-8", "replace") for m in LAUNCH.finditer(data)]
    data = LAUNCH.sub(lambda m: b"/*<" + m.group(1).replace(b"*/", b"**") + b">*/", data)
    words = apis()["extra_qualifiers"]
    data = re.sub(rb"\b(" + b"|".join(re.escape(w.encode()) for w in words) + rb")\b", lambda m: b" " * len(m.group(1)), data)
    return data, launches


def check_ascendc(text: str, path: str, soc: str | None = None) -> list[Diagnostic]:
    """Diagnostics for the AscendC source `text` (reported as `path`) on SoC `soc` (a name, alias or SoC version
    from templates/arch; default Ascend 910B). Errors mean the kernel is wrong or will not build."""
    info = soc_info(soc)  # InputError (exit 2) for a name that is no Ascend SoC
    data, launches = prepare_source(text)
    parsed = parse_c(data, path, "cpp")
    root = parsed.root
    src = Source(path, parsed.view)
    ctx = Ctx(path, text, src, root, info, launches=launches)
    errors = syntax_errors(src, root, limit=5)
    if errors:
        for e in errors:
            ctx.diags.append(diag("XL3001", path, e.line, e.col, detail=e.message))
        return ctx.diags
    unit = parse_string(data.decode("utf-8"), path, language="ascendc", strict=False)
    _collect(ctx)
    _check_entry(ctx, unit)
    _check_queues(ctx)
    _check_ub(ctx, unit)
    _check_copies(ctx, unit)
    _check_repeats(ctx, unit)
    _check_block_index(ctx, bool(unit.kernels))
    _check_scalar_reads(ctx)
    return ctx.diags


def what_was_checked(diagnostics: list[Diagnostic]) -> list[str]:
    """One line per check that ran (from the XL3000 notes), for the verdict's 'static checks passed: ...'."""
    out = []
    for d in diagnostics:
        if d.code == "XL3000" and d.message not in out:
            out.append(d.message)
    return out


# -- collection --------------------------------------------------------------------------------------------------


def _strip(text: str) -> str:
    return TEMPLATE_ARGS.sub("", text).strip()


def _collect(ctx: Ctx) -> None:
    for node in walk(ctx.root):
        if node.type == "call_expression":
            fn = node.child_by_field_name("function")
            args_node = node.child_by_field_name("arguments")
            args = [a for a in (args_node.named_children if args_node else []) if a.type != "comment"]
            if fn is None:
                continue
            if fn.type == "field_expression":
                obj = ctx.t(fn.child_by_field_name("argument"))
                name = _strip(ctx.t(fn.child_by_field_name("field")))
                ctx.calls.append(Call(node, _base(obj), name, ctx.t(fn), args))
            else:
                callee = ctx.t(fn)
                ctx.calls.append(Call(node, None, _strip(callee).split("::")[-1], callee, args))
        elif node.type in ("declaration", "field_declaration", "parameter_declaration"):
            type_text = ctx.t(node.child_by_field_name("type"))
            for d in node.children_by_field_name("declarator"):
                name = _declared(ctx, d)
                if name:
                    if node.type == "parameter_declaration":
                        ctx.params.add(name)
                        ctx.types.setdefault(name, type_text + ("*" if "pointer" in d.type else ""))
                    else:
                        ctx.params.discard(name)
                        ctx.types[name] = type_text + ("*" if "pointer" in d.type else "")


def _declared(ctx: Ctx, node: ts.Node | None) -> str | None:
    while node is not None and node.type not in ("identifier", "field_identifier"):
        nxt = node.child_by_field_name("declarator")
        node = nxt if nxt is not None else (node.named_children[0] if node.named_children else None)
    return ctx.t(node) if node is not None else None


def _base(expr: str) -> str:
    """The variable an expression names: `this->xGm[off]` -> xGm, `inQueueX` -> inQueueX."""
    e = expr.strip()
    e = re.sub(r"^\(?\s*this\s*->\s*", "", e)
    m = re.match(r"[A-Za-z_]\w*", e)
    return m.group(0) if m else e


def _type_arg(type_text: str) -> str | None:
    m = re.search(r"<\s*([^<>,]+?)\s*[,>]", type_text)
    return m.group(1).strip() if m else None


def _elem_type(ctx: Ctx, expr: ts.Node) -> str | None:
    t = ctx.types.get(_base(ctx.t(expr)))
    if t and ("LocalTensor" in t or "GlobalTensor" in t):
        return _type_arg(t)
    return None


def _is_tensor(ctx: Ctx, expr: ts.Node, kind: str) -> bool:
    return kind in ctx.types.get(_base(ctx.t(expr)), "")


def _enclosing(node: ts.Node, types: tuple[str, ...]) -> ts.Node | None:
    p = node.parent
    while p is not None and p.type not in types:
        p = p.parent
    return p


# -- entry point ---------------------------------------------------------------------------------------------------


def _check_entry(ctx: Ctx, unit) -> None:
    if not any(i.path.endswith("kernel_operator.h") for i in unit.includes):
        ctx.add("XL3004", None)
    entry_q = set(apis()["entry_qualifiers"])
    kernels = []
    for fn in unit.kernels:
        node = _node_at(ctx, fn.span.start_byte, "function_definition") if fn.span else None
        original = ctx.text.encode("utf-8")[fn.span.start_byte:fn.body_span.start_byte].decode("utf-8", "replace") \
            if fn.span and fn.body_span else ""
        if not (entry_q & set(fn.qualifiers)) and not any(q in original for q in entry_q):
            ctx.add("XL3002", node, detail=f"kernel '{fn.name}' is __global__ but not __aicore__ (or __vector__)")
            continue
        if fn.return_type.strip() != "void":
            ctx.add("XL3002", node, detail=f"kernel '{fn.name}' returns '{fn.return_type}', not void")
        for p in fn.params:
            ptext = ctx.text.encode("utf-8")[p.span.start_byte:p.span.end_byte].decode() if p.span else p.type
            if p.is_pointer and "__gm__" not in ptext and "GM_ADDR" not in ptext:
                ctx.add("XL3002", node, detail=f"kernel '{fn.name}' parameter '{p.name}' is a pointer without __gm__ "
                        "(global memory arguments are GM_ADDR / __gm__ T*)")
            if p.is_reference:
                ctx.add("XL3002", node, detail=f"kernel '{fn.name}' parameter '{p.name}' is a reference")
        if 'extern "C"' not in fn.qualifiers and "extern" not in original:
            ctx.add("XL3003", node, detail=f"kernel '{fn.name}' is not extern \"C\" (its symbol name is mangled)")
        kernels.append(f"{fn.name}({', '.join(p.type + ' ' + p.name for p in fn.params)})")
    if not unit.kernels:
        ctx.add("XL3002", None, detail="no kernel entry point: no `__global__ __aicore__ void` function")
        return
    ctx.note("entry point", "; ".join(kernels) or "none valid")


def _node_at(ctx: Ctx, start: int, kind: str) -> ts.Node | None:
    for n in walk(ctx.root):
        if n.type == kind and n.start_byte == start:
            return n
        if n.start_byte > start:
            break
    return None


# -- queues --------------------------------------------------------------------------------------------------------


def _check_queues(ctx: Ctx) -> None:
    # a TQue/TBuf parameter (a helper taking `TQue<...>& q`) is some caller's queue, checked there
    queues = [n for n, t in ctx.types.items() if re.search(r"\bTQue(Bind)?\b", t) and n not in ctx.params]
    bufs = [n for n, t in ctx.types.items() if re.search(r"\bTBuf\b", t) and n not in ctx.params]
    counts: dict[str, dict[str, list[Call]]] = {q: {} for q in queues + bufs}
    for c in ctx.calls:
        if c.obj in counts:
            counts[c.obj].setdefault(c.name, []).append(c)
        if c.name == "InitBuffer" and c.args and _base(ctx.t(c.args[0])) in counts:
            counts[_base(ctx.t(c.args[0]))].setdefault("InitBuffer", []).append(c)
    ok = 0
    for q in queues + bufs:
        cs = counts[q]
        used = [c for k, v in cs.items() if k != "InitBuffer" for c in v]
        first = used[0].node if used else None
        if used and not cs.get("InitBuffer"):
            ctx.add("XL3012", first, queue=q)
        if q in bufs:
            ok += 1
            continue
        alloc, free = cs.get("AllocTensor", []), cs.get("FreeTensor", [])
        enq, deq = cs.get("EnQue", []), cs.get("DeQue", [])
        bad = False
        for code, have, need, detail in (("XL3010", alloc, free, "AllocTensor without any FreeTensor"),
                                         ("XL3010", free, alloc, "FreeTensor without any AllocTensor"),
                                         ("XL3011", enq, deq, "EnQue without any DeQue (missing DeQue)"),
                                         ("XL3011", deq, enq, "DeQue without any EnQue (missing EnQue)")):
            if have and not need:
                ctx.add(code, have[0].node, queue=q, detail=detail)
                bad = True
        bad |= _check_handoffs(ctx, q, alloc + deq)
        ok += not bad
    _check_handoff_notes(ctx, queues, bufs, ok)


def _check_handoffs(ctx: Ctx, queue: str, takes: list[Call]) -> bool:
    """In the function that takes a tensor from `queue` (AllocTensor/DeQue), the tensor is handed on."""
    bad = False
    for take in takes:
        var = _assigned_var(ctx, take.node)
        fn = _enclosing(take.node, ("function_definition",))
        if var is None or fn is None:
            continue
        handed = [c for c in ctx.calls if c.name in ("EnQue", "FreeTensor") and c.args
                  and _base(ctx.t(c.args[0])) == var and fn.start_byte <= c.node.start_byte < fn.end_byte
                  and c.node.start_byte > take.node.start_byte]
        if not handed:
            what = "EnQue or FreeTensor" if take.name == "AllocTensor" else "FreeTensor (or EnQue to another queue)"
            code = "XL3010" if take.name == "AllocTensor" else "XL3011"
            ctx.add(code, take.node, queue=queue, severity="warning",
                    detail=f"tensor '{var}' from {take.name} is never passed to {what} in this function")
            bad = True
    return bad


def _check_handoff_notes(ctx: Ctx, queues: list[str], bufs: list[str], ok: int) -> None:
    if queues or bufs:
        ctx.note("queue pairing", f"{ok} of {len(queues) + len(bufs)} TQue/TBuf matched (Alloc/Free, EnQue/DeQue, InitBuffer)")


def _assigned_var(ctx: Ctx, call: ts.Node) -> str | None:
    p = call.parent
    if p is None:
        return None
    if p.type == "init_declarator":
        return _declared(ctx, p.child_by_field_name("declarator"))
    if p.type == "assignment_expression":
        return _base(ctx.t(p.child_by_field_name("left")))
    return None


# -- UB budget -----------------------------------------------------------------------------------------------------


def _scopes(node: ts.Node, ctx: Ctx) -> list[str]:
    names = []
    p = node.parent
    while p is not None:
        if p.type in ("namespace_definition", "class_specifier", "struct_specifier"):
            n = p.child_by_field_name("name")
            names.append(ctx.t(n) if n is not None else "")
        p = p.parent
    return list(reversed(names))


def _constants(ctx: Ctx) -> dict[tuple[str, ...], dict[str, str]]:
    """Integral constants (constexpr/const declarations, enum-free) by the namespace/class scope they live in."""
    out: dict[tuple[str, ...], dict[str, str]] = {}
    for node in walk(ctx.root):
        if node.type not in ("declaration", "field_declaration"):
            continue
        head = ctx.t(node).split("=")[0]
        if not re.search(r"\b(constexpr|const)\b", head):
            continue
        for d in node.children_by_field_name("declarator"):
            if d.type == "init_declarator" and d.child_by_field_name("value") is not None:
                name = _declared(ctx, d.child_by_field_name("declarator"))
                value = d.child_by_field_name("value")
                if name and value is not None and value.type != "initializer_list":
                    out.setdefault(tuple(_scopes(node, ctx)), {})[name] = ctx.t(value)
    return out


class _Evaluator(ConstEvaluator):
    """ConstEvaluator that also knows `sizeof(half)`: tree-sitter-cpp reads sizeof of an unknown type name as
    sizeof of an expression."""

    def _eval(self, node, src):
        if node is not None and node.type == "sizeof_expression" and node.child_by_field_name("type") is None:
            value = node.child_by_field_name("value")
            if value is not None and value.type == "parenthesized_expression" and value.named_children:
                size = self.sizeof(src.text(value.named_children[0]))
                if size is not None:
                    return size
        return super()._eval(node, src)


def _evaluator(ctx: Ctx, unit, node: ts.Node, table_: dict[tuple[str, ...], dict[str, str]]) -> ConstEvaluator:
    scopes = _scopes(node, ctx)
    merged: dict[str, str] = dict(unit.constants)
    for i in range(len(scopes) + 1):
        merged.update(table_.get(tuple(scopes[:i]), {}))
    return _Evaluator(ctx.src, "cpp", unit.macros, merged)


def _check_ub(ctx: Ctx, unit) -> None:
    consts = _constants(ctx)
    groups: dict[str, dict] = {}
    for c in ctx.calls:
        if c.name != "InitBuffer" or len(c.args) not in (2, 3):
            continue
        owner = _enclosing(c.node, ("class_specifier", "struct_specifier")) or _enclosing(c.node, ("function_definition",))
        if owner is None:
            label, ident = "<file>", -1
        elif owner.type == "function_definition":
            label, ident = ctx.t(owner.child_by_field_name("declarator")).split("(")[0], owner.start_byte
        else:
            name = owner.child_by_field_name("name")
            label, ident = "::".join([*_scopes(owner, ctx), ctx.t(name) if name is not None else "<class>"]), owner.start_byte
        g = groups.setdefault(str(ident), {"bytes": 0, "unknown": [], "node": c.node, "buffers": 0, "label": label})
        ev = _evaluator(ctx, unit, c.node, consts)
        size = ev.eval_node(c.args[-1])
        num = ev.eval_node(c.args[1]) if len(c.args) == 3 else 1
        g["buffers"] += 1
        if size is None or num is None:
            g["unknown"].append(ctx.t(c.args[-1]) if size is None else ctx.t(c.args[1]))
            continue
        g["bytes"] += size * num
        if size % ctx.soc.align_bytes:
            ctx.add("XL3022", c.node, queue=_base(ctx.t(c.args[0])), size=size, align=ctx.soc.align_bytes)
    summaries = []
    for g in groups.values():
        key = g["label"]
        if g["bytes"] > ctx.soc.ub_bytes:
            ctx.add("XL3020", g["node"], soc=ctx.soc.name, used=g["bytes"], capacity=ctx.soc.ub_bytes,
                    detail=f"{g['buffers']} InitBuffer calls in {key}")
        if g["unknown"]:
            ctx.add("XL3021", g["node"], detail=f"{key}: sizes {', '.join(g['unknown'][:3])} are run-time values")
            summaries.append(f"{key} >= {g['bytes']}/{ctx.soc.ub_bytes} B (run-time sizes)")
        else:
            summaries.append(f"{key} {g['bytes']}/{ctx.soc.ub_bytes} B")
    if groups:
        ctx.note("UB budget", f"{ctx.soc.name}: " + "; ".join(summaries))


# -- copies --------------------------------------------------------------------------------------------------------


def _guarded_aligned(ctx: Ctx, call: ts.Node, count_text: str, elem: int, ev: ConstEvaluator) -> bool:
    """The copy sits in the then-branch of `if (count % A == 0)` with A * elem a multiple of 32 bytes."""
    p = call.parent
    while p is not None and p.type != "function_definition":
        if p.type == "if_statement":
            cond = ctx.t(p.child_by_field_name("condition")).strip()
            m = re.fullmatch(r"\(\s*\(?\s*(.+?)\s*\)?\s*%\s*(\w+)\s*==\s*0\s*\)", cond)
            then = p.child_by_field_name("consequence")
            if m and then is not None and then.start_byte <= call.start_byte < then.end_byte:
                a = ev.eval_text(m.group(2))
                if m.group(1).replace(" ", "") == count_text.replace(" ", "") and a and (a * elem) % ctx.soc.align_bytes == 0:
                    return True
        p = p.parent
    return False


def _check_copies(ctx: Ctx, unit) -> None:
    consts = _constants(ctx)
    sizes = ctype_sizes()
    checked = guarded = runtime = 0
    for c in ctx.calls:
        if c.name == "DataCopyPad" and c.obj is None:
            if not ctx.soc.datacopy_pad:
                ctx.add("XL3031", c.node, soc=ctx.soc.name)
            continue
        if c.name != "DataCopy" or c.obj is not None or len(c.args) != 3:
            continue
        ev = _evaluator(ctx, unit, c.node, consts)
        third = c.args[2]
        if _is_struct_arg(ctx, third):
            continue  # DataCopyParams: lengths in 32-byte blocks, checked with the params below
        ctype = _elem_type(ctx, c.args[0]) or _elem_type(ctx, c.args[1])
        elem = sizes.get(ctype or "")
        count = ev.eval_node(third)
        checked += 1
        if elem is None:
            runtime += 1
            continue
        if count is None:
            if _guarded_aligned(ctx, c.node, ctx.t(third), elem, ev):
                guarded += 1
            else:
                runtime += 1
                ctx.add("XL3033", c.node, count=ctx.t(third))
            continue
        if (count * elem) % ctx.soc.align_bytes:
            ctx.add("XL3030", c.node, count=count, ctype=ctype, nbytes=count * elem, align=ctx.soc.align_bytes)
    _check_copy_params(ctx, unit, consts)
    if checked or any(c.name == "DataCopyPad" for c in ctx.calls):
        pads = sum(1 for c in ctx.calls if c.name == "DataCopyPad" and c.obj is None)
        ctx.note("32-byte copies", f"{checked} DataCopy ({checked - guarded - runtime} constant, {guarded} guarded, "
                 f"{runtime} run-time), {pads} DataCopyPad"
                 + ("" if ctx.soc.datacopy_pad or not pads else f" (not available on {ctx.soc.name})"))


def _is_struct_arg(ctx: Ctx, node: ts.Node) -> bool:
    if node.type in ("initializer_list", "compound_literal_expression"):
        return True
    t = ctx.types.get(_base(ctx.t(node)), "")
    return "Params" in t


def _check_copy_params(ctx: Ctx, unit, consts) -> None:
    limits = {"blockCount": 4095, "blockLen": 65535}
    for node in walk(ctx.root):
        if node.type not in ("declaration",):
            continue
        type_text = ctx.t(node.child_by_field_name("type"))
        if not re.search(r"\bDataCopy(Ext)?Params\b", type_text):
            continue
        for d in node.children_by_field_name("declarator"):
            init = d.child_by_field_name("value") if d.type == "init_declarator" else None
            if init is None:
                init = next((c for c in d.named_children if c.type == "initializer_list"), None)
            if init is None or init.type != "initializer_list":
                continue
            ev = _evaluator(ctx, unit, node, consts)
            for i, (fieldname, limit) in enumerate(limits.items()):
                if i < len(init.named_children):
                    v = ev.eval_node(init.named_children[i])
                    if v is not None and not 1 <= v <= limit:
                        ctx.add("XL3032", init.named_children[i], field=fieldname, value=v, limit=limit)


# -- repeats -------------------------------------------------------------------------------------------------------


def _check_repeats(ctx: Ctx, unit) -> None:
    consts = _constants(ctx)
    fams = family_of()
    limit = ctx.soc.max_repeat
    per_instr = ctx.soc.max_repeat * ctx.soc.repeat_bytes
    n = const_repeats = 0
    for c in ctx.calls:
        fam = fams.get(c.name)
        if fam is None or c.obj is not None:
            continue
        n += 1
        ev = _evaluator(ctx, unit, c.node, consts)
        if "level0_args" in fam and len(c.args) == fam["level0_args"]:
            v = ev.eval_node(c.args[fam["repeat_index"]])
            if v is not None:
                const_repeats += 1
                if v > limit or v < 0:
                    ctx.add("XL3040", c.node, api=c.name, value=v, limit=limit)
        elif "level2_args" in fam and len(c.args) >= fam["level2_args"]:
            v = ev.eval_node(c.args[fam["count_index"]])
            ctype = _elem_type(ctx, c.args[0])
            elem = ctype_sizes().get(ctype or "")
            if v is not None and elem and v * elem > per_instr:
                ctx.add("XL3041", c.node, api=c.name, count=v, ctype=ctype, nbytes=v * elem, limit=per_instr)
    if n:
        ctx.note("repeat limits", f"{n} vector instruction(s), {const_repeats} with constant repeatTimes (<= {limit})")


# -- block index ---------------------------------------------------------------------------------------------------


def _idents(ctx: Ctx, node: ts.Node) -> set[str]:
    out = set()
    for n in walk(node):
        if n.type in ("identifier", "field_identifier"):
            out.add(ctx.t(n))
    return out


def _has_block_idx(ctx: Ctx, node: ts.Node) -> bool:
    text = ctx.t(node)
    return any(re.search(rf"\b{n}\s*\(", text) for n in apis()["block_index"])


def _check_block_index(ctx: Ctx, kernels_present: bool) -> None:
    names = set(apis()["block_index"])
    uses = [c for c in ctx.calls if c.name in names]
    if not uses:
        if kernels_present and not (ctx.launches and all(cfg.split(",")[0].strip() == "1" for cfg in ctx.launches)):
            ctx.add("XL3050", None, detail="GetBlockIdx() is never called: every core processes the same data "
                    "(unless the kernel is only ever launched on one core)")
        return
    tainted = _taint(ctx)
    sinks = 0
    for c in ctx.calls:
        if c.name == "SetGlobalBuffer" and any(_has_block_idx(ctx, a) or (_idents(ctx, a) & tainted) for a in c.args):
            sinks += 1
    for n in walk(ctx.root):
        if n.type == "subscript_expression":
            base = n.child_by_field_name("argument")
            if base is not None and _is_tensor(ctx, base, "GlobalTensor"):
                idx = n.child_by_field_name("indices") or n.child_by_field_name("index")
                if idx is not None and (_has_block_idx(ctx, idx) or _idents(ctx, idx) & tainted):
                    sinks += 1
    if not sinks:
        ctx.add("XL3051", uses[0].node, detail="GetBlockIdx() is called but does not reach SetGlobalBuffer or a "
                "global-memory offset: the cores may all process the same data")
        return
    ctx.note("block index", f"GetBlockIdx() reaches the GM split ({sinks} use(s))")


def _taint(ctx: Ctx) -> set[str]:
    """Names whose value depends on GetBlockIdx(): assignments, declarations and call arguments to parameters."""
    params: dict[str, list[str]] = {}
    for n in walk(ctx.root):
        if n.type == "function_definition":
            decl = n.child_by_field_name("declarator")
            while decl is not None and decl.type != "function_declarator":
                decl = decl.child_by_field_name("declarator")
            if decl is None:
                continue
            name = ctx.t(decl.child_by_field_name("declarator")).split("::")[-1]
            plist = decl.child_by_field_name("parameters")
            params[name] = [_declared(ctx, p.child_by_field_name("declarator")) or "" for p in (plist.named_children if plist else [])]
    flows: list[tuple[str, ts.Node]] = []
    for n in walk(ctx.root):
        if n.type == "init_declarator" and n.child_by_field_name("value") is not None:
            name = _declared(ctx, n.child_by_field_name("declarator"))
            if name:
                flows.append((name, n.child_by_field_name("value")))
        elif n.type == "assignment_expression":
            flows.append((_base(ctx.t(n.child_by_field_name("left"))), n.child_by_field_name("right")))
    for c in ctx.calls:
        for i, a in enumerate(c.args):
            ps = params.get(c.name)
            if ps and i < len(ps) and ps[i]:
                flows.append((ps[i], a))
    tainted: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, value in flows:
            if name in tainted or value is None:
                continue
            if _has_block_idx(ctx, value) or _idents(ctx, value) & tainted:
                tainted.add(name)
                changed = True
    return tainted


# -- scalar reads --------------------------------------------------------------------------------------------------


def _check_scalar_reads(ctx: Ctx) -> None:
    fams = family_of()
    sync = [s.replace(" ", "") for s in apis()["scalar_sync"]]
    reads = 0
    for fn in (n for n in walk(ctx.root) if n.type == "function_definition"):
        inside = sorted((c for c in ctx.calls if fn.start_byte <= c.node.start_byte < fn.end_byte),
                        key=lambda c: c.node.start_byte)
        pending: Call | None = None
        for c in inside:
            callee = c.callee.replace(" ", "")
            if c.obj is None and c.name in fams:
                pending = c
            elif any(callee.endswith(s) or s in callee for s in sync):
                pending = None
            elif c.name == "GetValue" and c.obj is not None and "LocalTensor" in ctx.types.get(c.obj, ""):
                reads += 1
                if pending is not None:
                    ctx.add("XL3060", c.node, tensor=c.obj, api=pending.name)
    if reads:
        ctx.note("scalar reads", f"{reads} GetValue after a V_S sync")
