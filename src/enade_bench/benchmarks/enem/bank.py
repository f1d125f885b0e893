"""The ENEM item bank of a live adaptive test: loaded questions joined to INEP's 3PL parameters."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from enade_bench.benchmarks.enem.files import parse_exam_filename
from enade_bench.benchmarks.enem.inep import load_booklets, load_inep_items
from enade_bench.benchmarks.enem.linking import link_exam
from enade_bench.dataset.schema import Question
from enade_bench.psychometrics.irt import ItemParams
from enade_bench.runner.adaptive import ItemBank


def enem_item_bank(questions: Sequence[Question], exam_csv: str | Path, enem_dir: str | Path) -> ItemBank:
    """Join loaded questions of one ENEM exam file to INEP's parameters.

    Each question is found by its ``question_number`` and ``language`` fields (the
    ENEM preset); annulled items and items without parameters are left out.

    Raises
    ------
    ValueError
        If the file name is not an ENEM exam name, no booklet matches, or no
        question has parameters.
    """
    path, folder = Path(exam_csv), Path(enem_dir)
    exam = parse_exam_filename(path)
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    inep = load_inep_items(folder / "inep_items.csv")
    try:
        linked = link_exam(exam, frame, inep, load_booklets(folder / "inep_booklets.csv"))
    except LookupError as exc:
        raise ValueError(f"{path}: {exc}") from None
    joined = linked.items
    by_key = {
        (q.fields.get("question_number"), q.fields.get("language")): q
        for q in questions
        if q.fields.get("booklet") == exam.co_prova and q.fields.get("area") == exam.area
    }
    keys = list(zip(joined["question_number"], joined["language"], strict=True))
    keep = joined[joined["scored"].to_numpy() & np.array([k in by_key for k in keys], dtype=bool)]
    if keep.empty:
        raise ValueError(f"{path}: no loaded question has INEP parameters (booklet {linked.booklet})")
    items = ItemParams.from_frame(keep)
    chosen = zip(keep["question_number"], keep["language"], strict=True)
    return ItemBank(tuple(by_key[k] for k in chosen), items, linked.booklet)
