"""Command-line options shared by several sub-commands."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from enade_bench.errors import UserError

if TYPE_CHECKING:  # the config models (pydantic) are imported when a command runs, not at --help
    from enade_bench.config import SampleConfig
    from enade_bench.runner.plan import BatchMode, RunOptions


def folder_arg(text: str) -> Path:
    """A folder named on the command line; an empty string is an error (not the current folder)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            f"expected a folder, got {text!r} (write '.' for the current folder)"
        )
    return Path(text)


def add_include_path(parser: argparse.ArgumentParser) -> None:
    """``--include-path DIR``: benchmark plug-in folders outside the package (repeatable)."""
    parser.add_argument(
        "--include-path",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="a benchmark folder, or a folder of benchmark folders (repeatable)",
    )


def add_selection(parser: argparse.ArgumentParser, all_help: str) -> None:
    """``--strategy S`` (repeatable) or ``--all-strategies``, and ``--limit N`` or ``--sample N``."""
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--strategy", action="append", metavar="S", help="S1..S7 (repeatable)")
    which.add_argument("--all-strategies", action="store_true", help=all_help)
    subset = parser.add_mutually_exclusive_group()
    subset.add_argument("--limit", type=int, help="only the first N questions")
    subset.add_argument(
        "--sample",
        type=int,
        metavar="N",
        help="N questions drawn at random (seeded) from those the filters keep",
    )
    parser.add_argument("--seed", type=int, metavar="S", help="--sample: the sample's seed (default 42)")
    parser.add_argument(
        "--stratify", metavar="FIELD", help="--sample: keep each value's share of FIELD (year, area, …)"
    )


def checked_sample(args: argparse.Namespace) -> SampleConfig | None:
    """``--sample N [--seed S] [--stratify FIELD]`` as a ``dataset.sample`` block (or none)."""
    if args.sample is None:
        extra = [
            flag
            for flag, value in (("--seed", args.seed), ("--stratify", args.stratify))
            if value is not None
        ]
        if extra:
            raise UserError(f"{' and '.join(extra)}: only with --sample N")
        return None
    if args.sample < 1:
        raise UserError(f"--sample: expected a positive integer, got {args.sample}")
    if args.stratify is not None and not args.stratify.strip():
        raise UserError("--stratify: expected a field name, got ''")
    from enade_bench.config import SampleConfig  # noqa: PLC0415 (not at --help)

    seed = {} if args.seed is None else {"seed": args.seed}
    return SampleConfig(n=args.sample, stratify=args.stratify, **seed)


def checked_limit(limit: int | None) -> int | None:
    """``--limit``: a positive integer (or none)."""
    if limit is not None and limit < 1:
        raise UserError(f"--limit: expected a positive integer, got {limit}")
    return limit


def run_options(
    args: argparse.Namespace, resume: bool = True, progress: bool = False, batch: BatchMode | None = None
) -> RunOptions:
    """The run options of a command line's :func:`add_selection` and ``--output-dir`` (checked).

    ``resume``, ``progress`` and ``batch``: what ``run`` adds (``--no-resume``, ``--quiet``,
    ``--batch-submit``/``--batch-fetch``); ``validate`` keeps the defaults.
    """
    from enade_bench.runner.plan import RunOptions  # noqa: PLC0415 (not at --help)

    return RunOptions(
        strategies=args.strategy,
        all_strategies=args.all_strategies,
        limit=checked_limit(args.limit),
        sample=checked_sample(args),
        output_dir=args.output_dir,
        resume=resume,
        progress=progress,
        batch=batch,
    )
