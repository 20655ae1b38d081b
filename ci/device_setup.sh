#!/usr/bin/env bash
# On the GPU machine (no registry there): install carried wheels (.whl/) and xlate itself into /tmp/site.
# Usage: source ci/device_setup.sh
set -e
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile --target /tmp/site . >/dev/null 2>&1 \
  || python3 -m pip install --no-index --no-deps --no-build-isolation --target /tmp/site .
export PYTHONPATH=/tmp/site PATH=/tmp/site/bin:$PATH PYTHONUNBUFFERED=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export XLATE_CACHE_DIR=/tmp/xlate-cache
set +e
