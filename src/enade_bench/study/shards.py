"""A study's question shards: a model × exam cut into runs of contiguous questions, merged after.

Where jobs run side by side (``max_jobs``, or what a Ray cluster runs at once), one long model
× exam can set a study's makespan alone.  :func:`split` cuts such a task into :math:`K` shards
(the count the planner's :func:`~enade_bench.study.planner.shard_counts` finds worth their
loads, at most ``executor.max_shards``): shard :math:`i` asks questions
:math:`[\\lfloor i B / K \\rceil s, \\lfloor (i+1) B / K \\rceil s)` of the exam's :math:`B`
chunks of :math:`s` questions (``batch_size``), so that every item is computed in the chunk,
and with the seed, of the whole run (:func:`~enade_bench.runner.plan.window_plan`).  Each
shard is its own resumable run in ``<run folder>.shards/<i>-of-<K>/``; a job may run several
shards of one model on one load (:func:`~enade_bench.study.planner.chain`).  The job that
finishes the last shard writes the whole run from the shards' logs
(:func:`~enade_bench.study.tasks.merged`): its files are those of the run unsplit.

A sampled run whose ``batch_size`` is ``auto`` is never cut (its chunks, and so its seeds, are
known only once its model loads).  A study started again keeps the cut it started with: the
shards on disk, or the whole run where it has a log (:func:`earlier`).
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Sequence
from pathlib import Path

from enade_bench.config import ExperimentConfig
from enade_bench.errors import as_given
from enade_bench.results.paths import RunPaths
from enade_bench.runner.plan import window_plan
from enade_bench.study.planner import SHARD_MARK, Splittable, lpt_order, shard_counts, task_cost
from enade_bench.study.tasks import ModelTask, Shard, TaskRun, shards_folder


def _step(run: TaskRun) -> int | None:
    """Questions of one chunk of ``run`` (``batch_size``; 1 where ``auto``); ``None``: not to be cut."""
    evaluation = run.config.evaluation
    size = evaluation.batch_size
    sampled = bool(evaluation.temperature) and any(
        s.method == "generation" for s in run.experiment.strategies
    )
    if size == "auto":
        return None if sampled else 1
    return size


def most_shards(task: ModelTask) -> int:
    """The most shards ``task`` may be cut into: one a chunk of its shortest run (1: not cut)."""
    steps = [(_step(r), len(r.experiment.questions)) for r in task.runs]
    return min((1 if step is None else max(1, -(-n // step)) for step, n in steps), default=1)


def _bounds(n: int, count: int, step: int) -> list[tuple[int, int]]:
    """``count`` ranges of ``n`` questions, each starting at a multiple of ``step``."""
    blocks = -(-n // step)
    edges = [min(n, round(i * blocks / count) * step) for i in range(count + 1)]
    return list(itertools.pairwise(edges))


def _in(config: ExperimentConfig, folder: Path) -> ExperimentConfig:
    """``config`` writing to ``folder``."""
    return config.model_copy(update={"output": config.output.model_copy(update={"dir": str(folder)})})


def shard_runs(run: TaskRun, count: int) -> list[TaskRun]:
    """``run`` as ``count`` shards (at most :func:`most_shards`), each in its folder."""
    exp, root = run.experiment, shards_folder(run)
    n = len(exp.questions)
    plain = []
    for i, (start, stop) in enumerate(_bounds(n, count, _step(run) or 1)):
        folder = root / f"{i + 1}-of-{count}"
        kept = {q.id for q in exp.questions[start:stop]}
        config, used = (_in(c, folder) for c in (run.config, exp.config))  # as given, as the exam read it
        plans = tuple(window_plan(p, kept, RunPaths.of(folder, used.name, p.strategy.id)) for p in exp.plans)
        part = dataclasses.replace(exp, config=used, output_dir=folder, plans=plans, window=(start, stop))
        what = run.description.split(" -> ")[0]
        plain.append(
            dataclasses.replace(
                run,
                config=config,
                config_path=folder / run.config_path.name,
                experiment=part,
                options=dataclasses.replace(run.options, output_dir=folder),
                description=f"{what}, questions {start + 1}-{stop} of {n} -> {as_given(folder)}",
            )
        )
    return [dataclasses.replace(r, shard=Shard(run, tuple(plain))) for r in plain]


def earlier(task: ModelTask) -> int | None:
    """The cut an earlier start of the study made of ``task``: 1 where a whole run has a log, the
    count of the shards on disk, else ``None`` (the planner chooses)."""
    counts: set[int] = set()
    for run in task.runs:
        if any(p.paths.intermediate.exists() for p in run.experiment.plans):
            return 1
        root = shards_folder(run)
        if root.is_dir():
            counts |= {int(m[1]) for d in root.iterdir() if (m := re.fullmatch(r"\d+-of-(\d+)", d.name))}
    return max(counts) if counts else None


def shard_tasks(task: ModelTask, count: int) -> list[ModelTask]:
    """``task`` as ``count`` tasks (``label#2of4``), the i-th running shard i of each of its runs;
    those already finished left out, but the last where all are (its job merges the whole run)."""
    count = min(count, most_shards(task))
    cut = [shard_runs(r, count) for r in task.runs]
    made = [
        dataclasses.replace(
            task,
            label=f"{task.label}{SHARD_MARK}{i + 1}of{count}",
            runs=tuple(runs[i] for runs in cut),
            exam=f"{task.exam}{SHARD_MARK}{i + 1}of{count}",
        )
        for i in range(count)
    ]
    left = [t for t in made if t.unfinished() is not None]
    return left or made[-1:]


def split(ordered: Sequence[ModelTask], slots: int | None, cap: int | None) -> list[ModelTask]:
    """``ordered`` with each task cut into the shards that shorten the study on ``slots`` jobs at
    once (``None``: none is cut, but a cut made earlier is kept), at most ``cap`` each; longest first."""
    fixed = [earlier(t) for t in ordered]
    if slots is None and not any(k and k > 1 for k in fixed):
        return list(ordered)
    splittable = []
    for task, known in zip(ordered, fixed, strict=True):
        cost = task_cost(task)
        most = known or (1 if slots is None else min(cap or most_shards(task), most_shards(task)))
        splittable.append(Splittable(cost.load, cost.compute, 1, known or 1, most))
    counts = shard_counts(splittable, (1,) * (slots or 1))
    pieces = [p for t, k in zip(ordered, counts, strict=True) for p in (shard_tasks(t, k) if k > 1 else [t])]
    return lpt_order(pieces)
