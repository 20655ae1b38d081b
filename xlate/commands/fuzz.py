"""`xlate fuzz A [B]`: check two implementations (or one against a reference or golden file) for equivalence."""

from __future__ import annotations

import click

from xlate.commands.common import emit_json, handle_errors
from xlate.errors import InputError


@click.command()
@click.argument("a", type=click.Path(path_type=str))
@click.argument("b", required=False, type=click.Path(path_type=str))
@click.option("--kernel", help="Kernel (CUDA/HIP) or launcher (Triton) to check; needed when the file has several.")
@click.option("--examples", default=50, show_default=True, help="Hypothesis examples (cases run on both sides).")
@click.option("--seed", default=0, show_default=True, help="Hypothesis seed; the same seed replays the same run.")
@click.option("--dtypes", help="Restrict template dtype axes, e.g. float32,float16.")
@click.option("--reference", help="Oracle: a Python function FILE.py:FUNCTION (NumPy/PyTorch, float64).")
@click.option("--record", "record_path", help="Run A and save its cases and outputs to this golden file (.xg).")
@click.option("--against", "golden", help="Replay the cases of this golden file against A.")
@click.option("--replay", help="Run exactly one case (the JSON a counterexample prints).")
@click.option("--timeout", default=60.0, show_default=True, help="Seconds before a run is killed (verdict: timeout).")
@click.option("--arch", help="Compiler target for the implementations (sm_90, gfx90a, ...).")
@click.option("--sanitize", is_flag=True, help="Also run edge cases under compute-sanitizer memcheck and racecheck.")
@click.option("--trust-model-output", is_flag=True,
              help="Where no sandbox works here, build and run model-written code unsandboxed (never needed where bubblewrap works).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")
@handle_errors
def command(a: str, b: str | None, kernel: str | None, examples: int, seed: int, dtypes: str | None,
            reference: str | None, record_path: str | None, golden: str | None, replay: str | None, timeout: float,
            arch: str | None, sanitize: bool, as_json: bool, trust_model_output: bool = False) -> None:
    """Fuzz A against B (A is the source: its spec drives the cases), or A against --reference / --against."""
    import sys

    from xlate.backends.sandbox import isolate, set_trust_model_output
    from xlate.translate.llm.contract import is_model_output
    from xlate.verify import api

    # Both implementations are built and run in the sandbox where one works; a file xlate wrote from model
    # output only there (or with --trust-model-output).
    set_trust_model_output(trust_model_output)
    model = any(is_model_output(p) for p in (a, b) if p)
    box = {"require": model, "what": "model output" if model else "fuzz input"}

    if record_path and golden:
        raise InputError("xlate: error: --record and --against exclude each other")
    if record_path:
        if b is not None:
            raise InputError("xlate: error: --record takes one implementation (the one to record)")
        result = isolate(api.record, a, record_path, **box, kernel=kernel, examples=examples, seed=seed, reference=reference,
                            arch=arch, timeout=timeout)
        if as_json:
            emit_json(result.to_dict())
        click.echo(f"recorded {result.cases} cases ({result.shapes} shapes) of {result.kernel} to {result.path}", err=True)
        for w in result.warnings:
            click.echo(f"  warning: {w}", err=True)
        return
    if golden:
        if b is not None:
            raise InputError("xlate: error: --against checks one implementation against the golden file")
        verdict = isolate(api.verify, a, a, **box, kernel=kernel, examples=examples, seed=seed, golden=golden, reference=reference,
                             timeout=timeout, arch=arch, replay=replay)
    else:
        hint = f"xlate fuzz {a}" + (f" {b}" if b else "") + (f" --kernel {kernel}" if kernel else "")
        verdict = isolate(api.verify, a, b, **box, kernel=kernel, examples=examples, seed=seed, reference=reference, timeout=timeout,
                             arch=arch, dtypes=dtypes.split(",") if dtypes else None, replay=replay, replay_hint=hint,
                             sanitize=sanitize)
    if as_json:
        emit_json(verdict.to_dict())
    click.echo(verdict.summary(), err=True)
    sys.exit(verdict.exit_code)
