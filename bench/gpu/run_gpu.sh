#!/usr/bin/env bash
# The GPU check (issues 28, 35, 39, 49) on a bare GPU machine (no network), from the checkout's root.
# Prepare here first (bench/gpu/prepare.sh); then the device calls (docs/performance.md#gpu):
#   call 1, the comparisons, first and alone (at most 420 s of the lent 15 minutes), Llama-3-8B's shape
#     at batch 32, in order: warm-up (compilation); ours S5, lm-eval S5; ours S1, lm-eval S1; the
#     float32 check on 32 questions:
#       run(command="bench/gpu/run_gpu.sh", carry=[".whl", ".gpu"], timeout_s=420)
#   call 2, optional, what is left: the `gpu` test; the profile, the batch-size probe, ours and
#     lm-eval on S3, S6, first_token and ours on S2, S4 (file order); then the mixed order, ours,
#     the seven methods, at the probe's batch:
#       run(command="CALL=2 bench/gpu/run_gpu.sh", carry=[".whl", ".gpu"], timeout_s=600)
# The arm is an 8B shape (random bf16 weights built on the card) on the 720 ENEM questions of
# 2019-2022, ours against lm-eval's HF backend on the same model object.  Each phase writes its
# JSON the moment it ends (`phases` in the JSON: their order and seconds).
# Results go to $OUT (the device tool's folder) or bench/results: bench_gpu.json (call 2:
# bench_gpu_more.json, bench_gpu_mixed.json), gpu_test.log, bench_gpu*.log, card.txt.
# Knobs (environment): CALL (1 or 2), SHAPE (llama-3-8b), BATCH (call 1: 32; call 2: auto, sized from
# memory), LMEVAL_BATCH (32), LIMIT (720), STRATEGIES, LMEVAL_STRATEGIES, ORDERS (the call's), F32_CHECK
# (call 1: 32 questions; 0: none), DEADLINE (seconds from the start by which everything ends: 405 for
# call 1, 585 for call 2), SKIP_TEST=1, OUTNAME (bench_gpu), COMPILE_DECODE=1 (ours: the decode step
# through torch.compile / CUDA graphs; off by default).
# DEVICE=cpu: the dry run on a CPU (no card): SmolLM2's shape with 1 layer, 4 questions, 2 new tokens,
# float32, batch 2, the shared data's ENEM booklets (LAYERS, LIMIT, ...  as above), ours under the CUDA
# policy with FlexAttention compiled as on the card by CARD_PATH (aot_eager; inductor: the real Inductor,
# static shapes; none: the CPU policy); it prints the phases of each call in order:
#   DEVICE=cpu bench/gpu/run_gpu.sh; DEVICE=cpu CARD_PATH=inductor bench/gpu/run_gpu.sh; DEVICE=cpu CALL=2 ...
# The log keeps warnings (a graph's fallback is one) and is written line by line; TORCH_LOGS=recompiles
# logs each recompilation; card.txt and the JSON's `toolchain` record gcc, the Python headers, Triton.
set -uo pipefail
START=$SECONDS
cd "$(dirname "$0")/../.."
RESULTS=${OUT:-bench/results}
PY=${PY:-python3}
DEVICE=${DEVICE:-cuda}
mkdir -p "$RESULTS"
if ls .whl/*.whl >/dev/null 2>&1 && [ "$DEVICE" = cuda ]; then
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site
fi
export PYTHONPATH=$PWD/src:$PWD${PYTHONPATH:+:$PYTHONPATH}
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false PYTHONUNBUFFERED=1
export TORCH_LOGS=${TORCH_LOGS-recompiles}
if [ "$DEVICE" = cpu ]; then  # the dry run: a tiny shape, the packaged tokenizer, the shared data
  SMALL=(--layers "${LAYERS:-1}")
  : "${SHAPE:=smollm2-135m}" "${LIMIT:=4}" "${DTYPE:=float32}" "${MAX_NEW:=2}" "${LMEVAL_BATCH:=2}"
  : "${ENEM_DIR:=${ENADE_BENCH_SHARED_DATA:-../shared/data}/enem/questions/pt-br}"
  [ "${CALL:-1}" = 2 ] || : "${BATCH:=2}" "${F32_CHECK:=2}"
  CARD_PATH=${CARD_PATH:-aot_eager}; [ "$CARD_PATH" = none ] && CARD_PATH=
  [ -d .gpu/tokenizer ] || ENADE_GPU_TOKENIZER=${ENADE_GPU_TOKENIZER:-$("$PY" -c 'from bench.speed.shapes import default_tokenizer_dir as d; print(d())')}
  echo "cpu (dry run)" | tee "$RESULTS/card.txt"
else
  SMALL=() CARD_PATH=
  ENEM_DIR=${ENEM_DIR:-.gpu/enem}
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$RESULTS/card.txt"
fi
export ENADE_GPU_TOKENIZER=${ENADE_GPU_TOKENIZER:-$PWD/.gpu/tokenizer}
"$PY" -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)'
"$PY" -c 'from bench.speed.gpu_checks import toolchain; print("toolchain", toolchain())' | tee -a "$RESULTS/card.txt"

arm() {  # one run of the arm within what is left of DEADLINE; $1: the JSON's name
  local left=$(( DEADLINE - (SECONDS - START) ))
  echo "bench budget ($1): ${left} s"
  if [ "$left" -lt 30 ]; then echo "no time left for the bench"; return 1; fi
  local batch=(--batch-size "${BATCH}")
  [ "${BATCH}" = auto ] && batch=(--batch-auto --batch-size "${LMEVAL_BATCH:-32}")
  timeout "$left" "$PY" -m bench --device "$DEVICE" --shape "${SHAPE:-llama-3-8b}" "${SMALL[@]}" \
    --tokenizer "$ENADE_GPU_TOKENIZER" ${ENEM_DIR:+--enem-dir "$ENEM_DIR"} --dtype "${DTYPE:-bfloat16}" \
    "${batch[@]}" --lmeval-batch-size "${LMEVAL_BATCH:-32}" --limit "${LIMIT:-720}" --orders "${ORDERS}" \
    --lmeval-orders file --lmeval-strategies "${LMEVAL_STRATEGIES}" \
    --f32-check "${F32_CHECK}" ${PROFILE:+--profile} --strategies "${STRATEGIES}" --max-new-tokens "${MAX_NEW:-10}" \
    ${COMPILE_DECODE:+--compile-decode} ${CARD_PATH:+--card-path "$CARD_PATH"} \
    --out "$RESULTS/$1.json" 2>&1 | grep --line-buffered -v -E "[0-9.]+(it/s|s/it)\]" | tee "$RESULTS/$1.log"
  echo "bench exit ($1): ${PIPESTATUS[0]} (1: a phase failed, its error in the JSON's errors, the others ran;" \
    "124: cut at its budget; the JSON keeps every phase that finished)"
}

if [ "${CALL:-1}" = 2 ]; then
  DEADLINE=${DEADLINE:-585}
  if [ -z "${SKIP_TEST:-}" ]; then
    # One process (the suite's two xdist workers are for CI's two cores): addopts replaced.
    timeout 200 "$PY" -m pytest -m gpu tests/backends/test_gpu.py -q -p no:cacheprovider \
      -o 'addopts=--import-mode=importlib' 2>&1 | tee "$RESULTS/gpu_test.log"
  fi
  BATCH=${BATCH:-auto} PROFILE=1 F32_CHECK=${F32_CHECK:-0} ORDERS=${ORDERS:-file} \
    STRATEGIES=${STRATEGIES:-S3,S6,first_token,S2,S4} LMEVAL_STRATEGIES=${LMEVAL_STRATEGIES-S3,S6,first_token} \
    arm "${OUTNAME:-bench_gpu}_more"
  found=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["batch_size"])' \
    "$RESULTS/${OUTNAME:-bench_gpu}_more.json" 2>/dev/null || echo 32)
  BATCH=$found PROFILE= F32_CHECK=0 ORDERS=mixed STRATEGIES=S5,S1,S3,S6,first_token,S2,S4 LMEVAL_STRATEGIES= \
    arm "${OUTNAME:-bench_gpu}_mixed"
else
  DEADLINE=${DEADLINE:-405}
  BATCH=${BATCH:-32} PROFILE= F32_CHECK=${F32_CHECK:-32} ORDERS=${ORDERS:-file} STRATEGIES=${STRATEGIES:-S5,S1} \
    LMEVAL_STRATEGIES=${LMEVAL_STRATEGIES-S5,S1} arm "${OUTNAME:-bench_gpu}"
fi
