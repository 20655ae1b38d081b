"""Plumbing shared by the commands: error reporting with exit codes, JSON output, consoles."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click
from rich.console import Console

from xlate.errors import EXIT_INPUT, InputError, ToolchainMissing, XlateError

F = TypeVar("F", bound=Callable[..., Any])

# Human text goes to stderr so that `--json` leaves stdout a single JSON document.
err_console = Console(stderr=True, highlight=False, soft_wrap=True)


def handle_errors(fn: F) -> F:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except InputError as exc:
            for line in exc.lines():
                click.echo(line, err=True)
            sys.exit(exc.exit_code)
        except ToolchainMissing as exc:
            click.echo(f"xlate: cannot verify: {exc.message}", err=True)
            if exc.remedy:
                click.echo(f"  to enable: {exc.remedy}", err=True)
            sys.exit(exc.exit_code)
        except XlateError as exc:
            click.echo(f"xlate: error: {exc}", err=True)
            sys.exit(getattr(exc, "exit_code", EXIT_INPUT))

    return wrapper  # type: ignore[return-value]


def emit_json(document: Any) -> None:
    click.echo(json.dumps(document, indent=2, sort_keys=False, default=str))
