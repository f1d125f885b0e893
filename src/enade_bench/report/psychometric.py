"""Psychometric analysis of runs on exams with human-calibrated item parameters (ENEM).

A run qualifies when its question ids carry an ENEM exam file stem
(``ENEM_<year>_<area>_CO_PROVA_<code>:<position>:<language>``, the ``enem``
dataset preset).  Its records are joined to INEP's 3PL parameters by booklet
position (:func:`enade_bench.psychometrics.enem.exam_items`); each option
shuffle is one response pattern.  Everything else is computed by
:mod:`enade_bench.psychometrics`: θ (EAP, mirt preset) and l_z per shuffle, l_z*
from a WLE pass (EAP has no correction term), ENEM-scale scores, the random
baseline over the same number of shuffles, a simulated human population, the
discrimination index over all model × shuffle patterns and the attribute χ²
tests.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from enade_bench.dataset.sources import file_sha256
from enade_bench.psychometrics.baseline import random_responses
from enade_bench.psychometrics.classical import attribute_tests, discrimination_index, item_attributes
from enade_bench.psychometrics.enem import (
    ExamFile,
    enem_score,
    exam_items,
    link_booklet,
    load_booklets,
    load_inep_items,
    parse_exam_filename,
)
from enade_bench.psychometrics.information import information_curve, measurement_position
from enade_bench.psychometrics.irt import ItemParams
from enade_bench.psychometrics.shuffles import score_shuffles, summarise_shuffles
from enade_bench.psychometrics.simulation import simulate_population
from enade_bench.psychometrics.tidy import to_wide
from enade_bench.report.loader import NO_STRATEGY, RunEntry

#: Per-shuffle statistics summarised over shuffles (mean and 95 % percentile interval).
SUMMARY_COLUMNS = ("theta", "se", "lz", "lz_star", "score", "accuracy")
RANDOM = "random baseline"


@dataclass
class ExamAnalysis:
    """Everything computed for one exam (booklet) across the runs that answered it."""

    exam: ExamFile
    booklet: int
    items: ItemParams
    questions: pd.DataFrame
    tidy: pd.DataFrame
    per_shuffle: pd.DataFrame
    summary: pd.DataFrame
    humans: pd.DataFrame
    discrimination: pd.DataFrame
    attributes: pd.DataFrame
    information: pd.DataFrame
    respondents: dict[str, RunEntry] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """``ENEM 2022 MT (booklet 1082)``."""
        return f"ENEM {self.exam.year} {self.exam.area} (booklet {self.booklet})"


@dataclass
class Psychometrics:
    """The psychometric part of a report: analyses per exam and what was skipped."""

    exams: list[ExamAnalysis]
    skipped: list[str]


def respondent_name(entry: RunEntry) -> str:
    """How a run is named among respondents: ``experiment`` or ``experiment S4``."""
    return entry.experiment if entry.strategy == NO_STRATEGY else f"{entry.experiment} {entry.strategy}"


def find_enem_data(entries: Sequence[RunEntry], explicit: Path | None = None) -> Path | None:
    """The folder holding ``inep_items.csv``: ``explicit``, ``$ENADE_BENCH_SHARED_DATA/enem``,
    an ancestor of a run's question file, or ``../shared/data/enem`` from here."""
    candidates: list[Path] = []
    if explicit is not None:
        candidates.append(Path(explicit))
    if os.environ.get("ENADE_BENCH_SHARED_DATA"):
        candidates.append(Path(os.environ["ENADE_BENCH_SHARED_DATA"]) / "enem")
    for entry in entries:
        for source in entry.result.dataset.sources:
            path = Path(str(source.get("path", "")))
            candidates += [p for p in path.parents if p != Path(".")]
            candidates += list((entry.path.parent / path).parents)
    candidates.append(Path("..") / "shared" / "data" / "enem")
    for folder in candidates:
        if (folder / "inep_items.csv").is_file():
            return folder.resolve()
    return None


def _question_file(stem: str, entry: RunEntry, enem_dir: Path) -> Path | None:
    for source in entry.result.dataset.sources:
        path = Path(str(source.get("path", "")))
        if path.stem == stem:
            for candidate in (path, entry.path.parent / path):
                if candidate.is_file():
                    return candidate
    # Relative source paths may not resolve from here: find the file by name, and among
    # same-named files (pt-br/ and en/ share names) take the one with the recorded sha256.
    digests = {str(s.get("sha256")) for s in entry.result.dataset.sources}
    found = sorted((enem_dir / "questions").rglob(f"{stem}.csv"))
    for candidate in found:
        if file_sha256(candidate) in digests:
            return candidate
    return found[0] if found else None


def _exam_stem(record_id: str) -> str | None:
    stem = record_id.split(":", 1)[0]
    try:
        parse_exam_filename(stem)
    except ValueError:
        return None
    return stem


def _link(stem: str, path: Path, inep: pd.DataFrame, booklets: pd.DataFrame) -> tuple[int, pd.DataFrame]:
    """Booklet code and question rows joined to parameters, with the record id of each row."""
    exam = parse_exam_filename(stem)
    questions = pd.read_csv(path, dtype=str, keep_default_na=False)
    code = link_booklet(questions, inep, booklets, exam.year, exam.area, exam.co_prova)
    joined = exam_items(questions, inep, code)
    ids = stem + ":" + questions["question_number"].astype(str) + ":" + questions["language"].astype(str)
    joined["record_id"] = ids.loc[joined["row"]].to_numpy()
    return code, questions.assign(record_id=ids)


def analyse(
    entries: Sequence[RunEntry],
    enem_dir: Path | None = None,
    seed: int = 20240101,
    n_humans: int = 1000,
) -> Psychometrics:
    """Run the psychometric analysis on every run that answered an ENEM exam.

    Parameters
    ----------
    entries : sequence of RunEntry
        All runs of the report (non-ENEM runs are ignored).
    enem_dir : Path, optional
        Folder with ``inep_items.csv`` and ``inep_booklets.csv`` (found
        automatically when omitted, see :func:`find_enem_data`).
    seed : int
        Seed of the random baseline and the simulated human population.
    n_humans : int
        Size of the simulated human population.

    Returns
    -------
    Psychometrics
        One :class:`ExamAnalysis` per booklet, and a note per run or exam skipped.
    """
    groups: dict[str, list[RunEntry]] = {}
    for entry in entries:
        stems = {s for r in entry.result.records if (s := _exam_stem(r.id))}
        for stem in sorted(stems):
            groups.setdefault(stem, []).append(entry)
    if not groups:
        return Psychometrics([], [])
    folder = find_enem_data(entries, enem_dir)
    if folder is None:
        return Psychometrics([], ["no inep_items.csv found (pass --enem-data); psychometrics skipped"])
    inep = load_inep_items(folder / "inep_items.csv")
    booklets = load_booklets(folder / "inep_booklets.csv")
    rng = np.random.default_rng(seed)
    exams, skipped = [], []
    for stem, runs in groups.items():
        path = _question_file(stem, runs[0], folder)
        if path is None:
            skipped.append(f"{stem}: question file not found under {folder / 'questions'}")
            continue
        try:
            code, questions = _link(stem, path, inep, booklets)
        except (LookupError, KeyError, ValueError) as exc:
            skipped.append(f"{stem}: no INEP item parameters ({exc})")
            continue
        exams.append(_analyse_exam(stem, code, questions, runs, inep, rng, n_humans))
    return Psychometrics(exams, skipped)


def _tidy(
    stem: str, runs: Sequence[RunEntry], joined: pd.DataFrame
) -> tuple[pd.DataFrame, dict[str, RunEntry]]:
    item_of = dict(zip(joined["record_id"], joined["item_id"], strict=True))
    rows, names = [], {}
    for entry in runs:
        name = respondent_name(entry)
        names[name] = entry
        for r in entry.result.records:
            if r.id.startswith(stem + ":") and isinstance(item_of.get(r.id), str):
                rows.append((name, r.shuffle, item_of[r.id], int(r.correct)))
    return pd.DataFrame(rows, columns=["respondent", "shuffle", "item_id", "correct"]), names


def _score(tidy: pd.DataFrame, items: ItemParams, area: str) -> pd.DataFrame:
    eap = score_shuffles(tidy, items, "eap")
    wle = score_shuffles(tidy, items, "wle")
    eap["lz_star"] = wle["lz_star"].to_numpy()
    eap["score"] = enem_score(eap["theta"].to_numpy(), area)
    return eap


def _analyse_exam(
    stem: str,
    code: int,
    questions: pd.DataFrame,
    runs: Sequence[RunEntry],
    inep: pd.DataFrame,
    rng: np.random.Generator,
    n_humans: int,
) -> ExamAnalysis:
    exam = parse_exam_filename(stem)
    joined = exam_items(questions, inep, code)
    joined["record_id"] = questions["record_id"].loc[joined["row"]].to_numpy()
    tidy, names = _tidy(stem, runs, joined)
    scored = joined[joined["scored"] & joined["item_id"].isin(set(tidy["item_id"]))]
    items = ItemParams.from_frame(scored)
    per_shuffle = _score(tidy, items, exam.area)
    n_shuffles = int(tidy["shuffle"].nunique())
    guesses = random_responses(items.item_ids, rng, n_shuffles=n_shuffles, n_options=5, respondent=RANDOM)
    baseline = _score(guesses, items, exam.area)
    per_shuffle = pd.concat([per_shuffle, baseline], ignore_index=True)
    summary = summarise_shuffles(per_shuffle, SUMMARY_COLUMNS)
    position = measurement_position(summary["theta_mean"].to_numpy(), items)
    summary["relative_information"] = position["relative_information"].to_numpy()
    summary["poorly_measured"] = position["poorly_measured"].to_numpy()
    humans = simulate_population(items, n_humans, rng)
    models = per_shuffle[per_shuffle["respondent"] != RANDOM].reset_index(drop=True)
    wide = to_wide(tidy, items=list(items.item_ids)).reindex(
        pd.MultiIndex.from_frame(models[["respondent", "shuffle"]])
    )
    di = discrimination_index(wide, models["theta"].to_numpy())
    di = di.merge(items.to_frame()[["item_id", "b"]], on="item_id")
    by_id = questions.set_index("record_id")
    item_rows = by_id.loc[scored["record_id"]].reset_index(drop=True)
    attrs = item_attributes(item_rows)
    attrs.index = list(items.item_ids)
    tests = attribute_tests(di.set_index("item_id").loc[list(items.item_ids), "poor"].to_numpy(), attrs)
    return ExamAnalysis(
        exam, code, items, questions, pd.concat([tidy, guesses], ignore_index=True), per_shuffle, summary, humans, di, tests,
        information_curve(items), names,
    )  # fmt: skip
