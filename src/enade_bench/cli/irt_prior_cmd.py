"""``enade-bench irt debias``: letter-prior correction (PriDe) of shuffled runs.

::

    enade-bench irt debias RESULTS_DIR... [--scope question|model] [--out DIR]

For every shuffled ``first_token`` / ``log_prob`` run under the folders:
estimated letter prior, accuracy and BPC (total-variation distance of the
predicted positions from uniform) before and after the correction. ``--out``
writes ``<experiment>_<strategy>_debiased.csv`` (one row per record: raw and
corrected prediction) atomically.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from enade_bench.errors import UserError
from enade_bench.results.csv_safe import write_csv
from enade_bench.results.writable import check_output_dir


def register(sub: Any) -> None:
    p = sub.add_parser("debias", help="letter-prior correction (PriDe) of shuffled runs: BPC before/after")
    p.add_argument("results", nargs="+", type=Path, help="results folder(s)")
    p.add_argument(
        "--scope",
        choices=("question", "model"),
        default="question",
        help="prior per question (default) or one per model",
    )
    p.add_argument("--out", type=Path, help="folder for per-record raw and corrected predictions")
    p.set_defaults(handler=run_debias)


def run_debias(args: argparse.Namespace) -> int:
    """Handler of ``irt debias``."""
    import pandas as pd  # noqa: PLC0415 (the command's own imports: not at --help)

    from enade_bench.metrics.prior_correction import SCORED_METHODS, prior_correction  # noqa: PLC0415
    from enade_bench.report.loader import load_results  # noqa: PLC0415

    if args.out is not None:
        check_output_dir(args.out, "--out")  # before any work: creatable and writable
    entries = load_results(args.results)
    done = 0
    for entry in entries:
        records = entry.result.records
        if not any(r.method in SCORED_METHODS and r.permutation for r in records):
            continue
        try:
            pc = prior_correction(records, args.scope)
        except ValueError:
            continue
        done += 1
        name = f"{entry.experiment} {entry.strategy}".strip()
        print(f"{name}: {len(records)} records, scope {args.scope}")
        for k, prior in sorted(pc.prior.items()):
            shares = ", ".join(f"{letter} {p:.3f}" for letter, p in zip("ABCDEFGH", prior, strict=False))
            print(f"  letter prior ({k} options, {pc.n_questions[k]} questions): {shares}")
            raw, cor = pc.bpc_raw[str(k)], pc.bpc_corrected[str(k)]
            print(
                f"  BPC TVD raw {raw.bpc_tvd:.3f} -> corrected {cor.bpc_tvd:.3f}; "
                f"predicted positions raw {raw.prediction_counts} -> corrected {cor.prediction_counts}"
            )
        print(f"  accuracy raw {pc.raw_accuracy:.3f} -> corrected {pc.corrected_accuracy:.3f}")
        if args.out is not None:
            rows = pd.DataFrame(
                [
                    {
                        "id": r.id,
                        "shuffle": r.shuffle,
                        "answer": r.answer,
                        "raw_prediction": r.prediction,
                        "raw_correct": r.correct,
                        "prediction": c.prediction,
                        "correct": c.correct,
                        "raw_position": r.predicted_position,
                        "position": c.predicted_position,
                    }
                    for r, c in zip(records, pc.records, strict=True)
                ]
            )
            target = args.out / f"{entry.experiment}_{entry.strategy}_debiased.csv".replace(" ", "_")
            try:
                write_csv(target, rows, index=False)
            except OSError as exc:
                raise UserError(f"{target}: cannot write ({exc.strerror})") from None
            print(f"  wrote {target}")
    if not done:
        raise UserError(
            f"{', '.join(map(str, args.results))}: no shuffled first_token or log_prob run with letter scores"
        )
    return 0
