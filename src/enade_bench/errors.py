"""The one exception type that reaches the user as a one-line ``error:`` message."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class UserError(Exception):
    """Bad input from the user (config, data file, command line).

    The command-line entry point prints ``error: <message>`` on one line and
    exits with status 2; no traceback is shown.  The message must name the file,
    row, column or key at fault and say what was expected.
    """

    exit_code = 2

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(message.split()))
        self.message = " ".join(message.split())

    def __str__(self) -> str:
        return self.message


def closest(names: Iterable[str], candidates: Iterable[str]) -> str:
    """``; closest to 'x': 'y', 'z'`` for each of ``names`` with near ``candidates`` (``""``: none)."""
    pool = sorted(set(candidates))
    hints = []
    for name in dict.fromkeys(names):
        near = difflib.get_close_matches(name, pool, n=3, cutoff=0.6)
        if near:
            hints.append(f"closest to '{name}': {', '.join(repr(n) for n in near)}")
    return f"; {'; '.join(hints)}" if hints else ""
