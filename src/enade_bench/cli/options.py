"""Command-line options shared by several sub-commands."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_include_path(parser: argparse.ArgumentParser) -> None:
    """``--include-path DIR``: benchmark plug-in folders outside the package (repeatable)."""
    parser.add_argument("--include-path", type=Path, action="append", default=[], metavar="DIR",
                        help="a benchmark folder, or a folder of benchmark folders (repeatable)")  # fmt: skip
