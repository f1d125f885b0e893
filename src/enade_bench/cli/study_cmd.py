"""``enade-bench study STUDY.yaml``: run or resume a study of any exam and write its report."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from enade_bench.benchmarks.commands import extend
from enade_bench.cli.options import checked_limit
from enade_bench.errors import UserError

#: Exit status of a study in which a task failed or was lost (even every one; a model that fails
#: to load is a failed task).  0: every task done; 2: bad input found before anything ran (one
#: ``error:`` line); 130: interrupted (:mod:`enade_bench.cli.main`).
FAILED_MODELS_EXIT = 3


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "study",
        help="many models on one benchmark: run or resume each, compare them, write the report "
        "(ENEM: models × areas × languages, option shuffles, the verdict)",
    )
    parser.add_argument("config", type=Path, nargs="?", help="study YAML file")
    parser.add_argument(
        "--report-only",
        action="store_true",
        help="do not run models: write the report from the runs already on disk",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument(
        "--allow-errors",
        action="store_true",
        help="compare runs with error records on their answers only (else refused as incomplete)",
    )
    parser.add_argument(
        "--limit",
        type=int,
        metavar="N",
        help="only the first N questions of each run (in place of the config's limit)",
    )
    parser.add_argument(
        "--executor",
        metavar="TYPE",
        help="where the models run: local (default), ray or slurm, in place of the "
        "config's executor.type (docs/studies.md, 'Several GPUs and nodes')",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="check the study and show its plan: each task, the GPUs, CPUs, memory and time "
        "it asks for and where it goes; no model loads, nothing is written",
    )
    parser.set_defaults(handler=handle, instead=())
    extend("study", parser)  # an exam's job in place of a study (ENEM's --derive-attributes); its `instead`


def handle(args: argparse.Namespace) -> int:
    # the command's own imports (scipy, pandas, the model libraries): not at --help
    from enade_bench.backends.quiet import quiet_libraries  # noqa: PLC0415
    from enade_bench.benchmarks.load_study import run_study, study_plan  # noqa: PLC0415
    from enade_bench.study.plan import StudyOptions  # noqa: PLC0415

    if args.config is None:
        instead = "".join(f" (or {option})" for option in args.instead)
        raise UserError(f"study: give a study YAML file{instead}")

    def log(line: str) -> None:
        if not args.quiet:
            print(line, file=sys.stderr, flush=True)

    def alert(line: str) -> None:  # a failed or lost task, named as it ends: under --quiet too
        print(line, file=sys.stderr, flush=True)

    if args.dry_run:
        with quiet_libraries(True):
            lines = study_plan(
                args.config, StudyOptions(limit=checked_limit(args.limit), executor=args.executor)
            )
        print("\n".join(lines))
        return 0
    with quiet_libraries(args.quiet):  # --quiet: the libraries' bars and the API's retry lines too
        options = StudyOptions(
            run_models=not args.report_only,
            progress=not args.quiet and sys.stderr.isatty(),
            log=log,
            allow_errors=args.allow_errors,
            limit=checked_limit(args.limit),
            executor=args.executor,
            alert=alert,
        )
        result = run_study(args.config, options)
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for note in result.notes:
        print(f"note: {note}")
    if result.index is not None:
        print(result.summary)
        print(f"wrote {result.index}")
    for failure in result.failed:
        print(f"failed: {failure}", file=sys.stderr)
    if result.failed:
        covered = "no report was written" if result.index is None else "the report covers the others"
        print(
            f"{len(result.failed)} task(s) failed; {covered}. Fix the cause and rerun the same command: "
            "finished runs are kept, unfinished ones resume.",
            file=sys.stderr,
        )
        return FAILED_MODELS_EXIT
    return 0
