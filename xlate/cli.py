"""The `xlate` command line. Each command lives in xlate/commands/; this module only assembles them."""

from __future__ import annotations

import importlib

import click

from xlate import __version__

# (module in xlate.commands, command name). A command is listed here only once it works.
COMMANDS = [
    ("inspect", "inspect"),
    ("port", "port"),
    ("fuzz", "fuzz"),
    ("migrate", "migrate"),
    ("spec", "spec"),
    ("backends", "backends"),
]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="xlate")
def main() -> None:
    """Port GPU kernels between CUDA, HIP, Triton and AscendC, and prove each port by fuzzing.

    Exit codes: 0 verified (or nothing to do), 1 rejected (counterexample printed),
    2 usage or input error, 3 could not verify (toolchain or device missing).
    """


for module, name in COMMANDS:
    main.add_command(importlib.import_module(f"xlate.commands.{module}").command, name)


if __name__ == "__main__":
    main()
