"""Human rendering of a KernelUnit (rich tables) for `xlate inspect`."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from xlate.model import Function, KernelUnit, Param


def param_role(p: Param) -> str:
    if not p.is_pointer:
        return "value"
    if p.reads and p.writes:
        return "read+write"
    if p.writes:
        return "write"
    if p.reads:
        return "read"
    return "unused"


def _function_table(fn: Function) -> Table:
    title = f"[bold]{fn.kind} {fn.name}[/bold]  {' '.join(fn.qualifiers)}  ({fn.span.where() if fn.span else ''})"
    table = Table(title=title, title_justify="left", show_edge=False)
    for col in ("param", "type", "ptr", "const", "restrict", "access"):
        table.add_column(col)
    for p in fn.params:
        table.add_row(escape(p.name), escape(p.type), str(p.pointer_depth), "yes" if p.is_const else "", "yes" if p.is_restrict else "", param_role(p))
    return table


def _function_facts(fn: Function) -> list[str]:
    lines = []
    if fn.template_params:
        lines.append("template: " + ", ".join(f"{t.kind} {t.name}" + (f"={t.default}" if t.default else "") for t in fn.template_params))
    if fn.launch_bounds:
        lines.append("__launch_bounds__(" + ", ".join(fn.launch_bounds) + ")")
    if fn.calls:
        lines.append("calls: " + ", ".join(fn.calls))
    for s in fn.shared:
        size = f"{s.size_bytes} B" if s.size_bytes is not None else ("dynamic" if s.dynamic else "size unknown")
        dims = "".join(f"[{d}]" for d in s.dims) or ("[]" if s.dynamic else "")
        lines.append(f"__shared__ {s.type} {s.name}{dims}: {size}  ({s.span.line}:{s.span.col})")
    if fn.intrinsics:
        lines.append("intrinsics: " + ", ".join(f"{u.name}@{u.span.line}" for u in fn.intrinsics))
    if fn.atomics:
        lines.append("atomics: " + ", ".join(f"{a.name}@{a.span.line}" for a in fn.atomics))
    for a in fn.asm:
        lines.append(f"inline asm @{a.span.line}: {a.text[:60]}")
    if fn.barriers:
        lines.append(f"barriers: {fn.barriers}")
    if fn.annotation:
        lines.append(f"spec: {fn.annotation}")
    lines.extend(f"note: {n}" for n in fn.notes)
    return lines


def render_unit(unit: KernelUnit, console: Console) -> None:
    console.print(f"[bold]{unit.path}[/bold]  language={unit.language}  {unit.size_bytes} bytes")
    if unit.language == "triton":
        for k in unit.triton_kernels:
            params = ", ".join(p.name + (": constexpr" if p.constexpr else "") for p in k.params)
            console.print(escape(f"@{' @'.join(k.decorators)} {k.name}({params})  ({k.span.where()})"))
        for f in unit.py_functions:
            launches = f" launches {', '.join(f.launches)}" if f.launches else ""
            console.print(escape(f"def {f.name}({', '.join(f.params)}){launches}" + (f"  spec: {f.annotation}" if f.annotation else "")))
        return
    for fn in unit.functions:
        console.print(_function_table(fn))
        for line in _function_facts(fn):
            console.print("  " + escape(line))
        console.print()
    if unit.launches:
        table = Table(title="launch sites", title_justify="left", show_edge=False)
        for col in ("kernel", "form", "grid", "block", "shmem", "stream", "in", "at"):
            table.add_column(col)
        for site in unit.launches:
            name = site.kernel + (f"<{', '.join(site.template_args)}>" if site.template_args else "")
            table.add_row(*(escape(x) for x in (name, site.form, site.grid or "", site.block or "", site.shmem or "", site.stream or "")),
                          site.function or "", f"{site.span.line}:{site.span.col}")
        console.print(table)
    if unit.api_calls:
        by_family: dict[str, list[str]] = {}
        for call in unit.api_calls:
            by_family.setdefault(call.family, []).append(call.name)
        for family, names in sorted(by_family.items()):
            console.print(escape(f"API {family}: " + ", ".join(sorted(set(names)))))
    if unit.includes:
        console.print(escape("includes: " + ", ".join(("<" + i.path + ">") if i.system else f'"{i.path}"' for i in unit.includes)))
    if unit.macros:
        console.print(escape("macros: " + ", ".join(m.name + (f"({', '.join(m.params)})" if m.params is not None else "") for m in unit.macros)))
