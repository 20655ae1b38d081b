#!/usr/bin/env bash
# The main job on the embedded default: no GPU and no LLM key needed.
set -euo pipefail
cd "$(dirname "$0")/.."
./ci/setup.sh >/dev/null
. .venv/bin/activate
for f in examples/kernels/*.cu; do xlate inspect "$f"; done
