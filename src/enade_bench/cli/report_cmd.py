"""``enade-bench report RESULTS_DIR [RESULTS_DIR ...] --out DIR``: tables, figures, HTML.

The report renders the runs' tables and figures and, for each exam among the runs
whose benchmark has analyses of its own (ENEM's psychometrics), that benchmark's
section.  Runs of two or more models (experiments) also get the comparison
(docs/comparisons.md), which opens the page: Table 1 with compact letters, then the pairs and
item flips; the per-run tables follow, with no "best" in bold.

Before any table, the page and the command's output say what the reader must know:
runs with records in error (not scored) and results files older than their log.  The
``--out`` folder is cleaned of what an earlier report wrote there, and only of that
(:mod:`enade_bench.report.folder`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from enade_bench.benchmarks.commands import extend
from enade_bench.cli.options import add_include_path


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser("report", help="tables (CSV, LaTeX), figures and index.html from results")
    parser.add_argument(
        "results",
        nargs="+",
        type=Path,
        metavar="RESULTS_DIR",
        help="results folder(s); folders ending in _old are skipped",
    )
    parser.add_argument("--out", type=Path, required=True, help="report folder to write")
    extend("report", parser)  # the exams' data folders (ENEM's --enem-data): ReportOptions.data
    parser.add_argument(
        "--no-psychometrics", action="store_true", help="skip the exams' own analyses (ENEM's IRT analysis)"
    )
    parser.add_argument("--seed", type=int, default=20240101, help="seed of baseline and human simulation")
    parser.add_argument("--title", default="enade-bench report", help="title of index.html")
    parser.add_argument(
        "--compare-by",
        action="append",
        default=[],
        metavar="FIELD",
        help="compare the models separately per value of this field (repeatable)",
    )
    parser.add_argument(
        "--adjust",
        choices=["holm", "bh"],
        default="holm",
        help="multiplicity adjustment of the comparison's pairs (default holm)",
    )
    add_include_path(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from enade_bench.cli.report_make import handle as make_report  # noqa: PLC0415 (pandas, matplotlib: at use)

    return make_report(args)
