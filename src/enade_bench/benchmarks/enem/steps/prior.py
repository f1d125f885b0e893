"""Letter-prior correction (PriDe): raw against corrected predictions of shuffled scored runs.

The analysis is :func:`enade_bench.metrics.prior_correction.prior_correction`;
:func:`correct_entries` applies it to runs (the one place that does, for the study, the
report and ``irt dif --debias``), and this step tabulates raw against corrected
accuracy, θ and position bias (``prior_correction.csv``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from enade_bench.benchmarks.enem.files import parse_exam_filename
from enade_bench.benchmarks.enem.steps.common import EnemAnalysis, RunCorrection
from enade_bench.dataset.schema import LETTERS
from enade_bench.metrics.prior_correction import Scope, prior_correction
from enade_bench.report.loader import RunEntry
from enade_bench.report.section import Section, StepSkipped
from enade_bench.report.table import Table, fmt


def correct_entries(
    entries: Sequence[RunEntry], scope: Scope, labels: Sequence[tuple[str, str, str]] | None = None
) -> tuple[list[RunEntry | None], list[RunCorrection], list[str]]:
    """Letter-prior corrected copies of the runs with letter scores over at least 2 option orders.

    Each run is corrected on its own (one model, one exam): the model's prior over the
    option letters is estimated from the run's option orders and removed from every
    record; the corrected run is an ordinary :class:`RunEntry` whose records carry the
    corrected prediction, so θ, l_z*, the verdict, DIF and CAT are computed on it by the
    code that scores the raw run.

    Parameters
    ----------
    entries
        The runs.
    scope
        ``"question"``: each question's own prior (the default); ``"model"``: the mean.
    labels
        ``(model, area, language)`` of each run, for the corrections and notes
        (default: the run's experiment name and its exam, from its records).

    Returns
    -------
    runs, corrections, notes
        The corrected run of each run (``None`` where it could not be corrected), one
        :class:`RunCorrection` per corrected run, and a note per run that could not be
        corrected (and why).
    """
    out: list[RunEntry | None] = []
    corrections, notes = [], []
    for index, entry in enumerate(entries):
        model, area, language = labels[index] if labels is not None else _label(entry)
        try:
            pc = prior_correction(entry.result.records, scope)
        except ValueError as exc:
            notes.append(f"letter-prior correction of {model} on {area} {language}: {exc}")
            out.append(None)
            continue
        out.append(dataclasses.replace(entry, result=entry.result.model_copy(update={"records": pc.records})))
        corrections.append(RunCorrection(model, area, language, pc))
    return out, corrections, notes


def _label(entry: RunEntry) -> tuple[str, str, str]:
    fields = entry.result.records[0].fields if entry.result.records else {}
    area = str(fields.get("area") or "")
    language = ""
    for source in entry.result.dataset.sources:
        path = Path(str(source.get("path", "")))
        try:
            parse_exam_filename(path)
        except ValueError:
            continue
        language = path.parent.name
    return entry.experiment, area, language


def prior_frame(analysis: EnemAnalysis) -> pd.DataFrame:
    """Per corrected run: accuracy, θ and BPC before/after, and the estimated letter prior."""
    theta = {}
    for name, exams in (("raw", analysis.exams), ("corrected", analysis.corrected)):
        for exam in exams:
            means = exam.per_shuffle.groupby("respondent")["theta"].mean()
            for model, value in means.items():
                theta[(name, str(model), exam.exam.area, exam.language)] = float(value)
    rows = []
    for rc in analysis.corrections:
        pc = rc.correction
        key = max(pc.bpc_raw, key=lambda k: pc.bpc_raw[k].n)
        raw, cor = pc.bpc_raw[key], pc.bpc_corrected[key]
        prior = pc.prior.get(int(key), [])
        rows.append(
            {
                "model": rc.model,
                "area": rc.area,
                "language": rc.language,
                "scope": pc.scope,
                "records": len(pc.records),
                "n_options": int(key),
                "accuracy_raw": pc.raw_accuracy,
                "accuracy_corrected": pc.corrected_accuracy,
                "theta_raw": theta.get(("raw", rc.model, rc.area, rc.language), np.nan),
                "theta_corrected": theta.get(("corrected", rc.model, rc.area, rc.language), np.nan),
                "bpc_tvd_raw": raw.bpc_tvd,
                "bpc_tvd_corrected": cor.bpc_tvd,
                "bpc_p_raw": raw.p_value,
                "bpc_p_corrected": cor.p_value,
                "positions_raw": " ".join(map(str, raw.prediction_counts)),
                "positions_corrected": " ".join(map(str, cor.prediction_counts)),
                **{f"prior_{LETTERS[i]}": float(v) for i, v in enumerate(prior)},
            }
        )
    return pd.DataFrame(rows)


def prior_correction_step(analysis: EnemAnalysis, folder: Path) -> Section:
    """Letter-prior debiasing of first_token / log_prob records: raw vs corrected, BPC before/after."""
    methods = {e.result.strategy.method for e in analysis.entries}
    if not methods & {"first_token", "log_prob"}:
        raise StepSkipped(
            f"letter-prior correction needs first_token or log_prob records (have {sorted(methods)})"
        )
    if "corrected" not in analysis.prediction_sets:
        raise StepSkipped("raw predictions only were asked for (a study's predictions: raw)")
    data = prior_frame(analysis)
    if data.empty:
        raise StepSkipped("no run has letter scores over at least 2 option orders")
    letters = [c for c in data.columns if c.startswith("prior_") and len(c) == 7]
    display = pd.DataFrame(
        {
            "model": data["model"],
            "area": data["area"],
            "language": data["language"],
            "records": data["records"],
            "accuracy raw → corrected": [
                f"{fmt(a, 3)} → {fmt(b, 3)}"
                for a, b in zip(data["accuracy_raw"], data["accuracy_corrected"], strict=True)
            ],
            "θ raw → corrected": [
                f"{fmt(a, 2)} → {fmt(b, 2)}"
                for a, b in zip(data["theta_raw"], data["theta_corrected"], strict=True)
            ],
            "BPC TVD raw → corrected": [
                f"{fmt(a, 3)} → {fmt(b, 3)}"
                for a, b in zip(data["bpc_tvd_raw"], data["bpc_tvd_corrected"], strict=True)
            ],
            "predicted positions raw → corrected": [
                f"{a} → {b}" for a, b in zip(data["positions_raw"], data["positions_corrected"], strict=True)
            ],
            "letter prior": [
                " ".join(f"{c[-1]} {fmt(v, 2)}" for c, v in zip(letters, row, strict=True))
                for row in data[letters].to_numpy()
            ],
        }
    ).set_index(["model", "area", "language"])
    notes = (
        "Letter-prior correction (PriDe; Zheng et al., ICLR 2024): the model's prior over the option "
        "letters is the normalised geometric mean of its letter probabilities over the option orders of "
        f"each question (scope '{data['scope'].iloc[0]}'), removed before the argmax. Accuracy: share "
        "correct over all (question, shuffle) records; θ: mean EAP over shuffles; BPC TVD: total-variation "
        "distance of the predicted display positions from uniform (0 = no letter preference). The verdict "
        "rows labelled 'corrected' are computed on these predictions. Every run: prior_correction.csv."
    )
    table = Table(
        "study_prior_correction",
        "Letter-prior correction: raw vs corrected predictions",
        data,
        display,
        None,
        notes,
    )
    return Section([table], files={"prior_correction.csv": data})
