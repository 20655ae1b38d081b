"""Constructs with no HIP (or no CUDA) equivalent that are not calls: inline assembly, texture and surface
references, device-side launches, __launch_bounds__ semantics."""

from __future__ import annotations

import re

import tree_sitter as ts

from xlate.translate.hip import ptx
from xlate.translate.hip.job import Job, Region


def _asm_text(region: Region, node: ts.Node) -> str:
    strings = [c for c in node.named_children if c.type in ("string_literal", "concatenated_string")]
    text = region.text(strings[0]) if strings else region.text(node)
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."


def check(job: Job, region: Region) -> None:
    forward = job.direction == "cuda->hip"
    textures: list[str] = []
    for m in job.query("constructs", region):
        if "asm" in m:
            node = m["asm"][0]
            if job.in_device(region, node):
                if forward and ptx.forward(job, region, node):
                    continue  # a special-register read the warp model computes
                if forward:
                    job.stats.count("unsupported", "inline_asm", "asm")
                    job.diag("XL1201", region, node, rule="asm:ptx", text=_asm_text(region, node))
                else:
                    job.stats.count("unsupported", "inline_asm", "asm")
                    job.diag("XL1406", region, node, rule="asm:amdgcn", name=f"asm {_asm_text(region, node)}")
            else:
                job.diag("XL1206", region, node, rule="asm:host", once=_asm_text(region, node),
                         text=_asm_text(region, node))
        elif "texdecl" in m and forward:
            kind = region.text(m["tex"][0])
            if kind not in ("texture", "surface"):
                continue
            var = m["texvar"][0]
            while var.type not in ("identifier",) and var.child_by_field_name("declarator") is not None:
                var = var.child_by_field_name("declarator")  # type: ignore[assignment]
            name = region.text(var)
            textures.append(name)
            job.stats.count("unsupported", "texture", kind)
            job.diag("XL1202", region, m["texdecl"][0], rule=f"texture:{kind}", name=name, kind=kind)
        elif "launch" in m and forward:
            node = m["launch"][0]
            if job.function_of(region, node) is not None:
                job.diag("XL1204", region, node, rule="launch:device", child=region.text(m["kfn"][0]))
        elif "bounds" in m and forward:
            node = m["bounds"][0]
            args = [c for c in node.named_children if c.type != "comment"]
            if len(args) >= 2:
                job.diag("XL1205", region, node, rule="launch_bounds", once="bounds",
                         args=", ".join(region.text(a) for a in args))
    for name in textures:  # every function that reads a texture reference needs the rewrite
        word = re.compile(rb"\b" + re.escape(name.encode()) + rb"\b")
        for fn in job.unit.functions:
            if fn.body_span is not None and word.search(job.data, fn.body_span.start_byte, fn.body_span.end_byte):
                job.blocking_functions.add(fn.name)
