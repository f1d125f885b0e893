#!/usr/bin/env bash
# Prepare the GPU arm on this (CPU) machine, for a bare GPU machine without network:
#   .whl/  the wheels its image lacks (bench/gpu/wheels.txt: pydantic, gguf, tenacity, lm-eval, ...),
#   .gpu/  the tokenizer of the packaged SmolLM2 and the 16 ENEM booklets of 2019-2022.
# Both folders are git-ignored; the device call carries them (docs/performance.md#gpu).
# Run from the checkout's root:  bench/gpu/prepare.sh
# Fails (exit 2, nothing written) when a wheel of WHEELS (default bench/gpu/wheels.txt) is not
# installed here: a wheel left behind is an import error on the card.
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PY:-.venv/bin/python}
SHARED=${ENADE_BENCH_SHARED_DATA:-../shared/data}
WHEELS=${WHEELS:-bench/gpu/wheels.txt}

# 0. the versions of this venv, every one, before anything is written
NAMES=$(grep -v -E '^\s*(#|$)' "$WHEELS")
declare -A VERSION
missing=""
for name in $NAMES; do
  VERSION[$name]=$("$PY" -c "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))" "$name" 2>/dev/null || true)
  [ -n "${VERSION[$name]}" ] || missing="$missing $name"
done
if [ -n "$missing" ]; then
  echo "error: $WHEELS: not installed in $PY, so no wheel can be made:$missing (install them, or drop them from the list)" >&2
  exit 2
fi

# 1. the tokenizer (the packaged model's converted folder; made once from its GGUF) and the questions
mkdir -p .gpu/tokenizer .gpu/enem
TOK=$(PYTHONPATH=$PWD/src:$PWD "$PY" -c 'from bench.speed.shapes import default_tokenizer_dir as d; print(d())')
cp "$TOK"/tokenizer.json "$TOK"/tokenizer_config.json .gpu/tokenizer/
for f in chat_template.jinja special_tokens_map.json generation_config.json; do
  [ -f "$TOK/$f" ] && cp "$TOK/$f" .gpu/tokenizer/
done
cp "$SHARED"/enem/questions/pt-br/ENEM_20{19,20,21,22}_*.csv .gpu/enem/

# 2. wheels, at the versions of this venv (Python 3.12, manylinux x86-64 on the GPU machine)
rm -rf .whl && mkdir -p .whl
for name in $NAMES; do
  version=${VERSION[$name]}
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
      --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
      --platform any -d .whl "$name==$version" 2>/dev/null \
    || python3 -m pip wheel -q --no-deps -w .whl "$name==$version" \
    || { echo "error: $WHEELS: $name==$version: no wheel could be downloaded or built" >&2; exit 2; }
done
du -sh .whl .gpu
echo "carry: .whl .gpu  (the device call: see docs/performance.md#gpu)"
