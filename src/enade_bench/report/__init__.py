"""Reports from results folders: tables (CSV, LaTeX), figures (PNG, PDF) and ``index.html``.

Public entry points:

* :func:`write_report` — everything, as ``enade-bench report`` does.
* :func:`load_results` — the runs of one or more results folders.
* :func:`build_tables`, :func:`core_tables`, :func:`psychometric_tables` — tables.
* :func:`core_figures`, :func:`psychometric_figures` and the single figure
  functions of :mod:`~enade_bench.report.figures` and
  :mod:`~enade_bench.report.psyfigures` — figures you can restyle.
* :func:`analyse` — the IRT analysis of ENEM runs.
"""

from enade_bench.report.build import Report, build_tables, write_report
from enade_bench.report.figures import (
    FigureFile,
    comparison_figure,
    core_figures,
    position_figure,
    summary_figure,
)
from enade_bench.report.loader import RunEntry, load_results
from enade_bench.report.psychometric import ExamAnalysis, Psychometrics, analyse
from enade_bench.report.psyfigures import psychometric_figures
from enade_bench.report.psytables import psychometric_tables
from enade_bench.report.table import Table
from enade_bench.report.tables import core_tables

__all__ = [
    "ExamAnalysis",
    "FigureFile",
    "Psychometrics",
    "Report",
    "RunEntry",
    "Table",
    "analyse",
    "build_tables",
    "comparison_figure",
    "core_figures",
    "core_tables",
    "load_results",
    "position_figure",
    "psychometric_figures",
    "psychometric_tables",
    "summary_figure",
    "write_report",
]
