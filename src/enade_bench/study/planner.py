"""The one planner of a study's tasks: model × exam, their estimated cost, and their order.

Every study (ENEM: model × area × language; any other benchmark: model × exam of
``exams:``, or model × its one ``dataset``) hands its prepared runs here as
:class:`ExamRun` entries; :func:`exam_tasks` makes one :class:`~enade_bench.study.tasks.ModelTask`
per model × exam, and :func:`lpt_order` puts the longest first.

Cost.  A task's cost is the forward-pass compute of its tokens,

.. math:: C = 2 P T, \\qquad T = \\sum_{\\text{items}} \\left(\\lceil c_i / 4 \\rceil + o\\right),

with :math:`P` the model's parameters (read from its weights' headers,
:func:`~enade_bench.study.memory.parameters`), :math:`c_i` the characters of item
:math:`i`'s question and options (4 characters a token, the dry-run's estimate without a
tokenizer) and :math:`o` the answer tokens (``max_new_tokens``; 1 for scored methods).
:math:`2P` FLOPs per token is the forward pass of a decoder (Kaplan et al., 2020, "Scaling
Laws for Neural Language Models", section 2.1).  A model whose size is unknown here (an API
model, a hub id out of reach) counts as :data:`UNKNOWN_PARAMETERS`.

Order.  Tasks go out longest first (LPT: Graham, 1969, "Bounds on multiprocessing timing
anomalies"): with :math:`m` workers the makespan is at most :math:`4/3 - 1/(3m)` of the
optimum.  "Longest" is a task's duration on its GPUs, :math:`60 + W / L + 2 P T / (g F)`
seconds (its load, the weights' :math:`W` bytes read at :math:`L`, and its compute on its
:math:`g` GPUs at :math:`F` each: :func:`~enade_bench.study.executors.sizing.seconds`), not
its work: a task split over 8 GPUs goes out as early as its time on them asks.  Where one worker runs everything (``local``), a model's tasks run one after the
other with one load (:func:`by_model`).

Chains.  Where at most :math:`m` tasks are in flight (``max_jobs``, else what the cluster runs
at once where it is known: a Ray cluster's :meth:`~enade_bench.study.executors.Executor.slots`)
and there are more tasks than :math:`m`, a model's tasks are chained in one job (:func:`chain`: one load) while three
things hold: at least :math:`m` jobs remain (no slot idles for want of a job), no chain is
longer than the lower bound :math:`\\max(\\sum_i t_i / m, \\max_i t_i)` of the tasks' times
:math:`t_i` (so the bound no schedule beats does not move), and the longest-first makespan on
:math:`m` workers does not grow.  A task's time for this is its
load and its compute at :func:`~enade_bench.study.executors.sizing.seconds`' rates; a chain
loads once.

Shards.  Where :math:`m` jobs run at once, a model × exam may be cut into :math:`K` shards of
contiguous questions (:mod:`enade_bench.study.shards`), each loading its model: a task of load
:math:`l` and compute :math:`c` becomes :math:`K` pieces of :math:`l + c / K`.  The planner
(:func:`shard_counts`) starts from one shard each and, step by step, gives the one task of the
:data:`SHARD_TRIES` longest pieces the count (up to twice its own) that shortens the
longest-first makespan (:func:`makespan`) most, while a step saves :data:`SHARD_GAIN` of it:
a shard's load is paid only where it shortens the study.  The bound no schedule of these
pieces beats is :math:`\\max(\\sum g_j p_j / G, \\max_j p_j)` over the pieces :math:`p_j` of
:math:`g_j` GPUs on :math:`G`: the longest piece is the longest shard at its :math:`K`.
"""

from __future__ import annotations

import dataclasses
import heapq
import itertools
import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from enade_bench.study.executors.sizing import seconds
from enade_bench.study.tasks import ModelTask, TaskRun

T = TypeVar("T")

#: Parameters assumed for a model whose size cannot be read before it loads.
UNKNOWN_PARAMETERS = 10**9
#: Tasks (the longest pieces) whose next shard counts the shard planner tries at each step, and
#: the share of the makespan a step must save.
SHARD_TRIES, SHARD_GAIN = 4, 1e-3
#: What names a shard of a task: ``model.exam#2of4`` (no exam or model name holds it).
SHARD_MARK = "#"


@dataclass(frozen=True)
class ExamRun:
    """One prepared run of a study: the study's model, the exam (``""``: the study's one dataset)."""

    model: str
    exam: str
    run: TaskRun


def exam_tasks(runs: Sequence[ExamRun], output: Path) -> list[ModelTask]:
    """One task per model × exam, in the order the runs come (a model's runs of one exam together).

    The label is ``model.exam`` (``model`` alone for a study's one dataset).
    """
    grouped: dict[tuple[str, str], list[TaskRun]] = {}
    for entry in runs:
        grouped.setdefault((entry.model, entry.exam), []).append(entry.run)
    return [
        ModelTask(f"{model}.{exam}" if exam else model, tuple(found), output, model, exam)
        for (model, exam), found in grouped.items()
    ]


def by_model(tasks: Sequence[ModelTask]) -> list[ModelTask]:
    """The tasks of each model as one task (its model loads once), in the order models first come."""
    grouped: dict[str, list[ModelTask]] = {}
    for task in tasks:
        grouped.setdefault(task.model or task.label, []).append(task)
    return [joined(found, model, "") for model, found in grouped.items()]


def joined(group: Sequence[ModelTask], label: str, exam: str) -> ModelTask:
    """One model's tasks as one task named ``label`` (its model loads once); a lone task stays itself."""
    if len(group) == 1:
        return group[0]
    return dataclasses.replace(group[0], label=label, runs=tuple(r for t in group for r in t.runs), exam=exam)


@dataclass(frozen=True)
class Cost:
    """A task's estimate: ``2 P T`` FLOPs (see the module's formula), and its load and compute
    (seconds) on its GPUs (:func:`~enade_bench.study.executors.sizing.seconds`)."""

    parameters: int
    tokens: int
    #: Whether ``parameters`` was read from the weights (else :data:`UNKNOWN_PARAMETERS`).
    known: bool
    gpus: int
    load: float
    compute: float

    @property
    def flops(self) -> float:
        return 2.0 * self.parameters * self.tokens

    @property
    def duration(self) -> float:
        """Seconds on its GPUs: the load and the compute (what the longest-first order sorts by)."""
        return self.load + self.compute

    def __str__(self) -> str:
        size = f"{self.parameters / 1e9:.2g}B" if self.known else "size unknown"
        where = f"{self.gpus} GPU(s)" if self.gpus else "the CPU"
        return (
            f"est. {self.flops / 1e12:.3g} TFLOP ({size} × {self.tokens} tokens), "
            f"{self.duration:.0f} s on {where} with its load ({self.load:.0f} s)"
        )


def task_cost(task: ModelTask) -> Cost:
    """The estimate of ``task``: its model's size × the tokens of its runs, its load and compute on its GPUs."""
    count = task.parameters
    size = count or UNKNOWN_PARAMETERS
    load, compute = seconds(size, task.tokens, task.gpus, weights=task.weights_bytes)
    return Cost(size, task.tokens, count is not None, task.gpus, load, compute)


def lpt_order(tasks: Sequence[T], cost: Callable[[T], float] | None = None) -> list[T]:
    """``tasks`` longest first by ``cost`` (default: :func:`task_cost`'s duration on its GPUs, its
    load included); ties keep the planned order."""
    measure = cost or (lambda t: task_cost(t).duration)  # type: ignore[arg-type]
    costs = [measure(t) for t in tasks]
    return [tasks[i] for i in sorted(range(len(tasks)), key=lambda i: -costs[i])]


def _lpt_makespan(durations: Sequence[float], workers: int) -> float:
    """The makespan of ``durations`` longest first on ``workers`` identical workers."""
    ends = [0.0] * workers
    for d in sorted(durations, reverse=True):
        heapq.heappush(ends, heapq.heappop(ends) + d)
    return max(ends, default=0.0)


def makespan(pieces: Sequence[tuple[float, int]], nodes: Sequence[int], cap: int | None = None) -> float:
    """The makespan of ``pieces`` (seconds, GPUs) on ``nodes`` (the GPUs of each; a job slot is a
    node of 1), at most ``cap`` at once: at each moment every waiting piece that fits on one node
    starts, in the given order, as a cluster's scheduler starts them (``inf``: one never fits)."""
    clock, free, waiting = 0.0, list(nodes), list(pieces)
    running: list[tuple[float, int, int]] = []
    while waiting or running:
        left = []
        for piece in waiting:
            node = next((k for k, f in enumerate(free) if f >= piece[1]), None)
            if node is None or (cap is not None and len(running) >= cap):
                left.append(piece)
                continue
            free[node] -= piece[1]
            heapq.heappush(running, (clock + piece[0], node, piece[1]))
        if not running:
            return math.inf
        waiting, (clock, node, released) = left, heapq.heappop(running)
        free[node] += released
    return clock


@dataclass(frozen=True)
class Splittable:
    """A task as the shard planner sees it: its load and compute (seconds on its GPUs), its GPUs,
    and the fewest and most shards it may be cut into."""

    load: float
    compute: float
    gpus: int
    fewest: int
    most: int

    def piece(self, count: int) -> float:
        """Seconds of one of ``count`` shards: each loads the model and computes its share."""
        return self.load + self.compute / count


def shard_counts(tasks: Sequence[Splittable], nodes: Sequence[int], tries: int = SHARD_TRIES) -> list[int]:
    """How many shards each task is cut into on ``nodes``; see the module's rule."""
    counts, room = [t.fewest for t in tasks], sum(nodes)

    def span(trial: list[int]) -> float:
        pieces = [(t.piece(k), t.gpus) for t, k in zip(tasks, trial, strict=True) for _ in range(k)]
        return makespan(sorted(pieces, key=lambda p: -p[0]), nodes)  # longest first

    now = span(counts)
    while True:
        longest = sorted(range(len(tasks)), key=lambda i: -tasks[i].piece(counts[i]))[:tries]
        best: tuple[float, int, int] | None = None
        for i in longest:
            for k in range(
                counts[i] + 1, min(tasks[i].most, room // max(1, tasks[i].gpus), 2 * counts[i] + 1) + 1
            ):
                trial = [*counts[:i], k, *counts[i + 1 :]]
                if (after := span(trial)) < now * (1 - SHARD_GAIN) and (best is None or after < best[0]):
                    best = (after, i, k)
        if best is None:
            return counts
        now, i, counts[i] = best[0], best[1], best[2]


def chain(
    items: Sequence[T],
    slots: int,
    load: Callable[[T], float],
    run: Callable[[T], float],
    key: Callable[[T], Hashable],
) -> list[list[T]]:
    """``items`` in chains of one ``key`` (a model), each chain one job that loads once
    (``load`` once, then each item's ``run``), longest first; see the module's rule.  Each
    item's ``load``, ``run`` and ``key`` are read once (a task's tokens walk all its items)."""
    loads, runs, keys = [load(x) for x in items], [run(x) for x in items], [key(x) for x in items]
    alone = [a + b for a, b in zip(loads, runs, strict=True)]
    groups, bound = [[i] for i in range(len(items))], max(max(alone, default=0.0), sum(alone) / slots)

    def time(group: list[int]) -> float:
        return loads[group[0]] + sum(runs[i] for i in group)

    while len(groups) > slots:
        times = [time(g) for g in groups]
        now, best = _lpt_makespan(times, slots), None
        for i, j in itertools.combinations(range(len(groups)), 2):
            if keys[groups[i][0]] != keys[groups[j][0]] or (joined := time(groups[i] + groups[j])) > bound:
                continue
            after = [t for k, t in enumerate(times) if k not in (i, j)] + [joined]
            if _lpt_makespan(after, slots) <= now and (best is None or joined < best[0]):
                best = (joined, i, j)
        if best is None:
            break
        _, i, j = best
        groups[i] += groups.pop(j)
    return [[items[i] for i in g] for g in sorted(groups, key=lambda g: -time(g))]


def units(ordered: Sequence[ModelTask], local: bool, max_jobs: int | None) -> list[ModelTask]:
    """What the executor runs, longest first: a model's tasks as one (:func:`by_model`) on
    ``local``; chained (:func:`chain`) where ``max_jobs`` (the tasks in flight at once) is below
    the tasks; else the tasks."""
    if local:
        return by_model(ordered)
    if max_jobs is None or len(ordered) <= max_jobs:
        return list(ordered)
    spans = {t.label: task_cost(t) for t in ordered}  # once per task: its tokens walk all its items
    chains = chain(
        ordered,
        max_jobs,
        lambda t: spans[t.label].load,
        lambda t: spans[t.label].compute,
        lambda t: t.model or t.label,
    )
    exams = ["+".join(t.exam for t in group) for group in chains]
    return [
        joined(group, f"{group[0].model}.{exam}", exam) for group, exam in zip(chains, exams, strict=True)
    ]


def covers(unit: ModelTask, task: ModelTask) -> bool:
    """Whether ``unit`` (of :func:`units`) runs ``task`` or part of it: itself, its model's every
    task, a chain of it, or one of its shards (``exam#2of4``)."""
    if unit.label == task.label:
        return True
    return (unit.model or unit.label) == (task.model or task.label) and (
        unit.exam == "" or task.exam in {part.split(SHARD_MARK)[0] for part in unit.exam.split("+")}
    )
