#!/usr/bin/env bash
# The main job on the embedded default: no GPU and no LLM key needed.
set -euo pipefail
cd "$(dirname "$0")/.."
# litellm fetches a price list from GitHub at import unless told to use its bundled copy (no internet here).
export LITELLM_LOCAL_MODEL_COST_MAP=True
./ci/setup.sh >/dev/null
. .venv/bin/activate
for f in examples/kernels/*.cu; do xlate inspect "$f"; done
