#!/usr/bin/env bash
# The test command of README.md: set up from nothing, lint, run the test suite (GPU tests skip without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
# litellm fetches a price list from GitHub at import unless told to use its bundled copy (no internet here).
export LITELLM_LOCAL_MODEL_COST_MAP=True
./ci/setup.sh
. .venv/bin/activate
ruff check xlate backends tests bench
python ci/lint_imports.py  # the layering (.importlinter): a back edge or an import cycle fails here
python -m pytest -q -n "${XLATE_TEST_JOBS:-2}" --timeout 900 "$@"
