"""`xlate port SRC --to TARGET`: translate, verify, and write the port only when it is verified."""

from __future__ import annotations

import sys

import click

from xlate.commands.common import emit_json, handle_errors
from xlate.targets import target_names


@click.command()
@click.argument("src", type=click.Path(path_type=str))
@click.option("--to", "target", required=True, type=click.Choice(target_names()))
@click.option("-o", "--output", help="Where to write the port (default: beside the source, new suffix).")
@click.option("--kernel", "kernels", multiple=True, help="Port only this kernel (repeatable).")
@click.option("--engine", default="auto", show_default=True, type=click.Choice(["auto", "rules", "llm"]),
              help="auto: rules, then the LLM for what they cannot translate (when a model is configured).")
@click.option("--model", help="LLM for --engine llm/auto (litellm name; or XLATE_MODEL).")
@click.option("--arch", help="Target chip or compiler target (mi300x, gfx90a, gfx1030, h200, ascend910b...).")
@click.option("--examples", default=50, show_default=True, help="Fuzz examples per kernel.")
@click.option("--seed", default=0, show_default=True)
@click.option("--no-verify", is_flag=True, help="Write the port without verifying it (marked unverified).")
@click.option("--force", is_flag=True, help="Write the port whatever the verdict (marked with it).")
@click.option("--reference", help="Oracle FILE.py:FUNCTION when the source cannot run here.")
@click.option("--against", "golden", help="Golden file (or folder of them) recorded from the source elsewhere.")
@click.option("--rules", "rules_files", multiple=True, help="CUDA<->HIP user rule file (YAML), repeatable.")
@click.option("--rocm", help="ROCm release the HIP port targets, e.g. 6.2 (default: [tool.xlate] rocm, else the "
              "newest the mapping tables know); newer HIP names are left with a diagnostic.")
@click.option("--roc/--no-roc", default=None, help="rocBLAS/rocSPARSE/rocRAND/rocSOLVER instead of the hip* "
              "wrappers (HIPIFY's --roc).")
@click.option("--launch-syntax", type=click.Choice(["ggl", "chevron"]), default=None,
              help="ggl: hipLaunchKernelGGL (HIPIFY's default); chevron: keep <<<...>>>.")
@click.option("--stats", is_flag=True, help="Print what was converted per API family (CUDA<->HIP), the gate's time per "
              "kernel, and each verified kernel timed against its source on this GPU (port/source time with its "
              "spread and noise verdict, % of the copy bandwidth; where it cannot run here, why).")
@click.option("--max-attempts", default=4, show_default=True, help="LLM attempts per kernel.")
@click.option("--timeout", default=60.0, show_default=True, help="Seconds before a kernel run is killed.")
@click.option("--trust-model-output", is_flag=True,
              help="Where no sandbox works here, build and run model-written code unsandboxed (never needed where bubblewrap works).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")
@handle_errors
def command(src: str, target: str, output: str | None, kernels: tuple[str, ...], engine: str, model: str | None,
            arch: str | None, examples: int, seed: int, no_verify: bool, force: bool, reference: str | None,
            golden: str | None, rules_files: tuple[str, ...], stats: bool, max_attempts: int, timeout: float,
            as_json: bool, rocm: str | None = None, roc: bool | None = None,
            launch_syntax: str | None = None, trust_model_output: bool = False) -> None:
    """Port SRC to TARGET. Exit 0 verified and written; 1 rejected (counterexample, nothing written);
    2 bad input; 3 could not verify here (nothing written without --force/--no-verify)."""
    from xlate.backends.sandbox import set_trust_model_output
    from xlate.port import PortRequest, port_file

    set_trust_model_output(trust_model_output)

    req = PortRequest(src, target, output, list(kernels), engine, model, arch, examples, seed, not no_verify, force,
                      reference, golden, list(rules_files), max_attempts, timeout, rocm=rocm, roc=roc,
                      launch_syntax=launch_syntax)
    result = port_file(req)
    perf = None
    if stats:
        from xlate.migrate.benchrun import port_stats

        perf = port_stats(req, result)
    if as_json:
        emit_json({**result.to_dict(), **({"stats": perf} if perf else {})})
    for w in result.warnings:
        click.echo(w.format(), err=True)
    tr = result.translation
    if tr is not None:
        for d in tr.diagnostics:
            if d.severity == "note" and d.code == "XL3000":
                continue  # "check ran" notes: the verdict lists what was checked
            click.echo(d.format(), err=True)
        if stats and target in ("hip", "cuda"):
            from xlate.translate.hip.translator import format_stats

            click.echo(format_stats(tr), err=True)
    for k in result.kernels:
        if k.verdict is not None:
            click.echo(k.verdict.summary(), err=True)
        elif k.status == "not translated":
            click.echo(f"not translated {k.kernel}: the rules cannot port it faithfully (diagnostics above)", err=True)
    if perf:
        from xlate.migrate.benchtext import stats_lines

        for line in stats_lines(perf):
            click.echo(line, err=True)
    if result.message:
        click.echo(result.message, err=True)
    if result.written:
        click.echo(f"wrote {result.output} ({result.status})", err=True)
    elif tr is not None and tr.text:
        click.echo(f"nothing written ({result.status}); --force writes it anyway, marked as {result.status}", err=True)
    sys.exit(result.exit_code)
