"""Psychometric analysis of runs on exams with human-calibrated item parameters (ENEM).

A run qualifies when its records carry ENEM's fields (``year``, ``area``,
``booklet``, ``language``, ``question_number``; the ``enem`` benchmark).
Records are grouped by exam (year, area, booklet); each exam's question file is
linked once to INEP's booklet and 3PL parameters
(:func:`enade_bench.benchmarks.enem.linking.link_exam`) and each record is joined to
its item by its ``question_number`` and ``language``; each option shuffle is one
response pattern.  Everything else is computed by
:mod:`enade_bench.psychometrics`: θ (EAP, mirt preset) and l_z per shuffle, l_z*
from a WLE pass (EAP has no correction term), ENEM-scale scores, the random
baseline over the same number of shuffles, a simulated human population, the
discrimination index over all model × shuffle patterns and the attribute χ²
tests.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from enade_bench.benchmarks.enem.data import find_enem_data
from enade_bench.benchmarks.enem.files import AREAS, ExamFile, parse_exam_filename
from enade_bench.benchmarks.enem.inep import enem_score, load_booklets, load_inep_items
from enade_bench.benchmarks.enem.linking import LinkedExam, link_exam
from enade_bench.dataset.sources import file_sha256
from enade_bench.errors import UserError
from enade_bench.psychometrics.baseline import random_responses
from enade_bench.psychometrics.classical import attribute_tests, discrimination_index, item_attributes
from enade_bench.psychometrics.information import information_curve, measurement_position
from enade_bench.psychometrics.irt import ItemParams
from enade_bench.psychometrics.shuffles import score_shuffles, summarise_shuffles
from enade_bench.psychometrics.simulation import simulate_population
from enade_bench.psychometrics.tidy import to_wide
from enade_bench.report.loader import NO_STRATEGY, RunEntry
from enade_bench.results.records import QuestionRecord

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
    #: The question files' language folder (``pt-br``, ``en``; empty when unknown).
    language: str = ""
    #: The exam file linked to its booklet (joins records to INEP items).
    linked: LinkedExam | None = None

    @property
    def label(self) -> str:
        """``ENEM 2022 MT pt-br (booklet 1082)``."""
        language = f" {self.language}" if self.language else ""
        return f"ENEM {self.exam.year} {self.exam.area}{language} (booklet {self.booklet})"

    @property
    def tag(self) -> str:
        """``2022_MT_pt-br_1082``: the file-name part of this exam's figures and tables."""
        language = f"_{self.language}" if self.language else ""
        return f"{self.exam.year}_{self.exam.area}{language}_{self.booklet}"


@dataclass
class Psychometrics:
    """The psychometric part of a report: analyses per exam and what was skipped."""

    exams: list[ExamAnalysis]
    skipped: list[str]


def respondent_name(entry: RunEntry) -> str:
    """How a run is named among respondents: ``experiment`` or ``experiment S4``."""
    return entry.experiment if entry.strategy == NO_STRATEGY else f"{entry.experiment} {entry.strategy}"


def exam_of(record: QuestionRecord) -> ExamFile | None:
    """The ENEM exam (year, area, booklet code as loaded) a record answered, from its fields."""
    year, area, booklet = (record.fields.get(k) for k in ("year", "area", "booklet"))
    if isinstance(year, int) and isinstance(booklet, int) and area in AREAS:
        return ExamFile(year, str(area), booklet)
    return None


def item_key(record: QuestionRecord) -> tuple[int, str] | None:
    """``(question_number, language)`` of an ENEM record: its row in the exam file."""
    number, language = record.fields.get("question_number"), record.fields.get("language")
    return (number, language) if isinstance(number, int) and isinstance(language, str) else None


def question_file(entry: RunEntry, exam: ExamFile) -> Path:
    """The exam's question file as the run recorded it (path and sha256 in ``dataset.sources``).

    The records carry each question's answer and position, but the analysis needs
    the whole file: a booklet code 0 is linked by the answer key of every common
    item (annulled items and items left out by ``--limit`` are not in the
    records), an item's place in the booklet is its rank among all the file's
    positions, and the attribute tests read the item texts.

    Raises
    ------
    UserError
        When no source of the run is that exam's file, or it moved or changed.
    """
    for source in entry.result.dataset.sources:
        path = Path(str(source.get("path", "")))
        try:
            named = parse_exam_filename(path)
        except ValueError:
            continue
        if named != exam:
            continue
        if not path.is_file():
            raise UserError(f"{entry.path}: dataset source {path}: file not found")
        if source.get("sha256") and file_sha256(path) != source["sha256"]:
            raise UserError(f"{entry.path}: dataset source {path}: changed since the run (sha256 differs)")
        return path
    raise UserError(f"{entry.path}: no dataset source named {_file_stem(exam)}.csv")


def _file_stem(exam: ExamFile) -> str:
    return f"ENEM_{exam.year}_{exam.area}_CO_PROVA_{exam.co_prova}"


def link_runs(
    groups: Mapping[ExamFile, Sequence[RunEntry]], inep: pd.DataFrame, booklets: pd.DataFrame
) -> tuple[dict[ExamFile, tuple[LinkedExam, str]], list[str]]:
    """Each exam's question file (from its first run) linked once to its booklet, with the
    file's language folder (``pt-br``, ``en``); notes for the exams that could not be."""
    linked, skipped = {}, []
    for exam, runs in groups.items():
        name = _file_stem(exam)
        try:
            path = question_file(runs[0], exam)
        except UserError as exc:
            skipped.append(f"{name}: question file: {exc}")
            continue
        questions = pd.read_csv(path, dtype=str, keep_default_na=False)
        try:
            linked[exam] = (link_exam(exam, questions, inep, booklets), language_of(path))
        except (LookupError, KeyError, ValueError) as exc:
            skipped.append(f"{name}: no INEP item parameters ({exc})")
    return linked, skipped


def language_of(path: Path) -> str:
    """The language folder of an ENEM question file (``questions/<language>/…``), or ``""``."""
    return path.parent.name if path.parent.parent.name == "questions" else ""


def analyse(
    entries: Sequence[RunEntry],
    enem_dir: Path | None = None,
    seed: int = 20240101,
    n_humans: int = 1000,
    linked: Sequence[tuple[LinkedExam, str]] = (),
) -> Psychometrics:
    """Run the psychometric analysis on every run that answered an ENEM exam.

    Parameters
    ----------
    entries : sequence of RunEntry
        All runs of the report (runs without ENEM fields are ignored).
    enem_dir : Path, optional
        Folder with ``inep_items.csv`` and ``inep_booklets.csv`` (found
        automatically when omitted, see :func:`~enade_bench.benchmarks.enem.data.find_enem_data`).
    seed : int
        Seed of the random baseline and the simulated human population.
    n_humans : int
        Size of the simulated human population.
    linked : sequence of (LinkedExam, language)
        Exams already linked to their booklets, with their language folder (a study
        links its exams when it plans them); the others are linked here, once each.

    Returns
    -------
    Psychometrics
        One :class:`ExamAnalysis` per booklet, and a note per run or exam skipped.
    """
    groups: dict[ExamFile, list[RunEntry]] = {}
    for entry in entries:
        answered = {e for r in entry.result.records if (e := exam_of(r))}
        for exam in sorted(answered, key=_file_stem):  # the order of the exams' file names
            groups.setdefault(exam, []).append(entry)
    if not groups:
        return Psychometrics([], [])
    near = [Path(str(s.get("path", ""))) for e in entries for s in e.result.dataset.sources]
    try:
        folder = find_enem_data(enem_dir, [p for p in near if str(p)] + [e.path for e in entries])
    except UserError as exc:
        return Psychometrics([], [f"{exc}; psychometrics skipped"])
    inep = load_inep_items(folder / "inep_items.csv")
    known = {exam.exam: (exam, language) for exam, language in linked}
    todo = {exam: runs for exam, runs in groups.items() if exam not in known}
    found, skipped = link_runs(todo, inep, load_booklets(folder / "inep_booklets.csv")) if todo else ({}, [])
    known.update(found)
    rng = np.random.default_rng(seed)
    exams = [
        _analyse_exam(*known[exam], runs, rng, n_humans) for exam, runs in groups.items() if exam in known
    ]
    return Psychometrics(exams, skipped)


def _tidy(exam: LinkedExam, runs: Sequence[RunEntry]) -> tuple[pd.DataFrame, dict[str, RunEntry]]:
    """One row per answered record. A record in error is no answer: its item is missing from
    that shuffle's pattern (the likelihood skips it), not a wrong response."""
    item_of = exam.item_of()
    rows, names = [], {}
    for entry in runs:
        name = respondent_name(entry)
        names[name] = entry
        for r in entry.result.records:
            key = item_key(r)
            if r.error is None and key is not None and key in item_of and exam_of(r) == exam.exam:
                rows.append((name, r.shuffle, item_of[key], int(r.correct)))
    return pd.DataFrame(rows, columns=["respondent", "shuffle", "item_id", "correct"]), names


def _score(tidy: pd.DataFrame, items: ItemParams, area: str) -> pd.DataFrame:
    eap = score_shuffles(tidy, items, "eap")
    wle = score_shuffles(tidy, items, "wle")
    eap["lz_star"] = wle["lz_star"].to_numpy()
    eap["score"] = enem_score(eap["theta"].to_numpy(), area)
    return eap


def _analyse_exam(
    linked: LinkedExam, language: str, runs: Sequence[RunEntry], rng: np.random.Generator, n_humans: int
) -> ExamAnalysis:
    exam, joined, questions = linked.exam, linked.items, linked.questions
    tidy, names = _tidy(linked, runs)
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
    item_rows = questions.loc[scored["row"]].reset_index(drop=True)
    attrs = item_attributes(item_rows)
    attrs.index = list(items.item_ids)
    tests = attribute_tests(di.set_index("item_id").loc[list(items.item_ids), "poor"].to_numpy(), attrs)
    return ExamAnalysis(
        exam,
        linked.booklet,
        items,
        questions,
        pd.concat([tidy, guesses], ignore_index=True),
        per_shuffle,
        summary,
        humans,
        di,
        tests,
        information_curve(items),
        names,
        language,
        linked,
    )
