#!/usr/bin/env bash
# The GPU check of issues 28, 35 and 39, on a bare GPU machine (no network), from the checkout's root.
# Prepare here first (bench/gpu/prepare.sh); then two device calls (docs/performance.md#gpu):
#   first call (at most 480 s), in order: 1. the `gpu` test (the demo, S1-S6, float32 on CUDA
#     against the CPU); 2. the profile of one S5 and one S1 chunk, FlexAttention and the SDPA
#     paths; 3. the seven methods (S5, S1, S3, S6, first_token, S2, S4), ours, file order, chunks
#     sized from the card's memory; 4. lm-eval on S5, S1, S3; 5. the float32 agreement check:
#       run(command="bench/gpu/run_gpu.sh", carry=[".whl", ".gpu"], timeout_s=480)
#   second call: the mixed order (ours, the seven methods), then lm-eval on S6 and first_token:
#       run(command="CALL=2 bench/gpu/run_gpu.sh", carry=[".whl", ".gpu"], timeout_s=600)
# The arm is an 8B shape (random bf16 weights built on the card) on the 720 ENEM questions of
# 2019-2022, ours against lm-eval's HF backend on the same model object.
# Results go to $OUT (the device tool's folder) or bench/results: bench_gpu.json (the second call:
# bench_gpu_mixed.json, bench_gpu_peers.json), gpu_test.log, bench_gpu*.log, card.txt.
# Knobs (environment): CALL (1, or 2: the second call's defaults), SHAPE (llama-3-8b), BATCH (auto:
# sized from memory; or a number), LMEVAL_BATCH (32), LIMIT (720), ORDERS (file),
# STRATEGIES (S5,S1,S3,S6,first_token,S2,S4), LMEVAL_ORDERS (file), LMEVAL_STRATEGIES (S5,S1,S3),
# F32_CHECK (64: S5 on the first 64 questions in float32, both engines; 0: none), NO_PROFILE=1
# (no profile), DEADLINE (seconds from the start by which everything ends: 465, inside the first
# call's 480 s; 585 for CALL=2), SKIP_TEST=1 to skip the test, OUTNAME (bench_gpu),
# COMPILE_DECODE=1 (ours: the decode step through torch.compile / CUDA graphs; off by default).
# The bench gets what the test leaves of DEADLINE (BUDGET, if set, caps it).
set -uo pipefail
START=$SECONDS
cd "$(dirname "$0")/../.."
RESULTS=${OUT:-bench/results}
mkdir -p "$RESULTS"
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site
fi
export PYTHONPATH=$PWD/src:$PWD${PYTHONPATH:+:$PYTHONPATH}
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false PYTHONUNBUFFERED=1
export ENADE_GPU_TOKENIZER=${ENADE_GPU_TOKENIZER:-$PWD/.gpu/tokenizer}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$RESULTS/card.txt"
python3 -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)'

if [ -z "${SKIP_TEST:-}" ] && [ "${CALL:-1}" != 2 ]; then
  # One process (the suite's two xdist workers are for CI's two cores): addopts replaced.
  timeout 200 python3 -m pytest -m gpu tests/backends/test_gpu.py -q -p no:cacheprovider \
    -o 'addopts=--import-mode=importlib' \
    2>&1 | tee "$RESULTS/gpu_test.log"
fi

arm() {  # one run of the arm within what is left of DEADLINE; $1: the JSON's name
  local left=$(( ${DEADLINE:-465} - (SECONDS - START) ))
  local budget=$(( ${BUDGET:-$left} < left ? ${BUDGET:-$left} : left ))
  echo "bench budget ($1): ${budget} s"
  if [ "$budget" -lt 30 ]; then echo "no time left for the bench"; return 1; fi
  local batch=(--batch-size "${BATCH}")
  [ "${BATCH}" = auto ] && batch=(--batch-auto --batch-size "${LMEVAL_BATCH:-32}")
  local profile=--profile
  [ -n "${NO_PROFILE:-}" ] && profile=
  timeout "$budget" python3 -m enade_bench.bench --device cuda --shape "${SHAPE:-llama-3-8b}" \
    --tokenizer "$ENADE_GPU_TOKENIZER" --enem-dir .gpu/enem --dtype bfloat16 \
    "${batch[@]}" --lmeval-batch-size "${LMEVAL_BATCH:-32}" --limit "${LIMIT:-720}" --orders "${ORDERS}" \
    --lmeval-orders "${LMEVAL_ORDERS:-file}" --lmeval-strategies "${LMEVAL_STRATEGIES}" \
    --f32-check "${F32_CHECK}" ${profile} --strategies "${STRATEGIES}" --max-new-tokens 10 \
    ${COMPILE_DECODE:+--compile-decode} \
    --out "$RESULTS/$1.json" 2>&1 | grep -v -i -E "warn|tqdm|it/s" | tee "$RESULTS/$1.log"
  echo "bench exit ($1): ${PIPESTATUS[0]} (124: cut at its budget; the JSON keeps every strategy that finished)"
}

BATCH=${BATCH:-auto}
ALL=S5,S1,S3,S6,first_token,S2,S4
if [ "${CALL:-1}" = 2 ]; then  # the mixed order, ours; then lm-eval on the methods the first call left
  DEADLINE=${DEADLINE:-585} BUDGET=${BUDGET:-330} NO_PROFILE=1 F32_CHECK=0 ORDERS=mixed STRATEGIES=$ALL \
    LMEVAL_STRATEGIES= arm "${OUTNAME:-bench_gpu}_mixed"
  DEADLINE=${DEADLINE:-585} NO_PROFILE=1 F32_CHECK=0 ORDERS=file STRATEGIES=S6,first_token \
    LMEVAL_STRATEGIES=S6,first_token arm "${OUTNAME:-bench_gpu}_peers"
else
  ORDERS=${ORDERS:-file} STRATEGIES=${STRATEGIES:-$ALL} LMEVAL_STRATEGIES=${LMEVAL_STRATEGIES-S5,S1,S3} \
    F32_CHECK=${F32_CHECK:-64} arm "${OUTNAME:-bench_gpu}"
fi
