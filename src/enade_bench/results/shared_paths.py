"""Paths as they may be shared: nothing of the author's machine (home, user name) in a file.

A results file and every file of a report folder are attached to papers and sent to
colleagues.  A path they record is written relative to the folder the file lives in (the
results folder): ``../../data/enade_demo.csv``, never ``/home/ana/thesis/data/…``.  A
relative path climbs with ``..`` (which names nothing) and then names only the folders below
the two paths' common folder; a file in the home folder seen from outside it would name the
home's folders, so it is written as its bare name (its sha256 beside it still identifies
it).  Files inside the installed package are named from the package
(``enade_bench/benchmarks/enade/prompts/team.yaml``), wherever it is installed.

:func:`resolved` turns a recorded path back into one this machine can open, relative to the
folder it was recorded against (``report``, ``--report-only`` and the ENEM analysis find
the data that way).
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import JsonValue

from enade_bench.results.safe_write import parts_below

#: The installed package's folder (its files are named from ``enade_bench/``).
PACKAGE = Path(__file__).resolve().parents[1]


def shared_path(path: str | Path, base: str | Path) -> str:
    """``path`` relative to the folder ``base`` (POSIX), so that it names no folder above them.

    A file of the installed package is named from the package; a file in the user's home
    folder, seen from a ``base`` outside it (where the relative path would spell the home's
    folders), by its bare name.  A relative ``path`` (or a URL) is returned unchanged.
    """
    text = str(path)
    if not os.path.isabs(text):
        return text
    absolute = Path(os.path.abspath(text))
    try:
        return "enade_bench/" + absolute.resolve().relative_to(PACKAGE).as_posix()
    except (ValueError, OSError):
        pass
    folder = Path(os.path.abspath(base))
    home = Path(os.path.abspath(Path.home()))
    in_home = [parts_below(p, home) is not None for p in (absolute, folder)]
    if home != Path(home.anchor) and in_home == [True, False]:
        return absolute.name
    return Path(os.path.relpath(absolute, folder)).as_posix()


def shared_values(value: JsonValue, base: str | Path) -> JsonValue:
    """``value`` (a config as plain data) with every absolute path in it made :func:`shared_path`."""
    if isinstance(value, dict):
        return {key: shared_values(item, base) for key, item in value.items()}
    if isinstance(value, list):
        return [shared_values(item, base) for item in value]
    if isinstance(value, str) and value.startswith("/") and "\n" not in value:
        return shared_path(value, base)
    return value


def resolved(recorded: str, base: str | Path) -> Path:
    """The file a recorded path names on this machine: an absolute path as is (files written
    before paths were shared), a package path in the installed package, else from ``base``."""
    if os.path.isabs(recorded):
        return Path(recorded)
    if recorded.startswith("enade_bench/") and (PACKAGE.parent / recorded).exists():
        return PACKAGE.parent / recorded
    return Path(os.path.normpath(Path(base) / recorded))
