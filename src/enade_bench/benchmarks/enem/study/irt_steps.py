"""The study report's IRT steps: machine-human DIF, letter-prior correction, post-hoc CAT.

Each runs on every requested prediction set (``predictions: raw | corrected |
both``, :meth:`~enade_bench.benchmarks.enem.study.analysis.StudyAnalysis.exam_sets`) and adds
a table to the report and a CSV at the report folder's root:

* ``dif.csv``: :func:`enade_bench.psychometrics.dif.machine_human_dif` per
  exam, all models × shuffles pooled, one row per item (δ, G², p, BH q);
* ``prior_correction.csv``: per run, accuracy, θ and BPC before and after the
  letter-prior correction (:mod:`enade_bench.metrics.prior_correction`);
* ``cat.csv``: :func:`enade_bench.psychometrics.cat_posthoc.simulate_cat` per
  model × shuffle pattern (items used, final SE, θ_CAT − θ_full).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from enade_bench.benchmarks.enem.analysis import RANDOM
from enade_bench.benchmarks.enem.study.analysis import StudyAnalysis, StudyExam
from enade_bench.benchmarks.enem.study.step import StepOutput, StepSkipped, exam_columns, model_patterns
from enade_bench.dataset.schema import LETTERS
from enade_bench.psychometrics.cat import CatConfig
from enade_bench.psychometrics.cat_posthoc import simulate_cat
from enade_bench.psychometrics.dif import machine_human_dif
from enade_bench.report.table import Table, fmt, fmt_interval


def dif_frame(study: StudyAnalysis) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-item DIF rows of every exam and prediction set, and one summary row per exam."""
    items, summary = [], []
    for predictions, exams in study.exam_sets():
        for exam in exams:
            responses, _, keys = model_patterns(exam)
            if not keys:
                continue
            # θ = None: the leave-item-out posterior predictive matching (the module's recommendation).
            dif = machine_human_dif(responses, None, exam.items, list(exam.items.item_ids),
                                    alpha=study.dif.alpha, min_n=study.dif.min_n)  # fmt: skip
            head = exam_columns(predictions, exam)
            table = dif.table.assign(b=exam.items.b)
            items.append(pd.DataFrame([{**head, **row} for row in table.to_dict("records")]))
            tested = table["p"].notna()
            summary.append({**head, "patterns": len(keys), "models": len({m for m, _ in keys}),
                            "items": len(table), "tested": int(tested.sum()),
                            "easier": int((table["flagged"] & (table["delta"] > 0)).sum()),
                            "harder": int((table["flagged"] & (table["delta"] < 0)).sum()),
                            "prior_mean": dif.prior_mean, "prior_sd": dif.prior_sd})  # fmt: skip
    return pd.concat(items, ignore_index=True) if items else pd.DataFrame(), pd.DataFrame(summary)


def _delta(delta: float, low: float, high: float) -> str:
    """δ with its interval; ±∞ when every pattern got the item right (wrong)."""
    if np.isinf(delta):
        return "+∞ (all right)" if delta > 0 else "−∞ (all wrong)"
    return fmt_interval(delta, low, high, 2)


def dif_step(study: StudyAnalysis, folder: Path) -> StepOutput:
    """Machine-human item differences (DIF) per exam, over all models and shuffles."""
    data, summary = dif_frame(study)
    if data.empty:
        raise StepSkipped("no exam with model responses")
    alpha = study.dif.alpha
    flagged = data[data["flagged"].astype(bool)]
    flagged = flagged.reindex(flagged["delta"].abs().sort_values(ascending=False, kind="stable").index)
    if flagged.empty:
        display = summary.assign(item_id="—", direction=f"no item flagged at q ≤ {alpha:g}")[
            ["predictions", "area", "language", "item_id", "direction"]
        ].set_index(["predictions", "area", "language", "item_id"])
    else:
        display = pd.DataFrame({
            "predictions": flagged["predictions"], "area": flagged["area"], "language": flagged["language"],
            "item_id": flagged["item_id"], "direction": flagged["direction"], "b": flagged["b"].map(fmt),
            "observed": flagged["observed"].map(lambda v: fmt(v, 2)),
            "expected (3PL)": flagged["expected"].map(lambda v: fmt(v, 2)),
            "δ [95%]": [_delta(d, lo, hi) for d, lo, hi
                        in zip(flagged["delta"], flagged["delta_low"], flagged["delta_high"], strict=True)],
            "q": flagged["q"].map(lambda v: f"{v:.2g}"),
        }).set_index(["predictions", "area", "language", "item_id"])  # fmt: skip
    counts = "; ".join(f"{r.predictions} {r.area} {r.language}: {r.easier} easier, {r.harder} harder of "
                       f"{r.tested} tested ({r.patterns} patterns, machines' θ ~ N({r.prior_mean:.2f}, "
                       f"{r.prior_sd:.2f}²))" for r in summary.itertuples())  # fmt: skip
    notes = (
        "Items much easier / much harder for machines than for humans of the same ability: logistic-"
        "regression DIF (Swaminathan & Rogers 1990) of every model × shuffle pattern against INEP's 3PL, "
        "matched on the leave-item-out posterior predictive; δ: log-odds shift (> 0 easier for machines), "
        f"Wald 95% interval; q: Benjamini-Hochberg, flagged at q ≤ {alpha:g}; items answered by fewer than "
        f"{study.dif.min_n} patterns are not tested. Every item: dif.csv. {counts}."
    )
    table = Table("study_dif", "Machine-human item differences (DIF): flagged items", data, display,
                  None, notes)  # fmt: skip
    return StepOutput([table], files={"dif.csv": data})


def prior_frame(study: StudyAnalysis) -> pd.DataFrame:
    """Per corrected run: accuracy, θ and BPC before/after, and the estimated letter prior."""
    theta = {}
    for name, exams in (("raw", study.exams), ("corrected", study.corrected)):
        for exam in exams:
            means = exam.per_shuffle.groupby("respondent")["theta"].mean()
            for model, value in means.items():
                theta[(name, str(model), exam.exam.area, exam.language)] = float(value)
    rows = []
    for rc in study.corrections:
        pc = rc.correction
        key = max(pc.bpc_raw, key=lambda k: pc.bpc_raw[k].n)
        raw, cor = pc.bpc_raw[key], pc.bpc_corrected[key]
        prior = pc.prior.get(int(key), [])
        rows.append({
            "model": rc.model, "area": rc.area, "language": rc.language, "scope": pc.scope,
            "records": len(pc.records), "n_options": int(key),
            "accuracy_raw": pc.raw_accuracy, "accuracy_corrected": pc.corrected_accuracy,
            "theta_raw": theta.get(("raw", rc.model, rc.area, rc.language), np.nan),
            "theta_corrected": theta.get(("corrected", rc.model, rc.area, rc.language), np.nan),
            "bpc_tvd_raw": raw.bpc_tvd, "bpc_tvd_corrected": cor.bpc_tvd,
            "bpc_p_raw": raw.p_value, "bpc_p_corrected": cor.p_value,
            "positions_raw": " ".join(map(str, raw.prediction_counts)),
            "positions_corrected": " ".join(map(str, cor.prediction_counts)),
            **{f"prior_{LETTERS[i]}": float(v) for i, v in enumerate(prior)},
        })  # fmt: skip
    return pd.DataFrame(rows)


def prior_correction_step(study: StudyAnalysis, folder: Path) -> StepOutput:
    """Letter-prior debiasing of first_token / log_prob records: raw vs corrected, BPC before/after."""
    methods = {e.result.strategy.method for e in study.entries}
    if not methods & {"first_token", "log_prob"}:
        raise StepSkipped(
            f"letter-prior correction needs first_token or log_prob records (have {sorted(methods)})"
        )
    if "corrected" not in study.prediction_sets:
        raise StepSkipped("the study asks for raw predictions only (predictions: raw)")
    data = prior_frame(study)
    if data.empty:
        raise StepSkipped("no run has letter scores over at least 2 option orders")
    letters = [c for c in data.columns if c.startswith("prior_") and len(c) == 7]
    display = pd.DataFrame({
        "model": data["model"], "area": data["area"], "language": data["language"],
        "records": data["records"],
        "accuracy raw → corrected": [f"{fmt(a, 3)} → {fmt(b, 3)}" for a, b
                                     in zip(data["accuracy_raw"], data["accuracy_corrected"], strict=True)],
        "θ raw → corrected": [f"{fmt(a, 2)} → {fmt(b, 2)}" for a, b
                              in zip(data["theta_raw"], data["theta_corrected"], strict=True)],
        "BPC TVD raw → corrected": [f"{fmt(a, 3)} → {fmt(b, 3)}" for a, b
                                    in zip(data["bpc_tvd_raw"], data["bpc_tvd_corrected"], strict=True)],
        "predicted positions raw → corrected": [f"{a} → {b}" for a, b
                                                in zip(data["positions_raw"], data["positions_corrected"], strict=True)],
        "letter prior": [" ".join(f"{c[-1]} {fmt(v, 2)}" for c, v in zip(letters, row, strict=True))
                         for row in data[letters].to_numpy()],
    }).set_index(["model", "area", "language"])  # fmt: skip
    notes = (
        "Letter-prior correction (PriDe; Zheng et al., ICLR 2024): the model's prior over the option "
        "letters is the normalised geometric mean of its letter probabilities over the option orders of "
        f"each question (scope '{data['scope'].iloc[0]}'), removed before the argmax. Accuracy: share "
        "correct over all (question, shuffle) records; θ: mean EAP over shuffles; BPC TVD: total-variation "
        "distance of the predicted display positions from uniform (0 = no letter preference). The verdict "
        "rows labelled 'corrected' are computed on these predictions. Every run: prior_correction.csv."
    )
    table = Table("study_prior_correction", "Letter-prior correction: raw vs corrected predictions",
                  data, display, None, notes)  # fmt: skip
    return StepOutput([table], files={"prior_correction.csv": data})


def cat_rows(predictions: str, exam: StudyExam, config: CatConfig) -> list[dict[str, object]]:
    """One row per model × shuffle pattern of ``exam``: the post-hoc CAT against the full test."""
    responses, _, keys = model_patterns(exam)
    answered = np.isfinite(responses).any(axis=1).reshape(-1)
    keep = [bool(v) for v in answered]
    if not any(keep):
        return []
    sim = simulate_cat(responses[np.asarray(keep)], exam.items, config)
    kept = [k for k, ok in zip(keys, keep, strict=True) if ok]
    head = exam_columns(predictions, exam)
    return [{**head, "model": model, "shuffle": shuffle, "items_full": int(sim.n_available[i]),
             "items_cat": int(sim.n_items[i]), "se_full": float(sim.se_full[i]), "se_cat": float(sim.se[i]),
             "target_se": float(sim.target_se[i]), "theta_full": float(sim.theta_full[i]),
             "theta_cat": float(sim.theta[i]), "error": float(sim.error[i]), "stopped_by": str(sim.stopped_by[i])}
            for i, (model, shuffle) in enumerate(kept)]  # fmt: skip


def cat_step(study: StudyAnalysis, folder: Path) -> StepOutput:
    """Post-hoc adaptive testing on the study's response patterns."""
    s = study.cat
    config = CatConfig(target_se=s.target_se, full_se_margin=s.full_se_margin)
    rows = [r for predictions, exams in study.exam_sets() for exam in exams
            for r in cat_rows(predictions, exam, config)]  # fmt: skip
    if not rows:
        raise StepSkipped("no exam with model responses")
    data = pd.DataFrame(rows)
    data = data[data["model"] != RANDOM]
    keys = ["model", "predictions", "area", "language"]
    display = []
    for key, part in data.groupby(keys, sort=False):
        err = part["error"].abs()
        display.append(dict(zip(keys, key, strict=True)) | {
            "patterns": len(part), "items (full)": int(part["items_full"].median()),
            "items CAT median [min–max]": f"{part['items_cat'].median():.0f} "
                                          f"[{part['items_cat'].min()}–{part['items_cat'].max()}]",
            "SE CAT (full)": f"{fmt(part['se_cat'].median(), 2)} ({fmt(part['se_full'].median(), 2)})",
            "|θ_CAT − θ_full| median": fmt(float(err.median()), 2),
            f"≤ {s.tolerance:g}": f"{100 * float((err <= s.tolerance).mean()):.0f}%",
        })  # fmt: skip
    notes = (
        "Post-hoc CAT on each model × shuffle pattern (psychometrics.cat_posthoc.simulate_cat): next item "
        "by maximum Fisher information at the current EAP θ, stop once SE ≤ max("
        f"{s.target_se:g}, SE_full + {s.full_se_margin:g}) or the items run out. Medians over patterns; "
        f"last column: share of patterns with |θ_CAT − θ_full| ≤ {s.tolerance:g}. Every pattern: cat.csv."
    )
    table = Table("study_cat", "Adaptive testing (post-hoc CAT): items used, final SE, θ_CAT − θ_full",
                  data, pd.DataFrame(display).set_index(keys), None, notes)  # fmt: skip
    return StepOutput([table], files={"cat.csv": data})
