"""Command-line options shared by several sub-commands."""

from __future__ import annotations

import argparse
from pathlib import Path

from enade_bench.errors import UserError


def add_include_path(parser: argparse.ArgumentParser) -> None:
    """``--include-path DIR``: benchmark plug-in folders outside the package (repeatable)."""
    parser.add_argument("--include-path", type=Path, action="append", default=[], metavar="DIR",
                        help="a benchmark folder, or a folder of benchmark folders (repeatable)")  # fmt: skip


def add_selection(parser: argparse.ArgumentParser, all_help: str) -> None:
    """``--strategy S`` (repeatable) or ``--all-strategies``, and ``--limit N``: what a run covers."""
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--strategy", action="append", metavar="S", help="S1..S7 (repeatable)")
    which.add_argument("--all-strategies", action="store_true", help=all_help)
    parser.add_argument("--limit", type=int, help="only the first N questions")


def checked_limit(limit: int | None) -> int | None:
    """``--limit``: a positive integer (or none)."""
    if limit is not None and limit < 1:
        raise UserError(f"--limit: expected a positive integer, got {limit}")
    return limit
