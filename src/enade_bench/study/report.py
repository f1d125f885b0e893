"""The report of a generic study: the comparison across models first, then every model's runs.

Models keep the order of the study config, in every table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from enade_bench.compare.comparison import DEFAULT_FAMILY
from enade_bench.errors import UserError
from enade_bench.report.build import write_report
from enade_bench.report.folder import ReportFolder
from enade_bench.report.html import Lead
from enade_bench.report.loader import RunEntry, load_results
from enade_bench.report.section import Section
from enade_bench.study.generic import GenericPlan


@dataclass
class GenericReport:
    """What :func:`write_generic_report` wrote."""

    summary: str
    index: Path
    notes: list[str]
    warnings: list[str]


def comparison_lead(entries: Sequence[RunEntry], out: Path, by: Sequence[str], adjust: str, alpha: float,
                    family: str = DEFAULT_FAMILY, allow_errors: bool = False, *,
                    exams: Mapping[Path, tuple[str, str]] | None = None) -> tuple[Section, Lead, str]:  # fmt: skip
    """The comparison of the models among ``entries``: its section (figures, notes, files), the
    tables that open the page (Table 1 with compact letters, the pairs, the flips) and Table 1 as text.
    ``exams``: each run folder's model and exam (several exams: the models compared per exam).
    """
    from enade_bench.compare.study import study_comparison  # noqa: PLC0415 (pandas/scipy at use)

    comparison = study_comparison(entries, out, by, adjust, alpha, family, allow_errors, exams=exams)
    tables = [*comparison.lead, *comparison.section.tables]
    figures = comparison.section.figures  # the accuracies and the forest plots open the page
    comparison.section.tables, comparison.section.figures = [], []
    return (
        comparison.section,
        Lead(tables, "Comparison", comparison=bool(comparison.lead), figures=figures),
        comparison.summary,
    )


def left_out_notes(failed: Mapping[str, str]) -> list[str]:
    """One note per model that failed and is left out of the comparison."""
    return [f"{label} is left out of the comparison: it failed ({error}); rerun the same command "
            "once the cause is fixed (finished runs are kept)" for label, error in failed.items()]  # fmt: skip


def write_generic_report(
    plan: GenericPlan, folder: ReportFolder, failed: Mapping[str, str] | None = None
) -> GenericReport | None:
    """The report of a study, into its ``folder`` (``output/report``, opened when the study
    started); ``None`` when no model has results.

    A model in ``failed`` (label -> why) is left out, whatever its folder holds, and named in a note.
    """
    failed = failed or {}
    folders = [m.folder for m in plan.models if m.folder.is_dir() and m.task_label not in failed]
    try:
        entries = load_results(folders) if folders else []
    except UserError:
        entries = []
    if not entries:
        return None
    settings = plan.config.compare
    title = f"{plan.config.benchmark} study: {plan.config.name}"
    exams = {m.folder.resolve(): (m.label, m.exam) for m in plan.models} if plan.config.exams else None
    with folder:
        section, lead, summary = comparison_lead(entries, plan.report_dir, settings.by, settings.adjust,
                                                 settings.alpha, settings.family, settings.allow_errors,
                                                 exams=exams)  # fmt: skip
        report = write_report(entries, plan.report_dir, [section], folders, title, lead)
    return GenericReport(summary, report.index, [*left_out_notes(failed), *report.notes], report.warnings)
