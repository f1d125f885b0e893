"""One inference per pair on 1,000 simulated exams: the statement shown beside an adjusted p excludes 0
exactly when the two models share no letter, for every adjustment and family (issues 34, 43)."""

from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd
import pytest

from enade_bench.compare.analysis import CompareOptions, compare_table
from enade_bench.metrics.letters import letter_sets, share_a_letter
from enade_bench.metrics.multiplicity import adjust_pvalues
from enade_bench.metrics.paired import PairedDifference, pair_interval, paired_difference
from enade_bench.metrics.simultaneous import holds_zero, shown_statements

EXAMS = 1000


def _interval(results: list[PairedDifference], i: int, confidence: float) -> tuple[float, float]:
    return pair_interval(results[i], confidence)


def _exam(rng: np.random.Generator, n_models: int, n_questions: int, shuffles: int) -> list[np.ndarray]:
    """Question scores of each model: logit ability - difficulty, a few models truly apart."""
    difficulty = rng.normal(0, 1.5, n_questions)
    thetas = rng.choice([0.0, 0.0, 0.3, 0.8], n_models)
    out = []
    for theta in thetas:
        p = 1 / (1 + np.exp(-(theta - difficulty + rng.normal(0, 0.7, n_questions))))
        out.append(rng.binomial(shuffles, p) / shuffles)
    return out


@pytest.mark.parametrize("adjust", ["holm", "bonferroni", "bh"])
def test_interval_and_letters_agree_on_simulated_exams(adjust: str) -> None:
    """The metrics pipeline the comparison runs, on EXAMS exams of 3-6 models: the exact unconditional
    test, McNemar's score test and the clustered t."""
    rng = np.random.default_rng(34)
    checked = disagreed_before = 0
    for exam in range(EXAMS):
        n_models, n_questions = int(rng.integers(3, 7)), int(rng.integers(20, 200))
        shuffles = 1 if exam % 2 else int(rng.integers(2, 6))
        if (
            shuffles == 1
        ):  # McNemar above 100 questions; the exact unconditional test in 1 of 10 (it is slower)
            n_questions = int(rng.integers(8, 30)) if exam % 20 == 1 else int(rng.integers(101, 200))
        scores = _exam(rng, n_models, n_questions, shuffles)
        names = [f"m{k}" for k in range(n_models)]
        pairs = [(i, j) for i in range(n_models) for j in range(i + 1, n_models)]
        results = [paired_difference(scores[i], scores[j], single_record=shuffles == 1) for i, j in pairs]
        p = np.array([r.p_value for r in results])
        adjusted = adjust_pvalues(p, adjust)
        shown = shown_statements(p, [r.diff for r in results], 0.05, adjust, partial(_interval, results))  # type: ignore[misc]
        significant = [(names[i], names[j]) for (i, j), q in zip(pairs, adjusted, strict=True) if q < 0.05]
        letters = letter_sets({n: float(s.mean()) for n, s in zip(names, scores, strict=True)}, significant)
        for (i, j), r, q, statement in zip(pairs, results, adjusted, shown, strict=True):
            if statement is None:
                continue
            shared = share_a_letter(letters, names[i], names[j])
            assert shared == statement.holds_zero == (q >= 0.05), (exam, adjust, r, q, statement)
            disagreed_before += shared == (r.ci_low > 0 or r.ci_high < 0)
            checked += 1
    assert checked > 5 * EXAMS
    if adjust != "bh":
        assert disagreed_before > 0  # the unadjusted intervals did disagree somewhere: the test can fail


def _long(rng: np.random.Generator, n: int) -> pd.DataFrame:
    scores = _exam(rng, 4, n, 1)
    rows = [
        {
            "model": f"m{k}",
            "item": f"q{i}",
            "replicate": "0",
            "correct": int(s[i]),
            "strategy": st,
            "cluster": "",
            "stem": "",
            "answer": "",
            "prediction": "",
            "area": "AB"[i % 2],
        }
        for st in ("S1", "S2")
        for k, s in enumerate(scores)
        for i in range(n)
    ]
    return pd.DataFrame(rows)


@pytest.mark.parametrize("family", ["all", "strategy", "stratum"])
def test_compare_table_shows_agreeing_intervals(family: str) -> None:
    """The comparison itself (CSV columns) on simulated long tables with strata, for each family."""
    rng = np.random.default_rng(7)
    for k in range(8):  # 30 questions a cell (the exact unconditional test) once, 110 (McNemar) otherwise
        comp = compare_table(_long(rng, 60 if k == 0 else 220), CompareOptions(by=("area",), family=family))
        pairs, scores = comp.pairs_frame(), comp.scores_frame()
        for pair in pairs.itertuples():
            cell = scores[(scores["strategy"] == pair.strategy) & (scores["stratum"] == pair.stratum)]
            letters = cell.set_index("model")["letters"].astype(str)
            shared = bool(set(letters[pair.model_a]) & set(letters[pair.model_b]))
            assert shared == holds_zero(pair.statement, pair.ci_low, pair.ci_high) == (not pair.different)
            assert pair.family.startswith(family) and pair.ci_method == comp.interval_name
