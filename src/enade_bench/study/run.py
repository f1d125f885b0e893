"""``enade-bench study``: check the plan, run or resume the models, write the report.

One command for many models on every benchmark.  The study YAML's ``benchmark`` decides
what runs and which analyses follow: ENEM (``benchmark: enem``, or a study with a
``year``) keeps its own study (option shuffles, θ, person fit, the verdict); every other
benchmark runs its study strategies per model and ends with the comparison across
models (:mod:`enade_bench.compare`: Table 1 with compact letters, the pairwise table and the
item flips).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from enade_bench.benchmarks.enem.study.analysis import analyse_study
from enade_bench.benchmarks.enem.study.plan import plan_study
from enade_bench.benchmarks.enem.study.report import write_study_report
from enade_bench.config import read_yaml
from enade_bench.errors import UserError
from enade_bench.report.folder import ReportFolder
from enade_bench.results.safe_write import link_refusal, output_root
from enade_bench.runner.executors import LocalSettings, executor_settings
from enade_bench.study.execute import ExecuteOptions, describe_plan, enem_tasks, execute, run_planned
from enade_bench.study.generic import generic_tasks, plan_generic
from enade_bench.study.report import left_out_notes, write_generic_report
from enade_bench.study.tasks import BackendFactory

_VERDICT_COLUMNS = ["model", "predictions", "area", "language", "theta", "se", "score", "aberrant_share",
                    "relative_information", "verdict"]  # fmt: skip


@dataclass
class StudyResult:
    """What one ``study`` command did.

    Attributes
    ----------
    summary
        The study's main table as plain text (ENEM: the verdict; otherwise Table 1 across models).
    index
        The report's ``index.html``; ``None`` when every task failed (no report: exit status 3).
    notes
        What the reader should know (skipped analyses, excluded questions).
    failed
        ``model: reason`` of each model that failed to load or run (the others ran).
    warnings
        What the reader must see first: runs with records in error, stale results files.
    """

    summary: str
    index: Path | None
    notes: list[str]
    failed: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def study_benchmark(path: Path, data: Any) -> str:
    """The benchmark a study YAML names (``enem`` for a study with a ``year`` and no ``benchmark``)."""
    if not isinstance(data, dict):
        raise UserError(f"{path}: expected a YAML mapping at the top level")
    name = data.get("benchmark", "enem" if "year" in data else None)
    if name is None:
        raise UserError(f"{path}: missing required key 'benchmark' (the exam: enade, eeval, generic, enem, "
                        "a plug-in's name or folder)")  # fmt: skip
    return str(name)


@dataclass(frozen=True)
class StudyOptions:
    """The command line's choices for one study.

    Attributes
    ----------
    run_models
        ``False`` (``--report-only``): write the report from the runs on disk.
    progress
        The study's bar (and its start/end lines through ``log``).
    backend_factory
        Loads a model from its experiment config (tests; default ``create_backend``).
    log
        Where the progress lines go.
    allow_errors
        Compare runs with error records (``compare.allow_errors``).
    limit
        Only the first N questions (``--limit``, in place of the config's ``limit``).
    executor
        ``--executor``: ``local``, ``ray`` or ``slurm`` in place of the config's ``executor.type``.
    """

    run_models: bool = True
    progress: bool = False
    backend_factory: BackendFactory | None = None
    log: Callable[[str], None] | None = None
    allow_errors: bool = False
    limit: int | None = None
    executor: str | None = None
    #: Where a failed or lost task is named as it ends (``--quiet`` too); default: ``log``.
    alert: Callable[[str], None] | None = None


def run_study(config: Path | str, options: StudyOptions | None = None, **changes: Any) -> StudyResult:
    """Run or resume a study and write its report folder.

    Everything in the config, the data and the prompts is checked before any model is
    loaded, and the executor before the first model starts.  ``changes``: fields of
    :class:`StudyOptions` (``run_study(path, backend_factory=...)``).  A model that fails
    is left out of the comparison and named in the report and in ``failed``.
    """
    opts = dataclasses.replace(options or StudyOptions(), **changes)
    executor_settings(LocalSettings(), opts.executor)  # a bad --executor: one line before anything
    path = Path(config)
    data = read_yaml(path, "study config")
    if study_benchmark(path, data) == "enem":
        return _enem_study(path, opts)
    if opts.limit is not None:
        data = {**data, "limit": opts.limit}
    plan = plan_generic(path, data, progress=opts.progress, executor=opts.executor)
    if opts.allow_errors:
        compare = plan.config.compare.model_copy(update={"allow_errors": True})
        plan = dataclasses.replace(plan, config=plan.config.model_copy(update={"compare": compare}))
    folder = ReportFolder.open(plan.report_dir, f"{path}: the study's report folder", plan.output)
    failed: dict[str, str] = {}
    if opts.run_models:
        _refuse_linked_runs(plan.output)
        with output_root(plan.output):  # the runs' files: never through a linked folder of the study
            outcomes = execute(generic_tasks(plan), plan.output,
                               ExecuteOptions(opts.progress, opts.backend_factory, opts.log, plan.executor,
                                              opts.alert))  # fmt: skip
        failed = {o.label: o.error for o in outcomes if o.error is not None}
    report = write_generic_report(plan, folder, failed)
    listed = [f"{label}: {error}" for label, error in failed.items()]
    if report is None:
        return _nothing_to_report(path, plan.output, listed)
    return StudyResult(report.summary, report.index, report.notes, listed, report.warnings)


def study_plan(config: Path | str, options: StudyOptions | None = None) -> list[str]:
    """``study --dry-run``: the study checked and planned as a run plans it, its tasks described
    (runs, items, the resources each asks of the executor); no model loads, nothing is written."""
    opts = options or StudyOptions()
    executor_settings(LocalSettings(), opts.executor)
    path = Path(config)
    data = read_yaml(path, "study config")
    if study_benchmark(path, data) == "enem":
        plan = plan_study(path)
        if opts.limit is not None:
            plan = dataclasses.replace(plan, config=plan.config.model_copy(update={"limit": opts.limit}))
        settings = executor_settings(plan.config.executor, opts.executor)
        return describe_plan(enem_tasks(plan), plan.output, settings)
    if opts.limit is not None:
        data = {**data, "limit": opts.limit}
    generic = plan_generic(path, data, executor=opts.executor)
    return describe_plan(generic_tasks(generic), generic.output, generic.executor)


def _enem_study(path: Path, opts: StudyOptions) -> StudyResult:
    plan = plan_study(path)
    folder = ReportFolder.open(plan.report_dir, f"{path}: the study's report folder", plan.output)
    if opts.limit is not None:
        plan = dataclasses.replace(plan, config=plan.config.model_copy(update={"limit": opts.limit}))
    allow_errors = opts.allow_errors or plan.config.allow_errors
    failed: dict[str, str] = {}
    if opts.run_models:
        settings = executor_settings(plan.config.executor, opts.executor)
        _refuse_linked_runs(plan.output)
        with output_root(plan.output):  # the runs' files: never through a linked folder of the study
            outcomes = run_planned(
                plan, ExecuteOptions(opts.progress, opts.backend_factory, opts.log, settings, opts.alert)
            )
        failed = {o.label: o.error for o in outcomes if o.error is not None}
    kept = dataclasses.replace(plan, runs=[r for r in plan.runs if r.model not in failed])
    study = analyse_study(kept)
    listed = [f"{label}: {error}" for label, error in failed.items()]
    if study.verdict.empty:
        return _nothing_to_report(path, plan.output, listed)
    with folder:
        report = write_study_report(study, plan.report_dir, plan.config.verdict, plan.attributes_source,
                                    f"ENEM {plan.config.year} study: {plan.config.name}", allow_errors,
                                    family=plan.config.family)  # fmt: skip
    summary = study.verdict[_VERDICT_COLUMNS].to_string(index=False, float_format=lambda v: f"{v:.3f}")
    notes = [*left_out_notes(failed), *report.notes]
    return StudyResult(summary, report.index, notes, listed, report.warnings)


def _refuse_linked_runs(output: Path) -> None:
    """A runs folder that is a symbolic link: refused before any model runs (nothing created)."""
    runs = output / "runs"
    if runs.is_symlink():
        raise link_refusal(runs, output)


def _nothing_to_report(path: Path, output: Path, failed: list[str]) -> StudyResult:
    """No task has results: every one failed (a result without a report, exit status 3), or
    none ran (``--report-only`` before any run: bad input, one ``error:`` line, exit status 2)."""
    if not failed:
        raise UserError(f"{path}: no model of the study has results under {output / 'runs'}; "
                        "run without --report-only first")  # fmt: skip
    return StudyResult("", None, [], failed)
