"""The psychometric analysis of a study: one analysed exam per (area, language) and the verdict rows.

Each exam is analysed by :func:`enade_bench.benchmarks.enem.analysis.analyse` (the
same code as ``enade-bench report``: θ, SE, l_z, l_z*, ENEM score per shuffle,
the random baseline over the same number of shuffles, simulated humans,
discrimination index, information curve), on the runs of that exam only,
with every run named by its model.  The study adds the item-attribute χ²
tests from its attribute table and, per model, the l_z* bootstrap cut-off
that the verdict needs.  With ``predictions: corrected`` or ``both`` every
exam is analysed a second time on the letter-prior corrected runs
(:func:`enade_bench.benchmarks.enem.steps.correct_entries`), and the verdict rows carry a
``predictions`` column (``raw`` / ``corrected``). The study's further analyses are the
ENEM steps (:mod:`enade_bench.benchmarks.enem.steps`), which take the
:class:`StudyAnalysis` as any :class:`~enade_bench.benchmarks.enem.steps.EnemAnalysis`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from enade_bench.benchmarks.enem.analysis import RANDOM, ExamAnalysis, analyse
from enade_bench.benchmarks.enem.steps.common import EnemAnalysis, RunCorrection
from enade_bench.benchmarks.enem.steps.prior import correct_entries
from enade_bench.benchmarks.enem.study.attributes import attributes_for
from enade_bench.benchmarks.enem.study.config import VerdictRule
from enade_bench.benchmarks.enem.study.exams import ExamSource
from enade_bench.benchmarks.enem.study.plan import PlannedRun, StudyPlan
from enade_bench.benchmarks.enem.study.verdict import aberrant_share, add_verdicts
from enade_bench.psychometrics.classical import attribute_tests
from enade_bench.psychometrics.information import measurement_position
from enade_bench.psychometrics.irt import ItemParams
from enade_bench.psychometrics.personfit import bootstrap_cutoff
from enade_bench.report.loader import RunEntry, provenance_warnings, read_result
from enade_bench.results.store import RunPaths


@dataclass
class StudyAnalysis(EnemAnalysis):
    """Everything the study report shows: the ENEM steps' input plus the verdict."""

    verdict: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: The raw runs under their models' labels (the comparison across models).
    labelled: list[RunEntry] = field(default_factory=list)


def load_runs(plan: StudyPlan) -> tuple[list[tuple[PlannedRun, RunEntry]], list[str]]:
    """The results file of every planned run that has one (and a note per missing run)."""
    found, notes = [], []
    for run in plan.runs:
        path = RunPaths.of(run.folder, run.config.name, None).results
        if path.is_file():
            entry = RunEntry(path, read_result(path))
            found.append((run, replace(entry, warnings=tuple(provenance_warnings(entry)))))
        else:
            notes.append(f"{run.model} on {run.area} {run.language}: no results yet ({path})")
    return found, notes


def _as_model(entry: RunEntry, model: str) -> RunEntry:
    """The run renamed to its model label (respondent name in tables and figures)."""
    return replace(entry, result=entry.result.model_copy(update={"experiment": model}))


def analyse_exam(
    plan: StudyPlan, exam: ExamSource, runs: Sequence[tuple[PlannedRun, RunEntry]]
) -> tuple[ExamAnalysis | None, list[str]]:
    """Analyse one exam of the study (``None`` with a note when no run answered it)."""
    mine = [_as_model(e, r.model) for r, e in runs if (r.area, r.language) == (exam.area, exam.language)]
    if not mine:
        return None, []
    cfg = plan.config
    psy = analyse(mine, plan.enem_dir, cfg.analysis_seed, cfg.n_humans, linked=[(exam.linked, exam.language)])
    if not psy.exams:
        return None, psy.skipped
    study = psy.exams[0]
    attrs = attributes_for(study.items.item_ids, plan.attributes)
    poor = study.discrimination.set_index("item_id").loc[list(attrs.index), "poor"].to_numpy(dtype=bool)
    study.attributes = attribute_tests(poor, attrs)
    return study, psy.skipped


def respondent_verdict(
    shuffles: pd.DataFrame,
    items: ItemParams,
    scale: tuple[float, float],
    rule: VerdictRule,
    rng: np.random.Generator,
) -> dict[str, float | int | str]:
    """The verdict quantities of one respondent from its per-shuffle scores.

    ``shuffles`` holds one row per shuffle with ``theta`` (EAP), ``se``,
    ``lz_star`` (at the WLE θ), ``accuracy`` and ``n_items``
    (:func:`~enade_bench.psychometrics.shuffles.score_shuffles` plus the WLE
    ``lz_star``).  θ's interval is the 2.5-97.5 % percentile range over
    shuffles; the l_z* cut-off is bootstrapped with abilities resampled from
    the shuffles' θ (:func:`~enade_bench.psychometrics.personfit.bootstrap_cutoff`,
    WLE, ``rule.alpha``).
    """
    k, d = scale
    theta = shuffles["theta"].to_numpy(dtype=np.float64)
    finite = theta[np.isfinite(theta)]
    mean = float(finite.mean())
    low, high = (float(v) for v in np.quantile(finite, [0.025, 0.975]))
    cut = bootstrap_cutoff(
        items,
        rng,
        method="wle",
        statistic="lz_star",
        theta=finite,
        n_respondents=rule.n_respondents,
        n_boot=rule.n_boot,
        alpha=rule.alpha,
    )
    share, n_ok = aberrant_share(shuffles["lz_star"].to_numpy(), cut.value)
    position = measurement_position([mean], items, threshold=rule.min_relative_information)
    return {
        "n_shuffles": len(shuffles),
        "n_items": int(shuffles["n_items"].max()),
        "accuracy": float(shuffles["accuracy"].mean()),
        "theta": mean,
        "theta_low": low,
        "theta_high": high,
        "se": float(shuffles["se"].mean()),
        "score": k * mean + d,
        "score_low": k * low + d,
        "score_high": k * high + d,
        "lz_star_cutoff": cut.value,
        "n_assessable": n_ok,
        "aberrant_share": share,
        "relative_information": float(position["relative_information"].iloc[0]),
        "side": str(position["side"].iloc[0]),
    }


def verdict_rows(
    exam: ExamAnalysis,
    scale: tuple[float, float],
    rule: VerdictRule,
    seed: int,
    predictions: str = "raw",
    baseline: bool = True,
) -> pd.DataFrame:
    """One verdict row per respondent (models and, with ``baseline``, the random baseline) of one exam.

    Each respondent's bootstrap is seeded by ``seed``, the exam and its rank.
    The random baseline has no letter scores (nothing to correct); its rows
    are labelled ``raw``.
    """
    rows = []
    for rank, (name, shuffles) in enumerate(exam.per_shuffle.groupby("respondent", sort=True)):
        if name == RANDOM and not baseline:
            continue
        rng = np.random.default_rng([seed, exam.exam.year, exam.booklet, rank])
        rows.append(
            {
                "model": name,
                "predictions": "raw" if name == RANDOM else predictions,
                "year": exam.exam.year,
                "area": exam.exam.area,
                "language": exam.language,
                "booklet": exam.booklet,
                "baseline": name == RANDOM,
                **respondent_verdict(shuffles, exam.items, scale, rule, rng),
            }
        )
    return add_verdicts(pd.DataFrame(rows), rule)


def analyse_study(plan: StudyPlan) -> StudyAnalysis:
    """Analyse every exam of the study whose runs are on disk."""
    cfg = plan.config
    runs, notes = load_runs(plan)
    sets = cfg.prediction_sets
    fixed, corrections = list(runs), list[RunCorrection]()
    if "corrected" in sets:
        labels = [(r.model, r.area, r.language) for r, _ in runs]
        entries, corrections, why = correct_entries([e for _, e in runs], cfg.prior_scope, labels)
        notes += why
        fixed = [(run, entry) for (run, _), entry in zip(runs, entries, strict=True) if entry is not None]
    exams: dict[str, list[ExamAnalysis]] = {"raw": [], "corrected": []}
    frames = []
    for exam in plan.exams:
        for name, source in (("raw", runs), ("corrected", fixed if "corrected" in sets else [])):
            study, skipped = analyse_exam(plan, exam, source)
            notes += skipped if name == "raw" else []
            if study is None:
                continue
            exams[name].append(study)
            if name in sets:
                frames.append(
                    verdict_rows(
                        study,
                        plan.scale[exam.area],
                        cfg.verdict,
                        cfg.analysis_seed,
                        name,
                        baseline=name == sets[0],
                    )
                )
    verdict = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if not verdict.empty:  # models in the study file's order (the random baseline last)
        order = {m: k for k, m in enumerate(dict.fromkeys(r.model for r, _ in runs))}
        verdict = verdict.assign(_order=verdict["model"].map(order).fillna(len(order)))
        verdict = verdict.sort_values(
            ["area", "language", "baseline", "_order", "predictions"],
            ascending=[True, True, False, True, False],
            kind="stable",
        )
        verdict = verdict.drop(columns="_order").reset_index(drop=True)
    return StudyAnalysis(
        [e for _, e in runs],
        exams["raw"],
        exams["corrected"],
        corrections,
        sets,
        cfg.dif,
        cfg.cat,
        notes,
        verdict,
        [_as_model(e, r.model) for r, e in runs],
    )
