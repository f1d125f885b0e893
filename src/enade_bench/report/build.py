"""One call from results folders to a report folder: tables, figures, ``index.html``.

The report renders: the core tables and figures of every run (accuracy, position
bias, extraction) and the :class:`~enade_bench.report.section.Section` of every
analysis the caller ran on those runs (an exam's psychometrics, the comparison).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from enade_bench.report.browser import browser_data
from enade_bench.report.figures import FigureFile, core_figures
from enade_bench.report.html import Lead, render_html
from enade_bench.report.loader import RunEntry
from enade_bench.report.section import Section
from enade_bench.report.table import Table
from enade_bench.report.tables import core_tables
from enade_bench.results.csv_safe import write_csv
from enade_bench.results.store import atomic_write_text


@dataclass
class Report:
    """What :func:`write_report` produced.

    Attributes
    ----------
    entries : list of RunEntry
        The runs read.
    tables : list of Table
        Every table (``files`` holds its CSV and LaTeX paths).
    figures : list of FigureFile
        Every figure (PNG and PDF paths).
    notes : list of str
        What the analyses said (skipped steps, missing data).
    index : Path
        The ``index.html``.
    warnings : list of str
        What the reader must see first: runs with records in error, stale results files.
    """

    entries: list[RunEntry]
    tables: list[Table]
    figures: list[FigureFile]
    notes: list[str]
    index: Path
    warnings: list[str] = field(default_factory=list)


def write_report(
    entries: Sequence[RunEntry],
    out: Path | str,
    sections: Sequence[Section] = (),
    folders: Sequence[Path] = (),
    title: str = "enade-bench report",
    lead: Sequence[Table] | Lead = (),
) -> Report:
    """Write the report of ``entries`` and the analyses' ``sections`` to ``out``.

    Writes ``out/tables/<name>.csv`` and ``.tex``, ``out/figures/<name>.png`` and
    ``.pdf``, each section's CSV files at ``out/``, and ``out/index.html``
    (self-contained), last. ``lead`` tables (a study's verdict, the comparison) come first
    on the page; before them, what each run warns of (errors, a stale results file).
    """
    out = Path(out)
    opening = lead if isinstance(lead, Lead) else Lead(tuple(lead))
    extra = Section.combine(sections)
    tables = [*opening.tables, *core_tables(entries, mark_best=not opening.comparison), *extra.tables]
    for table in tables:
        table.write(out / "tables")
    figures = [*opening.figures, *core_figures(entries, out / "figures"), *extra.figures]
    for name, frame in extra.files.items():
        write_csv(out / name, frame, index=False, float_format="%.6g")
    index = out / "index.html"
    warnings = [w for e in entries for w in e.warnings]
    page = render_html(
        entries,
        [t for t in tables if t not in opening.tables],
        figures,
        list(folders),
        extra.notes,
        title,
        opening,
        warnings,
        browser_data(entries, extra.questions),
    )
    atomic_write_text(index, page)
    return Report(list(entries), tables, figures, extra.notes, index, warnings)
