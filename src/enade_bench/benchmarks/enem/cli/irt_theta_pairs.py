"""``enade-bench irt theta-pairs``: θ differences between models on ENEM, over their shuffles.

::

    enade-bench irt theta-pairs RESULTS_DIR... [--enem-data DIR] [--pairing auto|shuffle|independent]
        [--adjust holm|bonferroni|bh] [--family all|table] [--debias] [--out FILE.csv]
    enade-bench irt theta-pairs --published [--enem-data DIR] [--adjust holm|bonferroni|bh] [--family all|table]
        [--out FILE.csv]

For every exam answered by two or more models: the mean θ (EAP per shuffle pattern)
of model A minus model B with its SE, p-value and Holm/Bonferroni/BH adjusted p-value
over every pair of the output (``--family all``, the default: the same family ``compare``
adjusts on the same pairs, every pair of its strategy) or over each exam's pairs
(``--family table``), printed in a ``note: multiplicity family`` line, and its interval at the level of that adjusted decision (it
excludes 0 exactly when the adjusted p is below 0.05; the unadjusted 95 % interval is in
the CSV as ``ci_low_unadjusted``–``ci_high_unadjusted``) (:mod:`enade_bench.benchmarks.enem.steps.theta_pairs`,
:mod:`enade_bench.psychometrics.theta_compare`). ``--published`` compares the five
models of the shared published runs per area and language (years as strata).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from enade_bench.benchmarks.enem.data import find_enem_data
from enade_bench.errors import UserError
from enade_bench.results.csv_safe import write_csv
from enade_bench.results.writable import check_output_file


def register(sub: Any) -> None:
    p = sub.add_parser("theta-pairs", help="θ differences between models over shuffles (ENEM), with SEs")
    p.add_argument("results", nargs="*", type=Path, help="results folder(s)")
    p.add_argument("--published", action="store_true", help="the published runs of the shared ENEM data")
    p.add_argument("--enem-data", type=Path, help="ENEM data folder (default: found)")
    p.add_argument(
        "--pairing",
        choices=("auto", "shuffle", "independent"),
        default="auto",
        help="pair by shuffle index, independent samples (Welch) or auto (default: pair when "
        "the models ran the same shuffles)",
    )
    p.add_argument(
        "--adjust",
        choices=("holm", "bonferroni", "bh"),
        default="holm",
        help="p-value adjustment over each table's pairs; the intervals are adjusted alike (default holm)",
    )
    p.add_argument(
        "--family",
        choices=("all", "table"),
        default="all",
        help="pairs adjusted together: every pair of the output (default; as compare's default "
        "adjusts every pair of a strategy) or each exam's table (as compare --family stratum)",
    )
    p.add_argument("--debias", action="store_true", help="letter-prior corrected predictions (PriDe)")
    p.add_argument("--out", type=Path, help="CSV file for every pair")
    p.set_defaults(handler=run_theta_pairs)


def run_theta_pairs(args: argparse.Namespace) -> int:
    """Handler of ``irt theta-pairs``."""
    import pandas as pd  # noqa: PLC0415 (the command's own imports: not at --help)

    from enade_bench.benchmarks.enem.steps import enem_analysis  # noqa: PLC0415
    from enade_bench.benchmarks.enem.steps.theta_pairs import (  # noqa: PLC0415
        display_pairs,
        pairs_note,
        published_theta_pairs,
        theta_pairs_frame,
    )
    from enade_bench.report.loader import load_results  # noqa: PLC0415

    if args.published == bool(args.results):
        raise UserError("irt theta-pairs: give results folder(s) or --published (one of the two)")
    if args.out is not None:
        check_output_file(args.out, "--out")
    if args.published:
        if args.pairing == "shuffle":
            raise UserError(
                "--pairing shuffle: the published runs are independent samples (no shared shuffles)"
            )
        data = published_theta_pairs(find_enem_data(args.enem_data), args.adjust, args.family)
        keys = ["area", "language"]
    else:
        predictions = ("corrected",) if args.debias else ("raw",)
        analysis, raw = enem_analysis(load_results(args.results), args.enem_data, predictions=predictions)
        if not raw.exams:
            reasons = "; ".join(raw.skipped) or "no run answered an ENEM exam"
            raise UserError(f"{', '.join(map(str, args.results))}: no ENEM response patterns ({reasons})")
        data = theta_pairs_frame(analysis, args.pairing, args.adjust, args.family)
        if data.empty:
            raise UserError(
                "irt theta-pairs: no exam was answered by two models with at least two shuffles each"
            )
        keys = ["year", "area", "language"]
    shown = display_pairs(data, keys).rename(columns={"p adj.": f"p {args.adjust}"})
    pairing = ", ".join(sorted(set(data["pairing"])))
    with pd.option_context("display.width", 200, "display.max_rows", None, "display.max_colwidth", 40):
        families = data["family"].nunique()
        print(
            f"note: multiplicity family: {args.adjust} over "
            + (
                f"every pair ({len(data)}; --family all)"
                if args.family == "all"
                else f"each exam's table ({families} families; --family table)"
            )
        )
        print(f"θ differences between models ({pairing}; {len(data)} pairs)")
        print(shown.to_string())
        print(pairs_note(data))
    if args.out is not None:
        try:
            write_csv(args.out, data, index=False, float_format="%.6g")
        except OSError as exc:
            raise UserError(f"{args.out}: cannot write ({exc.strerror})") from None
        print(f"wrote {args.out}")
    return 0
