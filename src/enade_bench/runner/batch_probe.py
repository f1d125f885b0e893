"""The probe of ``evaluation.batch_size: auto``: the run's heaviest chunks, through the real code path.

A probe that feeds ``rows × 2,048`` placeholder tokens misses what the run really holds at
its peak: the float32 logits of the scored positions, the key/value caches and their
copies, the decode loop to ``max_new_tokens``, few-shot prompts beyond 2,048 tokens.  So
the probe is the run itself: for each strategy of the run, its ``rows`` heaviest items
(longest prompts, options counted for ``log_prob``) run as one chunk through the runner's
:class:`~enade_bench.runner.execute.ChunkExecutor` and the backend, and the records are
dropped.  The backend decides whether a size fits
(:func:`enade_bench.backends.hf_batch_size.auto_batch_size`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from enade_bench.backends.base import ContextBackend
from enade_bench.runner.execute import ChunkExecutor
from enade_bench.runner.plan import Experiment, StrategyPlan
from enade_bench.runner.work import WorkItem


def heaviest(exp: Experiment, plan: StrategyPlan) -> list[WorkItem]:
    """The plan's items, heaviest first: prompt tokens (and ``log_prob``'s options)."""
    backend = exp.model
    if not isinstance(backend, ContextBackend):
        return list(plan.items)

    def weight(item: WorkItem) -> int:
        tokens = backend.prompt_tokens(plan.prompt_of(item))
        if plan.strategy.method == "log_prob":
            tokens += sum(backend.text_tokens(" " + option) for option in item.options)
        return tokens

    return sorted(plan.items, key=lambda item: -weight(item))


def peak_workload(exp: Experiment) -> Callable[[int], None]:
    """``workload(rows)``: each strategy's ``rows`` heaviest items as one chunk (records dropped).

    ``exp`` has its backend and its plans; the items are ranked on the first call only
    (on a CPU the backend never calls it).
    """

    @cache
    def ranked() -> list[tuple[ChunkExecutor, list[WorkItem], bool]]:
        cfg = exp.config
        return [
            (ChunkExecutor(exp.model, plan, cfg.evaluation, exp.extract_fn), *_chunking(exp, plan))
            for plan in exp.plans
        ]

    def workload(rows: int) -> None:
        for executor, items, fixed in ranked():
            executor.run(items if fixed else items[:rows])

    return workload


def _chunking(exp: Experiment, plan: StrategyPlan) -> tuple[list[WorkItem], bool]:
    """The items to probe with, and whether they are a fixed chunk (one question's shuffles).

    A strategy with several shuffles runs one question's shuffles per chunk whatever the
    batch (:func:`~enade_bench.runner.schedule.chunks`): its probe is its heaviest chunk.
    """
    strategy = plan.strategy
    if not (strategy.shuffle and strategy.n_shuffles > 1):
        return heaviest(exp, plan), False
    order = {item.key: i for i, item in enumerate(heaviest(exp, plan))}
    return list(min(plan.chunks, key=lambda chunk: min(order[item.key] for item in chunk))), True
