"""Find and read the results files of one or more results folders.

Every ``*_results.json`` under the given folders is read (recursively), except
in folders whose name ends in ``_old`` (kept by hand as superseded runs).  Each
file becomes one :class:`RunEntry`: one experiment × one strategy.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from enade_bench.errors import UserError
from enade_bench.metrics.accuracy import summarize
from enade_bench.results.records import RunResult
from enade_bench.results.store import read_result
from enade_bench.results.summary import as_object

#: Strategy order in tables and figures; anything else comes after, by name.
STRATEGY_ORDER = ("S1", "S2", "S3", "S4", "S5", "S6", "S7")
#: Column name of a run written without a strategy id (the config's own settings).
NO_STRATEGY = "run"


@dataclass(frozen=True)
class RunEntry:
    """One results file: an experiment run with one strategy.

    Attributes
    ----------
    path : Path
        The ``*_results.json`` file.
    result : RunResult
        Its parsed content.
    """

    path: Path
    result: RunResult

    @property
    def experiment(self) -> str:
        """The config's ``name``."""
        return self.result.experiment

    @property
    def strategy(self) -> str:
        """Strategy id (``S1``…), or :data:`NO_STRATEGY` for a run without one."""
        return self.result.strategy.id or NO_STRATEGY

    @property
    def label(self) -> str:
        """Human-readable strategy description (method, shots, shuffles)."""
        return self.result.strategy.label or self.result.strategy.method

    @property
    def model(self) -> str:
        """The model's name as the config gives it (or the API model)."""
        model_cfg = as_object(self.result.config.get("model"))
        api = as_object(model_cfg.get("api"))
        name = model_cfg.get("name") or api.get("model") or self.result.model.name
        return str(name or "unknown")

    @property
    def training_cutoff(self) -> str | None:
        """``model.training_cutoff`` of the config (``YYYY`` or ``YYYY-MM``), if given."""
        value = as_object(self.result.config.get("model")).get("training_cutoff")
        return str(value) if value else None

    @property
    def n_shuffles(self) -> int:
        """Number of option shuffles per question in this run."""
        return self.result.strategy.n_shuffles or 1


def strategy_sort_key(strategy: str) -> tuple[int, str]:
    """Order S1…S7 first, then other ids alphabetically."""
    if strategy in STRATEGY_ORDER:
        return (STRATEGY_ORDER.index(strategy), strategy)
    return (len(STRATEGY_ORDER), strategy)


def find_results(folders: Iterable[Path]) -> list[Path]:
    """All ``*_results.json`` files under ``folders``, skipping ``*_old`` folders.

    Raises
    ------
    UserError
        If a folder does not exist.
    """
    found: list[Path] = []
    for folder in folders:
        root = Path(folder)
        if not root.is_dir():
            raise UserError(f"{root}: not a folder")
        if root.name.endswith("_old"):
            continue
        for path in sorted(root.rglob("*_results.json")):
            relative = path.relative_to(root).parts[:-1]
            if any(part.endswith("_old") for part in relative):
                continue
            found.append(path)
    return found


def load_results(folders: Sequence[Path | str]) -> list[RunEntry]:
    """Read every run under ``folders``, ordered by experiment then strategy.

    Parameters
    ----------
    folders : sequence of path
        Results folders (``output.dir`` of one or more runs).

    Returns
    -------
    list of RunEntry
        One per results file.

    Raises
    ------
    UserError
        If a folder is missing, holds no results file, or a file is not valid.
        The same experiment and strategy found twice is also an error (two
        copies of one run would be counted twice).
    """
    paths = find_results(Path(f) for f in folders)
    if not paths:
        shown = ", ".join(str(f) for f in folders)
        raise UserError(f"no *_results.json files under {shown} (folders ending in _old are skipped)")
    entries = [RunEntry(path, read_result(path)) for path in paths]
    for entry in entries:
        check_totals(entry)
    seen: dict[tuple[str, str], Path] = {}
    for entry in entries:
        key = (entry.experiment, entry.strategy)
        if key in seen:
            raise UserError(
                f"{entry.path}: experiment {key[0]!r}, strategy {key[1]!r} also in {seen[key]}; "
                "rename one folder with an _old suffix to skip it"
            )
        seen[key] = entry.path
    entries.sort(key=lambda e: (e.experiment, strategy_sort_key(e.strategy)))
    return entries


#: The totals a report recomputes from the records of every file it reads.
CHECKED_TOTALS = ("n", "correct", "unanswered", "errors", "n_questions")


def check_totals(entry: RunEntry) -> None:
    """An error naming the file and the figure when its totals disagree with its records.

    A report counts the records; a stored total that says otherwise (a file edited by
    hand, or merged from two runs) would make its tables contradict the file.
    """
    records = entry.result.records
    for index, record in enumerate(records):
        if record.correct != (record.prediction is not None and record.prediction == record.answer):
            raise UserError(
                f"{entry.path}: records[{index}] ({record.id}): correct is {record.correct}, but "
                f"prediction {record.prediction!r} vs answer {record.answer!r} says otherwise"
            )
    stored, recomputed = entry.result.totals, summarize(records)
    for name in CHECKED_TOTALS:
        if getattr(stored, name) != getattr(recomputed, name):
            raise UserError(
                f"{entry.path}: totals.{name} is {getattr(stored, name)}, but the {len(records)} "
                f"records give {getattr(recomputed, name)}; the file was altered or merged: rerun it"
            )
    if not math.isclose(stored.accuracy, recomputed.accuracy, abs_tol=1e-9):
        raise UserError(
            f"{entry.path}: totals.accuracy is {stored.accuracy}, but the records give "
            f"{recomputed.accuracy}; the file was altered or merged: rerun it"
        )


def experiments(entries: Sequence[RunEntry]) -> list[str]:
    """Experiment names in order of first appearance."""
    return list(dict.fromkeys(e.experiment for e in entries))


def strategies(entries: Sequence[RunEntry]) -> list[str]:
    """Strategy ids present, in table order."""
    return sorted({e.strategy for e in entries}, key=strategy_sort_key)


def breakdown_fields(entries: Sequence[RunEntry]) -> list[str]:
    """The grouping fields the runs break accuracy down by, in declared order, ``year`` last.

    Each benchmark declares its own (ENADE ``course, component, year``; ENEM ``area,
    booklet, language, year``; E-EVAL ``subject, level``); ``n_options`` is not one.
    """
    names = list(dict.fromkeys(k for e in entries for k in e.result.breakdowns if k != "n_options"))
    return [n for n in names if n != "year"] + [n for n in names if n == "year"]
