#!/usr/bin/env bash
# The main job on the embedded default (no GPU, no LLM key): migrate the example kernel library
#  1. to Triton, each port verified on this CPU (Triton interpreter) against golden outputs recorded from the
#     CUDA originals on an H200 (examples/golden) and the NumPy references;
#  2. to HIP: the whole tree is written (every port headed with its verdict), each port compile-checked with the
#     local hipcc for gfx90a (running HIP needs a GPU: verdict unverified, "compiled; not run").
# Then it says, per target, what was verified, what only compiled, and what could not be checked here.
# Trees: out/demo/{triton,hip}; reports: out/demo/{triton,hip}/xlate-report/report.html. Exit 0 when both runs
# completed (the reports list every kernel that was not migrated and why); non-zero on a usage error or a crash.
set -uo pipefail
cd "$(dirname "$0")/.."
export LITELLM_LOCAL_MODEL_COST_MAP=True  # litellm would fetch a price list from GitHub at import
./ci/setup.sh >/dev/null || exit 1
. .venv/bin/activate
for target in triton hip; do
  extra=(--against examples/golden)
  [ "$target" = hip ] && extra=(--compile-check --arch gfx90a)
  echo "== xlate migrate examples/kernels --to $target -o out/demo/$target ${extra[*]}"
  xlate migrate examples/kernels --to "$target" -o "out/demo/$target" "${extra[@]}" --fresh
  rc=$?
  # 0 all verified, 1 something rejected or not translated, 3 could not verify here: all are results
  case $rc in 0|1|3) ;; *) echo "ci/demo.sh: xlate migrate failed (exit $rc)" >&2; exit "$rc" ;; esac
done
echo "== what the demo shows"
python - <<'EOF'
import json

for target in ("triton", "hip"):
    r = json.load(open(f"out/demo/{target}/xlate-report/report.json"))
    s, files = r["summary"], r["files"]
    kernels = s["kernels_by_status"]
    line = [f"{target}: {kernels.get('verified', 0)} of {s['kernels']} kernels verified (run here and fuzzed against the source)"]
    c = s.get("compile")
    if c:
        compiled = sum(1 for f in files if (f.get("compile") or {}).get("ok") is True and f["written"])
        line.append(f"{compiled} ported files only compiled ({', '.join(c['compilers'])}; not run: no GPU here)")
        line.append(f"{c['not_checkable']} not checkable here" + (
            " (" + ", ".join(d["name"] for d in c["newer_constructs"][:6]) + f": newer than ROCm {c['rocm']})"
            if c["newer_constructs"] else f" (no HIP name newer than the local ROCm {c['rocm']})"))
        if c["failed"]:
            line.append(f"{c['failed']} do not compile")
    cats = s.get("categories", {})
    if cats.get("untranslated"):
        line.append(f"{cats['untranslated']} file(s) not translated (source copied unchanged: see the report)")
    missing = [m for m in r["not_migrated"] if m["kernel"]]
    if missing:
        line.append(f"{len(missing)} kernel(s) not migrated: " + ", ".join(sorted({m["kernel"] for m in missing})))
    print("; ".join(line))
    print(f"   tree: {r['output_root']} ({s.get('written', 0)} of {s['files']} files written); "
          f"report: {r['report_dir']}/report.html")
EOF
