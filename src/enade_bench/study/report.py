"""The report of a generic study: every model's runs, then the comparison across models."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from enade_bench.errors import UserError
from enade_bench.report.build import write_report
from enade_bench.report.loader import load_results
from enade_bench.study.generic import GenericPlan


@dataclass
class GenericReport:
    """What :func:`write_generic_report` wrote."""

    summary: str
    index: Path
    notes: list[str]


def write_generic_report(plan: GenericPlan) -> GenericReport | None:
    """The report folder of a study (``output/report``); ``None`` when no model has results."""
    folders = [m.folder for m in plan.models if m.folder.is_dir()]
    try:
        entries = load_results(folders) if folders else []
    except UserError:
        entries = []
    if not entries:
        return None
    from enade_bench.compare.study import study_comparison  # noqa: PLC0415 (pandas/scipy at use)

    settings = plan.config.compare
    comparison = study_comparison(
        entries,
        plan.report_dir,
        settings.by,
        settings.adjust,
        settings.alpha,
        settings.family,
        settings.allow_errors,
    )
    title = f"{plan.config.benchmark} study: {plan.config.name}"
    report = write_report(entries, plan.report_dir, [comparison.section], folders, title, comparison.lead)
    return GenericReport(comparison.summary, report.index, report.notes)
