"""The work schedule of a run: fixed chunks, and the one rule for generation seeds.

Seed rule (every backend, live or batch)
----------------------------------------
The work items of a strategy (question × shuffle, question-major, in dataset
order) are cut into fixed chunks: the shuffles of one question when a strategy
has several shuffles, otherwise ``evaluation.batch_size`` consecutive items.  A
chunk's seed is ``evaluation.seed + chunk index``.  A local backend samples the
whole chunk from one generator seeded with it; an API backend, which takes one
seed per request, sends sample ``k`` of an item with ``chunk seed + k``, whether
the request is live (streamed) or in a batch job.  Greedy decoding and the
scoring methods use no seed.

The chunks do not depend on what is already done, so a resumed run computes
exactly what a fresh one does; they do depend on ``batch_size``, which is
therefore part of the resume fingerprint of sampled runs.
"""

from __future__ import annotations

from enade_bench.runner.work import WorkItem
from enade_bench.strategies.registry import Strategy


def chunks(items: list[WorkItem], strategy: Strategy, batch_size: int) -> list[list[WorkItem]]:
    """Fixed chunk boundaries (so a resumed run computes exactly what a fresh one does)."""
    if strategy.shuffle and strategy.n_shuffles > 1:
        groups: dict[str, list[WorkItem]] = {}
        for item in items:
            groups.setdefault(item.question.id, []).append(item)
        return list(groups.values())
    return [items[i : i + batch_size] for i in range(0, len(items), batch_size)]


def chunk_seed(seed: int, chunk_index: int) -> int:
    """The seed of one chunk: ``seed + chunk_index``."""
    return seed + chunk_index


def item_seeds(
    items: list[WorkItem], strategy: Strategy, seed: int, batch_size: int
) -> dict[tuple[str, int], int]:
    """The chunk seed of every work item, by item key (API requests add the sample index)."""
    return {
        item.key: chunk_seed(seed, index)
        for index, chunk in enumerate(chunks(items, strategy, batch_size))
        for item in chunk
    }
