"""What the ENEM steps share: the data they take, and the patterns and labels of an exam.

Every ENEM analysis (DIF, letter-prior correction, post-hoc CAT, Min-K%) is a pure
function of :mod:`enade_bench.psychometrics` or :mod:`enade_bench.metrics` plus one step
(:mod:`enade_bench.benchmarks.enem.steps`) that takes an :class:`EnemAnalysis`: the
analysed exams of a set of runs, for each requested prediction set (raw answers, and
answers with the model's letter prior removed). The study, ``enade-bench report`` and
the ``irt`` commands build an :class:`EnemAnalysis` and call the same step.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from enade_bench.benchmarks.enem.analysis import RANDOM, ExamAnalysis
from enade_bench.benchmarks.enem.study.config import CatSettings, DifSettings
from enade_bench.metrics.prior_correction import PriorCorrection
from enade_bench.psychometrics.irt import FloatArray
from enade_bench.psychometrics.tidy import to_wide
from enade_bench.report.loader import RunEntry


@dataclass(frozen=True)
class RunCorrection:
    """The letter-prior correction of one run (a model on one exam)."""

    model: str
    area: str
    language: str
    correction: PriorCorrection


@dataclass
class EnemAnalysis:
    """What every ENEM step takes: the runs and their analysed exams, per prediction set.

    Attributes
    ----------
    entries
        The runs (their records).
    exams
        One analysed exam per (year, area, language) on the raw predictions.
    corrected
        The same exams on letter-prior corrected predictions (empty when not asked).
    corrections
        The correction of each corrected run.
    prediction_sets
        ``("raw",)``, ``("corrected",)`` or ``("raw", "corrected")``.
    dif, cat
        Settings of the DIF and CAT steps.
    notes
        What was skipped and why.
    """

    entries: list[RunEntry]
    exams: list[ExamAnalysis]
    corrected: list[ExamAnalysis] = field(default_factory=list)
    corrections: list[RunCorrection] = field(default_factory=list)
    prediction_sets: tuple[str, ...] = ("raw",)
    dif: DifSettings = field(default_factory=DifSettings)
    cat: CatSettings = field(default_factory=CatSettings)
    notes: list[str] = field(default_factory=list)

    def exam_sets(self) -> list[tuple[str, list[ExamAnalysis]]]:
        """``(predictions, exams)`` for each requested prediction set that has exams."""
        sets = {"raw": self.exams, "corrected": self.corrected}
        return [(name, sets[name]) for name in self.prediction_sets if sets[name]]


def model_patterns(exam: ExamAnalysis) -> tuple[FloatArray, FloatArray, list[tuple[str, int]]]:
    """Every model × shuffle pattern of an exam (random baseline left out): responses, θ and keys.

    Returns the ``(n, J)`` 0/1/NaN matrix over ``exam.items`` (in its item
    order), the EAP θ of each pattern and its ``(respondent, shuffle)``.
    """
    tidy = exam.tidy[exam.tidy["respondent"] != RANDOM]
    wide = to_wide(tidy, items=list(exam.items.item_ids))
    scored = exam.per_shuffle.set_index(["respondent", "shuffle"])["theta"]
    theta = scored.reindex(wide.index).to_numpy(dtype=np.float64)
    return wide.to_numpy(dtype=np.float64), theta, [(str(r), int(s)) for r, s in wide.index]


def exam_columns(predictions: str, exam: ExamAnalysis) -> dict[str, object]:
    """The leading columns that name one exam of one prediction set in a step's CSV."""
    return {
        "predictions": predictions,
        "year": exam.exam.year,
        "area": exam.exam.area,
        "language": exam.language,
        "booklet": exam.booklet,
    }
