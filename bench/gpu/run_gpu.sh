#!/usr/bin/env bash
# The GPU check of issue 28, on a bare GPU machine (no network), from the checkout's root:
#   1. the `gpu` test (the demo, S1-S6, float32 on CUDA against the CPU);
#   2. the GPU arm of the bench: an 8B shape (random bf16 weights built on the card), the 720
#      ENEM questions of 2019-2022 in file order and mixed short/long, S1-S6 and first_token,
#      ours against lm-eval's HF backend on the same model object.
# Prepare here first (bench/gpu/prepare.sh), then with the device tool:
#   run(command="bench/gpu/run_gpu.sh", carry=[".whl", ".gpu"], timeout_s=600)
# Results go to $OUT (the device tool's folder) or bench/results: bench_gpu.json, gpu_test.log, bench_gpu.log.
# Knobs (environment): SHAPE (llama-3-8b), BATCH (32), LIMIT (720), ORDERS (file,mixed),
# STRATEGIES (S5,S1,S3,S6,first_token,S2,S4), LMEVAL_ORDERS (file), LMEVAL_STRATEGIES (S5,S1,S3),
# F32_CHECK (64: S5 on the first 64 questions in float32, both engines; 0: none), NO_PROFILE=1
# (no profile of one S5 and one S1 chunk), DEADLINE (seconds from the start
# by which everything ends, 570: inside the device call's 600 s), SKIP_TEST=1 to skip step 1,
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

if [ -z "${SKIP_TEST:-}" ]; then
  # One process (the suite's two xdist workers are for CI's two cores): addopts replaced.
  timeout 240 python3 -m pytest -m gpu tests/backends/test_gpu.py -q -p no:cacheprovider \
    -o 'addopts=--import-mode=importlib' \
    2>&1 | tee "$RESULTS/gpu_test.log"
fi

LEFT=$(( ${DEADLINE:-570} - (SECONDS - START) ))
BENCH_S=$(( ${BUDGET:-$LEFT} < LEFT ? ${BUDGET:-$LEFT} : LEFT ))
echo "bench budget: ${BENCH_S} s"
PROFILE_FLAG=--profile
[ -n "${NO_PROFILE:-}" ] && PROFILE_FLAG=
if [ "$BENCH_S" -lt 30 ]; then echo "no time left for the bench"; exit 1; fi
timeout "$BENCH_S" python3 -m enade_bench.bench --device cuda --shape "${SHAPE:-llama-3-8b}" \
  --tokenizer "$ENADE_GPU_TOKENIZER" --enem-dir .gpu/enem --dtype bfloat16 \
  --batch-size "${BATCH:-32}" --limit "${LIMIT:-720}" --orders "${ORDERS:-file,mixed}" \
  --lmeval-orders "${LMEVAL_ORDERS:-file}" --lmeval-strategies "${LMEVAL_STRATEGIES:-S5,S1,S3}" \
  --f32-check "${F32_CHECK:-64}" ${PROFILE_FLAG} \
  --strategies "${STRATEGIES:-S5,S1,S3,S6,first_token,S2,S4}" --max-new-tokens 10 \
  ${COMPILE_DECODE:+--compile-decode} \
  --out "$RESULTS/bench_gpu.json" 2>&1 | grep -v -i -E "warn|tqdm|it/s" | tee "$RESULTS/bench_gpu.log"
echo "bench exit: ${PIPESTATUS[0]} (124: cut at its budget; the JSON keeps every strategy that finished)"
