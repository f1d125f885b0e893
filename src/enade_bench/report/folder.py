"""A report folder that holds one whole report, or says that it does not.

``report --out DIR``, ``compare --out DIR`` and a study's ``report/`` folder may be written
again and again.  Each is one :class:`ReportFolder`, opened once: :meth:`ReportFolder.open`
checks it (before the runs are read, before a study runs its models), and the ``with``
block around the writing locks it, cleans it, and lists what was written.  Every report
kind writes through it; it makes each time exact:

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
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

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


@dataclass
class ReportFolder:
    """One report folder: checked when opened, then locked, cleaned and listed around the writing.

    ``with folder:`` holds the lock, cleans what an earlier report wrote and marks the folder
    incomplete; leaving the block normally writes the manifest of the files written (an
    exception or a kill leaves the marker).

    Attributes
    ----------
    path : Path
        The folder.
    option : str
        How the user names it, for messages (``--out``, a study file's report folder).
    """

    path: Path
    option: str = "--out"
    _kept: set[str] = field(default_factory=set, repr=False)
    _stack: ExitStack | None = field(default=None, repr=False)

    @classmethod
    def open(cls, path: Path, option: str = "--out", within: Path | None = None) -> ReportFolder:
        """The folder ``path``, checked: an error when it holds files but no report manifest or
        marker, or a link to a folder (or is reached through a link inside ``within``, the output
        folder it belongs to, such as a study's).  Nothing is written yet."""
        folder = cls(Path(path), option)
        if within is not None and folder._through_link(Path(within)):
            raise UserError(
                f"{option} {path}: a symbolic link inside the output folder '{within}'; a report is never "
                "written through links: remove the link"
            )
        folder._check()
        return folder

    def __truediv__(self, name: str) -> Path:
        return self.path / name

    def files(self) -> set[str]:
        """Every file and link inside (relative POSIX paths, links not followed), but the
        manifest, the marker and the lock."""
        return files_inside(self.path) - {MANIFEST, MARKER, LOCK}

    def _through_link(self, within: Path) -> bool:
        try:
            parts = self.path.relative_to(within).parts
        except ValueError:
            return False
        current = within
        for part in parts:
            current = current / part
            if current.is_symlink():
                return True
        return False

    def _check(self) -> None:
        linked = linked_folders(self.path)
        if linked:
            raise UserError(
                f"{self.option} {self.path}: '{linked[0]}' is a symbolic link to a folder; a report never "
                "writes through links and deletes nothing until it is gone: remove the link (or give another folder)"
            )
        if (self / MANIFEST).is_file() or (self / MARKER).is_file():
            return
        present = self.files()
        if present:
            shown = ", ".join(sorted(present)[:3]) + (", …" if len(present) > 3 else "")
            raise UserError(
                f"{self.option} {self.path}: not empty ({shown}) and holds no {MANIFEST} of an earlier report "
                "or comparison: give an empty or new folder (they clean only the files they wrote themselves)"
            )

    def _listed(self, name: str, key: str) -> list[str]:
        """The file list ``key`` of the manifest or marker ``name``; an error when unreadable."""
        path = self / name
        try:
            data = json.loads(read_text(path))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise UserError(f"{path}: not a readable report manifest ({exc}); delete the folder") from None
        files = data.get(key) if isinstance(data, dict) else None
        if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
            raise UserError(f"{path}: {key}: expected a list of file names; delete the folder")
        return files

    def __enter__(self) -> ReportFolder:
        stack = ExitStack()
        stack.enter_context(output_root(self.path))
        stack.enter_context(run_lock([self / LOCK]))  # a second report into the folder is refused
        try:
            self._check()  # again, under the lock: the folder may have changed since it was opened
            present = self.files()
            if (self / MARKER).is_file():  # a report that did not finish: its files are all but those it kept
                remove_inside(self.path, present - set(self._listed(MARKER, "kept")))
            elif (self / MANIFEST).is_file():
                remove_inside(self.path, set(self._listed(MANIFEST, "files")) & present)
            remove_inside(self.path, {MANIFEST})
            self._kept = self.files()
            marker: dict[str, JsonValue] = {
                "format": MANIFEST_FORMAT,
                "kept": list[JsonValue](sorted(self._kept)),
            }
            atomic_write_text(self / MARKER, dump_json(marker))
        except BaseException:
            stack.close()
            raise
        self._stack = stack
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        stack, self._stack = self._stack, None
        assert stack is not None, "a ReportFolder is entered once"
        with stack:
            if kind is None:
                written = list[JsonValue](sorted(self.files() - self._kept))
                atomic_write_text(self / MANIFEST, dump_json({"format": MANIFEST_FORMAT, "files": written}))
                remove_inside(self.path, {MARKER})
