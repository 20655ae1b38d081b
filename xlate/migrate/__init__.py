"""Batch migration of a kernel library (`xlate migrate`).

discover.py    the files (folder or compile_commands.json), roles, include graph, output names (naming.yaml)
symbols.py     the names each file defines (a project's own cudaCheck is never an unknown CUDA name)
keys.py        content keys of tasks: source, included headers, oracles, options, xlate version
cache.py       results by key in SQLite (WAL), committed per task: re-runs are incremental, kills lose nothing
task.py        one file's pipeline in a worker: translate -> (compile check) -> verify, via port_file
bench*.py      --benchmark after every task: source vs port timed on one GPU (benchrun.py the run, bench.py one
               kernel, benchstats.py rounds/spread/noise, benchdevice.py the L2 size and copy bandwidth)
verdicts.py    each written file's verdict (its header comment) and its category in the report
compilecheck.py, rocmcheck.py  the compile check, named with the local ROCm; HIP names newer than it listed apart
tree.py        what the driver writes itself: copies, translated build files (buildfiles.py, buildfiles.yaml), and the
               source copied unchanged where no port could be written
executors.py   local process pool (pebble: crash and hang isolation), Ray, serial
analysis.py    --analysis-only: rules / LLM / unsupported per kernel, wavefront hazards, effort (effort.yaml)
summary.py     counts, the hard list of what was not migrated, the exit code
pipeline.py    the driver; report.py the report (report.json, HTML, summary)
"""

from xlate.migrate.options import MigrateOptions

__all__ = ["MigrateOptions", "migrate"]


def migrate(options: MigrateOptions):  # type: ignore[no-untyped-def]
    from xlate.migrate.pipeline import migrate as run

    return run(options)
