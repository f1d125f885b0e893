"""``enade-bench irt dif``: machine-human DIF over the ENEM runs in results folders.

::

    enade-bench irt dif RESULTS_DIR... [--enem-data DIR] [--alpha 0.05] [--unit model|pattern]
        [--debias] [--out DIR]

All runs (models × shuffles) that answered one ENEM booklet are analysed together
and every scored item is tested against the human 3PL. ``--unit model`` (default):
each model's shuffles are collapsed to its counts and tested exactly with the model
as the unit (:mod:`enade_bench.psychometrics.dif_clustered`); ``--unit pattern``:
each (model, shuffle) pattern one respondent (pooled, liberal with few models).
The analysis is :func:`enade_bench.psychometrics.dif.machine_human_dif`, run by
the ENEM DIF step that ``report`` and ``study`` run too
(:mod:`enade_bench.benchmarks.enem.steps.dif`).
Prints the flagged items (Benjamini-Hochberg q ≤ alpha), largest |δ| first;
``--out`` writes ``dif_<year>_<area>_<booklet>.csv`` (every item) atomically.
``--debias`` first applies the letter-prior correction to shuffled
first_token / log_prob runs (:func:`enade_bench.benchmarks.enem.steps.correct_entries`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from enade_bench.errors import UserError
from enade_bench.results.csv_safe import write_csv
from enade_bench.results.writable import check_output_dir

if TYPE_CHECKING:
    import pandas as pd


def register(sub: Any) -> None:
    p = sub.add_parser("dif", help="machine-human DIF per item (models vs the human 3PL) over ENEM runs")
    p.add_argument("results", nargs="+", type=Path, help="results folder(s)")
    p.add_argument("--enem-data", type=Path, help="folder with inep_items.csv (default: found)")
    p.add_argument("--alpha", type=float, default=0.05, help="false discovery rate (default 0.05)")
    p.add_argument(
        "--min-n", type=int, default=10, help="test items answered by at least N patterns (default 10)"
    )
    p.add_argument(
        "--unit",
        choices=("model", "pattern"),
        default="model",
        help="unit of evidence: model (default; shuffles collapsed per model) or pattern (pooled)",
    )
    p.add_argument("--debias", action="store_true", help="letter-prior corrected predictions (PriDe)")
    p.add_argument("--out", type=Path, help="folder for the per-item CSV files")
    p.set_defaults(handler=run_dif)


def run_dif(args: argparse.Namespace) -> int:
    """Handler of ``irt dif``: the ENEM DIF step's table, per exam (``steps.dif.dif_frame``)."""
    import pandas as pd  # noqa: PLC0415 (the command's own imports: not at --help)

    from enade_bench.benchmarks.enem.steps import enem_analysis  # noqa: PLC0415
    from enade_bench.benchmarks.enem.steps.dif import dif_frame  # noqa: PLC0415
    from enade_bench.benchmarks.enem.study.config import DifSettings  # noqa: PLC0415
    from enade_bench.report.loader import load_results  # noqa: PLC0415

    if not 0 < args.alpha < 1:
        raise UserError(f"--alpha {args.alpha}: expected a number in (0, 1)")
    if args.min_n < 1:
        raise UserError(f"--min-n {args.min_n}: expected an integer >= 1")
    if args.out is not None:
        check_output_dir(args.out, "--out")  # before any work: creatable and writable
    entries = load_results(args.results)
    predictions = ("corrected",) if args.debias else ("raw",)
    settings = DifSettings(alpha=args.alpha, min_n=args.min_n, unit=args.unit)
    analysis, raw = enem_analysis(entries, args.enem_data, predictions=predictions, dif=settings)
    if not raw.exams:
        reasons = "; ".join(raw.skipped) or "no run answered an ENEM exam"
        raise UserError(f"{', '.join(map(str, args.results))}: no ENEM response patterns ({reasons})")
    items, summary = dif_frame(analysis)
    for row in summary.to_dict("records"):
        language = f" {row['language']}" if row["language"] else ""
        label = f"ENEM {row['year']} {row['area']}{language} (booklet {row['booklet']})"
        _print_exam(label, pd.Series(row), items, args)
    for note in analysis.notes:
        print(f"note: {note}")
    return 0


def _print_exam(label: str, row: Any, items: pd.DataFrame, args: argparse.Namespace) -> None:
    """The flagged items of one exam, largest first, and its per-item CSV with ``--out``."""
    mine = items[
        (items["year"] == row["year"]) & (items["area"] == row["area"]) & (items["booklet"] == row["booklet"])
    ]
    flagged = mine[mine["flagged"].astype(bool)]
    flagged = flagged.reindex(flagged["delta"].abs().sort_values(ascending=False, kind="stable").index)
    print(
        f"{label}: {row['patterns']} patterns ({row['models']} model run(s)), {row['items']} items; "
        f"machines' θ ~ N({row['prior_mean']:.2f}, {row['prior_sd']:.2f}²); "
        f"{len(flagged)} item(s) flagged at q <= {args.alpha:g} (unit: {row['unit']}"
        + (f"; between-shuffle ρ {row['rho']}" if row["rho"] else "")
        + ")"
        + (" [letter-prior corrected]" if args.debias else "")
    )
    untested = row["items"] - row["tested"]
    if untested:
        print(
            f"  note: {untested} item(s) answered by fewer than {args.min_n} patterns are not tested (--min-n)"
        )
    for _, r in flagged.iterrows():
        print(
            f"  {r['item_id']:>10}  {r['direction']:<20} δ {r['delta']:+.2f}  observed {r['observed']:.2f} "
            f"vs expected {r['expected']:.2f}  p {r['p']:.2g}  q {r['q']:.2g}"
        )
    if args.out is not None:
        name = f"dif_{row['year']}_{row['area']}_{row['booklet']}{'_debiased' if args.debias else ''}.csv"
        table = mine.drop(columns=["predictions", "year", "area", "language", "booklet", "b"])
        try:
            write_csv(args.out / name, table, index=False, float_format="%.6g")
        except OSError as exc:
            raise UserError(f"{args.out / name}: cannot write ({exc.strerror})") from None
        print(f"  wrote {args.out / name}")
