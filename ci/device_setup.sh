#!/usr/bin/env bash
# On the GPU machine (no registry there): install the carried wheels (.whl/, xlate's own wheel among them, built
# here with `pip wheel --no-deps -w .whl .`) into /tmp/site.   Usage: source ci/device_setup.sh
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site PATH=/tmp/site/bin:$PATH PYTHONUNBUFFERED=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export XLATE_CACHE_DIR=/tmp/xlate-cache LITELLM_LOCAL_MODEL_COST_MAP=True
