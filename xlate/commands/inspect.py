"""`xlate inspect SRC`: print the source model of a file."""

from __future__ import annotations

import click
from rich.console import Console

from xlate import __version__
from xlate.commands.common import emit_json, handle_errors
from xlate.parse import parse_file
from xlate.report.inspect_view import render_unit


@click.command()
@click.argument("src", type=click.Path(dir_okay=True, path_type=str))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")
@handle_errors
def command(src: str, as_json: bool) -> None:
    """Show kernels, parameters and their roles, launches, API uses, shared memory, intrinsics and hazards."""
    unit = parse_file(src)
    for w in unit.warnings:
        click.echo(w.format(), err=True)
    if as_json:
        emit_json({"schema": "xlate.inspect/1", "xlate_version": __version__, **unit.to_dict()})
    else:
        render_unit(unit, Console(highlight=False))
