"""``enade-bench eeval …``: run E-EVAL, print the leaderboard, write a submission.

* ``eeval run CONFIG [--setting ao0|ao5|cot5 …] [--limit N]`` — settings default to
  the leaderboard's three; ``--limit`` keeps the first N questions of each subject.
* ``eeval leaderboard RESULTS_DIR [--format markdown|csv] [--out FILE]``
* ``eeval submit RESULTS_DIR --out submission.json [--setting S] [--experiment NAME]``
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from enade_bench.benchmarks.commands import ExamCommandLine
from enade_bench.errors import UserError
from enade_bench.results.writable import check_output_file


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser("eeval", help="E-EVAL (Chinese K-12): run, leaderboard, submission")
    eeval = parser.add_subparsers(dest="eeval_command", required=True, parser_class=type(parser))

    run = eeval.add_parser("run", help="run an E-EVAL config (dataset.benchmark: eeval)")
    run.add_argument("config", type=Path, help="experiment YAML file")
    run.add_argument(
        "--setting", action="append", metavar="S", help="ao0, ao5, cot5, ao<k>, cot<k> (repeatable)"
    )
    run.add_argument("--limit", type=int, help="only the first N questions of each subject")
    run.add_argument("--output-dir", type=Path, help="override output.dir")
    run.add_argument("--no-resume", action="store_true", help="ignore an intermediate log")
    run.add_argument("--quiet", action="store_true", help="no progress bars (model libraries' too)")
    run.set_defaults(handler=handle_run)

    board = eeval.add_parser("leaderboard", help="0-shot AO, 5-shot AO, 5-shot CoT and Average per model")
    board.add_argument("results_dir", type=Path)
    board.add_argument("--format", choices=("markdown", "csv"), default="markdown")
    board.add_argument("--out", type=Path, help="also write the table to this file")
    board.set_defaults(handler=handle_leaderboard)

    submit = eeval.add_parser("submit", help="write test-split predictions in the official JSON layout")
    submit.add_argument("results_dir", type=Path, help="results folder (or one results JSON file)")
    submit.add_argument("--out", type=Path, required=True, help="submission JSON to write")
    submit.add_argument("--setting", help="which setting's predictions (when several were run)")
    submit.add_argument("--experiment", help="which experiment (when several were run)")
    submit.add_argument("--data", type=Path, help="E-EVAL root or test folder (default: from the results)")
    submit.add_argument("--fill-unanswered", metavar="LETTER", help="letter for unanswered questions")
    submit.set_defaults(handler=handle_submit)


def handle_run(args: argparse.Namespace) -> int:
    from enade_bench.backends.quiet import quiet_libraries  # noqa: PLC0415 (not at --help)

    with quiet_libraries(args.quiet):  # --quiet: the model libraries' bars too
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from enade_bench.benchmarks.eeval.report import eval_split, subject_summary  # noqa: PLC0415 (not at --help)
    from enade_bench.benchmarks.load import run_config  # noqa: PLC0415
    from enade_bench.config import load_config  # noqa: PLC0415
    from enade_bench.runner.outputs import accuracy_line, print_outcome  # noqa: PLC0415
    from enade_bench.runner.plan import RunOptions  # noqa: PLC0415

    if args.limit is not None and args.limit < 1:
        raise UserError(f"--limit: expected a positive integer, got {args.limit}")
    if load_config(args.config).dataset.benchmark != "eeval":
        raise UserError(
            f"{args.config}: dataset.benchmark must be 'eeval' for `eeval run` (use `run` otherwise)"
        )
    options = RunOptions(
        strategies=args.setting,
        limit=args.limit,
        output_dir=args.output_dir,
        resume=not args.no_resume,
        progress=not args.quiet and sys.stderr.isatty(),
    )
    outcome = run_config(args.config, options)
    lines = []
    for res in outcome.results:
        if eval_split(res.dataset.sources) == "test":
            lines.append(
                f"{res.strategy.id}: {res.totals.n} test predictions (answers private; use `eeval submit`)"
            )
            continue
        levels = ", ".join(f"{lv} {b.accuracy:.3f}" for lv, b in subject_summary(res).by_level.items())
        lines.append(f"{accuracy_line(res)}; by level: {levels}")
    print_outcome(outcome, lines)
    return 0


def handle_leaderboard(args: argparse.Namespace) -> int:
    from enade_bench.benchmarks.eeval.report import leaderboard, leaderboard_csv, leaderboard_markdown  # noqa: PLC0415
    from enade_bench.results.store import atomic_write_text  # noqa: PLC0415

    if args.out:
        check_output_file(args.out, "--out")
    rows = leaderboard(args.results_dir)
    text = leaderboard_markdown(rows) if args.format == "markdown" else leaderboard_csv(rows)
    print(text, end="")
    if args.out:
        atomic_write_text(args.out, text)
    return 0


def handle_submit(args: argparse.Namespace) -> int:
    from enade_bench.benchmarks.eeval.submission import write_submission  # noqa: PLC0415 (not at --help)

    check_output_file(args.out, "--out")
    submission, found = write_submission(
        args.results_dir,
        args.out,
        setting=args.setting,
        experiment=args.experiment,
        data_dir=args.data,
        fill_unanswered=args.fill_unanswered,
    )
    n = sum(len(v) for v in submission.values())
    print(
        f"wrote {args.out}: {n} predictions, {len(submission)} subjects "
        f"({found.result.experiment}, {found.result.strategy.id})"
    )
    return 0


class EEvalCommandLine(ExamCommandLine):
    """E-EVAL's part of the command line: the ``eeval`` command (:func:`register`)."""

    def register(self, sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
        register(sub)


COMMAND_LINE = EEvalCommandLine()
