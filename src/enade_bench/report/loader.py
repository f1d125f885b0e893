"""Find and read the results files of one or more results folders.

Every ``*_results.json`` under the given folders is read (recursively), except
in folders whose name ends in ``_old`` (kept by hand as superseded runs, and where a
``--no-resume`` run moves the files it replaces).  Each file becomes one
:class:`RunEntry`: one experiment × one strategy.  Runs keep the order of the folders
given (the models in the order of the command line or the study config), then of the
files in each folder.

Records that ended in an error are never scored: files written before schema version 4
counted them as wrong answers, and are rescored here from their records.  Files written
before empty values formed the ``(empty)`` group hold a group with a blank name; their
breakdowns are recomputed from the records too.  Each entry
carries the warnings a reader must see (:func:`provenance_warnings`): errors, and a log
that changed after the results file was written.
"""

from __future__ import annotations

import json
import math
import os
import stat
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from enade_bench.dataset.sources import file_sha256
from enade_bench.errors import UserError
from enade_bench.file_names import shown
from enade_bench.metrics.accuracy import field_breakdowns, is_blank, scored, summarize
from enade_bench.metrics.position_bias import position_bias
from enade_bench.results.records import RunResult
from enade_bench.results.store import read_result
from enade_bench.results.summary import Totals, as_object

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
        Its parsed content (rescored when an earlier version counted errors as answers).
    warnings : tuple of str
        What the reader must be told about this file: records in error, a stale file.
    """

    path: Path
    result: RunResult
    warnings: tuple[str, ...] = ()

    @property
    def experiment(self) -> str:
        """The config's ``name`` (a control character or lone surrogate in it shown escaped)."""
        return shown(self.result.experiment)

    @property
    def strategy(self) -> str:
        """Strategy id (``S1``…), or :data:`NO_STRATEGY` for a run without one."""
        return self.result.strategy.id or NO_STRATEGY

    @property
    def label(self) -> str:
        """Human-readable strategy description (method, shots, shuffles)."""
        return shown(self.result.strategy.label or self.result.strategy.method)

    @property
    def model(self) -> str:
        """The model's name as the config gives it (or the API model)."""
        model_cfg = as_object(self.result.config.get("model"))
        api = as_object(model_cfg.get("api"))
        name = model_cfg.get("name") or api.get("model") or self.result.model.name
        return shown(str(name or "unknown"))  # a control character in a name is shown escaped

    @property
    def training_cutoff(self) -> str | None:
        """``model.training_cutoff`` of the config (``YYYY`` or ``YYYY-MM``), if given."""
        value = as_object(self.result.config.get("model")).get("training_cutoff")
        return str(value) if value else None

    @property
    def n_errors(self) -> int:
        """Records that ended in an error (not scored; the run is incomplete)."""
        return self.result.totals.errors

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

    A name that is not a regular file (a FIFO, a device, a folder) is skipped with a
    ``warning:`` line, never opened.

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
            try:
                regular = stat.S_ISREG(os.stat(path).st_mode)  # never opened: a FIFO would block
            except OSError:
                regular = False
            if not regular:
                print(
                    f"warning: {path}: not a regular file (a FIFO, a device, a folder or a broken "
                    "link); skipped",
                    file=sys.stderr,
                )
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
        copies of one run would be counted twice), and so is one experiment whose
        strategies were run by different models (the tables are keyed by experiment name:
        they would show two models as one).
    """
    paths = find_results(Path(f) for f in folders)
    if not paths:
        shown = ", ".join(str(f) for f in folders)
        raise UserError(f"no *_results.json files under {shown} (folders ending in _old are skipped)")
    entries = []
    for path in paths:
        entry = RunEntry(path, read_result(path))
        check_totals(entry)
        entry = rescored(entry)
        entries.append(replace(entry, warnings=tuple(provenance_warnings(entry))))
    seen: dict[tuple[str, str], Path] = {}
    for entry in entries:
        key = (entry.experiment, entry.strategy)
        if key in seen:
            raise UserError(
                f"{entry.path}: experiment {key[0]!r}, strategy {key[1]!r} also in {seen[key]}; "
                "rename one folder with an _old suffix to skip it"
            )
        seen[key] = entry.path
    _one_model_per_experiment(entries)
    order = {name: i for i, name in enumerate(dict.fromkeys(e.experiment for e in entries))}
    entries.sort(key=lambda e: (order[e.experiment], strategy_sort_key(e.strategy)))
    return entries


def _one_model_per_experiment(entries: Sequence[RunEntry]) -> None:
    """Every strategy of an experiment was run by one model (name and pinned weights)."""
    first: dict[str, RunEntry] = {}
    for entry in entries:
        other = first.setdefault(entry.experiment, entry)
        if entry.result.model.summary != other.result.model.summary:
            raise UserError(
                f"{entry.path}: experiment {entry.experiment!r} was run by model "
                f"'{entry.result.model.summary}' here and by '{other.result.model.summary}' in {other.path}; "
                "the tables are keyed by experiment name: give each model its own experiment name "
                "(or move one folder aside with an _old suffix)"
            )


def _legacy_errors(totals: Totals) -> bool:
    """Totals written before version 4: records in error counted in ``n`` as wrong answers."""
    return totals.errors > 0 and totals.n_errors == 0


def _blank_groups(result: RunResult) -> bool:
    """Breakdowns written before empty values formed the ``(empty)`` group: a blank group name."""
    return any(is_blank(value) for groups in result.breakdowns.values() for value in groups)


def rescored(entry: RunEntry) -> RunEntry:
    """The entry with its errors out of every accuracy (files written before schema version 4)
    and its empty values in the ``(empty)`` group.

    Totals, breakdowns and position bias are recomputed from the records, as a run writes
    them today (:func:`~enade_bench.metrics.accuracy.summarize`); a file whose only
    difference is a blank group name gets its breakdowns recomputed; other files are
    returned as they are.
    """
    result = entry.result
    legacy = _legacy_errors(result.totals)
    if not legacy and not _blank_groups(result):
        return entry
    records = result.records
    update: dict[str, object] = {"breakdowns": field_breakdowns(records, result.breakdowns)}
    if legacy:
        bpc = None if result.position_bias is None else position_bias(scored(records))
        update |= {"totals": summarize(records), "position_bias": bpc, "complete": False}
    return replace(entry, result=result.model_copy(update=update))


def _log_fingerprint(path: Path) -> str | None:
    """The fingerprint in the header line of an intermediate log (``None``: unreadable)."""
    try:
        with path.open("rb") as handle:
            header = json.loads(handle.readline())
    except (OSError, json.JSONDecodeError):
        return None
    value = header.get("fingerprint") if isinstance(header, dict) else None
    return value if isinstance(value, str) else None


def errors_warning(entry: RunEntry) -> str | None:
    """``exp S1: 28 of 28 records ended in an error…`` for an incomplete run; ``None`` otherwise."""
    errors = entry.n_errors
    if not errors:
        return None
    return (
        f"{entry.experiment} {entry.strategy}: {errors} of {len(entry.result.records)} records ended "
        f"in an error and are not scored (n = {entry.result.totals.n}, n_errors = {errors}); the run is "
        f"incomplete: rerun its command to ask them again ({entry.path})"
    )


def stale_warning(entry: RunEntry) -> str | None:
    """A warning when the log next to the results file changed after the file was written.

    The results file names its log and the log's sha256 (schema version 4).  A log that
    differs now was written by a later run that did not finish (killed, or still going): a
    resumed run (same fingerprint: the results file lacks its newest answers) or a
    ``--no-resume`` or changed rerun (another fingerprint: the results file is of the old
    setup).  Files without that block are checked by date: a log newer than the file.
    """
    info = entry.result.log
    if info is None:
        stem = entry.path.name.removesuffix("_results.json")
        log = entry.path.with_name(f"{stem}_intermediate.jsonl")
        if log.is_file() and log.stat().st_mtime > entry.path.stat().st_mtime + 1:
            return (
                f"{entry.path}: its log {log.name} is newer than it (a later run that did not "
                "finish?); these results may be stale: rerun the same command to update them"
            )
        return None
    log = entry.path.with_name(info.path)
    if info.sha256 is None or not log.is_file() or file_sha256(log) == info.sha256:
        return None
    if _log_fingerprint(log) != info.fingerprint:
        return (
            f"{entry.path}: STALE: its log {log.name} was restarted by a run with another setup "
            "(--no-resume, or a changed config) that did not finish; these results are of the "
            "earlier run: finish the new run, or move the log away"
        )
    return (
        f"{entry.path}: STALE: its log {log.name} holds answers written after it (a resumed run "
        "that did not finish); rerun the same command to update these results"
    )


def provenance_warnings(entry: RunEntry) -> list[str]:
    """What a report of this entry must say first: errors, a stale results file."""
    return [w for w in (errors_warning(entry), stale_warning(entry)) if w is not None]


#: The totals a report recomputes from the records of every file it reads.
CHECKED_TOTALS = ("n", "correct", "unanswered", "errors", "n_errors", "n_questions")


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
    if _legacy_errors(stored):  # before version 4, errors counted in n as wrong answers
        n = recomputed.n + recomputed.errors
        recomputed = recomputed.model_copy(update={"n": n, "n_errors": 0, "accuracy": recomputed.correct / n})
    for name in CHECKED_TOTALS:
        if getattr(stored, name) != getattr(recomputed, name):
            raise UserError(
                f"{entry.path}: totals.{name} is {getattr(stored, name)}, but the {len(records)} "
                f"records give {getattr(recomputed, name)}; the file was altered or merged: rerun it"
            )
    if not _same(stored.accuracy, recomputed.accuracy):
        raise UserError(
            f"{entry.path}: totals.accuracy is {stored.accuracy}, but the records give "
            f"{recomputed.accuracy}; the file was altered or merged: rerun it"
        )


def _same(a: float, b: float) -> bool:
    """Equal accuracies (both NaN: no record scored)."""
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, abs_tol=1e-9)


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
