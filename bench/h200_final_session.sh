#!/bin/bash
# device (H200): (1) the GPU test suite, (2) a prioritised verify_inferred re-run. Carry [".whl", ".devcarry"] (bench/results/README.md: .devcarry/head.tar, infer_corpus/kernels.json); resumable journal in .devcarry/state/
tar xf .devcarry/head.tar
mkdir -p /tmp/bw && dpkg -x .whl/bubblewrap_*.deb /tmp/bw && export PATH=/tmp/bw/usr/bin:$PATH
source ci/device_setup.sh
mkdir -p /tmp/fin
nvidia-smi --query-gpu=name,memory.used --format=csv,noheader
# several GPUs (an -x2/-x4/-x8 kind): verify_inferred pins its workers to the cards evenly; 15 workers per card, as
# many as one H200's 16 cores kept busy, up to the machine's cores
NGPU=$(nvidia-smi -L | grep -c '^GPU'); NGPU=$(( NGPU > 0 ? NGPU : 1 ))
DEFAULT_JOBS=$(( 15 * NGPU < $(nproc) - 1 ? 15 * NGPU : $(nproc) - 1 ))
python3 -c "import triton; print('triton', triton.__version__)"
if [ "${GPU_TESTS:-1}" = 1 ]; then
  timeout "${TEST_LIMIT:-170}" python3 -m pytest -q -m gpu -p no:cacheprovider -n 8 tests ${TEST_SELECT:-} > /tmp/fin/gpu_tests.log 2>&1
  echo "gpu tests exit $?"; tail -3 /tmp/fin/gpu_tests.log
fi
if [ -f .devcarry/state/verify_inferred_h200.jsonl ]; then cp .devcarry/state/verify_inferred_h200.jsonl /tmp/fin/; fi
timeout "${OUTER:-400}" python3 bench/verify_inferred.py .devcarry/infer_corpus --kernels .devcarry/infer_corpus/kernels.json \
  -j "${JOBS:-$DEFAULT_JOBS}" --budget "${BUDGET:-330}" --timeout "${KTIMEOUT:-200}" --out /tmp/fin/verify_inferred_h200.json > /tmp/fin/log.txt 2>&1
echo "exit $?"; wc -l /tmp/fin/verify_inferred_h200.jsonl; grep -c . /tmp/fin/log.txt
cp /tmp/fin/* "$OUT"/ 2>/dev/null
