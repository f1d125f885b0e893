"""``enade-bench irt dif``: machine-human DIF over the ENEM runs in results folders.

::

    enade-bench irt dif RESULTS_DIR... [--enem-data DIR] [--alpha 0.05] [--debias] [--out DIR]

All runs (models × shuffles) that answered one ENEM booklet are pooled, each
(model, shuffle) pattern one respondent, and every scored item is tested
against the human 3PL (:func:`enade_bench.psychometrics.dif.machine_human_dif`).
Prints the flagged items (Benjamini-Hochberg q ≤ alpha), largest |δ| first;
``--out`` writes ``dif_<year>_<area>_<booklet>.csv`` (every item) atomically.
``--debias`` first applies the letter-prior correction to shuffled
first_token / log_prob runs (:mod:`enade_bench.metrics.prior_correction`).
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import Any

from enade_bench.benchmarks.enem.analysis import RANDOM, analyse
from enade_bench.errors import UserError
from enade_bench.metrics.prior_correction import prior_correction
from enade_bench.psychometrics.dif import machine_human_dif
from enade_bench.psychometrics.tidy import to_wide
from enade_bench.report.loader import load_results
from enade_bench.results.store import atomic_write_text
from enade_bench.results.writable import check_output_dir


def register(sub: Any) -> None:
    p = sub.add_parser("dif", help="machine-human DIF per item (models vs the human 3PL) over ENEM runs")
    p.add_argument("results", nargs="+", type=Path, help="results folder(s)")
    p.add_argument("--enem-data", type=Path, help="folder with inep_items.csv (default: found)")
    p.add_argument("--alpha", type=float, default=0.05, help="false discovery rate (default 0.05)")
    p.add_argument(
        "--min-n", type=int, default=10, help="test items answered by at least N patterns (default 10)"
    )
    p.add_argument("--debias", action="store_true", help="letter-prior corrected predictions (PriDe)")
    p.add_argument("--out", type=Path, help="folder for the per-item CSV files")
    p.set_defaults(handler=run_dif)


def debiased_entries(entries: list[Any]) -> list[Any]:
    """Entries whose shuffled first_token/log_prob records are replaced by prior-corrected ones."""

    out = []
    for entry in entries:
        try:
            records = prior_correction(entry.result.records).records
        except ValueError:
            out.append(entry)
            continue
        out.append(dataclasses.replace(entry, result=entry.result.model_copy(update={"records": records})))
    return out


def run_dif(args: argparse.Namespace) -> int:
    """Handler of ``irt dif``."""

    if not 0 < args.alpha < 1:
        raise UserError(f"--alpha {args.alpha}: expected a number in (0, 1)")
    if args.min_n < 1:
        raise UserError(f"--min-n {args.min_n}: expected an integer >= 1")
    if args.out is not None:
        check_output_dir(args.out, "--out")  # before any work: creatable and writable
    entries = load_results(args.results)
    if args.debias:
        entries = debiased_entries(entries)
    result = analyse(entries, args.enem_data)
    if not result.exams:
        reasons = "; ".join(result.skipped) or "no run answered an ENEM exam"
        raise UserError(f"{', '.join(map(str, args.results))}: no ENEM response patterns ({reasons})")
    for exam in result.exams:
        tidy = exam.tidy[exam.tidy["respondent"] != RANDOM]
        wide = to_wide(tidy, items=list(exam.items.item_ids))
        dif = machine_human_dif(
            wide.to_numpy(dtype=float), None, exam.items, alpha=args.alpha, min_n=args.min_n
        )
        flagged = dif.flagged()
        n_models = tidy["respondent"].nunique()
        print(f"{exam.label}: {len(wide)} patterns ({n_models} model run(s)), {len(exam.items)} items; "
              f"machines' θ ~ N({dif.prior_mean:.2f}, {dif.prior_sd:.2f}²); "
              f"{len(flagged)} item(s) flagged at q <= {args.alpha:g}"
              + (" [letter-prior corrected]" if args.debias else ""))  # fmt: skip
        untested = int(dif.table["p"].isna().sum())
        if untested:
            print(
                f"  note: {untested} item(s) answered by fewer than {args.min_n} patterns are not tested (--min-n)"
            )
        for _, r in flagged.iterrows():
            print(f"  {r['item_id']:>10}  {r['direction']:<20} δ {r['delta']:+.2f}  observed {r['observed']:.2f} "
                  f"vs expected {r['expected']:.2f}  G² {r['g2']:.1f}  q {r['q']:.2g}")  # fmt: skip
        if args.out is not None:
            name = f"dif_{exam.exam.year}_{exam.exam.area}_{exam.booklet}{'_debiased' if args.debias else ''}.csv"
            try:
                atomic_write_text(args.out / name, dif.table.to_csv(index=False, float_format="%.6g"))
            except OSError as exc:
                raise UserError(f"{args.out / name}: cannot write ({exc.strerror})") from None
            print(f"  wrote {args.out / name}")
    for note in result.skipped:
        print(f"note: {note}")
    return 0
