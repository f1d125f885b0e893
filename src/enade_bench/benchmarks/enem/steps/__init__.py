"""ENEM's analyses of a set of runs, each a pure function plus one step (:class:`~enade_bench.report.section.Step`).

:data:`STEPS` names them in report order; the study, ``enade-bench report`` and the
``irt`` commands run them on an :class:`EnemAnalysis` (:func:`enem_analysis` builds one
from runs). A step that cannot run here raises
:class:`~enade_bench.report.section.StepSkipped` with the reason, which the report
prints instead of a made-up result.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from enade_bench.benchmarks.enem.analysis import ExamAnalysis, Psychometrics, analyse
from enade_bench.benchmarks.enem.steps.cat import cat_step
from enade_bench.benchmarks.enem.steps.common import EnemAnalysis, RunCorrection
from enade_bench.benchmarks.enem.steps.dif import dif_step
from enade_bench.benchmarks.enem.steps.mink import mink_step
from enade_bench.benchmarks.enem.steps.prior import correct_entries, prior_correction_step
from enade_bench.benchmarks.enem.steps.theta_pairs import theta_pairs_step
from enade_bench.benchmarks.enem.study.config import CatSettings, DifSettings
from enade_bench.report.loader import RunEntry
from enade_bench.report.section import Step

#: Every ENEM step, by name, in report order.
STEPS: dict[str, Step[EnemAnalysis]] = {
    step.name: step
    for step in (
        Step("mink", "Min-K% against accuracy", mink_step),
        Step("theta_pairs", "θ differences between models", theta_pairs_step),
        Step("dif", "Machine-human item differences (DIF)", dif_step),
        Step("prior_correction", "Letter-prior correction", prior_correction_step),
        Step("cat", "Adaptive testing (CAT)", cat_step),
    )
}


def enem_analysis(
    entries: Sequence[RunEntry],
    enem_dir: Path | None = None,
    seed: int = 20240101,
    predictions: Sequence[str] = ("raw",),
    dif: DifSettings | None = None,
) -> tuple[EnemAnalysis, Psychometrics]:
    """The ENEM runs among ``entries``, analysed per exam, for each prediction set asked.

    ``predictions`` holds ``"raw"`` and/or ``"corrected"`` (the runs' letter prior removed,
    :func:`correct_entries`). Returns the steps' input and the raw analysis (its
    psychometric tables and figures).
    """
    raw = analyse(entries, enem_dir, seed)
    corrected: list[ExamAnalysis] = []
    corrections: list[RunCorrection] = []
    notes = list(raw.skipped)
    if "corrected" in predictions:
        fixed, corrections, why = correct_entries(entries, "question")
        notes += why
        kept = [e for e in fixed if e is not None]
        corrected = analyse(kept, enem_dir, seed).exams if kept else []
    analysis = EnemAnalysis(
        list(entries),
        raw.exams,
        corrected,
        corrections,
        tuple(predictions),
        dif or DifSettings(),
        CatSettings(),
        notes,
    )
    return analysis, raw
