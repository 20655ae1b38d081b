"""Wavefront-size analysis: find device code that assumes 32-lane warps (patterns in rules/wavefront.yaml).

The CUDA -> HIP port keeps CUDA's 32-lane warps (intrinsics.py), so lane math, warp indices, per-warp shared
arrays and 32-bit ballot masks stay correct on 64-lane targets; these notes record what the port relies on,
with the target's wavefront size in the message. The reverse direction looks for HIP code written for
64-lane wavefronts (XL1405), which CUDA's 32-lane warps would compute differently.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import tree_sitter as ts

from xlate.model import Function
from xlate.parse.consteval import parse_int_literal
from xlate.translate.hip.diagnostics import rules_file
from xlate.translate.hip.job import Job, Region, args_of

SHUFFLE_MEMBERS = ("shfl", "shfl_down", "shfl_up", "shfl_xor")


@functools.cache
def patterns() -> dict[str, Any]:
    return rules_file("wavefront.yaml")


def _short(text: str, limit: int = 70) -> str:
    t = " ".join(text.split())
    return t if len(t) <= limit else t[: limit - 3] + "..."


class Scope:
    """One function body (or macro body): its thread-derived locals and 32-bit mask variables."""

    def __init__(self, job: Job, region: Region, node: ts.Node, function: Function | None):
        self.job, self.region, self.node, self.function = job, region, node, function
        self._thread_rx: re.Pattern[str] | None = None

    def _derived(self, roots: list[str]) -> set[str]:
        names: set[str] = set()
        assigns: list[tuple[str, str]] = []
        for m in self.job.query_in("assigns", self.region, self.node):
            target = m.get("name") or m.get("aname")
            value = m.get("value") or m.get("avalue")
            if target and value:
                assigns.append((self.region.text(target[0]), self.region.text(value[0])))
        words = set(roots)
        changed = True
        while changed:  # a few rounds: tid = threadIdx.x; lane = tid & 31; ...
            changed = False
            rx = _words(words)
            for name, value in assigns:
                if name not in names and rx.search(value):
                    names.add(name)
                    words.add(name)
                    changed = True
        return names

    def is_thread(self, node: ts.Node) -> bool:
        if self._thread_rx is None:  # only functions with a candidate expression pay for the data flow
            roots = patterns()["thread_index_roots"]
            self._thread_rx = _words(set(roots) | self._derived(roots))
        return bool(self._thread_rx.search(self.region.text(node)))

    def is_block_dim(self, node: ts.Node) -> bool:
        return bool(_words(frozenset(patterns()["block_dim_roots"])).search(self.region.text(node)))


def _words(words: set[str] | frozenset[str]) -> re.Pattern[str]:
    return _words_rx(frozenset(words))


@functools.cache
def _words_rx(words: frozenset[str]) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(re.escape(w) for w in sorted(words)) + r")\b")


def scopes(job: Job, region: Region) -> list[Scope]:
    if region.macro is not None:
        return [Scope(job, region, region.root, None)]
    out = []
    for fn in job.unit.functions:
        if fn.body_span is None or job.skipped(fn.body_span.start_byte, fn.body_span.end_byte):
            continue
        node = region.root.descendant_for_byte_range(fn.body_span.start_byte, fn.body_span.end_byte)
        while node is not None and node.type != "function_definition":
            node = node.parent
        if node is not None:
            out.append(Scope(job, region, node, fn))
    return out


def analyse(job: Job, region: Region) -> None:
    """Forward: the notes of rules/wavefront.yaml `patterns` for each device function (or macro body)."""
    pats = patterns()["patterns"]
    binary = [p for p in pats if p["kind"] == "binary"]
    by_kind = {p["kind"]: p for p in pats}
    preserved = job.rules["_preserved"]
    shuffle_names = set(job.rules["shuffles"]) | set(job.rules["legacy_shuffles"])
    for sc in scopes(job, region):
        masks: dict[str, str] = {}
        for m in job.query_in("hazards", region, sc.node):
            if "bin" in m:
                _binary(sc, m, binary, preserved)
            elif "for" in m and "shuffle_loop" in by_kind:
                _loop(sc, m["for"][0], by_kind["shuffle_loop"], shuffle_names, preserved)
            elif "shared" in m and "shared_size" in by_kind:
                _shared(sc, m, by_kind["shared_size"], preserved)
            elif ("init" in m or "assign" in m) and "mask_variable" in by_kind:
                _mask_var(sc, m, by_kind["mask_variable"], masks, preserved)
        if "mask_use" in by_kind:
            _mask_uses(sc, by_kind["mask_use"], masks, preserved)


def _binary(sc: Scope, m: dict[str, list[ts.Node]], pats: list[dict[str, Any]], preserved: str) -> None:
    node, left, lit = m["bin"][0], m["left"][0], m["lit"][0]
    op = node.child_by_field_name("operator")
    if op is None:
        return
    op_text, value = sc.region.text(op), parse_int_literal(sc.region.text(lit))
    for p in pats:
        if op_text not in p["operators"] or value not in p["literals"]:
            continue
        if (p["operand"] == "thread" and sc.is_thread(left)) or (p["operand"] == "block_dim" and sc.is_block_dim(left)):
            sc.job.diag(p["code"], sc.region, node, rule=f"wavefront:{p['id']}", function=sc.function,
                        once=f"{p['id']}:{_short(sc.region.text(node))}", expr=_short(sc.region.text(node)),
                        preserved=preserved)
            return


_STEP_DOWN = re.compile(r"^(\w+)(?:>>=1|/=2|=\1>>1|=\1/2)$")
_STEP_UP = re.compile(r"^(\w+)(?:<<=1|\*=2|=\1<<1|=\1\*2)$")
_INIT = re.compile(r"^(?:(?:unsigned|signed|int|long|short|auto|const|size_t|uint32_t|int32_t|\s)+)?(\w+)=(\w+);?$")


def _loop(sc: Scope, node: ts.Node, p: dict[str, Any], shuffles: set[str], preserved: str) -> None:
    text = lambda f: "".join(sc.region.text(node.child_by_field_name(f)).split())  # noqa: E731
    init, cond, update = text("initializer"), text("condition"), text("update")
    mi = _INIT.match(init)
    if mi is None:
        return
    var, start = mi.group(1), parse_int_literal(mi.group(2))
    down = _STEP_DOWN.match(update)
    up = _STEP_UP.match(update)
    hit = False
    if down and down.group(1) == var and start in p["start_down"]:
        hit = True
    elif up and up.group(1) == var and start in p["start_up"]:
        bound = re.match(rf"^{re.escape(var)}(<|<=)(\d+)$", cond)
        hit = bool(bound and (int(bound.group(2)) in p["bound_up"] or int(bound.group(2)) * 2 in p["bound_up"]))
    if not hit or not _has_shuffle(sc, node, shuffles):
        return
    body = node.child_by_field_name("body")
    header = sc.region.text(node)[: (body.start_byte - node.start_byte) if body is not None else None]
    sc.job.diag(p["code"], sc.region, node, rule=f"wavefront:{p['id']}", function=sc.function,
                expr=_short(header), preserved=preserved)


def _has_shuffle(sc: Scope, node: ts.Node, shuffles: set[str]) -> bool:
    for kind, _call, name in sc.job.calls_in(sc.region, node):
        t = sc.region.text(name)
        if (kind == "fn" and t in shuffles) or (kind == "member" and t in SHUFFLE_MEMBERS):
            return True
    return False


def _shared(sc: Scope, m: dict[str, list[ts.Node]], p: dict[str, Any], preserved: str) -> None:
    if not any(sc.region.text(q) == "__shared__" for q in m["q"]):
        return
    arr = m["arr"][0]
    size = arr.child_by_field_name("size")
    name = arr.child_by_field_name("declarator")
    if size is None or name is None:
        return
    expanded = _expand(sc.job, sc.region.text(size))
    flat = "".join(expanded.split())
    if any("".join(d.split()) in flat for d in p["divisors"]):
        sc.job.diag(p["code"], sc.region, arr, rule=f"wavefront:{p['id']}", function=sc.function,
                    name=sc.region.text(name), size=sc.region.text(size), preserved=preserved)


def _expand(job: Job, text: str, depth: int = 0) -> str:
    """Object-like macros and file-scope constants expanded (for reading array bounds)."""
    if depth > 6:
        return text
    values = job.object_macros

    def repl(mm: re.Match[str]) -> str:
        v = values.get(mm.group(0))
        return f"({_expand(job, v, depth + 1)})" if v is not None else mm.group(0)

    return re.sub(r"[A-Za-z_]\w*", repl, text)


def _mask_var(sc: Scope, m: dict[str, list[ts.Node]], p: dict[str, Any], masks: dict[str, str], preserved: str) -> None:
    var = (m.get("var") or m.get("avar"))[0]  # type: ignore[index]
    src = (m.get("src") or m.get("asrc"))[0]  # type: ignore[index]
    name = sc.region.text(src)
    if name not in p["sources"]:
        return
    vname = sc.region.text(var)
    decl = sc.job.local_declaration(sc.region, var, vname)
    vtype = decl[0] if decl is not None else "?"
    masks[vname] = name
    sc.job.diag(p["code"], sc.region, src, rule=f"wavefront:{p['id']}", function=sc.function, once=vname,
                name=name, what=f"stored in '{vname}' ({_short(vtype, 30)})", preserved=preserved)


def _mask_uses(sc: Scope, p: dict[str, Any], masks: dict[str, str], preserved: str) -> None:
    sources = set(patterns_by_id("ballot-32bit").get("sources", []))
    for kind, call, name in sc.job.calls_in(sc.region, sc.node):
        if kind != "fn":
            continue
        fname = sc.region.text(name)
        if fname not in p["calls"]:
            continue
        args = args_of(call)
        if not args:
            continue
        a = args[0]
        var = None
        if a.type == "identifier" and sc.region.text(a) in masks:
            var = sc.region.text(a)
        elif a.type == "call_expression":
            f = a.child_by_field_name("function")
            if f is not None and sc.region.text(f) in sources:
                var = sc.region.text(a)
        if var is not None:
            sc.job.diag(p["code"], sc.region, name, rule=f"wavefront:{p['id']}", function=sc.function,
                        once=f"{fname}:{var}", name=fname, var=_short(var, 40), preserved=preserved)


def host_warp_size(job: Job) -> None:
    """XL1120: host code that reads the device's warp size (found by text, confirmed on the tree)."""
    spec = patterns().get("host_warp_size")
    if not spec or job.wave == 32:
        return
    fields, names = spec["fields"], spec["names"]
    rx = re.compile(rb"\b(" + b"|".join(re.escape(w.encode()) for w in [*fields, *names]) + rb")\b")
    for m in rx.finditer(job.data):
        s, e = m.start(), m.end()
        want = "field_identifier" if m.group(1).decode() in fields else "identifier"
        node = job.main.root.descendant_for_byte_range(s, e)
        if node is None or node.start_byte != s or node.end_byte != e:
            continue
        if node.type != want or job.function_of(job.main, node) is not None:
            continue
        if node.type == "field_identifier" and not _device_prop(job, node, spec.get("types", [])):
            continue  # a member of the project's own type (its declaration, or `obj.warpSize` of such an obj)
        expr = node.parent if node.type == "field_identifier" and node.parent is not None else node
        job.diag(spec["code"], job.main, node, rule="wavefront:host-warp-size", once=job.main.text(expr),
                 expr=_short(job.main.text(expr)), wave=job.wave)


def _device_prop(job: Job, field: ts.Node, types: list[str]) -> bool:
    """`obj.field` may read a device-properties struct: obj's declared type is one of `types`, or unknown."""
    fexpr = field.parent
    if fexpr is None or fexpr.type != "field_expression":
        return False  # the member's own declaration
    obj = fexpr.child_by_field_name("argument")
    if obj is None or obj.type != "identifier":
        return True
    decl = job.local_declaration(job.main, fexpr, job.main.text(obj))
    if decl is None:
        return True
    return any(t in decl[0] for t in types)


def patterns_by_id(pid: str) -> dict[str, Any]:
    return next((p for p in patterns()["patterns"] if p["id"] == pid), {})


def analyse_reverse(job: Job, region: Region) -> None:
    """HIP -> CUDA: code written for 64-lane wavefronts (XL1405)."""
    pats = patterns()["reverse_patterns"]
    binary = [p for p in pats if p["kind"] == "binary"]
    literals = {v for p in pats if p["kind"] == "literal" for v in p["values"]}
    for sc in scopes(job, region):
        rows = job.query_in("hazards", region, sc.node) + job.query_in("literals", region, sc.node)
        for m in rows:
            if "bin" in m:
                node, left, lit = m["bin"][0], m["left"][0], m["lit"][0]
                op = node.child_by_field_name("operator")
                value = parse_int_literal(sc.region.text(lit))
                for p in binary:
                    if op is not None and sc.region.text(op) in p["operators"] and value in p["literals"] and sc.is_thread(left):
                        job.diag("XL1405", region, node, rule=f"wavefront:{p['id']}", function=sc.function,
                                 once=_short(sc.region.text(node)), expr=_short(sc.region.text(node)))
                        break
            elif "number" in m:
                lit = m["number"][0]
                if sc.region.text(lit).lower().rstrip("ul") in literals:
                    job.diag("XL1405", region, lit, rule="wavefront:full-mask-64", function=sc.function,
                             once=sc.region.text(lit), expr=sc.region.text(lit))
