"""Machine-human item differences (DIF): every item of every exam against INEP's human 3PL.

The analysis is :func:`enade_bench.psychometrics.dif.machine_human_dif`; this step runs it
on every exam and prediction set and writes ``dif.csv`` (one row per item) and the table
of flagged items. ``enade-bench irt dif``, ``report`` and ``study`` all call
:func:`dif_frame` / :func:`dif_step`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from enade_bench.benchmarks.enem.steps.common import EnemAnalysis, exam_columns, model_patterns
from enade_bench.psychometrics.dif import DifOptions, machine_human_dif
from enade_bench.report.section import Section, StepSkipped
from enade_bench.report.table import Table, fmt, fmt_interval


def dif_frame(analysis: EnemAnalysis) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-item DIF rows of every exam and prediction set, and one summary row per exam."""
    items, summary = [], []
    for predictions, exams in analysis.exam_sets():
        for exam in exams:
            responses, _, keys = model_patterns(exam)
            if not keys:
                continue
            # θ = None: the leave-item-out posterior predictive matching (the module's recommendation).
            s = analysis.dif
            dif = machine_human_dif(
                responses,
                None,
                exam.items,
                list(exam.items.item_ids),
                models=[m for m, _ in keys],
                options=DifOptions(alpha=s.alpha, min_n=s.min_n, unit=s.unit),
            )
            head = exam_columns(predictions, exam)
            table = dif.table.assign(b=exam.items.b)
            items.append(pd.DataFrame([{**head, **row} for row in table.to_dict("records")]))
            tested = table["p"].notna()
            summary.append(
                {
                    **head,
                    "patterns": len(keys),
                    "models": len({m for m, _ in keys}),
                    "items": len(table),
                    "tested": int(tested.sum()),
                    "easier": int((table["flagged"] & (table["delta"] > 0)).sum()),
                    "harder": int((table["flagged"] & (table["delta"] < 0)).sum()),
                    "prior_mean": dif.prior_mean,
                    "prior_sd": dif.prior_sd,
                    "unit": dif.unit,
                    "rho": "; ".join(f"{m} {r:.2f}" for m, r in dif.rho.items()),
                }
            )
    return pd.concat(items, ignore_index=True) if items else pd.DataFrame(), pd.DataFrame(summary)


def _delta(delta: float, low: float, high: float) -> str:
    """δ with its interval; ±∞ when every pattern got the item right (wrong)."""
    if np.isinf(delta):
        return "+∞ (all right)" if delta > 0 else "−∞ (all wrong)"
    return fmt_interval(delta, low, high, 2)


def dif_step(analysis: EnemAnalysis, folder: Path) -> Section:
    """Machine-human item differences (DIF) per exam, over all models and shuffles (the model the unit)."""
    data, summary = dif_frame(analysis)
    if data.empty:
        raise StepSkipped("no exam with model responses")
    alpha = analysis.dif.alpha
    flagged = data[data["flagged"].astype(bool)]
    flagged = flagged.reindex(flagged["delta"].abs().sort_values(ascending=False, kind="stable").index)
    if flagged.empty:
        display = summary.assign(item_id="—", direction=f"no item flagged at q ≤ {alpha:g}")[
            ["predictions", "area", "language", "item_id", "direction"]
        ].set_index(["predictions", "area", "language", "item_id"])
    else:
        display = pd.DataFrame(
            {
                "predictions": flagged["predictions"],
                "area": flagged["area"],
                "language": flagged["language"],
                "item_id": flagged["item_id"],
                "direction": flagged["direction"],
                "b": flagged["b"].map(fmt),
                "observed": flagged["observed"].map(lambda v: fmt(v, 2)),
                "expected (3PL)": flagged["expected"].map(lambda v: fmt(v, 2)),
                "δ [95%]": [
                    _delta(d, lo, hi)
                    for d, lo, hi in zip(
                        flagged["delta"], flagged["delta_low"], flagged["delta_high"], strict=True
                    )
                ],
                "q": flagged["q"].map(lambda v: f"{v:.2g}"),
            }
        ).set_index(["predictions", "area", "language", "item_id"])
    counts = "; ".join(
        f"{r.predictions} {r.area} {r.language}: {r.easier} easier, {r.harder} harder of "
        f"{r.tested} tested ({r.models} model(s), {r.patterns} patterns, machines' θ ~ "
        f"N({r.prior_mean:.2f}, {r.prior_sd:.2f}²)" + (f"; ρ {r.rho!s}" if r.rho else "") + ")"
        for r in summary.itertuples()
    )
    if analysis.dif.unit == "model":
        unit = (
            "the model is the unit: each model's shuffles are collapsed to its count of correct answers and "
            "tested exactly against a beta-binomial null with the model's own between-shuffle correlation ρ "
            "(psychometrics.dif_clustered); δ: common log-odds shift (> 0 easier for machines)"
        )
    else:
        unit = (
            "every model × shuffle pattern one respondent (pooled G², liberal with few models); "
            "δ: log-odds shift (> 0 easier for machines)"
        )
    notes = (
        "Items much easier / much harder for machines than for humans of the same ability: DIF against "
        "INEP's 3PL with the human prediction as offset (Swaminathan & Rogers 1990), matched on the "
        f"leave-item-out posterior predictive; {unit}, Wald 95% interval; q: Benjamini-Hochberg, flagged at "
        f"q ≤ {alpha:g}; items answered by fewer than {analysis.dif.min_n} patterns are not tested. "
        f"Every item: dif.csv. {counts}."
    )
    table = Table(
        "study_dif", "Machine-human item differences (DIF): flagged items", data, display, None, notes
    )
    return Section([table], files={"dif.csv": data})
