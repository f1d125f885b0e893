"""Bounds on what a dataset file may hold, checked before and while it is read (issue 61).

A file over :func:`max_bytes` (256 MB, or ``ENADE_BENCH_MAX_DATASET_MB``) is refused from
its size before a byte is read, and CSV and JSON Lines are read line by line
(:func:`lines`), each line at most :data:`MAX_LINE_CHARS` characters, so a damaged file (a
sparse 2 GB file, gigabytes of NULs after a header) is one ``error:`` line in seconds and
bounded memory.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from enade_bench.errors import UserError

#: The environment variable that sets the largest dataset file read, in MB (10**6 bytes).
MAX_MB_VARIABLE = "ENADE_BENCH_MAX_DATASET_MB"
#: The largest dataset file read when :data:`MAX_MB_VARIABLE` is unset, in MB (the largest exam
#: file the project knows is under 5 MB).
DEFAULT_MAX_MB = 256
#: The longest line of a CSV or JSON-lines file, in characters (a 200 KB stem fits 40 times).
MAX_LINE_CHARS = 8_000_000


def max_bytes() -> int:
    """The largest dataset file read, in bytes: :data:`MAX_MB_VARIABLE` MB, else :data:`DEFAULT_MAX_MB`."""
    given = os.environ.get(MAX_MB_VARIABLE, "").strip()
    try:
        limit = float(given) if given else DEFAULT_MAX_MB
    except ValueError:
        limit = math.nan
    if not math.isfinite(limit) or limit <= 0:
        raise UserError(f"{MAX_MB_VARIABLE}: got {given!r}; expected a number of MB above 0, e.g. 1024")
    return int(limit * 10**6)


def _mb(size: int) -> str:
    return f"{size / 10**6:,.0f} MB" if size >= 10**7 else f"{size / 10**6:.3g} MB"


def check_size(path: Path) -> None:
    """``UserError`` when ``path`` is larger than :func:`max_bytes` (its size is read, not its bytes)."""
    try:
        size = os.stat(path).st_size
    except OSError:
        return  # the reader names a missing or unreadable file
    limit = max_bytes()
    if size > limit:
        raise UserError(
            f"{path}: {_mb(size)}, over the {_mb(limit)} a dataset file may be "
            f"(a damaged or wrong file? a larger exam: set {MAX_MB_VARIABLE}=<MB>)"
        )


def lines(handle: Any, path: Path) -> Iterator[str]:
    """The lines of ``handle``, each read with a bound: one over :data:`MAX_LINE_CHARS` is an error."""
    number = 0
    while line := handle.readline(MAX_LINE_CHARS + 1):
        number += 1
        if len(line) > MAX_LINE_CHARS and not line.endswith("\n"):
            raise UserError(
                f"{path}: line {number}: over {MAX_LINE_CHARS:,} characters without a line end (a binary "
                "or damaged file? save the questions as UTF-8 text, one row per line)"
            )
        yield line
