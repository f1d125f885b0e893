"""Extra analyses of a study, one step each: the place where new psychometrics are wired in.

:data:`STEPS` lists them in report order.  A step takes the
:class:`~enade_bench.study.analysis.StudyAnalysis` and the figures folder and
returns tables, figures and notes.  A step that cannot run raises
:class:`StepSkipped` with the reason; the report prints the reason, never a
made-up result.  Steps whose psychometrics are built elsewhere
(:mod:`enade_bench.psychometrics.dif`, ``prior_correction``, ``cat``) prepare
their inputs and stop at one call site marked ``WIRE:``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from enade_bench.psychometrics.irt import FloatArray
from enade_bench.psychometrics.mink import min_k_prob, mink_accuracy_correlation
from enade_bench.psychometrics.tidy import to_wide
from enade_bench.report.figures import STYLE, FigureFile, save
from enade_bench.report.psychometric import RANDOM
from enade_bench.report.table import Table, fmt, fmt_p
from enade_bench.study.analysis import StudyAnalysis, StudyExam

#: Where a record keeps the per-token log-probabilities of the question text (Min-K%).
TOKEN_LOGPROBS_KEY = "question_token_logprobs"


class StepSkipped(Exception):
    """A step that cannot give a result here; the message says why (shown in the report)."""


@dataclass
class StepOutput:
    """What one step adds to the report."""

    tables: list[Table] = field(default_factory=list)
    figures: list[FigureFile] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Step:
    """A named analysis step."""

    name: str
    title: str
    run: Callable[[StudyAnalysis, Path], StepOutput]


def model_patterns(exam: StudyExam) -> tuple[FloatArray, FloatArray, list[tuple[str, int]]]:
    """Every model × shuffle pattern of an exam (random baseline left out): responses, θ and keys.

    Returns the ``(n, J)`` 0/1/NaN matrix over ``exam.items`` (in its item
    order), the EAP θ of each pattern and its ``(respondent, shuffle)``.
    """
    tidy = exam.tidy[exam.tidy["respondent"] != RANDOM]
    wide = to_wide(tidy, items=list(exam.items.item_ids))
    scored = exam.per_shuffle.set_index(["respondent", "shuffle"])["theta"]
    theta = scored.reindex(wide.index).to_numpy(dtype=np.float64)
    return wide.to_numpy(dtype=np.float64), theta, [(str(r), int(s)) for r, s in wide.index]


def machine_human_dif_table(exam: StudyExam, responses: FloatArray, theta: FloatArray, alpha: float) -> Table:
    """The per-item DIF table of one exam (models' patterns vs. 3PL humans of the same θ).

    WIRE: ``result = machine_human_dif(responses, theta, exam.items, list(exam.items.item_ids), alpha)``
    from :mod:`enade_bench.psychometrics.dif`, then return its per-item table as a :class:`Table`.
    """
    raise StepSkipped("machine-human DIF is not wired into this build (psychometrics.dif)")


def dif_step(study: StudyAnalysis, folder: Path) -> StepOutput:
    """Machine–human item differences (DIF) per exam, over all models and shuffles."""
    out = StepOutput()
    for exam in study.exams:
        responses, theta, _ = model_patterns(exam)
        out.tables.append(machine_human_dif_table(exam, responses, theta, alpha=0.05))
    if not out.tables:
        raise StepSkipped("no exam with model responses")
    return out


def prior_correction_step(study: StudyAnalysis, folder: Path) -> StepOutput:
    """Letter-prior debiasing of first_token / log_prob records: raw vs corrected, BPC before/after."""
    methods = {e.result.strategy.method for e in study.entries}
    if not methods & {"first_token", "log_prob"}:
        raise StepSkipped(
            f"letter-prior correction needs first_token or log_prob records (have {sorted(methods)})"
        )
    # WIRE: per run, enade_bench.psychometrics.prior_correction on entry.result.records → corrected
    #       predictions; re-score θ and the verdict on them and add the BPC before/after table here.
    raise StepSkipped("letter-prior correction is not wired into this build (psychometrics.prior_correction)")


def posthoc_cat_table(exam: StudyExam, responses: FloatArray, theta: FloatArray) -> Table:
    """Post-hoc adaptive testing on one exam's patterns: items used, final SE, θ_CAT − θ_full.

    WIRE: the post-hoc simulation of :mod:`enade_bench.psychometrics.cat` on ``responses`` with
    ``exam.items`` (``theta`` is the full-test EAP), returned as a :class:`Table`.
    """
    raise StepSkipped("adaptive testing is not wired into this build (psychometrics.cat)")


def cat_step(study: StudyAnalysis, folder: Path) -> StepOutput:
    """Post-hoc adaptive testing on the study's response patterns."""
    out = StepOutput()
    for exam in study.exams:
        responses, theta, _ = model_patterns(exam)
        out.tables.append(posthoc_cat_table(exam, responses, theta))
    if not out.tables:
        raise StepSkipped("no exam with model responses")
    return out


def record_items(exam: StudyExam) -> dict[str, str]:
    """Record id (``<file stem>:<position>:<language>``) → INEP item id, for the scored items."""
    if exam.source is None:
        return {}
    joined = exam.source.items[exam.source.items["scored"]]
    record_ids = exam.questions.loc[joined["row"], "record_id"].astype(str)
    return dict(zip(record_ids, joined["item_id"].astype(str), strict=True))


def mink_frame(study: StudyAnalysis) -> pd.DataFrame:
    """``model, area, language, item_id, mink, correct`` from records that carry token log-probs."""
    rows = []
    for exam in study.exams:
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


def mink_step(study: StudyAnalysis, folder: Path) -> StepOutput:
    """Min-K% Prob (Shi et al. 2024) of each item against accuracy, where records carry token log-probs."""
    methods = sorted({e.result.strategy.method for e in study.entries})
    frame = mink_frame(study)
    if frame.empty:
        raise StepSkipped(
            f"Min-K% is not available for method {', '.join(methods)}: its records carry no per-token "
            f"log-probabilities of the question text (record.extra['{TOKEN_LOGPROBS_KEY}'])"
        )
    rows, figures = [], []
    for (model, area, language), part in frame.groupby(["model", "area", "language"], sort=True):
        corr = mink_accuracy_correlation(part)
        rows.append({"model": model, "area": area, "language": language, "items": corr.n_items,
                     "r": corr.r, "p_value": corr.p_value})  # fmt: skip
        per_item = part.groupby("item_id")[["mink", "correct"]].mean()
        with plt.rc_context(STYLE):
            fig, ax = plt.subplots(figsize=(4.6, 3.4))
            ax.scatter(per_item["mink"], per_item["correct"], color="black", s=12)
            ax.set_xlabel("Min-K% Prob (k = 20)")
            ax.set_ylabel("share correct over shuffles")
            ax.set_title(f"{model}, {area} {language}: r = {fmt(corr.r, 2)}")
        figures.append(save(fig, folder, f"mink_{model}_{area}_{language}",
                            f"{model}, ENEM {area} {language}: Min-K% Prob against accuracy per item."))  # fmt: skip
    data = pd.DataFrame(rows)
    display = data.assign(r=data["r"].map(lambda v: fmt(v, 2)), p=data["p_value"].map(fmt_p))
    display = display.drop(columns="p_value").set_index(["model", "area", "language"])
    table = Table("study_mink", "Min-K% Prob against accuracy (Pearson r across items)", data, display,
                  None, "Min-K% (Shi et al., ICLR 2024), k = 20, mean over shuffles per item.")  # fmt: skip
    return StepOutput([table], figures)


#: The extra analyses, in report order.
STEPS: tuple[Step, ...] = (
    Step("mink", "Min-K% against accuracy", mink_step),
    Step("dif", "Machine-human item differences (DIF)", dif_step),
    Step("prior_correction", "Letter-prior correction", prior_correction_step),
    Step("cat", "Adaptive testing (CAT)", cat_step),
)


def run_steps(study: StudyAnalysis, folder: Path, steps: tuple[Step, ...] = STEPS) -> StepOutput:
    """Run every step; a skipped step adds its reason to the notes."""
    out = StepOutput()
    for step in steps:
        try:
            part = step.run(study, folder)
        except StepSkipped as exc:
            out.notes.append(f"{step.title}: {exc}")
            continue
        out.tables += part.tables
        out.figures += part.figures
        out.notes += part.notes
    return out
