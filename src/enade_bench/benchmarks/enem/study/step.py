"""What an analysis step of the study report is: its output, its skip signal, its inputs.

A step takes the :class:`~enade_bench.benchmarks.enem.study.analysis.StudyAnalysis` and the
figures folder and returns tables, figures, notes and CSV files for the
report folder.  A step that cannot run raises :class:`StepSkipped` with the
reason; the report prints the reason, never a made-up result.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from enade_bench.benchmarks.enem.analysis import RANDOM
from enade_bench.benchmarks.enem.study.analysis import StudyAnalysis, StudyExam
from enade_bench.psychometrics.irt import FloatArray
from enade_bench.psychometrics.tidy import to_wide
from enade_bench.report.figures import FigureFile
from enade_bench.report.table import Table


class StepSkipped(Exception):
    """A step that cannot give a result here; the message says why (shown in the report)."""


@dataclass
class StepOutput:
    """What one step adds to the report (``files``: CSV name → frame, written at the report's root)."""

    tables: list[Table] = field(default_factory=list)
    figures: list[FigureFile] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    files: dict[str, pd.DataFrame] = field(default_factory=dict)


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


def exam_columns(predictions: str, exam: StudyExam) -> dict[str, object]:
    """The leading columns that name one exam of one prediction set in a step's CSV."""
    return {"predictions": predictions, "year": exam.exam.year, "area": exam.exam.area,
            "language": exam.language, "booklet": exam.booklet}  # fmt: skip
