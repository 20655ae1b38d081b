"""`xlate migrate SRC_DIR --to hip -o OUT_DIR`: port a whole kernel library, incrementally and in parallel."""

from __future__ import annotations

import sys

import click

from xlate.commands.common import emit_json, handle_errors
from xlate.errors import EXIT_INPUT
from xlate.targets import target_names


@click.command()
@click.argument("src", type=click.Path(path_type=str))
@click.option("--to", "target", required=True, type=click.Choice(target_names()))
@click.option("-o", "--output", help="Output folder: the ported tree mirrors SRC there (required unless --analysis-only).")
@click.option("-j", "--jobs", type=int, help="Worker processes (local) or concurrent tasks (ray). Default: the CPUs here.")
@click.option("--executor", default="local", show_default=True, type=click.Choice(["local", "ray", "serial"]),
              help="local: a process pool here; ray: tasks on a Ray cluster (RAY_ADDRESS / --ray-address, else a "
                   "local one); serial: one at a time in this process (debugging: no crash isolation).")
@click.option("--analysis-only", is_flag=True, help="Report what the rules would do per file and kernel; write no port.")
@click.option("--no-verify", is_flag=True, help="Write the ports without verifying them (marked unverified).")
@click.option("--force", is_flag=True, help="Also write rejected ports (marked with their verdict) instead of the source "
                                           "copied unchanged (partial ports are written anyway, their sites to review listed).")
@click.option("--verified-only", is_flag=True, help="Write verified ports (and translated files without kernels) only: "
                                                   "no candidates, no copies, no build files.")
@click.option("--keep-names", is_flag=True, help="Keep every file name (x.cu stays x.cu; default: x.cu -> x.hip, "
                                                "x.cuh -> x.hip.h, the build files follow).")
@click.option("--rocm", help="ROCm release the HIP port targets, e.g. 6.2 (default: [tool.xlate] rocm, else the newest "
                             "release the mapping tables know).")
@click.option("--roc/--no-roc", default=None, help="rocBLAS/rocSPARSE/rocRAND/rocSOLVER instead of the hip* wrappers "
                                                   "(HIPIFY's --roc; default: [tool.xlate] roc, else no).")
@click.option("--launch-syntax", type=click.Choice(["ggl", "chevron"]), default=None,
              help="Kernel launches as hipLaunchKernelGGL (ggl, HIPIFY's default) or <<<...>>> (chevron).")
@click.option("--examples", default=50, show_default=True, help="Fuzz examples per kernel.")
@click.option("--seed", default=0, show_default=True)
@click.option("--arch", help="Target chip or compiler target (mi300x, gfx90a, h200, ...).")
@click.option("--rules", "rules_files", multiple=True, help="CUDA<->HIP user rule file (YAML), repeatable.")
@click.option("--against", "golden", help="Folder of golden files <stem>.<kernel>.xg recorded from the sources elsewhere.")
@click.option("--engine", default="auto", show_default=True, type=click.Choice(["auto", "rules", "llm"]))
@click.option("--model", help="LLM for --engine llm/auto (litellm name; or XLATE_MODEL).")
@click.option("--compile-check", is_flag=True, help="Compile each port for its target (hipcc for AMD...) even where it cannot run.")
@click.option("--benchmark", is_flag=True, help="After all tasks, time each verified kernel's source and port on this GPU "
              "(working set >= 4x its L2, interleaved until the ratio is known within 1 %; the report gives the "
              "port/source ratio, its spread and noise verdict, and % of the copy bandwidth; needs both to run here).")
@click.option("--timeout", default=60.0, show_default=True, help="Seconds before one kernel run is killed.")
@click.option("--task-timeout", default=1800.0, show_default=True, help="Seconds before one file's whole pipeline is stopped.")
@click.option("--resume/--fresh", default=True, show_default=True,
              help="Reuse the results the cache holds for unchanged files (a plain re-run does too); --fresh redoes all.")
@click.option("--report", "report_dir", help="Report folder (default OUT_DIR/xlate-report).")
@click.option("--cache", "cache_path", help="Cache database (default OUT_DIR/.xlate/migrate.sqlite).")
@click.option("-I", "--include-dir", "include_dirs", multiple=True, help="Folder to resolve #include lines in, repeatable.")
@click.option("--root", help="Library root for a compile_commands.json (default: the units' common folder).")
@click.option("--gpus-per-task", default=0.0, show_default=True, help="ray: GPUs each file's task reserves (1: one GPU verifies one kernel at a time).")
@click.option("--ray-address", help="ray: address of the cluster to join.")
@click.option("--no-progress", is_flag=True, help="No live progress bar on stderr.")
@click.option("--trust-model-output", is_flag=True,
              help="Where no sandbox works here, build and run model-written code unsandboxed (never needed where bubblewrap works).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON document on stdout.")
@handle_errors
def command(src: str, target: str, output: str | None, jobs: int | None, executor: str, analysis_only: bool,
            no_verify: bool, force: bool, verified_only: bool, keep_names: bool, rocm: str | None, roc: bool | None,
            launch_syntax: str | None, examples: int, seed: int, arch: str | None, rules_files: tuple[str, ...],
            golden: str | None, engine: str, model: str | None, compile_check: bool, benchmark: bool, timeout: float,
            task_timeout: float, resume: bool, report_dir: str | None, cache_path: str | None, include_dirs: tuple[str, ...], root: str | None,
            gpus_per_task: float, ray_address: str | None, no_progress: bool, as_json: bool,
            trust_model_output: bool = False) -> None:
    """Migrate the kernel library SRC (a folder, or a compile_commands.json) to TARGET.

    Exit 0 every kernel verified (or nothing to do); 1 some kernel rejected or not migrated; 2 bad input;
    3 nothing rejected, but some kernels could not be verified here. With --analysis-only: 0 the rules can
    translate every kernel, 1 some need the LLM or are unsupported."""
    import os
    import sqlite3

    from xlate.backends.sandbox import set_trust_model_output
    from xlate.errors import InputError
    from xlate.migrate.options import MigrateOptions, default_jobs
    from xlate.migrate.pipeline import migrate

    set_trust_model_output(trust_model_output)  # an environment variable: the task processes inherit it

    if output is None:
        if not analysis_only:
            raise InputError("xlate: error: -o OUT_DIR is required (the ported tree is written there)")
        output = report_dir or "xlate-analysis"
    from xlate.config import hip_choices

    hip = hip_choices(rocm, roc, launch_syntax, start=src)
    opts = MigrateOptions(source=src, target=target, output=output, jobs=jobs or default_jobs(), executor=executor,
                          analysis_only=analysis_only, verify=not no_verify, force=force, verified_only=verified_only,
                          keep_names=keep_names, rocm=hip.rocm, roc=hip.roc, launch_syntax=hip.launch_syntax,
                          examples=examples, seed=seed,
                          arch=arch, rules_files=list(rules_files), golden=golden, engine=engine, model=model,
                          timeout=timeout, task_timeout=task_timeout or None, benchmark=benchmark,
                          compile_check=compile_check, resume=resume,
                          report_dir=report_dir, cache_path=cache_path, include_dirs=list(include_dirs), root=root,
                          gpus_per_task=gpus_per_task, ray_address=ray_address,
                          progress=not no_progress and not as_json and sys.stderr.isatty())
    try:
        outcome = migrate(opts)
    except OSError as exc:  # the report or the output folder could not be written (disk full, permissions)
        click.echo(f"xlate: error: cannot write {exc.filename or 'the report'}: {exc.strerror or exc}", err=True)
        sys.exit(EXIT_INPUT)
    except sqlite3.Error as exc:  # the cache database (disk full, read-only, corrupt)
        click.echo(f"xlate: error: the migration cache {opts.resolved_cache_path()}: {exc}", err=True)
        sys.exit(EXIT_INPUT)
    report = outcome.report
    s = report["summary"]
    if as_json:
        emit_json({"schema": report["schema"], "mode": report["mode"], "target": report["target"], "summary": s,
                   "not_migrated": report["not_migrated"], "report_dir": outcome.report_dir, "run": report["run"]})
    counts = ", ".join(f"{n} {k}" for k, n in s["kernels_by_status"].items()) or "no kernels"
    click.echo(f"{s['files']} files, {s['kernels']} kernels: {counts}", err=True)
    for line in tree_lines(s):
        click.echo(line, err=True)
    from xlate.migrate.benchtext import summary_lines

    for line in summary_lines(s):
        click.echo(line, err=True)
    for m in report["not_migrated"][:20]:
        click.echo(f"  not migrated: {m['file']}" + (f" {m['kernel']}" if m["kernel"] else "") + f" ({m['status']}): {m['reason']}", err=True)
    if len(report["not_migrated"]) > 20:
        click.echo(f"  ... and {len(report['not_migrated']) - 20} more (see the report)", err=True)
    if analysis_only:
        click.echo(f"effort: {s['effort']}; {s['hazards']} wavefront hazard(s)", err=True)
    click.echo(f"report: {os.path.join(outcome.report_dir, 'report.html')}", err=True)
    sys.exit(outcome.exit_code)


CATEGORY_WORDS = [("accepted", "accepted (verified)"), ("candidate", "candidates (translated, not verified here)"),
                  ("translated", "translated without kernels"), ("unchanged", "unchanged (nothing to translate)"),
                  ("untranslated", "NOT translated (source copied unchanged)"), ("rejected", "rejected (--force)"),
                  ("partial", "partial (constructs to review)"), ("copied", "copied"), ("build", "build files translated"),
                  ("not written", "not written"), ("skipped", "skipped (nothing to port for this target)")]


def tree_lines(s: dict) -> list[str]:  # type: ignore[type-arg]
    """What the output tree holds and what the compile check said, in words (port mode)."""
    out = []
    cats = s.get("categories")
    if cats:
        parts = [f"{cats[c]} {words}" for c, words in CATEGORY_WORDS if cats.get(c)]
        out.append(f"output tree: {s.get('written', 0)} of {s['files']} files written: " + ", ".join(parts))
        if s.get("build_manual"):
            out.append(f"  build files: {s['build_manual']} line(s) to change by hand (see the report)")
        if s.get("incomplete"):
            out.append(f"  {s['incomplete']} translated file(s) hold constructs the rules cannot translate (see the report)")
    c = s.get("compile")
    if c:
        line = (f"compile check ({', '.join(c['compilers'])}): {c['compiled']} of {c['checked']} compiled"
                + (f", {c['failed']} failed (see the report)" if c["failed"] else "")
                + (f", {c['not_checkable']} not checkable here" if c["not_checkable"] else "")
                + (f", {c['not_compiled']} not compiled" if c["not_compiled"] else ""))
        out.append(line)
        if c["newer_constructs"]:
            names = ", ".join(f"{d['name']} ({d['rocm']})" for d in c["newer_constructs"][:8])
            more = f" and {len(c['newer_constructs']) - 8} more" if len(c["newer_constructs"]) > 8 else ""
            out.append(f"  not checkable with the local ROCm {c['rocm']} (newer HIP names, not errors): {names}{more}")
    return out
