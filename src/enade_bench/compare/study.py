"""The comparison of a study's runs, for its report (``enade-bench study``, and ``report`` of two models or more)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from enade_bench.compare.analysis import DEFAULT_FAMILY, CompareOptions, compare_table
from enade_bench.compare.render import comparison_section
from enade_bench.compare.table import from_entries
from enade_bench.report.html import Lead
from enade_bench.report.loader import RunEntry
from enade_bench.report.section import Section
from enade_bench.report.table import Table

__all__ = ["StudyComparison", "comparison_lead", "study_comparison"]


@dataclass
class StudyComparison:
    """The comparison's section, the tables that open the page, and Table 1 as plain text."""

    section: Section
    lead: list[Table]
    summary: str


def study_comparison(
    entries: Sequence[RunEntry],
    out: Path,
    by: Sequence[str],
    adjust: str,
    alpha: float,
    family: str = DEFAULT_FAMILY,
    allow_errors: bool = False,
    *,
    exams: Mapping[Path, tuple[str, str]] | None = None,
) -> StudyComparison:
    """Compare the models among ``entries`` (one model alone: its scores, no pairs).

    ``exams``: the model and exam of each run folder (a study of several exams): the models are
    compared per exam (an ``exam`` column, the first of the ``by`` fields), never across exams.

    Raises
    ------
    UserError
        Some run has error records and ``allow_errors`` is false (it is incomplete).
    """
    if exams:
        named = [(e, exams[e.path.parent.resolve()]) for e in entries]
        parts = [from_entries([e]).assign(model=model, exam=exam) for e, (model, exam) in named]
        table, by = pd.concat(parts, ignore_index=True), ["exam", *by]
    else:
        table = from_entries(entries)
    if table["model"].nunique() < 2:
        section = Section(
            notes=[f"one model has results ({', '.join(table['model'].unique())}): nothing to compare"]
        )
        return StudyComparison(section, [], section.notes[0])
    comp = compare_table(table, CompareOptions(tuple(by), adjust, alpha, family, allow_errors))
    section = comparison_section(comp, out / "figures")
    lead = section.tables[:1]
    section.tables = section.tables[1:]
    return StudyComparison(section, lead, lead[0].display.to_string())


def comparison_lead(comparison: StudyComparison) -> tuple[Section, Lead, str]:
    """A :func:`study_comparison` as the report opens with it: its section (figures, notes,
    files), the tables that open the page (Table 1 with compact letters, the pairs, the flips;
    the accuracies and the forest plots) and Table 1 as text."""
    tables = [*comparison.lead, *comparison.section.tables]
    figures = comparison.section.figures
    comparison.section.tables, comparison.section.figures = [], []
    return (
        comparison.section,
        Lead(tables, "Comparison", comparison=bool(comparison.lead), figures=figures),
        comparison.summary,
    )
