"""``enade-bench report RESULTS_DIR [RESULTS_DIR ...] --out DIR``: tables, figures, HTML."""

from __future__ import annotations

import argparse
from pathlib import Path

from enade_bench.errors import UserError
from enade_bench.report.build import write_report
from enade_bench.results.writable import check_output_dir


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser("report", help="tables (CSV, LaTeX), figures and index.html from results")
    parser.add_argument("results", nargs="+", type=Path, metavar="RESULTS_DIR",
                        help="results folder(s); folders ending in _old are skipped")  # fmt: skip
    parser.add_argument("--out", type=Path, required=True, help="report folder to write")
    parser.add_argument("--enem-data", type=Path, help="folder with INEP's inep_items.csv (ENEM runs)")
    parser.add_argument("--no-psychometrics", action="store_true", help="skip the IRT analysis")
    parser.add_argument("--seed", type=int, default=20240101, help="seed of baseline and human simulation")
    parser.add_argument("--title", default="enade-bench report", help="title of index.html")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:

    check_output_dir(args.out, "--out")
    if args.enem_data is not None and not (args.enem_data / "inep_items.csv").is_file():
        raise UserError(f"--enem-data: {args.enem_data} holds no inep_items.csv")
    report = write_report(
        args.results, args.out, args.enem_data, not args.no_psychometrics, args.seed, args.title
    )
    for note in report.psychometrics.skipped:
        print(f"note: {note}")
    print(f"read {len(report.entries)} results file(s); wrote {len(report.tables)} tables, "
          f"{len(report.figures)} figures")  # fmt: skip
    print(f"wrote {report.index}")
    return 0
