#!/usr/bin/env bash
# One device call (nvidia-h200) for the real-code work: the inferred specs of HeCBench kernels checked on the
# GPU and their rule ports verified (bench/verify_inferred.py, resumable), beside the GPU-marked tests (the
# sandbox ones included: bubblewrap is carried as a .deb and unpacked under /tmp). Results go to $OUT.
# Usage on the device:  source ci/device_setup.sh && bash bench/h200_infer_session.sh
set -u
OUT=${OUT:-/tmp/xlate-out}; mkdir -p "$OUT"
log() { echo "[$(date +%T)] $*" | tee -a "$OUT/session.log"; }
if ls .whl/bubblewrap_*.deb >/dev/null 2>&1; then
  mkdir -p /tmp/bw && dpkg -x .whl/bubblewrap_*.deb /tmp/bw && export PATH=/tmp/bw/usr/bin:$PATH
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee -a "$OUT/session.log"
echo "uid $(id -u), kernel $(uname -r)" | tee -a "$OUT/session.log"
python3 -m xlate.backends.sandbox > "$OUT/sandbox_detect.json" 2>&1; head -c 1500 "$OUT/sandbox_detect.json" | tee -a "$OUT/session.log"
for f in --unshare-user --unshare-pid --unshare-net; do  # which namespace kinds this runtime refuses
  if out=$(bwrap --ro-bind / / --dev /dev --proc /proc $f true 2>&1); then out=ok; fi
  echo "bwrap $f: ${out:0:300}" | tee -a "$OUT/session.log"
done
BUDGET=${BUDGET:-420}
# STATE keeps the journal between calls on a machine still warm (OUT is emptied before each call): a second call
# with the same STATE resumes where the first stopped
STATE=${STATE:-$OUT}; mkdir -p "$STATE"
log "verify_inferred (budget $BUDGET s) and GPU tests (${TESTS:-all}), side by side"
timeout $((BUDGET + 60)) python3 bench/verify_inferred.py .devcarry/infer_corpus --kernels .devcarry/infer_corpus/kernels.json \
  -j "${JOBS:-8}" --budget "$BUDGET" --out "$STATE/verify_inferred_h200.json" >> "$STATE/verify_inferred.log" 2>&1 &
if [ "${TESTS:-all}" != none ]; then
  # the timing test measures bandwidth: it runs alone after the rest (beside the workers it read 162 % of copy)
  timeout $((BUDGET + 60)) python3 -m pytest -v -rf --tb=short -m gpu -n 4 -p no:cacheprovider --timeout 240 \
    --ignore tests/test_benchmark_kernel.py ${TESTS_ARGS:-tests} > "$OUT/gpu_tests.log" 2>&1 &
fi
wait
if [ "${TESTS:-all}" != none ] && [ -z "${TESTS_ARGS:-}" ]; then
  python3 -m pytest -v -rf --tb=short -m gpu -p no:cacheprovider --timeout 240 tests/test_benchmark_kernel.py \
    >> "$OUT/gpu_tests.log" 2>&1
fi
tail -5 "$OUT/gpu_tests.log" 2>/dev/null | tee -a "$OUT/session.log"
tail -25 "$STATE/verify_inferred.log" | tee -a "$OUT/session.log"
[ "$STATE" != "$OUT" ] && cp "$STATE"/verify_inferred* "$OUT"/
log "done"
