"""The study every exam has unless it brings its own: each model's study strategies, then the comparison.

Everything is checked before the first model loads (:func:`plan_generic`): the study
YAML, each model's experiment YAML, the data, the prompts of every strategy and each
model's settings as far as they can be without loading it.  Each model × exam (``exams:``,
or the study's one ``dataset``) becomes one task (:meth:`GenericPlan.tasks`, through the one
planner :mod:`enade_bench.study.planner`) for the study pipeline (:mod:`enade_bench.study.run`):
its model is loaded, runs every strategy (or resumes: its append-only logs skip each answered
question), and is released.  A model that fails to load or run is reported and the others go
on; the comparison covers the models with results (:meth:`GenericPlan.report`).

An exam with a study of its own is a :class:`~enade_bench.benchmarks.base.StudyBenchmark`
(ENEM); every other exam, a plug-in's too, gets this one.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from enade_bench.backends.factory import check_backend
from enade_bench.backends.preload import devices_elsewhere
from enade_bench.benchmarks.base import Benchmark
from enade_bench.benchmarks.registry import Registry
from enade_bench.compare.study import comparison_lead, study_comparison
from enade_bench.config import ExperimentConfig, parse_config, resolve_input, resolve_output
from enade_bench.errors import UserError, as_given
from enade_bench.report.build import write_report
from enade_bench.report.folder import ReportFolder
from enade_bench.report.loader import load_results
from enade_bench.results.summary import JsonObject
from enade_bench.results.writable import check_output_dir
from enade_bench.runner.plan import Experiment, RunOptions
from enade_bench.strategies.registry import ALL_STRATEGIES
from enade_bench.study.config import StudyConfig, StudyExam, parse_study_config
from enade_bench.study.executors import ExecutorSettings, executor_settings
from enade_bench.study.models import ModelParts, model_parts
from enade_bench.study.plan import StudyOptions, StudyResult
from enade_bench.study.planner import ExamRun, exam_tasks
from enade_bench.study.tasks import ModelTask, TaskRun


@dataclass(frozen=True)
class PlannedModel:
    """One model of the study on one exam, prepared: its experiment config, folder and strategies."""

    label: str
    config: ExperimentConfig
    folder: Path
    experiment: Experiment
    options: RunOptions
    #: The exam's name (``exams:``); ``""`` for a study's one ``dataset``.
    exam: str
    benchmark: Benchmark
    strategies: list[str]

    @property
    def task_label(self) -> str:
        """The label of its task (:func:`~enade_bench.study.planner.exam_tasks`)."""
        return f"{self.label}.{self.exam}" if self.exam else self.label

    @property
    def config_path(self) -> Path:
        """Where the model's experiment config is written (provenance; ``enade-bench run`` reruns it)."""
        return self.folder / "experiment.yaml"


@dataclass(frozen=True)
class GenericPlan:
    """What a study will do: its config, benchmark, output folder and one entry per model."""

    config: StudyConfig
    path: Path
    output: Path
    #: One entry per model × exam, models in the study's order, each model's exams in theirs.
    models: list[PlannedModel]
    #: Where the models run: the study's ``executor:`` block, or ``--executor``.
    executor: ExecutorSettings

    @property
    def report_dir(self) -> Path:
        return self.output / "report"

    def settings(self) -> ExecutorSettings:
        """The executor, checked when the study was planned."""
        return self.executor

    def tasks(self) -> list[ModelTask]:
        """One task per model × exam of the study: its one run (every study strategy), prepared."""
        return exam_tasks(
            [
                ExamRun(
                    m.label,
                    m.exam,
                    TaskRun(
                        m.config,
                        m.config_path,
                        m.experiment,
                        replace(m.options, progress=False),
                        m.benchmark,
                        f"{m.label}: {', '.join(m.strategies)} -> {as_given(m.folder)}",
                    ),
                )
                for m in self.models
            ],
            self.output,
        )

    def failure_label(self, task: ModelTask) -> str:
        """A failed task is named as its model × exam (``model.exam``; the model for one dataset)."""
        return task.label

    def report(self, folder: ReportFolder, failed: Mapping[str, str]) -> StudyResult | None:
        """The comparison across models first, then every model's runs (models in the study's
        order, in every table); ``None`` when no model has results.

        A model in ``failed`` (label -> why) is left out, whatever its folder holds, and named in a note.
        """
        folders = [m.folder for m in self.models if m.folder.is_dir() and m.task_label not in failed]
        try:
            entries = load_results(folders) if folders else []
        except UserError:
            entries = []
        if not entries:
            return None
        settings = self.config.compare
        title = f"{self.config.benchmark} study: {self.config.name}"
        exams = {m.folder.resolve(): (m.label, m.exam) for m in self.models} if self.config.exams else None
        with folder:
            section, lead, summary = comparison_lead(
                study_comparison(
                    entries,
                    self.report_dir,
                    settings.by,
                    settings.adjust,
                    settings.alpha,
                    settings.family,
                    settings.allow_errors,
                    exams=exams,
                )
            )
            report = write_report(entries, self.report_dir, [section], folders, title, lead)
        return StudyResult(summary, report.index, report.notes, warnings=report.warnings)


def _dataset(exam: StudyExam, benchmark: str, path: Path) -> JsonObject:
    """An exam's dataset block with its paths made absolute (the runs' configs live elsewhere)."""
    block = {**exam.dataset, "benchmark": exam.benchmark or benchmark}
    where = str(block.get("path", ""))
    if where and not where.startswith("hf://") and not Path(where).is_absolute():
        block["path"] = str(resolve_input(where, path).resolve())
    return block


def plan_generic(path: Path, data: Any, options: StudyOptions, registry: Registry) -> GenericPlan:
    """Check the whole study and prepare every model's run; no model is loaded.

    ``options.limit`` replaces the config's ``limit``, ``options.executor`` the study's
    executor type, ``options.allow_errors`` sets ``compare.allow_errors``.  Models the executor
    runs on other machines (its settings' ``elsewhere``: Slurm's nodes, a joined Ray cluster)
    are checked without this machine's devices
    (:func:`~enade_bench.backends.preload.devices_elsewhere`).
    """
    if options.limit is not None:
        data = {**data, "limit": options.limit}
    cfg = parse_study_config(data, path)
    settings = executor_settings(cfg.executor, options.executor)
    with devices_elsewhere() if settings.elsewhere else nullcontext():
        plan = _plan_models(cfg, path, registry, options.progress, settings)
    if options.allow_errors:
        compare = plan.config.compare.model_copy(update={"allow_errors": True})
        plan = replace(plan, config=plan.config.model_copy(update={"compare": compare}))
    return plan


def _plan_models(
    cfg: StudyConfig, path: Path, registry: Registry, progress: bool, settings: ExecutorSettings
) -> GenericPlan:
    """:func:`plan_generic` after the study file is read: each model's run, prepared and checked."""
    output = resolve_output(cfg.output, path).resolve()  # relative: from the study file's folder
    check_output_dir(output, f"{path}: output")
    models: list[PlannedModel] = []
    labels: list[str] = []
    for index, entry in enumerate(cfg.models):
        parts = model_parts(entry, index, path)
        label = parts.label
        if label.casefold() in {x.casefold() for x in labels}:  # M1 and m1: one folder on some disks
            raise UserError(
                f"{path}: models.{index}: the label {label!r} is used twice (case aside); give a 'name'"
            )
        labels.append(label)
        for exam in cfg.exam_list:
            models.append(_plan_run(cfg, path, registry, progress, (index, parts), exam, output))
    return GenericPlan(cfg, path, output, models, settings)


def _plan_run(
    cfg: StudyConfig,
    path: Path,
    registry: Registry,
    progress: bool,
    model: tuple[int, ModelParts],
    exam: StudyExam,
    output: Path,
) -> PlannedModel:
    """One model × exam: its experiment config, prepared and checked (nothing loads)."""
    index, parts = model
    label = parts.label
    folder = output / "runs" / label / exam.name if exam.name else output / "runs" / label
    evaluation = {**cfg.evaluation, **({"batch_size": parts.batch_size} if parts.batch_size else {})}
    where = f"{path}: models.{index} ({label})" + (f" on exam {exam.name}" if exam.name else "")
    exp_cfg = parse_config(
        {
            "name": f"{label}_{exam.name}" if exam.name else label,
            "description": f"study {cfg.name}: {label}" + (f" on {exam.name}" if exam.name else ""),
            "dataset": _dataset(exam, cfg.benchmark, path),
            "model": parts.model,
            "evaluation": evaluation,
            "output": {"dir": str(folder)},
            **({"prompts": parts.prompts} if parts.prompts else {}),
        },
        where,
    )
    benchmark = registry.for_config(exp_cfg, path)
    strategies = cfg.strategies or list(getattr(benchmark, "study_strategies", ALL_STRATEGIES))
    options = RunOptions(strategies=strategies, limit=cfg.limit, output_dir=folder, progress=progress)
    try:
        exp = benchmark.prepare(exp_cfg, path, options)
    except UserError as exc:  # the exam's data: named by the study file and the exam, as the user wrote it
        if not str(exc).startswith("dataset."):
            raise
        raise UserError(f"{path}: " + (f"exam {exam.name}: " if exam.name else "") + str(exc)) from None
    check_backend(exp_cfg.model, {s.method for s in exp.strategies}, [s.id or label for s in exp.strategies])
    return PlannedModel(label, exp_cfg, folder, exp, options, exam.name, benchmark, strategies)
