"""A report folder that holds one whole report, or says that it does not.

``report --out DIR``, ``compare --out DIR`` and a study's ``report/`` folder may be written
again and again.
:func:`report_folder` makes each time exact:

* **Only what it wrote is cleaned.**  A finished report lists its files in
  ``report_manifest.json``; the next report into the folder deletes those files (an old
  ``comparison_*`` table of an earlier two-model report included) and nothing else.  A
  folder that is not empty and holds no manifest was not written by a report: it is
  refused rather than mixed with.
* **A killed report leaves no half-set that looks complete.**  While a report is being
  written the folder holds ``REPORT_INCOMPLETE.json`` (the files that were there before,
  which are not the report's), and ``index.html`` and the manifest are written last.  A
  report that is stopped leaves that marker; the next report into the folder removes
  every file the stopped one wrote before it starts.
* **One report at a time.**  ``report``, ``compare`` and a study's report hold the folder's
  lock (``.report.lock``, :mod:`enade_bench.results.lock`) while they clean and write it: a
  second one into the same folder is refused with one ``error:`` line naming the first
  (its PID, host and command), rather than mixing its files with the first's.
* **Never through a link.**  Every file is written by the one safe writer
  (:mod:`enade_bench.results.safe_write`, with the folder as its output root): a link at a
  file's place is replaced, never followed.  A link to a folder anywhere inside is refused
  before anything is deleted; cleaning deletes a link itself, never what it points to.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pydantic import JsonValue

from enade_bench.errors import UserError
from enade_bench.regular_file import read_text
from enade_bench.results.lock import run_lock
from enade_bench.results.safe_write import files_inside, linked_folders, output_root, remove_inside
from enade_bench.results.store import atomic_write_text, dump_json

#: The list of files a finished report wrote (relative to the folder).
MANIFEST = "report_manifest.json"
#: Present while a report is written, and after one that did not finish.
MARKER = "REPORT_INCOMPLETE.json"
#: The folder's lock, held while a report is written (removed when it finishes).
LOCK = ".report.lock"
MANIFEST_FORMAT = "enade_bench.report/1"


def _files(folder: Path) -> set[str]:
    """Every file and link under ``folder`` (relative POSIX paths, links not followed), but the
    manifest and the marker."""
    return files_inside(folder) - {MANIFEST, MARKER, LOCK}


def _listed(path: Path, key: str) -> list[str]:
    """The file list ``key`` of the manifest or marker at ``path``; an error when unreadable."""
    try:
        data = json.loads(read_text(path))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"{path}: not a readable report manifest ({exc}); delete the folder") from None
    files = data.get(key) if isinstance(data, dict) else None
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise UserError(f"{path}: {key}: expected a list of file names; delete the folder")
    return files


def _remove(folder: Path, names: set[str]) -> None:
    """Delete the files ``names`` inside ``folder`` (never outside it, never through a link),
    then the folders that emptied."""
    remove_inside(folder, names)


def _inside_through_link(folder: Path, within: Path) -> bool:
    """Whether a folder on the way from ``within`` down to ``folder`` is a symbolic link."""
    try:
        parts = Path(folder).relative_to(within).parts
    except ValueError:
        return False
    current = Path(within)
    for part in parts:
        current = current / part
        if current.is_symlink():
            return True
    return False


def _refuse_linked_folders(folder: Path, option: str) -> None:
    """An error naming the first link to a folder inside ``folder``: checked before anything is deleted."""
    linked = linked_folders(folder)
    if linked:
        raise UserError(
            f"{option} {folder}: '{linked[0]}' is a symbolic link to a folder; a report never writes "
            "through links and deletes nothing until it is gone: remove the link (or give another folder)"
        )


def check_report_folder(folder: Path, option: str = "--out", within: Path | None = None) -> None:
    """An error when ``folder`` holds files but no report manifest or marker (checked early:
    before the runs are read, and before a study runs its models), or holds a link to a folder.

    ``within``: the output folder ``folder`` belongs to (a study's ``report/``), which it
    may not leave through a link either.
    """
    if within is not None and _inside_through_link(folder, within):
        raise UserError(
            f"{option} {folder}: a symbolic link inside the output folder '{within}'; a report is never "
            "written through links: remove the link"
        )
    _refuse_linked_folders(folder, option)
    if (folder / MANIFEST).is_file() or (folder / MARKER).is_file():
        return
    present = _files(folder)
    if present:
        shown = ", ".join(sorted(present)[:3]) + (", …" if len(present) > 3 else "")
        raise UserError(
            f"{option} {folder}: not empty ({shown}) and holds no {MANIFEST} of an earlier report or "
            "comparison: give an empty or new folder (they clean only the files they wrote themselves)"
        )


def begin_report(folder: Path, option: str = "--out") -> set[str]:
    """Clean what earlier reports wrote in ``folder`` and mark it incomplete; the files kept.

    Raises
    ------
    UserError
        ``folder`` holds files and no manifest or marker (not a report folder), or a file
        cannot be deleted.
    """
    manifest, marker = folder / MANIFEST, folder / MARKER
    _refuse_linked_folders(folder, option)
    present = _files(folder)
    if marker.is_file():  # a report that did not finish: its files are all but those it kept
        kept = set(_listed(marker, "kept"))
        _remove(folder, present - kept)
    elif manifest.is_file():
        _remove(folder, set(_listed(manifest, "files")) & present)
    else:
        check_report_folder(folder, option)
    remove_inside(folder, {MANIFEST})
    kept = _files(folder)
    atomic_write_text(marker, dump_json({"format": MANIFEST_FORMAT, "kept": list[JsonValue](sorted(kept))}))
    return kept


def finish_report(folder: Path, kept: set[str]) -> list[str]:
    """Write the manifest of the files the report wrote and remove the marker; those files."""
    files = sorted(_files(folder) - kept)
    atomic_write_text(
        folder / MANIFEST, dump_json({"format": MANIFEST_FORMAT, "files": list[JsonValue](files)})
    )
    remove_inside(folder, {MARKER})
    return files


@contextmanager
def report_folder(folder: Path, option: str = "--out") -> Iterator[Path]:
    """Write a report into ``folder``: cleaned first, listed in a manifest once finished.

    An exception (or a kill) inside the block leaves the marker, so the folder says that
    it holds no finished report.
    """
    with output_root(folder), run_lock([folder / LOCK]):  # a second report into the folder is refused
        kept = begin_report(folder, option)
        yield folder
        finish_report(folder, kept)
