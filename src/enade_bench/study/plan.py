"""What an exam's study hands the study pipeline: a planned study (:class:`PlannedStudy`).

Every study, whatever its exam, goes the same way (:mod:`enade_bench.study.run`): the exam
checks the study YAML and prepares every run before any model loads (its
:class:`~enade_bench.benchmarks.base.StudyBenchmark` ``plan_study``, or the study every exam
has, :mod:`enade_bench.benchmarks.study`), the pipeline runs its tasks through the executor,
and the exam writes its report from the runs on disk.  The pipeline knows no exam: what it
needs of one is this module's protocol.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from enade_bench.report.folder import ReportFolder
from enade_bench.study.executors import ExecutorSettings
from enade_bench.study.tasks import BackendFactory, ModelTask


@dataclass(frozen=True)
class StudyOptions:
    """The command line's choices for one study (an exam's plan reads ``limit``, ``executor``,
    ``progress`` and ``allow_errors``; the pipeline the rest).

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


@dataclass
class StudyResult:
    """What one study did: its report (written by its exam), and the tasks that failed.

    Attributes
    ----------
    summary
        The study's main table as plain text (ENEM: the verdict; otherwise Table 1 across models).
    index
        The report's ``index.html``; ``None`` when every task failed (no report: exit status 3).
    notes
        What the reader should know (models left out, skipped analyses, excluded questions).
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


class PlannedStudy(Protocol):
    """A study checked and planned by its exam: where it writes, its tasks, its report."""

    @property
    def output(self) -> Path:
        """The study folder (``runs/`` and ``report/`` below it)."""
        ...

    @property
    def report_dir(self) -> Path:
        """The study's one report folder."""
        ...

    def settings(self) -> ExecutorSettings:
        """Where the tasks run: the study's ``executor:`` block, or ``--executor``, checked."""
        ...

    def tasks(self) -> list[ModelTask]:
        """Every task of the study, each run prepared (data, prompts, plans); no model loads."""
        ...

    def failure_label(self, task: ModelTask) -> str:
        """How a failed task is named in the report and on the command line (a model, or a model × exam)."""
        ...

    def report(self, folder: ReportFolder, failed: Mapping[str, str]) -> StudyResult | None:
        """The report from the runs on disk into ``folder`` (opened when the study started),
        leaving out the ``failed`` ones (label -> why; the pipeline adds a note for each and
        lists them); ``None`` when no run has results."""
        ...
