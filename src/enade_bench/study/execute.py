"""Run the tasks of a study (one model with all its runs each) through its executor.

Every study comes here with its tasks planned by :mod:`enade_bench.study.planner` (one task
per model × exam; an ENEM exam is an area × language).  The executor (``executor:`` in the
study YAML or ``study --executor``: ``local``, ``ray``, ``slurm``;
:mod:`enade_bench.study.executors`) is checked before any model loads; each task loads its
model once, runs or resumes its runs (the runner's append-only logs skip every answered
question) and releases the model (:func:`~enade_bench.study.tasks.release`).  A model that
fails is an outcome with an error; the other models go on.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from enade_bench.backends.base import Backend
from enade_bench.backends.factory import create_backend
from enade_bench.config import ExperimentConfig
from enade_bench.study.executors import Executor, ExecutorSettings, LocalSettings, Work, make_executor
from enade_bench.study.executors.base import timed
from enade_bench.study.planner import SHARD_MARK, by_model, covers, lpt_order, task_cost
from enade_bench.study.planner import units as plan_units
from enade_bench.study.progress import StudyProgress
from enade_bench.study.shards import split
from enade_bench.study.tasks import BackendFactory, ModelTask, TaskOutcome, run_task, started_file


@dataclass
class ExecuteOptions:
    """How to run a study's tasks: the executor, the bar, the log, a backend factory (tests);
    ``alert``: where a failed or lost task is named as it ends (default: the log)."""

    progress: bool = True
    backend_factory: BackendFactory | None = None
    log: Callable[[str], None] | None = None
    executor: ExecutorSettings = field(default_factory=LocalSettings)
    alert: Callable[[str], None] | None = None


def load_model(cfg: ExperimentConfig) -> Backend:
    """The default factory: :func:`~enade_bench.backends.factory.create_backend` of the run's model
    (a module-level function, so that it pickles to a worker by name)."""
    return create_backend(cfg.model)


def _lost(task: ModelTask, why: str) -> TaskOutcome:
    """A task whose worker, node or job was lost: where it last ran, from the file its worker
    wrote as it started (worker, node, device; its age is the time it ran, unless ``why`` says)."""
    error = f"did not finish: {why}"
    path = started_file(task)
    try:
        worker, node, device = path.read_text(encoding="utf-8").strip().split("\t")
        seconds = max(0.0, time.time() - path.stat().st_mtime)
    except (OSError, ValueError):
        return TaskOutcome(task.label, error=error)  # lost before it started
    ran = "" if timed(why) else f", for {seconds:.0f} s"  # the executor's own time wins (sacct)
    return TaskOutcome(
        task.label,
        error=f"{error}; it ran on {worker}, node {node}{ran}",
        worker=worker,
        node=node,
        device=device,
        seconds=seconds,
    )


def execute(tasks: list[ModelTask], output: Path, options: ExecuteOptions) -> list[TaskOutcome]:
    """Check the executor, then run every task, longest first; the outcomes in task order.

    ``output`` is the study folder (the ``slurm`` executor keeps its job files elsewhere).
    The tasks go out in cost order (:func:`~enade_bench.study.planner.lpt_order`); ``local``
    runs a model's tasks as one (:func:`~enade_bench.study.planner.by_model`: one load), and
    under ``max_jobs`` a model's tasks may chain in one job (:func:`~enade_bench.study.planner.units`).
    """
    log = options.log or (lambda _line: None)
    left = {t.label: t.unfinished() for t in tasks}  # a finished run is not run again: its model not loaded
    for task in tasks:
        if left[task.label] is None:
            log(f"{task.label}: finished earlier ({len(task.runs)} run(s) on disk; its model is not loaded)")
    outcomes: dict[str, TaskOutcome] = {t.label: TaskOutcome(t.label) for t in tasks if left[t.label] is None}
    ordered = lpt_order([t for t in left.values() if t is not None])
    executor = make_executor(options.executor, output)
    try:
        units, _, _ = _checked_units(executor, options.executor, ordered, tasks)
        if units:
            with StudyProgress(units, log, options.progress, options.alert) as progress:
                work = Work(
                    run=partial(
                        run_task,
                        factory=options.backend_factory or load_model,
                        threads=options.executor.threads,
                    ),
                    lost=_lost,
                    done=progress.done,
                    retried=progress.retried,
                )
                for unit, outcome in zip(units, executor.run(units, work), strict=True):
                    for task in ordered:  # a task cut in shards: failed where one of its shards did
                        prior = outcomes.get(task.label)
                        if covers(unit, task) and (prior is None or prior.error is None):
                            outcomes[task.label] = dataclasses.replace(outcome, label=task.label)
    finally:
        executor.close()
    return [outcomes[t.label] for t in tasks]


def describe_plan(tasks: list[ModelTask], output: Path, settings: ExecutorSettings) -> list[str]:
    """``study --dry-run``: each task longest first, its estimated cost, what it asks for and
    where it goes; nothing runs.

    The executor is checked as a run checks it (Slurm: ``sinfo``; Ray: the cluster joined
    or started here), so the GPUs shown are those each job or Ray task will ask for.
    """
    left = {t.label: t.unfinished() for t in tasks}
    todo = [t for t in left.values() if t is not None]
    merged = settings.type == "local" and len(by_model(todo)) < len(todo)
    lines = [
        f"{len(tasks)} task(s), {len(todo)} to run, on executor {settings.type}, longest first"
        + (" (local: a model's tasks run one after the other, one load)" if merged else "")
        + ":"
    ]
    executor = make_executor(settings, output)
    try:
        units, cap, shards = _checked_units(executor, settings, lpt_order(todo), tasks)
        chains = [u for u in units if "+" in u.exam]
        for task in lpt_order(tasks):
            part = left[task.label]
            if part is None:
                lines.append(
                    f"{task.label}: finished ({len(task.runs)} run(s) on disk): not loaded, nothing asked"
                )
                continue
            lines.append(
                f"{task.label}: {task_cost(part)}; {len(part.runs)} run(s), {part.planned} item(s) "
                f"-> {executor.describe(part)}"
            )
            lines += [f"  {run.description}" for run in part.runs]
            lines += [
                f"  shard {s.label}: {task_cost(s)} -> {executor.describe(s)}"
                + "".join(f"\n    {run.description}" for run in s.runs)
                for s in shards
                if covers(s, task)
            ]
        lines += [
            f"{c.label}: one job, one load (a chain: {cap} at once) -> {executor.describe(c)}" for c in chains
        ]
    finally:
        executor.close()
    return lines


def _checked_units(
    executor: Executor, settings: ExecutorSettings, ordered: list[ModelTask], tasks: list[ModelTask]
) -> tuple[list[ModelTask], int | None, list[ModelTask]]:
    """The executor checked (its block even when every run is finished: exit 2), then what it
    runs (:func:`~enade_bench.study.planner.units`) with the tasks in flight at once: ``max_jobs``,
    else what the cluster runs at once (:meth:`~enade_bench.study.executors.Executor.slots`),
    so that a model's tasks share a load wherever no slot idles for it, and the tasks cut into
    shards (:func:`~enade_bench.study.shards.split`) where that shortens the study; its shards
    and chains checked too.  Returns the units, the jobs at once and the shards."""
    executor.check(ordered or tasks)
    cap = getattr(settings, "max_jobs", None) or executor.slots(ordered)
    pieces = split(ordered, None if settings.type == "local" else cap, getattr(settings, "max_shards", None))
    units = plan_units(pieces, settings.type == "local", cap)
    more = [u for u in [*pieces, *units] if SHARD_MARK in u.label or "+" in u.exam]
    if more:
        executor.check(ordered + list({u.label: u for u in more}.values()))
    return units, cap, [p for p in pieces if SHARD_MARK in p.label]
