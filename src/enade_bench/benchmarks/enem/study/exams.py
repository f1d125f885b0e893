"""The ENEM exams of a study: question file, booklet and INEP item parameters per (area, language)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from enade_bench.benchmarks.enem.files import parse_exam_filename
from enade_bench.benchmarks.enem.linking import LinkedExam, link_exam
from enade_bench.errors import UserError


@dataclass(frozen=True)
class ExamSource:
    """One exam file linked to its booklet.

    Attributes
    ----------
    area, language : str
        ENEM area (CH, CN, LC, MT) and study language (pt-br, en).
    path : Path
        The question CSV.
    booklet : int
        INEP booklet code (``CO_PROVA``) it was linked to.
    items : DataFrame
        :func:`~enade_bench.benchmarks.enem.linking.exam_items` of the file, with
        the question rows' text columns (``body``, ``A``..``E``) added.
    linked : LinkedExam
        The file linked to its booklet (linked once, here; the analysis reuses it).
    """

    area: str
    language: str
    path: Path
    booklet: int
    items: pd.DataFrame
    linked: LinkedExam

    @property
    def tag(self) -> str:
        """``MT_pt-br``: file-name part of this exam."""
        return f"{self.area}_{self.language}"


def find_exam(
    enem_dir: Path,
    inep: pd.DataFrame,
    booklets: pd.DataFrame,
    year: int,
    area: str,
    language: str,
    where: Path,
) -> ExamSource:
    """The question file of ``year``/``area`` in ``questions/<language>/``, linked to INEP's booklet.

    Raises
    ------
    UserError
        When the file is missing or no booklet with parameters matches it.
    """
    folder = enem_dir / "questions" / language
    found = sorted(folder.glob(f"ENEM_{year}_{area}_CO_PROVA_*.csv"))
    if not found:
        raise UserError(
            f"{where}: key 'languages': no question file ENEM_{year}_{area}_CO_PROVA_<code>.csv in {folder}"
        )
    path = found[0]
    questions = pd.read_csv(path, dtype=str, keep_default_na=False)
    try:
        linked = link_exam(parse_exam_filename(path), questions, inep, booklets)
    except (LookupError, ValueError) as exc:
        raise UserError(
            f"{where}: key 'areas': ENEM {year} {area} ({path.name}) has no INEP item parameters in "
            f"{enem_dir / 'inep_items.csv'} ({exc})"
        ) from None
    joined = linked.items.drop(columns=["question_number", "language"])
    if not joined["scored"].any():
        raise UserError(f"{where}: key 'areas': ENEM {year} {area} has no item with INEP parameters")
    text = questions.loc[joined["row"], [c for c in ("body", "A", "B", "C", "D", "E") if c in questions]]
    joined = pd.concat([joined.reset_index(drop=True), text.reset_index(drop=True)], axis=1)
    return ExamSource(area, language, path.resolve(), linked.booklet, joined, linked)
