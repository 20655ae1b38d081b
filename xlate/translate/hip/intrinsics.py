"""Structural rewrites of warp intrinsics, cooperative groups and launches (rules/intrinsics.yaml).

Forward (CUDA -> HIP) keeps CUDA's 32-lane warps on every AMD target (the argument is in intrinsics.yaml):
`__shfl_down_sync(FULL, v, d)` becomes `__shfl_down(v, d, XLATE_WARP_WIDTH)`, votes become the compat
block's helpers (`xlate_ballot_sync`), and what the warp model cannot keep is a coded error. Every rewrite is
a set of small edits (rename the callee, delete the mask, insert the width) so that renames inside the
arguments stay separate, traceable edits. Reverse (HIP -> CUDA) undoes exactly what forward produces and
adds full masks to HIP's maskless intrinsics.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import tree_sitter as ts

from xlate.parse.consteval import parse_int_literal
from xlate.translate.hip import ptx
from xlate.translate.hip.diagnostics import rules_file
from xlate.translate.hip.job import Job, Region, args_of, normalize_expr

WIDTH = "XLATE_WARP_WIDTH"
RULE = "warp"


@functools.cache
def load_rules() -> dict[str, Any]:
    rules: dict[str, Any] = dict(rules_file("intrinsics.yaml"))
    rules["_full_masks"] = sorted({normalize_expr(m) for m in rules["full_masks"]})
    rules["_compat_identifiers"] = rules["compat_identifiers"]
    preserved = rules_file("wavefront.yaml")["preserved"]
    rules["_preserved_by_wave"] = {int(k): v for k, v in preserved.items()}
    rev = rules["reverse"]
    rules["_compat_inverse"] = {r["hip"]: name for name, r in rules["compat_calls"].items()}
    rules["_compat_inverse"].update({r["partial"]["hip"]: name for name, r in rules["shuffles"].items() if "partial" in r})
    rules["_cg_inverse"] = {r["hip"]: name for name, r in rules["cooperative_groups"]["rewrites"].items()}
    rules["_reverse_identifiers"] = {r["hip"]: name for name, r in rules["compat_identifiers"].items()}
    rules["_reverse_identifiers"].update(rev["identifiers"])
    cg = rules["cooperative_groups"]
    rules["_structural_calls"] = frozenset(  # the call names the forward pass rewrites
        set(rules["shuffles"]) | set(rules["legacy_shuffles"]) | set(rules["compat_calls"])
        | set(rules["unsupported_calls"]) | set(cg["hardware_warp_groups"]) | set(cg["rewrites"])
        | set(cg["missing_members"]) | set(cg["missing_functions"]))
    rules["_sreg_inverse"] = {r["hip"]: reg for reg, r in rules["ptx_special_registers"].items()}
    rules["_reverse_calls"] = frozenset(set(rules["_sreg_inverse"]) | set(rev["shuffles"]) | set(rev["votes"]) | set(rules["_compat_inverse"])
                                        | set(rules["_cg_inverse"]) | set(rev["amd_only_calls"]) | {"hipLaunchKernelGGL"})
    return rules


def rules_for(wave: int) -> dict[str, Any]:
    rules = dict(load_rules())
    by_wave = rules["_preserved_by_wave"]
    rules["_preserved"] = by_wave.get(wave, by_wave[64])
    return rules


def _lit(region: Region, node: ts.Node | None) -> int | None:
    if node is None or node.type != "number_literal":
        return None
    return parse_int_literal(region.text(node))


def _width_value(region: Region, width: ts.Node | None) -> int | None:
    if width is None:
        return 32
    return _lit(region, width)


# -- CUDA -> HIP ---------------------------------------------------------------------------------------------
def forward(job: Job, region: Region) -> None:
    r = job.rules
    cg = r["cooperative_groups"]
    cg_file = any("cooperative_groups" in inc.path for inc in job.unit.includes)
    for kind, call, name_node in job.calls(region):
        if job.skipped(region.start(name_node), region.end(name_node)):
            continue  # inside a mask argument another rewrite deleted
        name = region.text(name_node)
        if name in r["_structural_calls"] and job.users_own(region, name_node, name):
            continue  # the file's own function or macro of that name
        if kind == "fn":
            if job.tables.override("identifier", name):
                continue  # a takeover user rule owns this name
            if name in r["shuffles"]:
                _shuffle(job, region, call, name_node, r["shuffles"][name], legacy=False)
            elif name in r["legacy_shuffles"] and job.in_device(region, call):
                _shuffle(job, region, call, name_node, r["legacy_shuffles"][name], legacy=True)
            elif name in r["compat_calls"]:
                _compat_call(job, region, call, name_node, r["compat_calls"][name])
            elif name in r["unsupported_calls"]:
                _unsupported(job, region, name_node, name)
            elif name in cg["hardware_warp_groups"]:
                _hardware_group(job, region, name_node, name)
        elif kind == "member" and cg_file and job.in_device(region, call):
            if name in cg["rewrites"] or name in cg["missing_members"]:
                _cg_member(job, region, call, name_node, name)
        elif kind == "qualified":
            scope = name_node.parent.child_by_field_name("scope") if name_node.parent is not None else None
            scope_text = region.text(scope) if scope is not None else ""
            if name in cg["hardware_warp_groups"]:
                _hardware_group(job, region, name_node, name)
            elif cg_file and name in cg["missing_functions"] and scope_text in ("cg", "cooperative_groups"):
                job.edits.claim(region.start(name_node), region.end(name_node))
                job.stats.count("unsupported", "cooperative_groups", name)
                job.diag("XL1115", region, name_node, rule=f"cooperative_groups:{name}", name=f"{scope_text}::{name}",
                         why=cg["missing_functions"][name])


def _claim(job: Job, region: Region, node: ts.Node) -> None:
    job.edits.claim(region.start(node), region.end(node))


def _shuffle(job: Job, region: Region, call: ts.Node, fn: ts.Node, rule: dict[str, Any], *, legacy: bool) -> None:
    name = region.text(fn)
    args = args_of(call)
    base = 0 if legacy else 1
    if len(args) not in (base + 2, base + 3):
        return  # not the intrinsic's shape (a user overload?): leave it to the compiler
    _claim(job, region, fn)
    rid = f"{RULE}:{name}"
    if not legacy:
        mask = args[0]
        if not job.is_full_mask(region, mask):
            partial = rule.get("partial")
            if partial is None:
                job.stats.count("unsupported", "warp_intrinsics", name)
                job.diag("XL1102", region, mask, rule=rid, name=name, mask=region.text(mask))
                return
            _check_shuffled_type(job, region, call, args[1], name)
            _partial_mask(job, region, fn, mask, name, partial["hip"], rid)
            job.helpers.add(partial["helper"])
            return
    var, lane = args[base], args[base + 1]
    width = args[base + 2] if len(args) == base + 3 else None
    _check_shuffled_type(job, region, call, var, name)
    job.edits.replace(region.start(fn), region.end(fn), rule["hip"], rid)
    if not legacy:
        mask = args[0]
        job.edits.delete(region.start(mask), region.start(var), rid)
        job.skip.append((region.start(mask), region.start(var)))
        job.diag("XL1101", region, mask, rule=rid, once="mask", name=name, mask=region.text(mask),
                 preserved=job.rules["_preserved"])
    else:
        job.diag("XL1119", region, fn, rule=rid, once=name, name=name)
    w_text = job.rename_text(region.text(width)) if width is not None else WIDTH
    if rule.get("wrap_lane"):
        v, w = _lit(region, lane), _width_value(region, width)
        if not (v is not None and w is not None and 0 <= v < w):
            job.edits.insert(region.start(lane), "(", rid)
            job.edits.insert(region.end(lane), f") & ({w_text} - 1)", rid)
            job.diag("XL1112", region, lane, rule=rid, once="lane", name=name, lane=region.text(lane))
    if width is None:
        job.edits.insert(region.end(lane), f", {WIDTH}", rid)
        job.helpers.add("warp_width")
    job.stats.count("converted", "warp_intrinsics", name)


def _check_shuffled_type(job: Job, region: Region, call: ts.Node, var: ts.Node, name: str) -> None:
    if var.type != "identifier":
        return
    decl = job.local_declaration(region, call, region.text(var))
    if decl is None:
        return
    base = decl[0].replace("const", "").replace("*", "").strip()
    if base in job.rules["unshufflable_types"] and "*" not in decl[0]:
        job.diag("XL1113", region, var, rule=f"{RULE}:{name}", name=name, type=base)


def _compat_call(job: Job, region: Region, call: ts.Node, fn: ts.Node, rule: dict[str, Any]) -> None:
    name = region.text(fn)
    rid = f"{RULE}:{name}"
    _claim(job, region, fn)
    mask_index = rule.get("mask")
    if mask_index is not None:
        args = args_of(call)
        if len(args) <= mask_index:
            return
        mask = args[mask_index]
        if not job.is_full_mask(region, mask):  # the helpers honour the mask (intrinsics.yaml)
            _partial_mask(job, region, fn, mask, name, rule["hip"], rid)
            job.helpers.add(rule["helper"])
            if rule.get("code"):
                job.diag(rule["code"], region, fn, rule=rid, once=name, name=name, target=rule["hip"])
            return
    job.edits.replace(region.start(fn), region.end(fn), rule["hip"], rid)
    job.helpers.add(rule["helper"])
    job.stats.count("converted", "warp_intrinsics", name)
    if rule.get("code"):
        job.diag(rule["code"], region, fn, rule=rid, once=name, name=name, target=rule["hip"])


def _partial_mask(job: Job, region: Region, fn: ts.Node, mask: ts.Node, name: str, target: str, rid: str) -> None:
    """A mask that is not provably the full warp: the callee becomes the compat helper that honours it, the
    arguments stay as written (XL1123)."""
    job.edits.replace(region.start(fn), region.end(fn), target, rid)
    job.stats.count("converted", "warp_intrinsics", name)
    job.diag("XL1123", region, mask, rule=rid, name=name, mask=region.text(mask), target=target)


def _unsupported(job: Job, region: Region, fn: ts.Node, name: str) -> None:
    _claim(job, region, fn)
    job.stats.count("unsupported", "warp_intrinsics", name)
    job.diag("XL1116", region, fn, rule=f"{RULE}:{name}", name=name)


def _hardware_group(job: Job, region: Region, fn: ts.Node, name: str) -> None:
    if job.wave == 32:
        return  # the hardware warp is CUDA's size on this target
    job.stats.count("unsupported", "cooperative_groups", name)
    job.diag("XL1114", region, fn, rule=f"cooperative_groups:{name}", once=name, name=name, wave=job.wave)


_BLOCK = re.compile(r"^(?:[\w:]+::)?this_thread_block\(\)$")


def _tile_of_block(job: Job, region: Region, obj: ts.Node, at: ts.Node) -> bool:
    """The tile `obj` was made by tiled_partition<N>(the thread block) in this function. Read from the text:
    tree-sitter parses `cg::thread_block_tile<32> t = cg::tiled_partition<32>(b);` as a comparison."""
    if obj.type != "identifier":
        return False
    fn = job.function_node(at) if region.macro is None else None
    if fn is None:
        return False
    before = job.data[fn.start_byte : at.start_byte].decode("utf-8", "replace")
    tile = re.escape(region.text(obj))
    decls = list(re.finditer(rf"(?:\bauto|thread_block_tile\s*<\s*\d+\s*>)\s+{tile}\s*=\s*"
                             rf"(?:[\w:]+::)?tiled_partition\s*<\s*\d+\s*>\s*\(\s*([^()]*(?:\(\))?)\s*\)", before))
    if not decls:
        return False
    parent = "".join(decls[-1].group(1).split())
    if _BLOCK.match(parent):
        return True
    if re.fullmatch(r"[A-Za-z_]\w*", parent):
        blocks = re.findall(rf"(?:\bauto|\bthread_block)\s+{re.escape(parent)}\s*=\s*((?:[\w:]+::)?this_thread_block\s*\(\s*\))",
                            before)
        return bool(blocks)
    return False


def _cg_member(job: Job, region: Region, call: ts.Node, member: ts.Node, name: str) -> None:
    cg = job.rules["cooperative_groups"]
    fexpr = member.parent
    obj = fexpr.child_by_field_name("argument") if fexpr is not None else None
    if obj is None or fexpr is None:
        return
    rid = f"cooperative_groups:{name}"
    rewrite = cg["rewrites"].get(name)
    args = args_of(call)
    if rewrite is not None and len(args) == rewrite.get("args", 0) and _tile_of_block(job, region, obj, call):
        arrow = any(c.type == "->" for c in fexpr.children)
        job.edits.insert(region.start(call), rewrite["hip"] + ("(*" if arrow else "("), rid)
        if args:  # `t.any(p)` -> `helper(t, p)`: the argument stays, and is translated as any other code
            job.edits.replace(region.end(obj), region.start(args[0]), ", ", rid)
            job.skip.append((region.end(obj), region.start(args[0])))
        else:
            job.edits.replace(region.end(obj), region.end(call), ")", rid)
            job.skip.append((region.end(obj), region.end(call)))
        job.helpers.add(rewrite["helper"])
        job.stats.count("converted", "cooperative_groups", name)
        job.diag(rewrite["code"], region, member, rule=rid, once=name, name=name, target=rewrite["hip"])
        return
    if name in cg["missing_members"]:
        job.stats.count("unsupported", "cooperative_groups", name)
        job.diag("XL1115", region, member, rule=rid, name=name, why=cg["missing_members"][name])


def cg_collectives(job: Job, region: Region) -> None:
    """`cg::reduce(g, v, cg::plus<T>())` (and inclusive/exclusive_scan, the operator functors) ->
    `xlate_cg::reduce(g, v, xlate_cg::plus<T>())`, helpers in the compat block (intrinsics.yaml says why)."""
    cg = job.rules["cooperative_groups"]
    names = set(cg["collectives"]) | set(cg["functors"])
    text = region.data[region.lo : region.hi]
    if not any(n.encode() in text for n in cg["collectives"]) or b"cooperative_groups" not in job.data:
        return
    scopes = {"cooperative_groups"} | {m.decode() for m in _CG_ALIAS.findall(job.data)}
    unqualified = bool(_CG_USING.search(job.data))
    ns = cg["compat_namespace"]
    used = False
    for m in _WORD.finditer(region.data, region.lo, region.hi):
        name = m.group().decode()
        if name not in names:
            continue
        node = region.root.descendant_for_byte_range(m.start(), m.end())
        if node is None or node.start_byte != m.start() or node.end_byte != m.end():
            continue
        if node.type not in ("identifier", "type_identifier", "namespace_identifier"):
            continue
        parent = node.parent
        start = region.start(node)
        templated = parent is not None and parent.type in ("template_function", "template_type")
        if templated:
            parent = parent.parent  # cg::plus<int>: the qualified identifier holds the template
        if parent is not None and parent.type == "qualified_identifier":
            scope = parent.child_by_field_name("scope")
            if scope is None or region.text(scope) not in scopes:
                continue
            start = region.start(scope)
        elif not unqualified:
            continue  # a project's own reduce(), plus<T>: not cooperative groups'
        elif name in cg["collectives"]:
            if parent is None or parent.type != "call_expression":
                continue
        elif not templated:
            continue  # a functor is always spelled with its template argument
        end = region.end(node)
        if job.skipped(start, end) or not job.edits.claim(start, end):
            continue
        job.edits.replace(start, end, f"{ns}::{name}", f"cooperative_groups:{name}")
        job.skip.append((start, end))
        if name in cg["collectives"]:
            used = True
            job.helpers.add(cg["collectives"][name])
            job.stats.count("converted", "cooperative_groups", name)
            job.diag("XL1122", region, node, rule=f"cooperative_groups:{name}", once=name, name=name,
                     target=f"{ns}::{name}")
        else:
            job.helpers.add("cg_functors")
    if not used:
        return


def cg_collectives_reverse(job: Job) -> None:
    """HIP -> CUDA: `xlate_cg::name` -> `cooperative_groups::name`, and the CUDA headers that declare the
    collectives (after <cooperative_groups.h>) when the file does not include them."""
    cg = job.rules["cooperative_groups"]
    ns = cg["compat_namespace"].encode()
    headers: list[str] = []
    alias = _CG_ALIAS.search(job.data)  # the file's own spelling (`namespace cg = cooperative_groups;`)
    scope = alias.group(1).decode() if alias else "cooperative_groups"
    for m in re.finditer(rb"\b" + ns + rb"\s*::\s*(\w+)", job.data):
        s, e = m.start(), m.end()
        name = m.group(1).decode()
        if job.skipped(s, e) or not job.edits.claim(s, e):
            continue
        node = job.main.root.descendant_for_byte_range(s, s + len(ns))
        if node is None or node.type not in ("namespace_identifier", "identifier"):
            continue
        job.edits.replace(s, e, f"{scope}::{name}", f"cooperative_groups:{name}")
        job.skip.append((s, e))
        header = cg["collective_headers"].get(name)
        if header and header not in headers:
            headers.append(header)
    if not headers:
        return
    anchor = re.search(rb"^[ \t]*#[ \t]*include[ \t]*<hip/hip_cooperative_groups\.h>[^\n]*", job.data, re.M)
    missing = [h for h in headers if f"<{h}>".encode() not in job.data]
    if anchor is not None and missing:
        job.edits.insert(anchor.end(), "".join(f"\n#include <{h}>" for h in missing), "cooperative_groups:include")


_CG_ALIAS = re.compile(rb"\bnamespace\s+(\w+)\s*=\s*(?:::)?cooperative_groups\s*;")
_CG_USING = re.compile(rb"\busing\s+namespace\s+(?:::)?cooperative_groups\s*;")
_WORD = re.compile(rb"(?<![A-Za-z0-9_])[A-Za-z_]\w*")


# -- HIP -> CUDA ---------------------------------------------------------------------------------------------
def reverse(job: Job, region: Region) -> None:
    r = job.rules
    rv = r["reverse"]
    for kind, call, name_node in job.calls(region):
        s, e = region.start(name_node), region.end(name_node)
        if job.skipped(s, e):
            continue
        name = region.text(name_node)
        if kind != "fn" or job.tables.override("identifier", name):
            continue
        if name in r["_reverse_calls"] and job.users_own(region, name_node, name):
            continue  # the file's own function or macro of that name
        if name in rv["shuffles"]:
            _rshuffle(job, region, call, name_node, rv["shuffles"][name], rv["full_mask"])
        elif name in rv["votes"]:
            _rvote(job, region, call, name_node, rv["votes"][name], rv["full_mask"])
        elif name == "hipLaunchKernelGGL":
            _rlaunch(job, region, call, name_node)
        elif name in r["_compat_inverse"]:
            job.edits.claim(s, e)
            job.edits.replace(s, e, r["_compat_inverse"][name], f"{RULE}:{name}")
            job.stats.count("converted", "warp_intrinsics", name)
        elif name in r["_cg_inverse"]:
            _rcg(job, region, call, name_node, r["_cg_inverse"][name])
        elif name in r["_sreg_inverse"]:
            ptx.reverse(job, region, call, name_node, r["_sreg_inverse"][name])
        elif name in rv["amd_only_calls"] or name.startswith(tuple(rv["amd_only_prefixes"])):
            job.edits.claim(s, e)
            job.stats.count("unsupported", "amd_builtins", name)
            job.diag("XL1406", region, name_node, rule=f"amd:{name}", name=name)
    if region.macro is None:
        _rdynamic_shared(job, region)


def _rshuffle(job: Job, region: Region, call: ts.Node, fn: ts.Node, rule: dict[str, Any], full: str) -> None:
    name = region.text(fn)
    args = args_of(call)
    if len(args) not in (2, 3):
        return
    rid = f"{RULE}:{name}"
    job.edits.claim(region.start(fn), region.end(fn))
    var, lane = args[0], args[1]
    width = args[2] if len(args) == 3 else None
    job.edits.replace(region.start(fn), region.end(fn), rule["cuda"], rid)
    job.edits.insert(region.start(var), f"{full}, ", rid)
    w_text = region.text(width) if width is not None else None
    if width is not None and w_text == WIDTH:
        job.edits.delete(region.end(lane), region.end(width), rid)
        job.skip.append((region.end(lane), region.end(width)))
    if rule.get("wrap_lane") and w_text is not None:
        _unwrap_lane(job, region, lane, w_text, rid)
    job.stats.count("converted", "warp_intrinsics", name)
    job.diag("XL1403", region, fn, rule=rid, once="converged", name=name, target=rule["cuda"])


def _unwrap_lane(job: Job, region: Region, lane: ts.Node, w_text: str, rid: str) -> None:
    """`(x) & (W - 1)` (what forward wrote) -> `x`."""
    if lane.type != "binary_expression":
        return
    left, right = lane.child_by_field_name("left"), lane.child_by_field_name("right")
    op = lane.child_by_field_name("operator")
    if left is None or right is None or op is None or region.text(op) != "&":
        return
    if left.type != "parenthesized_expression" or region.text(right) != f"({w_text} - 1)":
        return
    inner = [c for c in left.named_children if c.type != "comment"]
    if len(inner) != 1:
        return
    job.edits.delete(region.start(lane), region.start(inner[0]), rid)
    job.edits.delete(region.end(inner[0]), region.end(lane), rid)
    job.skip.append((region.end(inner[0]), region.end(lane)))


def _rvote(job: Job, region: Region, call: ts.Node, fn: ts.Node, rule: dict[str, Any], full: str) -> None:
    name = region.text(fn)
    args = args_of(call)
    if len(args) != 1:
        return
    rid = f"{RULE}:{name}"
    job.edits.claim(region.start(fn), region.end(fn))
    job.edits.replace(region.start(fn), region.end(fn), rule["cuda"], rid)
    job.edits.insert(region.start(args[0]), f"{full}, ", rid)
    job.stats.count("converted", "warp_intrinsics", name)
    job.diag(rule["code"], region, fn, rule=rid, once=name, name=name, target=rule["cuda"])


def _rlaunch(job: Job, region: Region, call: ts.Node, fn: ts.Node) -> None:
    """hipLaunchKernelGGL(k, grid, block, shmem, stream, args...) -> k<<<grid, block, shmem, stream>>>(args...)."""
    args = args_of(call)
    if len(args) < 5:
        return
    rid = "launch:hipLaunchKernelGGL"
    job.edits.claim(region.start(fn), region.end(fn))
    kernel, stream = args[0], args[4]
    job.edits.delete(region.start(fn), region.start(kernel), rid)
    job.skip.append((region.start(fn), region.start(kernel)))
    if kernel.type == "call_expression":
        kfn = kernel.child_by_field_name("function")
        kargs = args_of(kernel)
        if kfn is not None and region.text(kfn) == "HIP_KERNEL_NAME" and len(kargs) == 1:
            job.edits.delete(region.start(kernel), region.start(kargs[0]), rid)
            job.edits.delete(region.end(kargs[0]), region.end(kernel), rid)
            job.skip.append((region.start(kernel), region.start(kargs[0])))
    job.edits.replace(region.end(kernel), region.start(args[1]), "<<<", rid)
    for dim in args[1:3]:  # dim3(g) -> g: <<<>>> converts itself (what the forward rewrite wrapped)
        inner = _single_dim3(region, dim)
        if inner is not None:
            job.edits.delete(region.start(dim), region.start(inner), rid)
            job.edits.delete(region.end(inner), region.end(dim), rid)
            job.skip.append((region.end(inner), region.end(dim)))
    last = stream
    if region.text(stream).strip() == "0":  # CUDA's defaults: no shared memory, the null stream
        last = args[2] if region.text(args[3]).strip() == "0" else args[3]
        job.skip.append((region.end(last), region.end(stream)))
    if len(args) > 5:
        job.edits.replace(region.end(last), region.start(args[5]), ">>>(", rid)
    else:
        job.edits.replace(region.end(last), region.end(call), ">>>()", rid)
    job.stats.count("converted", "launch", "hipLaunchKernelGGL")


def _single_dim3(region: Region, node: ts.Node) -> ts.Node | None:
    """`x` of `dim3(x)` (one argument), else None."""
    if node.type != "call_expression":
        return None
    fn = node.child_by_field_name("function")
    args = args_of(node)
    if fn is None or region.text(fn) != "dim3" or len(args) != 1:
        return None
    return args[0]


def _rcg(job: Job, region: Region, call: ts.Node, fn: ts.Node, member: str) -> None:
    """`helper(t)` -> `t.member()`, `helper(t, x)` -> `t.member(x)` (the rewrite's own arity)."""
    args = args_of(call)
    if len(args) != 1 + job.rules["cooperative_groups"]["rewrites"][member].get("args", 0):
        return
    rid = f"cooperative_groups:{member}"
    job.edits.claim(region.start(fn), region.end(fn))
    obj = args[0]
    arrow = obj.type == "pointer_expression" and region.text(obj).startswith("*")
    inner = obj.child_by_field_name("argument") if arrow else obj
    if inner is None:
        return
    job.edits.delete(region.start(call), region.start(inner), rid)
    job.skip.append((region.start(call), region.start(inner)))
    dot = f"{'->' if arrow else '.'}{member}("
    if len(args) > 1:  # the argument stays, translated as other code is
        job.edits.replace(region.end(inner), region.start(args[1]), dot, rid)
        job.skip.append((region.end(inner), region.start(args[1])))
    else:
        job.edits.replace(region.end(inner), region.end(call), dot + ")", rid)
        job.skip.append((region.end(inner), region.end(call)))
    job.stats.count("converted", "cooperative_groups", member)


_DYN_SHARED = re.compile(rb"\bHIP_DYNAMIC_SHARED\s*\(\s*([^(),]+?)\s*,\s*([A-Za-z_]\w*)\s*\)")


def _rdynamic_shared(job: Job, region: Region) -> None:
    """HIP_DYNAMIC_SHARED(type, var) -> extern __shared__ type var[]; found by text, since tree-sitter reads the
    macro call (which HIP writes without a semicolon) as a broken declarator."""
    for m in _DYN_SHARED.finditer(job.data):
        s, e = m.start(), m.end()
        node = region.root.descendant_for_byte_range(s, s + len(b"HIP_DYNAMIC_SHARED"))
        if node is None or node.type != "identifier" or job.skipped(s, e) or not job.edits.claim(s, e):
            continue
        new = f"extern __shared__ {job.rename_text(m.group(1).decode())} {m.group(2).decode()}[]"
        if not job.data[e : e + 64].lstrip().startswith(b";"):
            new += ";"
        job.edits.replace(s, e, new, "hip:HIP_DYNAMIC_SHARED")
        job.skip.append((s, e))
        job.stats.count("converted", "hip_macros", "HIP_DYNAMIC_SHARED")
