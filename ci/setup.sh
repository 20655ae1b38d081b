#!/usr/bin/env bash
# Create .venv and install xlate with everything the tests use, from nothing. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
# litellm fetches a price list from GitHub at import unless told to use its bundled copy (no internet here).
export LITELLM_LOCAL_MODEL_COST_MAP=True
PY=${PYTHON:-python3}

# System toolchains (HIP for AMD via Debian's hipcc). Installed when root and missing; skipped otherwise.
if [ "${XLATE_SKIP_APT:-0}" != 1 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  need=()
  command -v hipcc >/dev/null || need+=(hipcc libamdhip64-dev)
  command -v chromium >/dev/null || need+=(chromium)  # the HTML report's browser test
  command -v bwrap >/dev/null || need+=(bubblewrap)  # the sandbox for untrusted builds and runs (backends/sandbox.py)
  [ -n "${XLATE_APT_EXTRA:-}" ] && need+=($XLATE_APT_EXTRA)
  if [ ${#need[@]} -gt 0 ]; then
    echo "ci/setup.sh: apt-get install ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null || true
    apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  fi
fi

if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
. .venv/bin/activate
python -m pip install -q --upgrade pip >/dev/null 2>&1 || true
# CPU torch first: here torch==2.13.0 comes from local disk; an unpinned torch would pull a multi-GB CUDA build.
python -c "import torch" 2>/dev/null || python -m pip install -q "torch==2.13.0" 2>&1 | grep -v '^WARNING: Location' || true
python -m pip install -q -e ".[cuda,triton,llm,ray,dev]" 2>&1 | grep -v '^WARNING: Location' || true
python -c "import xlate, torch, triton, litellm, ray, tree_sitter_cuda" || { echo "ci/setup.sh: install incomplete" >&2; exit 1; }
echo "ci/setup.sh: ready ($(python --version), torch $(python -c 'import torch;print(torch.__version__)'), hipcc: $(command -v hipcc || echo missing))"
