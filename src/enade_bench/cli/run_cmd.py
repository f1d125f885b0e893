"""``enade-bench run CONFIG`` (also ``python run.py CONFIG``): run an experiment."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from enade_bench.backends.quiet import quiet_libraries
from enade_bench.benchmarks import load_experiment
from enade_bench.errors import UserError
from enade_bench.runner.batch import run_batch
from enade_bench.runner.outputs import print_outcome
from enade_bench.runner.run import RunOptions


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser("run", help="run an experiment config (S1–S7)")
    parser.add_argument("config", type=Path, help="experiment YAML file")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--strategy", action="append", metavar="S", help="S1..S7 (repeatable)")
    which.add_argument("--all-strategies", action="store_true", help="run S1–S6 and write Table 1")
    parser.add_argument("--limit", type=int, help="only the first N questions")
    parser.add_argument("--output-dir", type=Path, help="override output.dir")
    parser.add_argument("--no-resume", action="store_true", help="ignore an intermediate log")
    parser.add_argument("--quiet", action="store_true", help="no progress bars (model libraries' too)")
    parser.add_argument("--batch-submit", action="store_true", help="API: submit to the batch API")
    parser.add_argument("--batch-fetch", action="store_true", help="API: fetch batch results")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    with quiet_libraries(args.quiet):  # --quiet: the model libraries' bars too
        return _run(args)


def _run(args: argparse.Namespace) -> int:

    if args.limit is not None and args.limit < 1:
        raise UserError(f"--limit: expected a positive integer, got {args.limit}")
    options = RunOptions(
        strategies=args.strategy,
        all_strategies=args.all_strategies,
        limit=args.limit,
        output_dir=args.output_dir,
        resume=not args.no_resume,
        progress=not args.quiet and sys.stderr.isatty(),
    )
    benchmark, exp, strategies = load_experiment(args.config, options)
    if args.batch_submit or args.batch_fetch:
        return run_batch(exp, strategies, options, submit=args.batch_submit)
    outcome = benchmark.run(exp, strategies, options)
    print_outcome(outcome)
    if outcome.results:
        _print_skipped(outcome.results[0].dataset.invalid_rows)
    return 0


def _print_skipped(rows: list[str], shown: int = 10) -> None:
    """List the rows ``dataset.skip_invalid`` skipped (all are in the results file)."""
    if not rows:
        return
    print(f"note: {len(rows)} invalid row(s) skipped (dataset.skip_invalid); "
          "all are listed under dataset.invalid_rows in the results file:")  # fmt: skip
    for row in rows[:shown]:
        print(f"  {row}")
    if len(rows) > shown:
        print(f"  … and {len(rows) - shown} more")
