#!/usr/bin/env bash
# The test command of README.md: set up from nothing, lint, run the test suite (GPU tests skip without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
./ci/setup.sh
. .venv/bin/activate
ruff check xlate backends tests bench
python -m pytest -q -n "${XLATE_TEST_JOBS:-2}" --timeout 900 "$@"
