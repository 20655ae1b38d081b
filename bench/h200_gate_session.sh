#!/usr/bin/env bash
# One device call (nvidia-h200) for the gate's own costs: the sandbox tests with a GPU run inside bubblewrap,
# the sandbox's overhead per fuzz run, and the fuzz throughput table (bench/fuzz_speed.py), profiled.
# Usage on the device:  source ci/device_setup.sh && bash bench/h200_gate_session.sh   (results go to $OUT)
set -u
OUT=${OUT:-/tmp/xlate-out}; mkdir -p "$OUT"
log() { echo "[$(date +%T)] $*" | tee -a "$OUT/gate_session.log"; }
if ls .whl/bubblewrap_*.deb >/dev/null 2>&1; then
  mkdir -p /tmp/bw && dpkg -x .whl/bubblewrap_*.deb /tmp/bw && export PATH=/tmp/bw/usr/bin:$PATH
fi
REPO=$PWD
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$OUT/gate_session.log"
log "git rev $(cat .xlate_rev 2>/dev/null || echo '?')"
if [ "${SANDBOX:-1}" = 1 ]; then
  # from outside the checkout: the installed xlate (carried wheel) is what the sandboxed workers import
  (cd /tmp && python3 -m xlate.backends.sandbox) > "$OUT/sandbox_detect_h200.json" 2>&1
  log "sandbox GPU tests"
  (cd /tmp && python3 -P -m pytest -v -rfs --tb=short -p no:cacheprovider --import-mode=append --rootdir "$REPO" \
     "$REPO/tests/test_sandbox_gpu.py" "$REPO/tests/test_sandbox.py" --timeout 600) > "$OUT/sandbox_tests_h200.log" 2>&1
  tail -5 "$OUT/sandbox_tests_h200.log" | tee -a "$OUT/gate_session.log"
  if [ "${OVERHEAD:-1}" = 1 ]; then
    log "sandbox overhead"
    (cd /tmp && python3 -P "$REPO/bench/sandbox_overhead.py" --repeat ${REPEAT:-3} --examples 20 \
       --out "$OUT/sandbox_overhead_h200.json") > "$OUT/sandbox_overhead_h200.log" 2>&1
    tail -20 "$OUT/sandbox_overhead_h200.log" | tee -a "$OUT/gate_session.log"
  fi
fi
log "fuzz_speed (cached runs profiled)"
python3 bench/fuzz_speed.py --examples 100 --out "$OUT/fuzz_speed_h200.json" --profile "$OUT/fuzz_speed_profiles" \
  > "$OUT/fuzz_speed_h200.log" 2>&1
cat "$OUT/fuzz_speed_h200.log" | tee -a "$OUT/gate_session.log"
if [ "${MUTANTS:-1}" = 1 ]; then
  log "mutation suite, CUDA half, and its kill rates"
  python3 -m pytest -v -rfs --tb=short -p no:cacheprovider -n 5 --timeout 300 tests/test_mutation_suite_gpu.py \
    > "$OUT/mutation_suite_gpu_h200.log" 2>&1; echo "pytest rc=$?" >> "$OUT/mutation_suite_gpu_h200.log"
  tail -2 "$OUT/mutation_suite_gpu_h200.log" | tee -a "$OUT/gate_session.log"
  python3 bench/kill_rate.py --side cuda --out "$OUT/kill_rate_cuda_h200.json" > "$OUT/kill_rate_cuda_h200.log" 2>&1
  tail -6 "$OUT/kill_rate_cuda_h200.log" | tee -a "$OUT/gate_session.log"
fi
if [ -n "${MIGRATE_OLD:-}" ]; then
  # the corpus migrated to Triton with verification, before (the wheel in $MIGRATE_OLD) and after (installed)
  for which in before after; do
    site=/tmp/site; [ $which = before ] && { site=/tmp/site_old; python3 -m pip install -q --no-index --no-deps \
      --target $site "$MIGRATE_OLD"/*.whl .whl/tree_sitter*.whl .whl/pebble*.whl; }
    rm -rf /tmp/mig-$which /tmp/mig-cache-$which
    start=$(date +%s.%N)
    XLATE_CACHE_DIR=/tmp/mig-cache-$which TRITON_CACHE_DIR=/tmp/mig-cache-$which/triton PYTHONPATH=$site \
      python3 $site/bin/xlate migrate examples/kernels --to triton -o /tmp/mig-$which -j ${MIGRATE_JOBS:-8} \
      > "$OUT/migrate_$which.log" 2>&1
    rc=$?; end=$(date +%s.%N)
    cp /tmp/mig-$which/xlate-report/report.json "$OUT/migrate_${which}_report.json" 2>/dev/null
    log "migrate examples/kernels --to triton ($which): rc $rc, wall $(python3 -c "print(round($end-$start,1))") s"
    tail -3 "$OUT/migrate_$which.log" | tee -a "$OUT/gate_session.log"
  done
fi
log "done"
# the device tool brings back a handful of files: everything else travels in one archive (ARCHIVE=0: the caller does)
[ "${ARCHIVE:-1}" = 1 ] && (cd "$OUT" && tar czf gate_session.tgz --exclude gate_session.tgz --exclude gate_session.log * && \
  find . -mindepth 1 -maxdepth 1 ! -name gate_session.tgz ! -name gate_session.log -exec rm -rf {} +)
