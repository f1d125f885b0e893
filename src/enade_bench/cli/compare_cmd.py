"""``enade-bench compare RESULTS… --out DIR``: models side by side, paired and clustered.

RESULTS are results folders (every ``*_results.json`` under them), results files, or
long-format CSVs (``model,item,[replicate],correct[,cluster,<fields>…]``) exported by
any harness; with ``--from lm-eval|inspect|helm`` they are that harness's own output
(``compare/importers/``).  Writes ``scores.csv``, ``pairs.csv``, ``flips.csv``, ``tables/*.tex`` and
``figures/comparison_clustered.png``/``.pdf`` (docs/comparisons.md).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from enade_bench.compare.importers import SOURCES
from enade_bench.errors import UserError
from enade_bench.results.writable import check_output_dir


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser("compare", help="compare models question by question: clustered intervals, "
                            "paired tests, rank groups, item flips")  # fmt: skip
    parser.add_argument("results", nargs="*", type=Path, metavar="RESULTS",
                        help="results folders or files, or long-format CSVs")  # fmt: skip
    parser.add_argument("--out", type=Path, help="folder to write")
    parser.add_argument("--from", dest="source", choices=SOURCES, metavar="HARNESS",
                        help="read RESULTS as this harness's output: lm-eval (--log_samples folders), inspect "
                        "(.eval/.json logs), helm (run folders) or long (CSVs); default: our results, "
                        ".csv as long")  # fmt: skip
    parser.add_argument("--metric", metavar="NAME",
                        help="with --from: the harness's right/wrong measure (lm-eval metric, inspect scorer, "
                        "HELM stat); default acc / exact_match (docs/comparisons.md)")  # fmt: skip
    parser.add_argument("--by", action="append", default=[], metavar="FIELD",
                        help="compare separately per value of this field (repeatable), e.g. --by area")  # fmt: skip
    parser.add_argument("--adjust", choices=["holm", "bh"], default="holm",
                        help="multiplicity adjustment over every pair of the table (default holm)")  # fmt: skip
    parser.add_argument("--alpha", type=float, default=0.05, help="level of the tests and rank groups")
    parser.add_argument("--calibration", action="store_true",
                        help="print the simulated error rates of the paired tests (docs/comparisons.md) and exit")  # fmt: skip
    parser.set_defaults(handler=handle)


def _read(paths: list[Path], source: str | None = None, metric: str | None = None):  # type: ignore[no-untyped-def]
    if source is not None:
        from enade_bench.compare.importers import read_from  # noqa: PLC0415

        return read_from(source, paths, metric)
    if metric is not None:
        raise UserError("--metric: name the harness too (--from lm-eval, inspect or helm)")
    import pandas as pd  # noqa: PLC0415 (the command's own imports)

    from enade_bench.compare.table import from_entries, read_long_csv  # noqa: PLC0415
    from enade_bench.report.loader import RunEntry, load_results  # noqa: PLC0415
    from enade_bench.results.store import read_result  # noqa: PLC0415

    frames = []
    for path in paths:
        if path.suffix.lower() == ".csv":
            frames.append(read_long_csv(path))
        elif path.is_file():
            frames.append(from_entries([RunEntry(path, read_result(path))]))
        else:
            frames.append(from_entries(load_results([path])))
    return pd.concat(frames, ignore_index=True)


def _calibration() -> int:
    from enade_bench.compare.calibration import simulate_rejections  # noqa: PLC0415

    print("theta_diff  accuracy_diff  clustered_paired_t  naive_pooled_z  (rejection rate at alpha 0.05, "
          "2000 replications, 100 questions x 30 shuffles, clusters of 2-4)")  # fmt: skip
    for diff in (0.0, 0.2, 0.4, 0.6):
        row = simulate_rejections(diff)
        print(f"{diff:10.1f}  {row.mean_accuracy_diff:13.3f}  {row.clustered:18.3f}  {row.naive:14.3f}")
    return 0


def handle(args: argparse.Namespace) -> int:
    if args.calibration:
        return _calibration()
    if not args.results or args.out is None:
        raise UserError("compare: give RESULTS (folders, results files or long CSVs) and --out DIR")
    if not 0 < args.alpha < 1:
        raise UserError(f"--alpha: expected a number between 0 and 1, got {args.alpha}")
    check_output_dir(args.out, "--out")
    from enade_bench.compare.analysis import compare_table  # noqa: PLC0415
    from enade_bench.compare.render import table1, write_comparison  # noqa: PLC0415

    table = _read(list(args.results), args.source, args.metric)
    comp = compare_table(table, args.by, args.adjust, args.alpha)
    written = write_comparison(comp, args.out)
    for note in comp.notes:
        print(f"note: {note}")
    print(table1(comp).display.to_string())
    print(f"wrote {len(written)} files to {args.out}")
    return 0
