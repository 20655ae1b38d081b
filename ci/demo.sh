#!/usr/bin/env bash
# The main job on the embedded default (no GPU, no LLM key): migrate the example kernel library
#  1. to Triton, each port verified on this CPU (Triton interpreter) against golden outputs recorded from the
#     CUDA originals on an H200 (examples/golden) and the NumPy references;
#  2. to HIP, each port compile-checked with hipcc for gfx90a (running HIP needs a GPU: verdict unverified).
# Reports: out/demo/{triton,hip}/xlate-report/report.html. Exit 0 when both runs completed (the reports list
# every kernel that was not migrated and why); non-zero on a usage error or a crash.
set -uo pipefail
cd "$(dirname "$0")/.."
export LITELLM_LOCAL_MODEL_COST_MAP=True  # litellm would fetch a price list from GitHub at import
./ci/setup.sh >/dev/null || exit 1
. .venv/bin/activate
for target in triton hip; do
  extra=(--against examples/golden)
  [ "$target" = hip ] && extra=(--compile-check --arch gfx90a)
  echo "== xlate migrate examples/kernels --to $target ${extra[*]}"
  xlate migrate examples/kernels --to "$target" -o "out/demo/$target" "${extra[@]}" --fresh
  rc=$?
  # 0 all verified, 1 something rejected or not translated, 3 could not verify here: all are results
  case $rc in 0|1|3) ;; *) echo "ci/demo.sh: xlate migrate failed (exit $rc)" >&2; exit "$rc" ;; esac
done
echo "reports: out/demo/triton/xlate-report/report.html out/demo/hip/xlate-report/report.html"
