#!/usr/bin/env bash
# One GPU allotment of the engine, as two chained commands on the same warm machine, each
# inside its 10-minute limit, so that a job of the sweep can use the card in both:
#
#   first call:   OUT=<folder> bash benchmarks/gpu_engine_session.sh \
#                     [BENCH_SECONDS] [TOTAL_SECONDS] [WORKERS] [NEXT_SECONDS]
#   chained call: OUT=<folder> bash benchmarks/gpu_engine_session.sh --continue \
#                     [TOTAL_SECONDS] [WORKERS]
#
# The first call: 1. correctness on the card (tests/test_engine_cuda.py, the samplers' CUDA
# tests; CUDA graphs are used only where their own test passes; where the CUDA tests of
# Izzo's regression samplers or limit-style step fail, the Izzo figures leave the queue);
# 2. benchmarks/bench_engine.py and profile_engine.py (skipped with BENCH_SECONDS=0: the
# slice then plans with the built-in H200 rates, lengthgen.runs.rates); 3. the queue of
# planned figures (`budget queue`): the paper-budget sweep first, then the other planned figures cheapest per reproduced id first
# (`budget queue --list` prints the order), each starting a job only if it can finish in this
# call's time left plus NEXT_SECONDS of the chained call, at the rates just measured, so the
# figures after the first fill the tail of the slice. The chained call (`--continue`,
# TOTAL_SECONDS default 200) resumes every unfinished job from the local disk and starts only
# jobs that finish before it ends. With NEXT_SECONDS=0 (no chained call) the first call alone
# plans. QUEUE=id,id runs only those planned figures (default: every one); SCALE=test runs
# the queue at test scale (what a CPU can check end to end: the card's tests then skip).
#
# The machine's local disk keeps what the calls share ($LOCAL, default /tmp/lengthgen-session):
# the queued figures' records folders (seeded from results/ by the first call), every
# unfinished job's state (no size limit, one folder per figure), the trained weights that
# figures share (XDG_CACHE_HOME=$LOCAL/cache: the store of lengthgen.runs.trained, in which
# Fig. 5 and Table 1 find the models Fig. 4 trained), the benchmark's rates and whether graphs
# passed. Each call's $OUT holds at most 8 files, 16 MiB each, 64 MiB in all:
# its logs, budget-records.tar (the queued figures' records folders, committed records
# included, to unpack into results/) and, in the files left, the unfinished states packed
# smallest first (`budget pack --queue`: slice-states-K.pt). Hand the packs to the next
# allotment in .slice-states/ (name it in the run's `carry`); the queue reads them there.
#
# Provenance: the device tool's copy carries the repository's .git as it was when the session
# began, so git there names that older commit "+dirty" with the changed lib/ files;
# `runs.provenance.code_commit` recovers the commit from them, and records carry `lib_digest`.
# LENGTHGEN_GIT_COMMIT is read only where no git repository is found at all.
set -uo pipefail
export PYTHONPATH=lib PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1 MPLBACKEND=Agg
: "${OUT:?set OUT to the folder for the results}"
LOCAL=${LOCAL:-/tmp/lengthgen-session}
export XDG_CACHE_HOME="$LOCAL/cache"   # the store of shared trained weights (runs.trained)
PY=${PYTHON:-python3}
SCALE=${SCALE:-gpu}
start=$(date +%s)
CONTINUE=0
if [ "${1:-}" = "--continue" ]; then CONTINUE=1; shift; fi
if [ "$CONTINUE" = 1 ]; then
  BENCH_SECONDS=0; TOTAL_SECONDS=${1:-200}; WORKERS=${2:-3}; NEXT_SECONDS=0
  LOG="$OUT/check2.log"; SLICE_LOG="$OUT/slice2.log"
  if [ ! -d "$LOCAL/results" ]; then
    echo "no first call on this machine ($LOCAL/results is missing): nothing to continue" \
      | tee "$LOG"; exit 1
  fi
else
  BENCH_SECONDS=${1:-100}; TOTAL_SECONDS=${2:-540}; WORKERS=${3:-3}; NEXT_SECONDS=${4:-0}
  LOG="$OUT/check.log"; SLICE_LOG="$OUT/slice.log"
  mkdir -p "$LOCAL/results" "$LOCAL/states"
  # the queue's figures, in its order (the chained call runs the same ones)
  $PY -m lengthgen budget queue --scale "$SCALE" ${QUEUE:+--figures "$QUEUE"} --list \
    > "$LOCAL/queue.tsv" 2>> "$LOG" || { echo "no queue" | tee -a "$LOG"; exit 1; }
  # the whole queue, for the tar and the packs (queue.tsv may lose figures, step 1)
  cp "$LOCAL/queue.tsv" "$LOCAL/queue-all.tsv"
  # the committed records, and any a call on this machine wrote before (never overwritten)
  for id in $(cut -f1 "$LOCAL/queue.tsv"); do
    cp -rn "results/$id" "$LOCAL/results/" 2>/dev/null || true
  done
fi
FIGURES=$(cut -f1 "$LOCAL/queue.tsv" | paste -sd, -)
ALL_FIGURES=$(cut -f1 "$LOCAL/queue-all.tsv" 2>/dev/null | paste -sd, -)
ALL_FIGURES=${ALL_FIGURES:-$FIGURES}
{ nvidia-smi -L; $PY -c "import torch; print('torch', torch.__version__, torch.version.cuda)"; } \
  2>&1 | tee -a "$LOG"

if [ "$CONTINUE" = 0 ]; then
  echo "== 1. correctness on the card" | tee -a "$LOG"
  # --noconftest: the repository's conftest.py imports the notebook tools, absent on the card
  timeout 150 $PY -m pytest -q -x -p no:cacheprovider --noconftest tests/test_engine_cuda.py \
    tests/test_engine_sampling.py -k "(cuda or card) and not graph" 2>&1 | tail -15 \
    | tee -a "$LOG"
  if [ "${PIPESTATUS[0]}" != 0 ]; then
    echo "correctness check failed: nothing measured" | tee -a "$LOG"; exit 1
  fi
  # Izzo's regression samplers and its stacked limit-style step as a CUDA graph, in fp32
  # (new, never yet run on a card): where either test fails, the Izzo figures leave this
  # allotment's queue (the chained call's too), and the rest of the session goes on
  timeout 120 $PY -m pytest -q -p no:cacheprovider --noconftest \
    tests/test_device_regression.py tests/test_engine_cuda.py -k "cuda or limit_style" \
    2>&1 | tail -15 | tee -a "$LOG"
  if [ "${PIPESTATUS[0]}" != 0 ]; then
    echo "Izzo's samplers or limit-style step failed on the card: the izzo-* figures are" \
      "left out" | tee -a "$LOG"
    grep -v '^izzo-' "$LOCAL/queue.tsv" > "$LOCAL/queue.tsv.new" || true
    mv "$LOCAL/queue.tsv.new" "$LOCAL/queue.tsv"
    FIGURES=$(cut -f1 "$LOCAL/queue.tsv" | paste -sd, -)
  fi
  # CUDA graphs: the slice replays its steps as graphs only where they give the eager steps
  rm -f "$LOCAL/graphs"
  timeout 120 $PY -m pytest -q -x -p no:cacheprovider --noconftest tests/test_engine_cuda.py \
    -k "graph and not limit_style" 2>&1 | tail -15 | tee -a "$LOG"
  if [ "${PIPESTATUS[0]}" = 0 ]; then touch "$LOCAL/graphs"; fi
  # torch.compile of the step (COMPILE=1, opt-in until a card has measured it: each group's
  # first step compiles, 30-90 s on a CPU): used only where the card's compile tests pass
  rm -f "$LOCAL/compile"
  if [ "${COMPILE:-0}" = 1 ]; then
    timeout 300 $PY -m pytest -q -x -p no:cacheprovider --noconftest tests/test_engine_compile.py \
      -k gpu 2>&1 | tail -15 | tee -a "$LOG"
    if [ "${PIPESTATUS[0]}" = 0 ]; then touch "$LOCAL/compile"; fi
  fi
  BENCH_COMPILE=""; if [ -f "$LOCAL/compile" ]; then BENCH_COMPILE="--compile"; fi
  if [ "$BENCH_SECONDS" -gt 0 ]; then
    echo "== 2. benchmark ($BENCH_SECONDS s)" | tee -a "$LOG"
    timeout $((BENCH_SECONDS + 60)) $PY benchmarks/bench_engine.py --device cuda --seconds 1.0 \
      --rounds 1 --budget "$BENCH_SECONDS" --records results $BENCH_COMPILE \
      --out "$OUT/bench.jsonl" > "$OUT/bench.log" 2>&1
    echo "bench rc $? after $(( $(date +%s) - start )) s" | tee -a "$LOG"
    # the slices plan with these rates (this card, this code) where the benchmark gave any
    if grep -q '"kind": "engine' "$OUT/bench.jsonl" 2>/dev/null; then
      cp "$OUT/bench.jsonl" "$LOCAL/bench.jsonl"
    fi
    echo "== 2b. profile of the two shapes that missed their targets" | tee -a "$LOG"
    timeout 150 $PY benchmarks/profile_engine.py --device cuda > "$OUT/profile.jsonl" \
      2>> "$LOG"
    echo "profile rc $? after $(( $(date +%s) - start )) s" | tee -a "$LOG"
  fi
fi
GRAPHS=""; if [ -f "$LOCAL/graphs" ]; then GRAPHS="--graphs"; fi
COMPILE_FLAG=""; if [ -f "$LOCAL/compile" ]; then COMPILE_FLAG="--compile"; fi
RATES=""; if [ -f "$LOCAL/bench.jsonl" ]; then RATES="--rates $LOCAL/bench.jsonl"; fi
echo "slices use CUDA graphs: ${GRAPHS:-no}; torch.compile: ${COMPILE_FLAG:-no}; rates: ${RATES:-built-in}" | tee -a "$LOG"

# the slice ends a minute before the call, for its last records, the tar and the packs
left=$(( TOTAL_SECONDS - ($(date +%s) - start) - 60 ))
if [ "$left" -lt 30 ]; then left=30; fi
SLICE_MINUTES=$($PY -c "print(round($left / 60, 2))")
THEN_MINUTES=$($PY -c "print(round(max($NEXT_SECONDS - 60, 0) / 60, 2))")
echo "== 3. queue slice ($SLICE_MINUTES min, then $THEN_MINUTES min chained," \
  "$WORKERS workers): $FIGURES" | tee -a "$LOG"
# timeout sends SIGTERM: the queue stops its workers at their next step, records what they
# finished and keeps the unfinished states; -k: SIGKILL a minute later if it has not ended
if [ -n "$FIGURES" ]; then
  timeout -k 60 $(( left + 60 )) $PY -m lengthgen budget queue --scale "$SCALE" \
    --figures "$FIGURES" --minutes "$SLICE_MINUTES" --then-minutes "$THEN_MINUTES" \
    --workers "$WORKERS" --root "$LOCAL/results" $GRAPHS $COMPILE_FLAG $RATES \
    --states-in .slice-states --states "$LOCAL/states" \
    > "$SLICE_LOG" 2>&1
  echo "queue rc $? after $(( $(date +%s) - start )) s" | tee -a "$LOG"
  tail -3 "$SLICE_LOG" | tee -a "$LOG"
else
  echo "no figure left in the queue: nothing trained" | tee -a "$LOG"
fi
# the records and states of every figure of the whole queue (one left out of this call's
# queue keeps what an earlier allotment handed on)
FOLDERS=$(cd "$LOCAL/results" && for id in ${ALL_FIGURES//,/ }; do [ -d "$id" ] && echo "$id"; done)
tar -C "$LOCAL/results" --exclude .claims --exclude .lock --exclude '.tmp-*' \
  -cf "$OUT/budget-records.tar" $FOLDERS
while IFS=$'\t' read -r id scale _; do
  n=$(ls "$LOCAL/results/$id/$scale" 2>/dev/null | grep -c '\.json$')
  echo "records of $id/$scale: $n" | tee -a "$LOG"
done < "$LOCAL/queue-all.tsv"
find "$LOCAL/states" -name '*.pt' | wc -l | sed 's/^/unfinished states on this machine: /' \
  | tee -a "$LOG"
# last: the states, smallest first, into the files $OUT has left (counted by `budget pack`)
$PY -m lengthgen budget pack --queue --scale "$SCALE" --figures "$ALL_FIGURES" \
  --root "$LOCAL/results" --states .slice-states --states "$LOCAL/states" --out "$OUT" 2>&1 \
  | tail -c 2000 >> "$LOG"
