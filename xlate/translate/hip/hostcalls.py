"""Runtime calls whose arguments differ between CUDA and HIP (rules/host_calls.yaml says which and why):
- HIP takes `const void*` or `void**` where CUDA has a template overload: CUDA -> HIP casts that argument,
  HIP -> CUDA removes exactly the cast the forward port wrote (CUDA's templates take the argument as it is);
- CUDA's managed-memory hints with a cudaMemLocation: the `_v2` HIP name where the target ROCm has it, else a
  compat helper that passes the location's device id to the older HIP call."""

from __future__ import annotations

import functools
import re
from typing import Any

import tree_sitter as ts

from xlate.translate.hip.diagnostics import rules_file
from xlate.translate.hip.job import Job, Region, args_of
from xlate.translate.hip.tables import version

_CASTS = ("reinterpret_cast", "static_cast", "const_cast")


@functools.cache
def rules() -> dict[str, dict[str, Any]]:
    return dict(rules_file("host_calls.yaml")["cast_args"])


@functools.cache
def location_forms() -> dict[str, dict[str, Any]]:
    return dict(rules_file("host_calls.yaml")["location_forms"])


def forward(job: Job, region: Region) -> None:
    table = rules()
    forms = location_forms()
    for kind, call, name_node in job.calls(region):
        name = region.text(name_node)
        if kind == "fn" and name in forms and not job.tables.override("identifier", name):
            _location_form(job, region, call, name_node, name, forms[name])
            continue
        rule = table.get(name)
        if kind != "fn" or rule is None or job.tables.override("identifier", name):
            continue
        m = job.tables.lookup("identifier", name)
        if m is None or m.target is None:
            continue  # no HIP form: the renamer reports it
        args = args_of(call)
        if len(args) <= rule["arg"]:
            continue
        arg = args[rule["arg"]]
        s, e = region.start(arg), region.end(arg)
        if job.skipped(s, e) or _already_typed(job, region, arg, rule["cast"]):
            continue
        rid = f"host_calls:{name}"
        job.edits.insert(s, f"reinterpret_cast<{rule['cast']}>(", rid)
        job.edits.insert(e, ")", rid)
        job.stats.count("converted", "runtime_arguments", name)
        job.diag("XL1013", region, arg, rule=rid, once=name, name=name, target=m.target, cast=rule["cast"],
                 arg=rule["arg"] + 1)


def _location_form(job: Job, region: Region, call: ts.Node, fn: ts.Node, name: str, rule: dict[str, Any]) -> None:
    args = args_of(call)
    if len(args) <= rule["arg"]:
        return
    if len(args) < rule["long"] and not _is_location(job, region, args[rule["arg"]]):
        return  # the device-id form: the tables rename it
    s, e = region.start(fn), region.end(fn)
    if job.skipped(s, e) or not job.edits.claim(s, e):
        return
    rid = f"host_calls:{name}"
    have = job.rocm is None or version(job.rocm) >= version(rule["rocm"])
    target = rule["v2"] if have else rule["compat"]
    job.edits.replace(s, e, target, rid)
    job.stats.count("converted", "runtime", name)
    if not have:
        job.helpers.add(rule["helper"])
    job.diag("XL1018", region, fn, rule=rid, once=name, name=name, target=target, v2=rule["v2"], rocm=rule["rocm"],
             have=job.rocm)


def _is_location(job: Job, region: Region, arg: ts.Node) -> bool:
    """The argument is a cudaMemLocation: a variable declared so, or an expression that names the type."""
    if "MemLocation" in region.text(arg):
        return True
    if arg.type != "identifier":
        return False
    decl = job.local_declaration(region, arg, region.text(arg))
    return decl is not None and "MemLocation" in decl[0]


def reverse(job: Job, region: Region) -> None:
    by_hip = hip_names()
    back = {name: cuda for cuda, r in location_forms().items() if not cuda.endswith("_v2")
            for name in (r["v2"], r["compat"])}
    for kind, call, name_node in job.calls(region):
        if kind == "fn" and region.text(name_node) in back:
            s, e = region.start(name_node), region.end(name_node)
            if job.edits.claim(s, e):
                job.edits.replace(s, e, back[region.text(name_node)], f"host_calls:{back[region.text(name_node)]}")
            continue
        rule = by_hip.get(region.text(name_node))
        if kind != "fn" or rule is None:
            continue
        args = args_of(call)
        if len(args) <= rule["arg"]:
            continue
        inner = _cast_operand(region, args[rule["arg"]], rule["cast"])
        if inner is None:
            continue
        arg = args[rule["arg"]]
        rid = f"host_calls:{region.text(name_node)}"
        job.edits.delete(region.start(arg), region.start(inner), rid)
        job.edits.delete(region.end(inner), region.end(arg), rid)
        job.skip.append((region.start(arg), region.start(inner)))
        job.skip.append((region.end(inner), region.end(arg)))


@functools.cache
def hip_names() -> dict[str, dict[str, Any]]:
    from xlate.translate.hip.tables import builtin_tables

    forward_tables = builtin_tables("cuda->hip", False)
    out = {}
    for name, rule in rules().items():
        m = forward_tables.lookup("identifier", name)
        if m is not None and m.target:
            out[m.target] = rule
    return out


def _squash(text: str) -> str:
    return "".join(text.split())


def _cast_operand(region: Region, node: ts.Node, cast: str) -> ts.Node | None:
    """X of `reinterpret_cast<cast>(X)`, else None."""
    if node.type != "call_expression":
        return None
    fn = node.child_by_field_name("function")
    if fn is None or fn.type != "template_function":
        return None
    name, targs = fn.child_by_field_name("name"), fn.child_by_field_name("arguments")
    if name is None or targs is None or region.text(name) != "reinterpret_cast":
        return None
    if _squash(region.text(targs)) != f"<{_squash(cast)}>":
        return None
    args = args_of(node)
    return args[0] if len(args) == 1 else None


def _already_typed(job: Job, region: Region, arg: ts.Node, cast: str) -> bool:
    """The argument is a cast already, or a variable declared as a void pointer (`const void*` casts), or the
    address of one (`void**` casts)."""
    if arg.type == "cast_expression":
        return True
    if arg.type == "call_expression":
        fn = arg.child_by_field_name("function")
        name = fn.child_by_field_name("name") if fn is not None and fn.type == "template_function" else None
        return name is not None and region.text(name) in _CASTS
    target = arg
    if cast == "void**":
        if arg.type != "pointer_expression" or not region.text(arg).startswith("&"):
            return False
        target = arg.child_by_field_name("argument")
    if target is None or target.type != "identifier":
        return False
    decl = job.local_declaration(region, arg, region.text(target))
    return decl is not None and re.fullmatch(r"(?:const)?void\*", _squash(decl[0])) is not None
