#!/usr/bin/env bash
# One GPU session of the engine, prepared to run unattended inside a 10-minute command:
#   1. correctness on the card (tests/test_engine_cuda.py, the samplers' CUDA tests; CUDA
#      graphs are used by the slice only where their own test passes);
#   2. benchmarks/bench_engine.py (model-steps per second per shape and group size), then
#      benchmarks/profile_engine.py (where the step's time goes for the shapes that missed);
#   3. a slice of the APE vs NoPE sweep at the paper's budget (`budget slice`), which ends on
#      its own and writes each finished job's record at once.
# Everything it produces lands in $OUT (at most 8 files): check.log, bench.jsonl, bench.log,
# profile.jsonl, slice.log, budget-records.tar (the records folder after the slice, committed ones
# included, to unpack into results/) and slice-states.tar (unfinished small jobs' states).
#
# Usage (on the GPU machine, from the repository root of a clean checkout of COMMIT):
#   LENGTHGEN_GIT_COMMIT=<commit> OUT=<folder> bash benchmarks/gpu_engine_session.sh \
#       [BENCH_SECONDS] [TOTAL_SECONDS] [WORKERS]
# The slice gets whatever is left of TOTAL_SECONDS (default 540, inside a 600-second command)
# after the checks, the benchmark and the profile, less a minute for its last records.
# Provenance: the device tool's copy carries the repository's .git as it was when the session
# began, so git there names that older commit "+dirty" with the changed lib/ files;
# `budget.code_commit` recovers the commit from them, and records carry `lib_digest`.
# LENGTHGEN_GIT_COMMIT is read only where no git repository is found at all.
set -uo pipefail
BENCH_SECONDS=${1:-100}
TOTAL_SECONDS=${2:-540}
WORKERS=${3:-3}
export PYTHONPATH=lib PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1 MPLBACKEND=Agg
: "${OUT:?set OUT to the folder for the results}"
start=$(date +%s)
PY=${PYTHON:-python3}
{ nvidia-smi -L; $PY -c "import torch; print('torch', torch.__version__, torch.version.cuda)"; } \
  2>&1 | tee "$OUT/check.log"

echo "== 1. correctness on the card" | tee -a "$OUT/check.log"
# --noconftest: the repository's conftest.py imports the notebook tools, absent on the card
timeout 150 $PY -m pytest -q -x -p no:cacheprovider --noconftest tests/test_engine_cuda.py \
  tests/test_engine_sampling.py -k "(cuda or card) and not graph" 2>&1 | tail -15 \
  | tee -a "$OUT/check.log"
if [ "${PIPESTATUS[0]}" != 0 ]; then
  echo "correctness check failed: nothing measured" | tee -a "$OUT/check.log"; exit 1
fi
# CUDA graphs: the slice replays its steps as graphs only where they give the eager steps
GRAPHS=""
timeout 120 $PY -m pytest -q -x -p no:cacheprovider --noconftest tests/test_engine_cuda.py \
  -k graph 2>&1 | tail -15 | tee -a "$OUT/check.log"
if [ "${PIPESTATUS[0]}" = 0 ]; then GRAPHS="--graphs"; fi
echo "slices use CUDA graphs: ${GRAPHS:-no}" | tee -a "$OUT/check.log"

echo "== 2. benchmark ($BENCH_SECONDS s)" | tee -a "$OUT/check.log"
timeout $((BENCH_SECONDS + 60)) $PY benchmarks/bench_engine.py --device cuda --seconds 1.0 \
  --rounds 1 --budget "$BENCH_SECONDS" --out "$OUT/bench.jsonl" > "$OUT/bench.log" 2>&1
echo "bench rc $? after $(( $(date +%s) - start )) s" | tee -a "$OUT/check.log"

echo "== 2b. profile of the two shapes that missed their targets" | tee -a "$OUT/check.log"
timeout 150 $PY benchmarks/profile_engine.py --device cuda > "$OUT/profile.jsonl" \
  2>> "$OUT/check.log"
echo "profile rc $? after $(( $(date +%s) - start )) s" | tee -a "$OUT/check.log"

left=$(( TOTAL_SECONDS - ($(date +%s) - start) - 60 ))
if [ "$left" -lt 60 ]; then left=60; fi
SLICE_MINUTES=$(python3 -c "print(round($left / 60, 2))")
echo "== 3. sweep slice ($SLICE_MINUTES min, $WORKERS workers)" | tee -a "$OUT/check.log"
root=results   # resumes from the committed records: the slice trains what they leave
timeout $(( left + 90 )) $PY -m lengthgen budget slice --scale gpu \
  --minutes "$SLICE_MINUTES" --workers "$WORKERS" --root "$root" $GRAPHS \
  --states-in .slice-states --states-out /tmp/slice-states > "$OUT/slice.log" 2>&1
echo "slice rc $? after $(( $(date +%s) - start )) s" | tee -a "$OUT/check.log"
tar -C "$root" --exclude .claims -cf "$OUT/budget-records.tar" huang-fig1-budget
ls "$root"/huang-fig1-budget/gpu | wc -l | sed 's/^/records: /' | tee -a "$OUT/check.log"
# the states of unfinished small jobs (at most 15 MiB), for the next slice: unpack into
# .slice-states/ here and name it in the next call's `carry`
if [ -d /tmp/slice-states ]; then tar -C /tmp -cf "$OUT/slice-states.tar" slice-states; fi
