"""Post-hoc adaptive testing (CAT) on the model × shuffle response patterns of each exam.

The analysis is :func:`enade_bench.psychometrics.cat_posthoc.simulate_cat`; this step
replays every pattern and writes ``cat.csv`` (one row per pattern) and the summary table.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from enade_bench.benchmarks.enem.analysis import RANDOM, ExamAnalysis
from enade_bench.benchmarks.enem.steps.common import EnemAnalysis, exam_columns, model_patterns
from enade_bench.psychometrics.cat import CatConfig, rule_text
from enade_bench.psychometrics.cat_posthoc import simulate_cat
from enade_bench.report.section import Section, StepSkipped
from enade_bench.report.table import Table, fmt


def cat_rows(predictions: str, exam: ExamAnalysis, config: CatConfig) -> list[dict[str, object]]:
    """One row per model × shuffle pattern of ``exam``: the post-hoc CAT against the full test."""
    responses, _, keys = model_patterns(exam)
    answered = np.isfinite(responses).any(axis=1).reshape(-1)
    keep = [bool(v) for v in answered]
    if not any(keep):
        return []
    sim = simulate_cat(responses[np.asarray(keep)], exam.items, config)
    kept = [k for k, ok in zip(keys, keep, strict=True) if ok]
    head = exam_columns(predictions, exam)
    return [
        {
            **head,
            "model": model,
            "shuffle": shuffle,
            "items_full": int(sim.n_available[i]),
            "items_cat": int(sim.n_items[i]),
            "se_full": float(sim.se_full[i]),
            "se_cat": float(sim.se[i]),
            "target_se": float(sim.target_se[i]),
            "theta_full": float(sim.theta_full[i]),
            "theta_cat": float(sim.theta[i]),
            "error": float(sim.error[i]),
            "stopped_by": str(sim.stopped_by[i]),
        }
        for i, (model, shuffle) in enumerate(kept)
    ]


def cat_step(analysis: EnemAnalysis, folder: Path) -> Section:
    """Post-hoc adaptive testing on the study's response patterns."""
    s = analysis.cat
    config = s.config()
    rows = [
        r
        for predictions, exams in analysis.exam_sets()
        for exam in exams
        for r in cat_rows(predictions, exam, config)
    ]
    if not rows:
        raise StepSkipped("no exam with model responses")
    data = pd.DataFrame(rows)
    data = data[data["model"] != RANDOM]
    keys = ["model", "predictions", "area", "language"]
    display = []
    for key, part in data.groupby(keys, sort=False):
        err = part["error"].abs()
        display.append(
            dict(zip(keys, key, strict=True))
            | {
                "patterns": len(part),
                "items (full)": int(part["items_full"].median()),
                "items CAT median [min–max]": f"{part['items_cat'].median():.0f} "
                f"[{part['items_cat'].min()}–{part['items_cat'].max()}]",
                "SE CAT (full)": f"{fmt(part['se_cat'].median(), 2)} ({fmt(part['se_full'].median(), 2)})",
                "|θ_CAT − θ_full| median": fmt(float(err.median()), 2),
                f"≤ {s.tolerance:g}": f"{100 * float((err <= s.tolerance).mean()):.0f}%",
            }
        )
    notes = (
        "Post-hoc CAT on each model × shuffle pattern (psychometrics.cat_posthoc.simulate_cat): next item "
        f"by maximum Fisher information at the current EAP θ, stop once {rule_text(config)} ({s.rule} rule) "
        "or the items run out. Medians over patterns; "
        f"last column: share of patterns with |θ_CAT − θ_full| ≤ {s.tolerance:g}. Every pattern: cat.csv."
    )
    table = Table(
        "study_cat",
        "Adaptive testing (post-hoc CAT): items used, final SE, θ_CAT − θ_full",
        data,
        pd.DataFrame(display).set_index(keys),
        None,
        notes,
    )
    return Section([table], files={"cat.csv": data})
