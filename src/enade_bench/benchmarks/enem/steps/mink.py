"""Min-K% Prob (Shi et al. 2024) of each item against accuracy, where records carry token log-probs."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from enade_bench.benchmarks.enem.analysis import ExamAnalysis, exam_of, item_key
from enade_bench.benchmarks.enem.steps.common import EnemAnalysis
from enade_bench.psychometrics.mink import min_k_prob, mink_accuracy_correlation
from enade_bench.report.figures import STYLE, save
from enade_bench.report.section import Section, StepSkipped
from enade_bench.report.table import Table, fmt, fmt_p

#: Where a record keeps the per-token log-probabilities of the question text (Min-K%).
TOKEN_LOGPROBS_KEY = "question_token_logprobs"


def record_items(exam: ExamAnalysis) -> dict[str, str]:
    """Record id → INEP item id, for the exam's records that answered a scored item.

    Records are joined to the exam's items by their ``question_number`` and ``language``
    fields (:func:`~enade_bench.benchmarks.enem.analysis.item_key`).
    """
    if exam.linked is None:
        return {}
    joined = exam.linked.items
    joined = joined[joined["scored"]]
    items = dict(
        zip(
            zip(joined["question_number"], joined["language"], strict=True),
            joined["item_id"].astype(str),
            strict=True,
        )
    )
    return {
        r.id: items[key]
        for entry in exam.respondents.values()
        for r in entry.result.records
        if (key := item_key(r)) is not None and key in items and exam_of(r) == exam.exam
    }


def mink_frame(analysis: EnemAnalysis) -> pd.DataFrame:
    """``model, area, language, item_id, mink, correct`` from records that carry token log-probs."""
    rows = []
    for exam in analysis.exams:
        ids = record_items(exam)
        for name, entry in exam.respondents.items():
            for record in entry.result.records:
                values = (record.extra or {}).get(TOKEN_LOGPROBS_KEY)
                if values and record.id in ids:
                    mink = min_k_prob(np.asarray(values, dtype=float))
                    rows.append(
                        (name, exam.exam.area, exam.language, ids[record.id], mink, int(record.correct))
                    )
    return pd.DataFrame(rows, columns=["model", "area", "language", "item_id", "mink", "correct"])


def mink_step(analysis: EnemAnalysis, folder: Path) -> Section:
    """Min-K% Prob (Shi et al. 2024) of each item against accuracy, where records carry token log-probs."""
    methods = sorted({e.result.strategy.method for e in analysis.entries})
    frame = mink_frame(analysis)
    if frame.empty:
        raise StepSkipped(
            f"Min-K% is not available for method {', '.join(methods)}: its records carry no per-token "
            f"log-probabilities of the question text (record.extra['{TOKEN_LOGPROBS_KEY}'])"
        )
    rows, figures = [], []
    for (model, area, language), part in frame.groupby(["model", "area", "language"], sort=True):
        corr = mink_accuracy_correlation(part)
        rows.append(
            {
                "model": model,
                "area": area,
                "language": language,
                "items": corr.n_items,
                "r": corr.r,
                "p_value": corr.p_value,
            }
        )
        per_item = part.groupby("item_id")[["mink", "correct"]].mean()
        with plt.rc_context(STYLE):
            fig, ax = plt.subplots(figsize=(4.6, 3.4))
            ax.scatter(per_item["mink"], per_item["correct"], color="black", s=12)
            ax.set_xlabel("Min-K% Prob (k = 20)")
            ax.set_ylabel("share correct over shuffles")
            ax.set_title(f"{model}, {area} {language}: r = {fmt(corr.r, 2)}")
        figures.append(
            save(
                fig,
                folder,
                f"mink_{model}_{area}_{language}",
                f"{model}, ENEM {area} {language}: Min-K% Prob against accuracy per item.",
            )
        )
    data = pd.DataFrame(rows)
    display = data.assign(r=data["r"].map(lambda v: fmt(v, 2)), p=data["p_value"].map(fmt_p))
    display = display.drop(columns="p_value").set_index(["model", "area", "language"])
    table = Table(
        "study_mink",
        "Min-K% Prob against accuracy (Pearson r across items)",
        data,
        display,
        None,
        "Min-K% (Shi et al., ICLR 2024), k = 20, mean over shuffles per item.",
    )
    return Section([table], figures)
