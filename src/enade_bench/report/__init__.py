"""Reports from results folders: tables (CSV, LaTeX), figures (PNG, PDF) and ``index.html``.

The report renders what it is given: the runs' core tables and figures, and the
:class:`Section` of each analysis (an exam's psychometrics, the model comparison).

Public entry points:

* :func:`write_report` — a report folder from runs and sections.
* :func:`load_results` — the runs of one or more results folders.
* :func:`core_tables`, :func:`core_figures` and the single figure functions of
  :mod:`~enade_bench.report.figures` — tables and figures you can restyle.
* :class:`Section`, :class:`Step`, :func:`run_steps` — what analyses hand the report.
"""

from enade_bench.report.build import Report, write_report
from enade_bench.report.figures import (
    FigureFile,
    comparison_figure,
    core_figures,
    position_figure,
    summary_figure,
)
from enade_bench.report.loader import RunEntry, load_results
from enade_bench.report.section import Section, Step, StepSkipped, run_steps
from enade_bench.report.table import Table
from enade_bench.report.tables import core_tables

__all__ = [
    "FigureFile",
    "Report",
    "RunEntry",
    "Section",
    "Step",
    "StepSkipped",
    "Table",
    "comparison_figure",
    "core_figures",
    "core_tables",
    "load_results",
    "position_figure",
    "run_steps",
    "summary_figure",
    "write_report",
]
