"""The ENEM study as the study pipeline runs it (:class:`~enade_bench.study.plan.PlannedStudy`).

:func:`plan_enem_study` checks the study (:func:`~.plan.plan_study`) and wraps it:
:meth:`EnemStudy.tasks` prepares one run per model × area × language and makes one task per
model × exam (the one planner, :func:`~enade_bench.study.planner.exam_tasks`);
:meth:`EnemStudy.report` analyses the runs of the models that did not fail
(:func:`~.analysis.analyse_study`: θ, person fit, the verdict) and writes the report folder
(:func:`~.report.write_study_report`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from enade_bench.benchmarks.base import Benchmark
from enade_bench.benchmarks.enem.study.analysis import analyse_study
from enade_bench.benchmarks.enem.study.config import StudyConfig
from enade_bench.benchmarks.enem.study.plan import StudyPlan, plan_study
from enade_bench.benchmarks.enem.study.report import write_study_report
from enade_bench.config import validate_mapping
from enade_bench.errors import as_given
from enade_bench.report.folder import ReportFolder
from enade_bench.results.summary import JsonObject
from enade_bench.runner.plan import RunOptions
from enade_bench.study.executors import ExecutorSettings, executor_settings
from enade_bench.study.plan import StudyOptions, StudyResult
from enade_bench.study.planner import ExamRun, exam_tasks
from enade_bench.study.tasks import ModelTask, TaskRun

_VERDICT_COLUMNS = [
    "model",
    "predictions",
    "area",
    "language",
    "theta",
    "se",
    "score",
    "aberrant_share",
    "relative_information",
    "verdict",
]


@dataclass(frozen=True)
class EnemStudy:
    """A checked ENEM study, its command-line choices and the benchmark its runs run on."""

    plan: StudyPlan
    options: StudyOptions
    benchmark: Benchmark

    @property
    def output(self) -> Path:
        return self.plan.output

    @property
    def report_dir(self) -> Path:
        return self.plan.report_dir

    def settings(self) -> ExecutorSettings:
        """The study's ``executor:`` block, or ``--executor``."""
        return executor_settings(self.plan.config.executor, self.options.executor)

    def tasks(self) -> list[ModelTask]:
        """The tasks of the study, every run prepared: one per model × area × language.

        Every run is prepared (data, prompts, plans) here, before the first model loads, so a
        bad file stops the study before any model call.
        """
        plan, runs = self.plan, []
        for run in plan.runs:
            opts = RunOptions(limit=plan.config.limit, output_dir=run.folder, resume=True, progress=False)
            exp = self.benchmark.prepare(run.config, run.config_path, opts)
            runs.append(
                ExamRun(
                    run.model,
                    f"{run.area}_{run.language}",
                    TaskRun(
                        run.config,
                        run.config_path,
                        exp,
                        opts,
                        self.benchmark,
                        f"{run.model} on ENEM {plan.config.year} {run.area} {run.language} -> {as_given(run.folder)}",
                    ),
                )
            )
        return exam_tasks(runs, plan.output)

    def failure_label(self, task: ModelTask) -> str:
        """A failed task is named as its model (the verdict leaves the whole model out)."""
        return task.model or task.label

    def report(self, folder: ReportFolder, failed: Mapping[str, str]) -> StudyResult | None:
        """The verdict, the psychometrics and the comparison of the models that did not fail."""
        plan = self.plan
        kept = dataclasses.replace(plan, runs=[r for r in plan.runs if r.model not in failed])
        study = analyse_study(kept)
        if study.verdict.empty:
            return None
        allow_errors = self.options.allow_errors or plan.config.allow_errors
        with folder:
            report = write_study_report(
                study,
                plan.report_dir,
                plan.config.verdict,
                plan.attributes_source,
                f"ENEM {plan.config.year} study: {plan.config.name}",
                allow_errors,
                family=plan.config.family,
            )
        summary = study.verdict[_VERDICT_COLUMNS].to_string(index=False, float_format=lambda v: f"{v:.3f}")
        return StudyResult(summary, report.index, report.notes, warnings=report.warnings)


def plan_enem_study(path: Path, data: JsonObject, options: StudyOptions, benchmark: Benchmark) -> EnemStudy:
    """Check an ENEM study YAML (read from ``path``) and plan it; ``options.limit`` replaces its ``limit``."""
    plan = plan_study(path, validate_mapping(StudyConfig, data, path))
    if options.limit is not None:
        plan = dataclasses.replace(plan, config=plan.config.model_copy(update={"limit": options.limit}))
    return EnemStudy(plan, options, benchmark)
