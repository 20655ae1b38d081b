#!/usr/bin/env bash
# One device call (nvidia-h200) for issue #16 items 4-5 and #18 item 5: every corpus kernel migrated to Triton and
# to HIP with --benchmark (verified, then timed against its CUDA source on the same GPU), the tables and JSON,
# the reports, and the GPU test of the benchmark itself.
# Usage on the device:  source ci/device_setup.sh && bash bench/h200_benchmark_session.sh   (results go to $OUT)
set -u
OUT=${OUT:-/tmp/xlate-out}; mkdir -p "$OUT"
log() { echo "[$(date +%T)] $*" | tee -a "$OUT/benchmark_session.log"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee -a "$OUT/benchmark_session.log"
log "git rev $(cat .xlate_rev 2>/dev/null || echo '?')"
log "benchmark GPU test"
python3 -m pytest -q -rfs --tb=short -p no:cacheprovider -m gpu tests/test_benchmark_kernel.py --timeout 600 \
  > "$OUT/benchmark_gpu_test_h200.log" 2>&1; tail -2 "$OUT/benchmark_gpu_test_h200.log" | tee -a "$OUT/benchmark_session.log"
log "benchmark_ports (${TARGETS:-triton,hip})"
python3 bench/benchmark_ports.py ${SRC:-examples/kernels} --targets ${TARGETS:-triton,hip} --examples ${EXAMPLES:-12} \
  --keep /tmp/benchmark-ports --out "$OUT/benchmark_ports_h200.json" > "$OUT/benchmark_ports_h200.log" 2>&1
echo "rc=$?" >> "$OUT/benchmark_ports_h200.log"
cat "$OUT/benchmark_ports_h200.log" | tee -a "$OUT/benchmark_session.log"
for t in triton hip; do
  [ -d /tmp/benchmark-ports/$t/xlate-report ] && cp -r /tmp/benchmark-ports/$t/xlate-report "$OUT/benchmark_report_$t"
done
log "done"
