"""``enade-bench run CONFIG`` (also ``python run.py CONFIG``): run an experiment."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from enade_bench.cli.options import add_include_path, add_selection, folder_arg, run_options
from enade_bench.cli.validate_cmd import validate


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser("run", help="run an experiment config (S1–S7)")
    parser.add_argument("config", type=Path, help="experiment YAML file")
    add_selection(parser, "run S1–S6 and write Table 1")
    parser.add_argument("--output-dir", type=folder_arg, help="override output.dir")
    parser.add_argument("--no-resume", action="store_true", help="ignore an intermediate log")
    parser.add_argument("--quiet", action="store_true", help="no progress bars (model libraries' too)")
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="check everything and print what the run would do, without inference (as enade-bench validate)",
    )
    add_include_path(parser)
    batch = parser.add_mutually_exclusive_group()
    batch.add_argument("--batch-submit", action="store_true", help="API: submit to the batch API")
    batch.add_argument("--batch-fetch", action="store_true", help="API: fetch batch results")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from enade_bench.backends.quiet import quiet_libraries  # noqa: PLC0415 (not at --help)

    with quiet_libraries(args.quiet):  # --quiet: the model libraries' bars too
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from enade_bench.benchmarks.load import load_experiment  # noqa: PLC0415 (not at --help)
    from enade_bench.benchmarks.registry import Registry  # noqa: PLC0415
    from enade_bench.runner.outputs import print_outcome  # noqa: PLC0415
    from enade_bench.runner.retry import EXIT_ERRORS, errors_note  # noqa: PLC0415
    from enade_bench.runner.run import load_backend  # noqa: PLC0415

    options = run_options(
        args,
        resume=not args.no_resume,
        progress=not args.quiet and sys.stderr.isatty(),
        batch="submit" if args.batch_submit else "fetch" if args.batch_fetch else None,
    )
    if args.dry_run:
        return validate(args.config, options, Registry(args.include_path))
    benchmark, exp = load_experiment(args.config, options, Registry(args.include_path))
    with exp.lock():  # before the model loads: a second process on these files is refused at once
        outcome = benchmark.run(load_backend(exp, options), options)
    print_outcome(outcome)
    _print_skipped(exp.dataset.invalid)
    note = errors_note((r for result in outcome.results for r in result.records), options.batch is not None)
    if note is None:
        return 0
    print(f"warning: {note}", file=sys.stderr)
    return EXIT_ERRORS


def _print_skipped(rows: list[str], shown: int = 10) -> None:
    """List the rows ``dataset.skip_invalid`` skipped (all are in the results file)."""
    if not rows:
        return
    print(
        f"note: {len(rows)} invalid row(s) skipped (dataset.skip_invalid); "
        "all are listed under dataset.invalid_rows in the results file:"
    )
    for row in rows[:shown]:
        print(f"  {row}")
    if len(rows) > shown:
        print(f"  … and {len(rows) - shown} more")
