"""The files of one run (one experiment × one strategy), and moving them aside."""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path

from enade_bench.errors import UserError
from enade_bench.file_names import name_problem
from enade_bench.results.safe_write import real_folder
from enade_bench.results.writable import os_reason

__all__ = ["PREVIOUS", "RunPaths"]


@dataclass(frozen=True)
class RunPaths:
    """The files one run (one experiment × one strategy) writes.

    ``{stem}`` is ``{name}_{strategy}`` (or ``{name}`` for a run without a strategy id).
    """

    folder: Path
    stem: str

    @classmethod
    def of(cls, output_dir: Path, name: str, strategy_id: str | None) -> RunPaths:
        """The paths of experiment ``name``, strategy ``strategy_id``, in ``output_dir``.

        Raises
        ------
        UserError
            ``name`` or ``strategy_id`` is not one safe file name (:mod:`enade_bench.file_names`;
            a config is checked when read, this guards every other route).
        """
        for what, value in (("experiment name", name), ("strategy id", strategy_id)):
            problem = None if value is None else name_problem(value)
            if problem is not None:
                raise UserError(f"{what} {value!r} {problem}: it names the run's files in {output_dir}")
        return cls(output_dir, f"{name}_{strategy_id}" if strategy_id else name)

    @property
    def results(self) -> Path:
        """``{stem}_results.json``: config, environment, totals, breakdowns, records."""
        return self.folder / f"{self.stem}_results.json"

    @property
    def summary(self) -> Path:
        """``{stem}_summary.csv``: one row per record."""
        return self.folder / f"{self.stem}_summary.csv"

    @property
    def intermediate(self) -> Path:
        """``{stem}_intermediate.jsonl``: the resumable log."""
        return self.folder / f"{self.stem}_intermediate.jsonl"

    @property
    def timing(self) -> Path:
        """``{stem}_timing.json``: how long the run took."""
        return self.folder / f"{self.stem}_timing.json"

    @property
    def lock(self) -> Path:
        """``{stem}.lock``: held by the process writing these files (:mod:`.lock`)."""
        return self.folder / f"{self.stem}.lock"

    def sibling(self, suffix: str) -> Path:
        """Another file of this run, e.g. ``sibling("eeval.json")`` -> ``{stem}_eeval.json``."""
        return self.folder / f"{self.stem}_{suffix}"

    def set_aside(self, now: dt.datetime | None = None) -> Path | None:
        """Move this run's files into ``previous_old/{stem}_{UTC time}/``; that folder (or None).

        A ``--no-resume`` run calls this before it starts, so that its results file never
        stands beside the log of another run: a rerun that is killed leaves no earlier
        results to be reported as if they were its own.  ``report`` skips folders whose
        name ends in ``_old``; the files stay there until the user deletes them.
        """
        files = [p for p in (self.results, self.summary, self.timing, self.intermediate) if p.exists()]
        if not files:
            return None
        stamp = (now or dt.datetime.now(dt.UTC)).strftime("%Y%m%dT%H%M%SZ")
        target = self.folder / PREVIOUS / f"{self.stem}_{stamp}"
        suffix = 1
        while target.exists():
            suffix += 1
            target = self.folder / PREVIOUS / f"{self.stem}_{stamp}_{suffix}"
        real_folder(target.parent, self.folder)  # a linked previous_old/ is refused
        try:
            target.mkdir()
            for path in files:
                os.replace(path, target / path.name)
        except OSError as exc:
            raise UserError(f"{target}: cannot move the earlier results aside ({os_reason(exc)})") from None
        return target


#: The folder of a results folder where ``--no-resume`` moves the files it replaces.
PREVIOUS = "previous_old"
