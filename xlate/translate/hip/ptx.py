"""Inline PTX that reads a special register the 32-lane warp model can compute (rules/intrinsics.yaml
`ptx_special_registers`): `asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));` -> `m = xlate_lanemask_lt();`, a
compat helper on `__lane_id()` (CUB-style LaneId / LaneMaskLt code reads them so). Any other assembly stays
XL1201. HIP -> CUDA writes the PTX back: `m = xlate_lanemask_lt();` as the asm statement, a read inside a
larger expression as a GNU statement expression around it."""

from __future__ import annotations

import re

import tree_sitter as ts

from xlate.translate.hip.job import Job, Region, args_of

_MOV = re.compile(r"^\s*mov\.[usb]32\s+%0\s*,\s*%%?([a-z_]+)\s*;?\s*$")


def forward(job: Job, region: Region, asm: ts.Node) -> bool:
    """Rewrite `asm` when it only copies a modelled special register into its one output; True if done."""
    table = job.rules["ptx_special_registers"]
    code = asm.child_by_field_name("assembly_code")
    outs = asm.child_by_field_name("output_operands")
    if code is None or code.type != "string_literal" or outs is None:
        return False
    if asm.child_by_field_name("input_operands") is not None and [
            c for c in asm.child_by_field_name("input_operands").named_children if c.type != "comment"]:  # type: ignore[union-attr]
        return False
    if asm.child_by_field_name("clobbers") is not None or asm.child_by_field_name("goto_labels") is not None:
        return False
    m = _MOV.match(region.text(code)[1:-1])
    operands = [c for c in outs.named_children if c.type == "gnu_asm_output_operand"]
    if m is None or m.group(1) not in table or len(operands) != 1:
        return False
    constraint, value = operands[0].child_by_field_name("constraint"), operands[0].child_by_field_name("value")
    if constraint is None or value is None or region.text(constraint).replace(" ", "") != '"=r"':
        return False
    rule = table[m.group(1)]
    s, e = region.start(asm), region.end(asm)
    if job.skipped(s, e) or not job.edits.claim(s, e):
        return False
    rid = f"ptx:%{m.group(1)}"
    job.edits.replace(s, e, f"{job.rename_text(region.text(value))} = {rule['hip']}()", rid)
    job.skip.append((s, e))
    job.helpers.add(rule["helper"])
    job.stats.count("converted", "inline_asm", m.group(1))
    job.diag("XL1125", region, asm, rule=rid, once=m.group(1), reg=m.group(1), target=rule["hip"])
    return True


def reverse(job: Job, region: Region, call: ts.Node, fn: ts.Node, reg: str) -> None:
    """`x = xlate_lanemask_lt()` (a statement) -> the asm statement; elsewhere a statement expression."""
    if args_of(call):
        return
    asm = f'asm("mov.u32 %0, %%{reg};" : "=r"({{out}}))'
    rid = f"ptx:%{reg}"
    parent = call.parent
    if (parent is not None and parent.type == "assignment_expression" and parent.child_by_field_name("right") == call
            and _operator(region, parent) == "=" and parent.parent is not None
            and parent.parent.type == "expression_statement"):
        left = parent.child_by_field_name("left")
        if left is not None:
            s, e = region.start(parent), region.end(parent)
            if job.edits.claim(s, e):
                job.edits.replace(s, e, asm.format(out=region.text(left)), rid)
                job.skip.append((s, e))
                job.stats.count("converted", "inline_asm", reg)
            return
    s, e = region.start(call), region.end(call)
    if job.edits.claim(s, e):
        job.edits.replace(s, e, "({ unsigned int xlate_r_; " + asm.format(out="xlate_r_") + "; xlate_r_; })", rid)
        job.skip.append((s, e))
        job.stats.count("converted", "inline_asm", reg)


def _operator(region: Region, node: ts.Node) -> str:
    op = node.child_by_field_name("operator")
    return region.text(op) if op is not None else ""
