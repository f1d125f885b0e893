"""The one exception type that reaches the user as a one-line ``error:`` message."""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable
from pathlib import PurePath


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


def as_given(path: str | os.PathLike[str]) -> str:
    """``path`` as a message names it: as the user gave it, never made absolute by the program.

    A relative input is joined to the config file's folder, which is absolute; messages
    show such a path relative to the current folder when it lies under it
    (``sub/data.csv``, not ``/home/ana/project/sub/data.csv``), and any other path as it is.
    Only for messages: files are still read and recorded by their own path.
    """
    text = os.fspath(path)
    if not os.path.isabs(text):
        return text
    try:
        return str(PurePath(text).relative_to(os.getcwd()))
    except (OSError, ValueError):  # the current folder is gone, or the path lies outside it
        return text
