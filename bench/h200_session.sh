#!/usr/bin/env bash
# One device call (nvidia-h200) that runs every GPU check and benchmark and writes its results into $OUT
# (the device tool brings back 8 files at most): phase A runs the correctness work side by side, phase B
# times alone. Usage on the device:  source ci/device_setup.sh && bash bench/h200_session.sh
set -u
OUT=${OUT:-/tmp/xlate-out}; L=/tmp/xlate-logs; mkdir -p "$OUT" "$L"
log() { echo "[$(date +%T)] $*" | tee -a "$OUT/session.log"; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee -a "$OUT/session.log"
log "phase A: correctness (parallel)"
A=${A_LIMIT:-200}
timeout "$A" python3 bench/port_corpus.py --to hip --examples 20 --out "$OUT/port_hip_h200.json" > "$L/port_hip" 2>&1 &
timeout "$A" python3 bench/port_corpus.py --to triton --examples 16 --out "$OUT/port_triton_h200.json" > "$L/port_triton" 2>&1 &
timeout "$A" python3 bench/verify_corpus.py --examples 20 --record-dir /tmp/golden --out "$OUT/verify_corpus_h200.json" \
  > "$L/verify_corpus" 2>&1 &
timeout "$A" python3 -m pytest -v -rf --tb=short -m gpu -n 5 -p no:cacheprovider --timeout 200 tests > "$L/gpu_tests" 2>&1 &
wait
for f in port_hip port_triton verify_corpus gpu_tests; do log "== $f"; cat "$L/$f" >> "$OUT/session.log"; done
# golden files for the kernels examples/golden lacks (CPU replay of the CUDA outputs in CI)
new=$(cd /tmp/golden 2>/dev/null && for g in *.xg; do [ -e "$OLDPWD/examples/golden/$g" ] || echo "$g"; done)
[ -n "$new" ] && (cd /tmp/golden && tar czf "$OUT/new_golden.tgz" $new) && log "new golden files: $new"
log "phase B: timing (alone)"
# B1_LIMIT=0 skips the Triton-vs-CUDA timing (e.g. when only the correctness side changed)
[ "${B1_LIMIT:-150}" != 0 ] && timeout "${B1_LIMIT:-150}" python3 bench/triton_vs_cuda.py --out "$OUT/triton_vs_cuda_h200.json" >> "$OUT/session.log" 2>&1
timeout 40 python3 bench/backend_overhead.py --out "$OUT/backend_overhead_h200.json" >> "$OUT/session.log" 2>&1
timeout 60 python3 bench/fuzz_speed.py --examples 100 --out "$OUT/fuzz_speed_h200.json" >> "$OUT/session.log" 2>&1
log "done"
