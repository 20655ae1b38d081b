"""`xlate backends`: what each backend found, can compile, can run, and what to do about what is missing."""

from __future__ import annotations

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from xlate.commands.common import emit_json, handle_errors


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")
@handle_errors
def command(as_json: bool) -> None:
    """Show every installed backend: toolchain found, versions, can compile, can run, device, remedy."""
    from xlate.backends.registry import backend_names, get_backend

    infos = [get_backend(name).detect() for name in backend_names()]
    if as_json:
        emit_json({"schema": "xlate.backends/1", "backends": [i.to_dict() for i in infos]})
        return
    table = Table(show_edge=False)
    for col in ("backend", "found", "compile", "run", "platform / devices", "versions"):
        table.add_column(col, overflow="fold")
    yes = lambda v: "[green]yes[/green]" if v else "[red]no[/red]"  # noqa: E731
    for i in infos:
        where = i.platform or "-"
        if i.devices:
            where += "\n" + "\n".join(i.devices)
        table.add_row(i.backend, yes(i.found), yes(i.can_compile), yes(i.can_run), where,
                      "\n".join(f"{k} {v}" for k, v in i.versions.items()) or "-")
    console = Console(highlight=False)
    console.print(table)
    for i in infos:
        for note in i.notes:
            console.print(escape(f"{i.backend}: note: {note}"))
        if i.missing and not i.can_run:
            console.print(escape(f"{i.backend}: missing: {'; '.join(i.missing)}"))
        if i.remedy:
            console.print(escape(f"{i.backend}: to enable: {i.remedy}"))
