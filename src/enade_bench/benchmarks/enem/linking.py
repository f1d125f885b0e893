"""Linking an ENEM exam file to its booklet, and its questions to the booklet's INEP parameters.

* Files and booklets may number an area's positions differently (46-90 against
  1-45): a question is joined to a booklet row by its rank among the distinct
  positions (its ``slot``).
* LC lists positions 1-5 twice (English and Spanish): a run answers one foreign
  language, whose rows are kept (:func:`question_keys`).
* A file whose booklet code is 0 (unknown) is linked by its answer key
  (:func:`link_booklet`), regular prints first.

The INEP tables themselves are read in :mod:`.inep`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from enade_bench.benchmarks.enem.files import ExamFile
from enade_bench.benchmarks.enem.inep import Language, booklet_items

__all__ = ["LinkedExam", "exam_items", "link_booklet", "link_exam", "question_keys"]


def _foreign_rows(questions: pd.DataFrame) -> pd.Series:
    """Language of each question row: 'english'/'spanish' for LC items 1-5, else None."""
    duplicated = questions["question_number"].astype(int).duplicated(keep=False).to_numpy()
    spanish = (questions["language"].astype(str).str.lower() == "spanish").to_numpy()
    foreign = [
        ("spanish" if sp else "english") if dup else None for dup, sp in zip(duplicated, spanish, strict=True)
    ]
    return pd.Series(foreign, index=questions.index, dtype=object)


def _slots(positions: pd.Series) -> np.ndarray:
    """0-based rank of each position among the distinct positions (order in the booklet)."""
    ranks: np.ndarray = positions.astype(int).rank(method="dense").astype(int).to_numpy() - 1
    return ranks


def question_keys(questions: pd.DataFrame, foreign_language: Language = "spanish") -> pd.DataFrame:
    """The exam file's rows for one foreign language: ``slot, position, key, row``.

    ``slot`` is the 0-based order of the question in the area (files and
    booklets may number positions differently, e.g. 46-90 against 1-45);
    ``row`` is the index of the question row; ``key`` its answer (``anulada``
    kept as is).
    """
    foreign = _foreign_rows(questions)
    keep = foreign.isna() | (foreign == foreign_language)
    sub = questions[keep]
    return pd.DataFrame(
        {
            "slot": _slots(sub["question_number"]),
            "position": sub["question_number"].astype(int).to_numpy(),
            "key": sub["answer"].astype(str).str.strip().to_numpy(),
            "row": sub.index.to_numpy(),
            "common": foreign[keep].isna().to_numpy(),
        }
    )


def _is_special_print(inep_items: pd.DataFrame, booklets: pd.DataFrame, code: int) -> bool:
    """An adapted, enlarged, Braille, Libras or digital print (not a regular colour)."""
    colour = booklets.loc[booklets["CO_PROVA"] == code, "cor"].astype(str)
    if colour.str.contains(r" - |\(", regex=True).any():
        return True
    if "IN_ITEM_ADAPTADO" not in inep_items.columns:
        return False
    flags = inep_items.loc[inep_items["CO_PROVA"] == code, "IN_ITEM_ADAPTADO"].fillna(0)
    return bool((flags == 1).any())


def link_booklet(
    questions: pd.DataFrame,
    inep_items: pd.DataFrame,
    booklets: pd.DataFrame,
    year: int,
    area: str,
    co_prova: int = 0,
    min_agreement: float = 0.9,
) -> int:
    """The booklet code of an exam file: ``co_prova`` when known, else by answer key.

    The exam's answer key on the common items (not the LC foreign-language
    ones; annulled ones skipped) is compared in booklet order with every
    booklet of that year and area; the highest agreement wins. Among tied
    booklets, special prints (a colour such as "Laranja - Adaptada Ledor" or
    "Cinza (Digital)", or any ``IN_ITEM_ADAPTADO = 1``; some swap a few items
    for others with the same key) give way to regular ones; tied booklets listing the same items in the same order are
    equivalent and the lowest code is returned.

    Raises
    ------
    LookupError
        If no booklet reaches ``min_agreement`` or equally good regular
        booklets differ in their items.
    """
    if co_prova and (inep_items["CO_PROVA"] == int(co_prova)).any():
        return int(co_prova)
    candidates = booklets[(booklets["ano"] == int(year)) & (booklets["area"] == area.upper())]["CO_PROVA"]
    keys = question_keys(questions)
    keys = keys[keys["common"]].sort_values("slot")
    usable = ~keys["key"].str.lower().isin(["anulada", "x", ""]).to_numpy()
    scores: list[tuple[float, int]] = []
    for code in sorted(int(c) for c in candidates):
        rows = booklet_items(inep_items, code) if (inep_items["CO_PROVA"] == code).any() else None
        if rows is None:
            continue
        rows = rows[rows["language"].isna()]
        if len(rows) != len(keys):
            continue
        same = rows["key"].to_numpy() == keys["key"].to_numpy()
        scores.append((float(same[usable].mean()) if usable.any() else 0.0, code))
    if not scores:
        raise LookupError(f"no {area} booklet of {year} with {len(keys)} common items in the INEP item table")
    best = max(s for s, _ in scores)
    if best < min_agreement:
        raise LookupError(f"no {area} {year} booklet matches the answer key (best agreement {best:.0%})")
    tied = [code for s, code in scores if s == best]
    regular = [code for code in tied if not _is_special_print(inep_items, booklets, code)] or tied
    sequences = {tuple(booklet_items(inep_items, code)["item_id"]) for code in regular}
    if len(sequences) > 1:
        raise LookupError(
            f"{area} {year}: booklets {regular} match the answer key equally but differ in items"
        )
    return regular[0]


def exam_items(
    questions: pd.DataFrame,
    inep_items: pd.DataFrame,
    co_prova: int,
    foreign_language: Language = "spanish",
) -> pd.DataFrame:
    """Join an exam file's questions to the booklet's parameters by position.

    Questions and booklet rows are matched by their order in the area (the
    ``slot``), so a file numbered 46-90 joins a booklet numbered 1-45.

    Returns
    -------
    DataFrame
        One row per question of the chosen foreign language: ``row`` (index
        in ``questions``), ``position``, ``answer``, ``item_id``, ``a``, ``b``,
        ``c``, ``scored`` (False when annulled, without parameters or marked
        ``anulada`` in the exam file).
    """
    keys = question_keys(questions, foreign_language).drop(columns="common")
    booklet = booklet_items(inep_items, co_prova, foreign_language)
    booklet["slot"] = _slots(booklet["position"])
    booklet = booklet.drop(columns="position")
    merged = keys.merge(booklet, on="slot", how="left", validate="one_to_one")
    merged["scored"] = merged["scored"].fillna(False).astype(bool) & (
        merged["key_x"].str.lower() != "anulada"
    )
    merged = merged.rename(columns={"key_x": "answer", "key_y": "booklet_key"})
    return merged[["row", "position", "answer", "booklet_key", "item_id", "a", "b", "c", "scored"]]


@dataclass(frozen=True)
class LinkedExam:
    """An exam file linked, once, to its booklet's parameters.

    Attributes
    ----------
    exam : ExamFile
        Year, area and the file's booklet code (0 when unknown).
    booklet : int
        The booklet it was linked to (:func:`link_booklet`).
    questions : DataFrame
        The exam file's rows.
    items : DataFrame
        :func:`exam_items` plus each row's ``question_number`` and ``language``:
        a question of a run is found by these two fields of its record.
    """

    exam: ExamFile
    booklet: int
    questions: pd.DataFrame
    items: pd.DataFrame

    def item_of(self) -> dict[tuple[int, str], str]:
        """``(question_number, language)`` → INEP item id, for the joined questions with an item."""
        rows = self.items[self.items["item_id"].map(lambda v: isinstance(v, str))]
        keys = zip(rows["question_number"], rows["language"], strict=True)
        return dict(zip(keys, rows["item_id"], strict=True))


def link_exam(
    exam: ExamFile, questions: pd.DataFrame, inep_items: pd.DataFrame, booklets: pd.DataFrame
) -> LinkedExam:
    """Link an exam file to its booklet (by code, or by answer key when the code is 0) and join
    its questions to the booklet's parameters (:func:`link_booklet`, :func:`exam_items`).

    The whole file is needed, not only the questions a run answered: the answer
    key of every common item identifies an unknown booklet, and a question's
    place in the booklet is its rank among all the file's positions.

    Raises
    ------
    LookupError, KeyError
        If no booklet matches or the booklet is not in the item table.
    """
    code = link_booklet(questions, inep_items, booklets, exam.year, exam.area, exam.co_prova)
    joined = exam_items(questions, inep_items, code)
    rows = questions.loc[joined["row"]]
    joined["question_number"] = rows["question_number"].astype(int).to_numpy()
    joined["language"] = rows["language"].astype(str).to_numpy()
    return LinkedExam(exam, code, questions, joined)
