"""Render planned kernels through the jinja2 templates of templates/ascendc/ into one AscendC source file."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import jinja2

from xlate.resources import templates_dir
from xlate.specs import KernelSpec
from xlate.specs import expr as spec_expr
from xlate.translate.ascendc import ir
from xlate.translate.ascendc.lift import Lifted
from xlate.translate.ascendc.lower import Lowered, Operand, ReduceOp, VecOp
from xlate.translate.ascendc.tables import tiling_policy
from xlate.translate.ascendc.tiling import SocInfo, Tiling

NOTE_WIDTH = 100


@functools.cache
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir() / "ascendc")),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=False,
        autoescape=False,
    )


@dataclass
class KernelPlan:
    """Everything the templates need for one kernel."""

    name: str
    kind: str  # elementwise | rows
    spec: KernelSpec
    lifted: Lifted
    lowered: Lowered
    tiling: Tiling
    param_types: dict[str, str]  # CUDA parameter -> its C type (scalars and sizes)
    source_where: str
    context: dict[str, Any] = field(default_factory=dict)


def _operand(op: Operand, length: str) -> str:
    if op.kind == "in":
        return f"{op.name}In"
    if op.kind == "out":
        return f"{op.name}Out"
    return "tmp" if op.slot == 0 else f"tmp[{op.slot} * {length}]"


def _note(text: str) -> str:
    return text if len(text) <= NOTE_WIDTH else text[: NOTE_WIDTH - 3] + "..."


def compute_lines(lowered: Lowered, ctype: str, length: str) -> list[str]:
    lines: list[str] = []
    for step in lowered.steps:
        lines.append(f"// {_note(step.note)}")
        if isinstance(step, ReduceOp):
            dst = f"reduced[{step.slot} * ALIGN_ELEMS]" if step.slot else "reduced"
            extra = ", false" if step.api == "ReduceMax" else ""  # calIndex: the value, not its position
            lines.append(f"AscendC::{step.api}<{ctype}>({dst}, {_operand(step.src, length)}, work, count{extra});")
            lines.append("{  // the scalar unit reads the result: wait for the vector pipe (V -> S)")
            lines.append("    AscendC::TEventID vToS = pipe.FetchEventID(AscendC::HardEvent::V_S);")
            lines.append("    AscendC::SetFlag<AscendC::HardEvent::V_S>(vToS);")
            lines.append("    AscendC::WaitFlag<AscendC::HardEvent::V_S>(vToS);")
            lines.append("}")
            lines.append(f"{ctype} {step.var} = reduced.GetValue({step.slot} * ALIGN_ELEMS);")
            if step.adjust:
                lines.append(f"{step.var} = {step.adjust};  // the CUDA accumulator's initial value")
            continue
        assert isinstance(step, VecOp)
        dst = _operand(step.dst, length)
        srcs = [_operand(s, length) for s in step.srcs]
        if step.api == "Duplicate":
            lines.append(f"AscendC::Duplicate<{ctype}>({dst}, {step.scalar}, count);")
        elif step.scalar is not None:
            lines.append(f"AscendC::{step.api}({dst}, {srcs[0]}, {step.scalar}, count);")
        else:
            lines.append(f"AscendC::{step.api}({dst}, {', '.join(srcs)}, count);")
    return lines


def _demo_value(lo: str | None, hi: str | None, default: float, env: dict[str, Any]) -> float:
    v = default
    try:
        if lo is not None:
            v = max(v, float(spec_expr.evaluate(lo, env)))
        if hi is not None:
            v = min(v, float(spec_expr.evaluate(hi, env)))
    except Exception:  # the demo sizes are illustrative; a range we cannot evaluate keeps the default
        pass
    return v


def kernel_context(plan: KernelPlan) -> dict[str, Any]:
    spec, t = plan.spec, plan.tiling
    params = sorted(spec.params, key=lambda p: p.position)
    loaded = sorted({b for st in plan.lifted.stores for b in ir.loads(st.value)} | _reduce_loads(plan))
    stored = [st.buf for st in plan.lifted.stores]
    used = [p.name for p in params if p.is_buffer and (p.name in loaded or p.name in stored)]
    scalars = [p for p in params if not p.is_buffer]

    def decl(p) -> str:
        return f"GM_ADDR {p.name}" if p.is_buffer else f"{plan.param_types[p.name]} {p.name}"

    length = "ROW_LENGTH" if plan.kind == "rows" else "TILE_LENGTH"
    in_queues = [{"queue": f"inQueue_{b}", "local": f"{b}In", "gm": f"{b}Gm", "buf": b} for b in loaded]
    out_queues = [{"queue": f"outQueue_{b}", "local": f"{b}Out", "gm": f"{b}Gm", "buf": b} for b in stored]
    policy = tiling_policy()
    soc: SocInfo = t.soc
    if plan.kind == "rows":
        units = f"{plan.lifted.domain} > 0 ? static_cast<uint32_t>({plan.lifted.domain}) : 0"
        block_why = f"one core per row, at most the {soc.cores} vector cores of {soc.name}"
        block_params = f"{plan.param_types[plan.lifted.domain or '']} {plan.lifted.domain}"
        block_args = plan.lifted.domain or ""
        tile_why = (f"one row of up to {t.max_cols} elements, padded to {t.align_elems}-element blocks")
    else:
        dom = plan.lifted.domain or ""
        units = f"{dom} > 0 ? (static_cast<uint32_t>({dom}) + TILE - 1) / TILE : 0"
        units = units.replace("TILE", str(t.tile_length))
        block_why = f"one core per tile of {t.tile_length} elements, at most the {soc.cores} vector cores of {soc.name}"
        block_params = f"{plan.param_types[dom]} {dom}"
        block_args = dom
        tile_why = (f"({soc.ub_bytes} B UB - {policy['ub_reserve_bytes']} B reserve) / (({t.queues} queues x "
                    f"{t.buffer_num} + {t.tmp_slots} temporaries) x {t.elem_bytes} B), at most {soc.max_repeat} x "
                    f"{t.repeat_elems} (one instruction), in whole {t.repeat_elems}-element repeats")
    expressions = [f"{st.buf}[i] = {ir.show(st.value)}" for st in plan.lifted.stores]
    return {
        "name": plan.name,
        "kind": plan.kind,
        "source_where": plan.source_where,
        "expressions": [_note(e) for e in expressions],
        "tiling": t,
        "tile_why": tile_why,
        "pad": soc.datacopy_pad,
        "domain": plan.lifted.domain,
        "row_len": plan.lifted.row_len,
        "entry_params": ", ".join(decl(p) for p in params),
        "init_params": ", ".join(decl(p) for p in params),
        "init_args": ", ".join(p.name for p in params),
        "scalars": [{"name": p.name, "member": f"{p.name}_", "ctype": plan.param_types[p.name]} for p in scalars],
        "buffers": [{"param": b, "gm": f"{b}Gm"} for b in used],
        "queues": in_queues + out_queues,
        "in_queues": in_queues,
        "out_queues": out_queues,
        "compute": compute_lines(plan.lowered, t.ctype, length),
        "block_dim_why": block_why,
        "block_dim_params": block_params,
        "block_dim_args": block_args,
        "block_dim_units": units,
        "host_params": ", ".join(f"uint8_t* {p.name}" if p.is_buffer else f"{plan.param_types[p.name]} {p.name}"
                                 for p in params),
        "host_args": ", ".join(p.name for p in params),
    }


def _reduce_loads(plan: KernelPlan) -> set[str]:
    out: set[str] = set()
    for st in plan.lifted.stores:
        for n in ir.walk(st.value):
            if isinstance(n, ir.Reduce):
                out |= ir.loads(n.arg)
    return out


def demo_context(plan: KernelPlan, file_name: str) -> dict[str, Any]:
    spec = plan.spec
    env: dict[str, Any] = {}
    values = []
    for p in sorted(spec.params, key=lambda p: p.position):
        if p.role == "size":
            v = int(_demo_value(p.lo, p.hi, 1003 if p.name != plan.lifted.domain or plan.kind != "rows" else 7, env))
            env[p.name] = v
            values.append({"name": p.name, "ctype": plan.param_types[p.name], "value": str(v)})
    for p in sorted(spec.params, key=lambda p: p.position):
        if p.role in ("scalar", "const"):
            v = _demo_value(p.lo, p.hi, 0.5, env)
            text = ir.c_float(v) if "float" in plan.param_types[p.name] else str(int(v))
            values.append({"name": p.name, "ctype": plan.param_types[p.name], "value": text})
    buffers = []
    for p in sorted(spec.params, key=lambda p: p.position):
        if p.is_buffer:
            n = 1
            for d in p.dims:
                n *= int(spec_expr.evaluate(d, env))
            buffers.append({"name": p.name, "elements": f"{n}u", "role": p.role})
    sizes_text = ", ".join(f"{v['name']} = {v['value']}" for v in values) or "no arguments"
    args = ", ".join(f"{p.name}Device" if p.is_buffer else p.name for p in sorted(spec.params, key=lambda p: p.position))
    return {
        "kernel": plan.name, "file": file_name, "npu_arch": plan.tiling.soc.npu_arch, "ctype": plan.tiling.ctype,
        "constants": values, "buffers": buffers, "outputs": [b for b in buffers if b["role"] in ("out", "inout")],
        "args": args, "sizes_text": sizes_text,
    }


def render_file(plans: list[KernelPlan], source: str, engine: str, soc: SocInfo, file_name: str) -> str:
    kernels = [kernel_context(p) for p in plans]
    demo = demo_context(plans[0], file_name) if plans else None
    return environment().get_template("port.cpp.j2").render(
        kernels=kernels, source=source, engine=engine, soc=soc, buffer_num=tiling_policy()["buffer_num"], demo=demo,
    )

