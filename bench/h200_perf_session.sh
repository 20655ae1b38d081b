#!/bin/bash
# device (H200): (1) re-verify the rule ports a lifter change touched, (2) time the verified Triton ports of the
# programs of issue #16 against their CUDA sources, both on the exported corpus subset.
# Here, first: `python bench/verify_inferred.py CORPUS --kernels LIST.json --export-subset .devcarry/infer_corpus` for
# the union of the lists (and of the timed programs' kernels), then copy them in as verify.json and, for rows to
# re-run on every step, verify_all.json. Next (after stop 38): verify.json = bench/data/rerun_triton_stop38_stale.json
# (the 21 verified ports the skip test changed, not re-run; keccaktreehash is not in the export); extra_ports.json
# lists the tile-reload, rolled and pipelined (num_stages) variants of bench/experiments. Stop 39 (an H100): verify.json =
# bench/data/rerun_triton_stop39_cuda_warps.json, extra_w4.json = each #16 port launched at 4 warps; calls: 1)
# GPU_TESTS="tests/test_triton_cuda_warps.py tests/test_triton_configs.py" VERIFY_BUDGET=280 KTIMEOUT=80
# TIME_BUDGET=0; 2) VERIFY_BUDGET=0 TIME_BUDGET=420 EXTRA=extra_w4.json PROGRAMS=fma,bitonic-sort,layernorm,
# accuracy,crs,dp PER_PROGRAM=2 (call 1's journal in .devcarry/state/). Next: verify.json =
# bench/data/rerun_triton_stop39_stale.json (106 stale rows); then the #16 programs with VERIFY_CONFIGS=1 (each
# port's verified configurations, the packed one included, chosen by timing; rows name the choice), EXTRA=
# extra_ports.json (aop's num_stages and convolutionSeparable's tile-reload variants). Done at stop 40 (an H100, six
# calls: bench/results/README.md). Next: verify.json = bench/data/rerun_triton_stop40_stale.json (45 rows: the
# ports stop 40's lifter changed and the rows not reached), then VERIFY_CONFIGS=1 PROGRAMS=fma,aop,layernorm,chemv. Stop 38's calls (an H100):
# 1) GPU_TESTS=tests/test_benchmark_kernel.py VERIFY_BUDGET=240 TIME_BUDGET=0; 2) VERIFY_BUDGET=0 TIME_BUDGET=330
# PROGRAMS=aop,dp,accuracy,layernorm,all-pairs-distance,epistasis,convolutionSeparable,crs,bitonic-sort,fma with
# call 1's journal in .devcarry/state/; 3) PROGRAMS=none PER_PROGRAM=0: the variants alone.
# Carry [".whl", ".devcarry"]: .whl holds xlate's wheel, the wheels the device image lacks and bubblewrap's .deb.
# An earlier call's journal put in .devcarry/state/ counts for the timing; $CORPUS/extra_ports.json (if there): port
# files of a lifter variant timed beside the ports (time_inferred.py --extra-ports). Everything goes to $OUT.
#   VERIFY_TARGETS (triton)  VERIFY_BUDGET (240 s)  KTIMEOUT (150 s)  PROGRAMS (crs,...)  PER_PROGRAM (3)
#   TIME_BUDGET (200 s)  EXTRA (extra_ports.json)  VERIFY_CONFIGS (set: time the ports as `xlate port` writes them,
#   every verified launch configuration kept and chosen by timing)  JOBS (15 per GPU)  GPU_TESTS (pytest -m gpu selection run first, e.g. a file or "-k graph")
set -u
mkdir -p /tmp/bw && dpkg -x .whl/bubblewrap_*.deb /tmp/bw && export PATH=/tmp/bw/usr/bin:$PATH
source ci/device_setup.sh
nvidia-smi --query-gpu=name,memory.used --format=csv,noheader
python3 -c "import triton; print('triton', triton.__version__)"
NGPU=$(nvidia-smi -L | grep -c '^GPU'); NGPU=$(( NGPU > 0 ? NGPU : 1 ))
DEFAULT_JOBS=$(( 15 * NGPU < $(nproc) - 1 ? 15 * NGPU : $(nproc) - 1 ))
CORPUS=.devcarry/infer_corpus
EXTRA=${EXTRA:-extra_ports.json}  # the variants timed beside the ports (a file of $CORPUS)
if [ -n "${GPU_TESTS:-}" ]; then
  timeout 240 python3 -m pytest -q -rfs --tb=short -m gpu -p no:cacheprovider --timeout 200 $GPU_TESTS \
    > "$OUT/gpu_tests.log" 2>&1; echo "gpu tests exit $?"; tail -5 "$OUT/gpu_tests.log"
fi
# verify_all.json (if there): every step (source, HIP, Triton); verify.json: VERIFY_TARGETS only. One journal.
for pass in all one; do
  list="$CORPUS/verify.json"; targets="${VERIFY_TARGETS:-triton}"
  if [ $pass = all ]; then list="$CORPUS/verify_all.json"; targets=source,hip,triton; fi
  [ -f "$list" ] && [ "${VERIFY_BUDGET:-240}" != 0 ] || continue
  timeout $(( ${VERIFY_BUDGET:-240} + ${KTIMEOUT:-150} + 30 )) python3 bench/verify_inferred.py "$CORPUS" \
    --kernels "$list" --targets "$targets" -j "${JOBS:-$DEFAULT_JOBS}" --budget "${VERIFY_BUDGET:-240}" \
    --timeout "${KTIMEOUT:-150}" --out "$OUT/verify_inferred.json" > "$OUT/verify_$pass.log" 2>&1
  echo "verify $pass exit $?"; tail -12 "$OUT/verify_$pass.log"
done
# the journal the timing reads: the committed one with this run's steps over it (a target this run checked wins)
python3 - "$OUT/verify_inferred.jsonl" > /tmp/journal.jsonl <<'EOF'
import json, sys
rows = {}
import glob
# the committed journal, then an earlier call's (.devcarry/state/, carried back), then this call's
for path in ["bench/results/verify_inferred_h200_current.jsonl", *sorted(glob.glob(".devcarry/state/*.jsonl")),
             sys.argv[1]]:
    try:
        lines = open(path).read().splitlines()
    except OSError:
        continue
    for line in lines:
        if line.strip():
            r = json.loads(line)
            key = (r["program"], r["file"], r["kernel"])
            rows[key] = {**rows.get(key, {}), **r}
for r in rows.values():
    print(json.dumps(r))
EOF
if [ "${TIME_BUDGET:-200}" != 0 ]; then
  timeout $(( ${TIME_BUDGET:-200} + 120 )) python3 bench/time_inferred.py "$CORPUS" --journal /tmp/journal.jsonl \
    --targets triton --programs "${PROGRAMS:-crs}" --per-program "${PER_PROGRAM:-3}" --max-seconds 3 \
    --budget "${TIME_BUDGET:-200}" --timeout 100 --out "$OUT/time_inferred_triton.json" \
    $([ -n "${VERIFY_CONFIGS:-}" ] && echo --verify-configs) \
    $([ -f "$CORPUS/$EXTRA" ] && echo --extra-ports "$CORPUS/$EXTRA") > "$OUT/time.log" 2>&1
  echo "time exit $?"; tail -30 "$OUT/time.log"
fi
