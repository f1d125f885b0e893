"""The one study pipeline: a planned study's tasks run or resumed, then its exam's report.

Every exam's study comes here planned (:class:`~enade_bench.study.plan.PlannedStudy`:
everything checked, every run prepared, nothing loaded): :func:`run_planned` opens the report
folder, runs the tasks through the study's executor (:func:`~enade_bench.study.execute.execute`)
and hands the outcomes to the exam's report; :func:`describe_planned` is ``study --dry-run``.
From a study YAML to a planned study is the registry's and the exam's job
(:func:`enade_bench.benchmarks.load.run_study`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

from enade_bench.errors import UserError
from enade_bench.report.folder import ReportFolder
from enade_bench.results.safe_write import link_refusal, output_root
from enade_bench.study.execute import ExecuteOptions, describe_plan, execute
from enade_bench.study.plan import PlannedStudy, StudyOptions, StudyResult


def run_planned(path: Path, plan: PlannedStudy, opts: StudyOptions) -> StudyResult:
    """Run or resume every task of a planned study (unless ``--report-only``), then write its report.

    The report folder is opened (checked, an earlier report's files set aside) before any
    model loads, and the executor checked before the first task starts.  A task that fails
    is left out of the report and named in ``failed``.
    """
    folder = ReportFolder.open(plan.report_dir, f"{path}: the study's report folder", plan.output)
    failed: dict[str, str] = {}
    if opts.run_models:
        settings = plan.settings()
        _refuse_linked_runs(plan.output)
        with output_root(plan.output):  # the runs' files: never through a linked folder of the study
            tasks = plan.tasks()
            options = ExecuteOptions(opts.progress, opts.backend_factory, opts.log, settings, opts.alert)
            outcomes = execute(tasks, plan.output, options)
        for task, outcome in zip(tasks, outcomes, strict=True):
            if outcome.error is not None:
                failed[plan.failure_label(task)] = outcome.error
    listed = [f"{label}: {error}" for label, error in failed.items()]
    report = plan.report(folder, failed)
    if report is None:
        return _nothing_to_report(path, plan.output, listed)
    return dataclasses.replace(report, notes=[*left_out_notes(failed), *report.notes], failed=listed)


def describe_planned(plan: PlannedStudy) -> list[str]:
    """``study --dry-run``: the planned study's tasks described (runs, items, the resources each
    asks of the executor); no model loads, nothing is written."""
    settings = plan.settings()
    return describe_plan(plan.tasks(), plan.output, settings)


def left_out_notes(failed: Mapping[str, str]) -> list[str]:
    """One note per model that failed and is left out of the comparison."""
    return [
        f"{label} is left out of the comparison: it failed ({error}); rerun the same command "
        "once the cause is fixed (finished runs are kept)"
        for label, error in failed.items()
    ]


def _refuse_linked_runs(output: Path) -> None:
    """A runs folder that is a symbolic link: refused before any model runs (nothing created)."""
    runs = output / "runs"
    if runs.is_symlink():
        raise link_refusal(runs, output)


def _nothing_to_report(path: Path, output: Path, failed: list[str]) -> StudyResult:
    """No task has results: every one failed (a result without a report, exit status 3), or
    none ran (``--report-only`` before any run: bad input, one ``error:`` line, exit status 2)."""
    if not failed:
        raise UserError(
            f"{path}: no model of the study has results under {output / 'runs'}; "
            "run without --report-only first"
        )
    return StudyResult("", None, [], failed)
