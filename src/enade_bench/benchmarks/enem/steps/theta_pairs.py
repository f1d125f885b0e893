"""θ differences between models on each ENEM exam, over the shuffles, with SEs and adjusted p-values.

The analysis is :mod:`enade_bench.psychometrics.theta_compare` (``adjust_theta_pairs``); this step
builds each model's per-shuffle θ (the EAP of every model × shuffle pattern, the θ of
the verdict) per exam and prediction set and writes ``theta_pairs.csv``.
``enade-bench irt theta-pairs``, ``report`` and ``study`` call :func:`theta_pairs_frame`
/ :func:`theta_pairs_step`; :func:`published_theta_pairs` does the same for the
published runs of the shared data.

Pairing (``"auto"``): by shuffle index when every model of the exam has the same
shuffle indices — the runs of one study share the seed, and this project's option
order of shuffle *k* depends on the seed, the question and *k*, not on the model —
otherwise independent samples (Welch). Holm (or Bonferroni, BH) over the pairs of one
prediction set (every pair of its exams, ``family`` ``all``, as ``compare`` adjusts every pair of a
strategy; ``table``: each exam on its own); each pair's statement (``statement``, ``ci_low``–``ci_high`` at confidence
``ci_level``; ``alpha_i`` the decision's level) is the adjustment's simultaneous one
(Holm: Strassburger & Bretz's bound at 0 for a rejected pair, the Bonferroni interval
``bonferroni_low``–``bonferroni_high`` beside it), so it excludes 0 exactly when
``different``; the unadjusted 95 % interval is ``ci_low_unadjusted``–``ci_high_unadjusted``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from itertools import combinations
from pathlib import Path
from typing import Literal

import pandas as pd

from enade_bench.benchmarks.enem.analysis import RANDOM
from enade_bench.benchmarks.enem.published import PUBLISHED_FILE
from enade_bench.benchmarks.enem.steps.common import EnemAnalysis, exam_columns
from enade_bench.psychometrics.theta_compare import (
    Pairing,
    ThetaDifference,
    ThetaSample,
    adjust_theta_pairs,
    pairs_frame,
    theta_difference,
)
from enade_bench.report.section import Section, StepSkipped
from enade_bench.report.table import Table, fmt

PairingChoice = Literal["auto", "shuffle", "independent"]


def _pairing(samples: list[ThetaSample], choice: PairingChoice) -> Pairing:
    if choice != "auto":
        return choice
    sets = {tuple(sorted(s.shuffle.tolist())) for s in samples}
    return "shuffle" if len(sets) == 1 else "independent"


#: Which pairs are adjusted together: every pair of the CSV (``all``, the default, as ``compare``
#: adjusts every pair of its one strategy: ``--family strategy``) or each exam's table on its own
#: (``table``, as ``compare --family stratum``).
THETA_FAMILIES = ("all", "table")


def _samples(exam_rows: pd.DataFrame) -> list[ThetaSample]:
    scored = exam_rows[exam_rows["respondent"] != RANDOM]
    samples = [
        ThetaSample.of(str(model), part["theta"], shuffle=part["shuffle"].to_numpy())
        for model, part in scored.groupby("respondent", sort=True)
    ]
    return [s for s in samples if s.theta.size >= 2]


def _families(
    tables: Sequence[tuple[Mapping[str, object], list[ThetaDifference]]], adjust: str, family: str
) -> pd.DataFrame:
    """Each table's unadjusted pairs adjusted within ``family``, one frame with ``family``/``family_size``."""
    if family not in THETA_FAMILIES:
        raise ValueError(f"family must be one of {', '.join(THETA_FAMILIES)}; got {family!r}")
    groups = [tables] if family == "all" else [[t] for t in tables]
    frames = []
    for group in groups:
        pairs = adjust_theta_pairs([p for _, ps in group for p in ps], adjust)
        label = (
            "all (every pair)" if family == "all" else "table " + ", ".join(map(str, group[0][0].values()))
        )
        start = 0
        for head, ps in group:
            part = pairs_frame(pairs[start : start + len(ps)]).assign(family=label, family_size=len(pairs))
            frames.append(pd.concat([pd.DataFrame([head] * len(ps)), part], axis=1))
            start += len(ps)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def theta_pairs_frame(
    analysis: EnemAnalysis, pairing: PairingChoice = "auto", adjust: str = "holm", family: str = "all"
) -> pd.DataFrame:
    """One row per pair of models per exam and prediction set (empty with fewer than two models).

    The pairs of each prediction set are adjusted together (``family`` ``all``) or per exam
    (``table``): :data:`THETA_FAMILIES`.
    """
    frames = []
    for predictions, exams in analysis.exam_sets():
        tables = []
        for exam in exams:
            samples = _samples(exam.per_shuffle)
            if len(samples) >= 2:
                ordered = sorted(samples, key=lambda s: -float(s.theta.mean()))
                chosen = _pairing(samples, pairing)
                tables.append(
                    (
                        exam_columns(predictions, exam),
                        [theta_difference(x, y, chosen) for x, y in combinations(ordered, 2)],
                    )
                )
        if tables:
            frames.append(_families(tables, adjust, family))
    if not frames:
        return pd.DataFrame()
    data = pd.concat(frames, ignore_index=True)
    first = ["predictions", "year", "area", "language", "booklet", "model_a", "model_b"]
    return data[first + [c for c in data.columns if c not in first]]


def published_theta_pairs(enem_dir: str | Path, adjust: str = "holm", family: str = "all") -> pd.DataFrame:
    """θ pairs of the published runs per area and language, the years as strata.

    Each model answered the same booklet of each year, area and language 30 times
    (sampled at temperature 0.6, original option order: independent runs, Welch); a
    model's θ per area and language is the mean over the years of its mean over runs,
    so the difference is the mean of the per-year differences (each year its own
    booklet, a stratum). Holm (or Bonferroni, BH) over the 80 pairs of the 8 areas and
    languages (``family`` ``all``, as ``compare``'s default adjusts the 80 pairs of the
    same data), or over the 10 pairs of each (``table``), each interval at the level of
    its pair's adjusted decision.
    """
    ref = pd.read_parquet(Path(enem_dir) / PUBLISHED_FILE)
    ref = ref.assign(
        model=(ref["MODEL_NAME"].astype(str) + " " + ref["MODEL_SIZE"].fillna("").astype(str)).str.strip()
    )
    tables = []
    for (area, language), part in ref.groupby(["EXAM_SUBJECT", "LANGUAGE"], sort=True):
        samples = [
            ThetaSample.of(str(model), rows["IRT_SCORE"], stratum=rows["EXAM_YEAR"].to_numpy())
            for model, rows in part.groupby("model", sort=True)
        ]
        ordered = sorted(samples, key=lambda s: -float(s.theta.mean()))
        years = ",".join(str(y) for y in sorted(part["EXAM_YEAR"].unique()))
        head = {"area": str(area), "language": str(language), "years": years}
        tables.append((head, [theta_difference(x, y, "independent") for x, y in combinations(ordered, 2)]))
    data = _families(tables, adjust, family)
    first = ["area", "language", "years", "model_a", "model_b"]
    return data[first + [c for c in data.columns if c not in first]]


def _level_pct(confidence: float) -> str:
    return "–" if math.isnan(confidence) else f"{100 * confidence:.4g} %"


def _bound(value: float) -> str:
    """An interval limit at 2 decimals; one that rounds to 0 but is not 0 keeps two significant digits,
    so that a shown interval excludes 0 exactly when the pair's decision does."""
    text = fmt(value, 2)
    if value != 0 and math.isfinite(value) and float(text) == 0:
        return f"{value:.2g}"
    return text


def _interval(value: float, low: float, high: float) -> str:
    return "–" if not math.isfinite(value) else f"{fmt(value, 2)} [{_bound(low)}, {_bound(high)}]"


def _statement(value: float, kind: str, low: float, high: float) -> str:
    """``0.42 (> 0, ≤ 0.80)`` for Holm's bound at 0 (with its other limit), else ``0.42 [low, high]``."""
    if not math.isfinite(value):
        return "–"
    if kind == "> 0":
        return f"{fmt(value, 2)} (> 0, ≤ {_bound(high)})"
    if kind == "< 0":
        return f"{fmt(value, 2)} (< 0, ≥ {_bound(low)})"
    return _interval(value, low, high)


def display_pairs(data: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """The pairs table as shown: Δθ with its simultaneous statement and level, the Bonferroni CI, SE, p."""
    return pd.DataFrame(
        {
            **{k: data[k] for k in keys},
            "pair": data["model_a"] + " − " + data["model_b"],
            "θ_A": data["mean_a"].map(lambda v: f"{v:.2f}"),
            "θ_B": data["mean_b"].map(lambda v: f"{v:.2f}"),
            "Δθ [statement]": [
                _statement(d, k, lo, hi)
                for d, k, lo, hi in zip(
                    data["diff"], data["statement"], data["ci_low"], data["ci_high"], strict=True
                )
            ],
            "CI level": data["ci_level"].map(_level_pct),
            "Bonferroni α/K CI (magnitude)": [
                _interval(d, lo, hi)
                for d, lo, hi in zip(
                    data["diff"], data["bonferroni_low"], data["bonferroni_high"], strict=True
                )
            ],
            "SE": data["se"].map(lambda v: f"{v:.3f}"),
            "p": data["p_value"].map(lambda v: f"{v:.2g}"),
            "p adj.": data["p_adjusted"].map(lambda v: f"{v:.2g}"),
        }
    ).set_index([*keys, "pair"])


def pairs_note(data: pd.DataFrame) -> str:
    """What the shown intervals are: the adjustment, its interval method, and where the unadjusted ones are."""
    methods = "; ".join(
        f"{a}: {m}" for a, m in sorted(set(zip(data["adjust"], data["ci_method"], strict=True)))
    )
    return (
        f"Each statement is its adjustment's ({methods}); with Holm or Bonferroni the statements of a table "
        "hold together with probability 95 %: Holm is applied to the 2K directional hypotheses, a rejected pair "
        "gets a bound at 0 in the direction of its effect (> 0 or < 0, with its other limit; Strassburger & "
        "Bretz 2008), the others their t interval at confidence 1 - 2alpha/(2K-r) (CI level). It excludes 0 exactly when the adjusted p is below 0.05. The Bonferroni alpha/K interval gives "
        "the magnitude beside a bound; the unadjusted 95% intervals are ci_low_unadjusted and "
        "ci_high_unadjusted in the CSV."
    )


def theta_pairs_step(analysis: EnemAnalysis, folder: Path) -> Section:
    """θ differences between every two models of each exam, over their shuffles."""
    data = theta_pairs_frame(analysis)
    if data.empty:
        raise StepSkipped("fewer than two models with at least two shuffles on an exam")
    keys = ["predictions", "area", "language"]
    notes = (
        "Mean θ (EAP over each model's shuffle patterns) of model A minus model B on the same booklet; the "
        "shuffles are repeated measures: paired by shuffle index when both models ran the same shuffles (one "
        "seed: the same option orders), else Welch with each model's between-shuffle variance "
        "(psychometrics.theta_compare). p adj.: Holm over every pair of the prediction set's exams (one family, "
        "as compare adjusts every pair of a strategy). " + pairs_note(data) + " Every pair: theta_pairs.csv."
    )
    table = Table(
        "study_theta_pairs",
        "θ differences between models (over shuffles) [Holm simultaneous statements, jointly 95 %]",
        data,
        display_pairs(data, keys),
        None,
        notes,
    )
    return Section([table], files={"theta_pairs.csv": data})
