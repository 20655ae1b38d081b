"""`xlate spec SRC`: each kernel's spec as the gate will use it, every item with where it came from."""

from __future__ import annotations

import os
import sys

import click

from xlate import __version__
from xlate.commands.common import emit_json, handle_errors
from xlate.errors import EXIT_INPUT, InputError


@click.command()
@click.argument("src", type=click.Path(path_type=str))
@click.option("--kernel", "kernels", multiple=True, help="Only this kernel (or Triton launcher); repeatable.")
@click.option("--write", is_flag=True, help="Save the complete specs to the xlate.toml beside SRC.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")
@handle_errors
def command(src: str, kernels: tuple[str, ...], write: bool, as_json: bool) -> None:
    """Infer each kernel's spec from the program (SRC and the files beside it) and show it as a ready-to-edit
    annotation, each item tagged with its origin (annotation, xlate.toml, host code file:line, the kernel's
    guards, a default) and the holes marked. Exit 0 when every spec is complete, 2 when some have holes."""
    from xlate.parse import parse_file
    from xlate.specs import resolve_spec, sidecar_overrides
    from xlate.specs.sidecar import write_sidecar_specs

    unit = parse_file(src, strict=False)
    names = unit.kernel_names()
    unknown = [k for k in kernels if k not in names]
    if unknown:
        raise InputError(f"{src}: error: no kernel named {', '.join(unknown)} (kernels here: {', '.join(names) or 'none'})")
    chosen = list(kernels) or names
    results = []
    for name in chosen:
        overrides = sidecar_overrides(src, name) if os.path.exists(src) else None
        results.append(resolve_spec(unit, name, overrides))
    written = None
    if write:
        complete = {r.kernel: r.annotation() for r in results if r.complete}
        if complete:
            written = str(write_sidecar_specs(os.path.dirname(os.path.abspath(src)), complete))
    if as_json:
        emit_json({"schema": "xlate.spec/1", "xlate_version": __version__, "source": src,
                   "kernels": [r.to_dict() for r in results], "written": written})
    else:
        for r in results:
            _show(r)
        if not chosen:
            click.echo(f"{src}: no kernels")
        if written:
            click.echo(f"wrote {sum(r.complete for r in results)} spec(s) to {written}")
    if any(not r.complete for r in results):
        sys.exit(EXIT_INPUT)


def _show(r) -> None:
    where = f"{r.path}:{r.line}" if r.line else r.path
    state = "complete" if r.complete else ("error" if r.error else f"{len(r.holes)} hole(s)")
    click.echo(f"kernel {r.kernel} ({where}): {state}")
    if r.items:
        click.echo(f"  // xlate: {r.annotation()}")
    width = max((len(t) for t, _ in r.items.values()), default=0)
    for text, origin in r.items.values():
        label = origin.kind + (f" {origin.where}" if origin.where else "")
        detail = f"  {origin.detail}" if origin.detail else ""
        click.echo(f"    {text.ljust(width)}  <- {label}{detail}")
    for key, hint in r.holes.items():
        click.echo(f"    HOLE {key}: {hint.split('error: ')[-1]}")
    if r.error:
        click.echo(f"    {r.error}")
    for note in r.notes:
        click.echo(f"    note: {note}")
