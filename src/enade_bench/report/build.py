"""One call from results folders to a report folder: tables, figures, ``index.html``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from enade_bench.report.figures import FigureFile, core_figures
from enade_bench.report.html import render_html
from enade_bench.report.loader import RunEntry, load_results
from enade_bench.report.psychometric import Psychometrics, analyse
from enade_bench.report.psyfigures import psychometric_figures
from enade_bench.report.psytables import psychometric_tables
from enade_bench.report.table import Table
from enade_bench.report.tables import core_tables


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
    psychometrics : Psychometrics
        The analysis of ENEM runs (empty when there are none).
    index : Path
        The ``index.html``.
    """

    entries: list[RunEntry]
    tables: list[Table]
    figures: list[FigureFile]
    psychometrics: Psychometrics
    index: Path

    def table(self, name: str) -> Table:
        """The table called ``name`` (``KeyError`` when absent)."""
        for table in self.tables:
            if table.name == name:
                return table
        raise KeyError(f"no table {name!r}; have {[t.name for t in self.tables]}")


def build_tables(entries: Sequence[RunEntry], psy: Psychometrics | None = None) -> list[Table]:
    """All tables the runs support (psychometric ones when ``psy`` has exams)."""
    return core_tables(entries) + (psychometric_tables(psy) if psy is not None else [])


def write_report(
    folders: Sequence[Path | str],
    out: Path | str,
    enem_data: Path | None = None,
    psychometrics: bool = True,
    seed: int = 20240101,
    title: str = "enade-bench report",
) -> Report:
    """Read every run under ``folders`` and write the report to ``out``.

    Writes ``out/tables/<name>.csv`` and ``.tex``, ``out/figures/<name>.png``
    and ``.pdf``, and ``out/index.html`` (self-contained).

    Parameters
    ----------
    folders : sequence of path
        Results folders; ``*_old`` folders are skipped.
    out : path
        Report folder (created).
    enem_data : Path, optional
        Folder with INEP's ``inep_items.csv`` (found automatically otherwise).
    psychometrics : bool
        Analyse ENEM runs with IRT (default True).
    seed : int
        Seed of the random baseline and the simulated human population.
    title : str
        Title of the HTML page.
    """
    out = Path(out)
    roots = [Path(f) for f in folders]
    entries = load_results(roots)
    psy = analyse(entries, enem_data, seed) if psychometrics else Psychometrics([], [])
    tables = build_tables(entries, psy)
    for table in tables:
        table.write(out / "tables")
    figures = core_figures(entries, out / "figures") + psychometric_figures(psy, out / "figures")
    index = out / "index.html"
    index.write_text(render_html(entries, tables, figures, roots, psy.skipped, title), encoding="utf-8")
    return Report(entries, tables, figures, psy, index)
