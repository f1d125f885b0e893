"""θ differences checked against R's mirt on the published response patterns (issue 43).

The 2,400 published patterns of the 2019 and 2022 booklets carry mirt's EAP θ (``IRT_SCORE``)
and its SE. For each of the 16 exams (area × language × year) every pair of the five models is
compared (160 pairs) by :func:`theta_pairs` twice: on mirt's θ, where the difference, SE, df and
p must be scipy's Welch test on those numbers, and on our own EAP of the same response patterns
(what ``irt theta-pairs`` and the ENEM ``theta_pairs.csv`` compute for runs), which must agree with
the mirt-based pair. Each pattern's SE from the test information at θ̂ (Wald), and the
difference of two models' patterns with it, agree whether θ̂ is ours or mirt's.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from tests.conftest import require_shared

from enade_bench.benchmarks.enem.published import load_published
from enade_bench.psychometrics.estimation import MIRT, eap
from enade_bench.psychometrics.irt import item_information
from enade_bench.psychometrics.theta_compare import ThetaSample

from .theta_table import theta_pairs


@pytest.fixture(scope="module")
def published() -> tuple[object, np.ndarray, np.ndarray, np.ndarray]:
    enem = require_shared("enem", "reference_llm_responses_mirt.parquet").parent
    pub = load_published(enem)
    ours = eap(pub.responses, pub.items, MIRT).theta
    answered = ~np.isnan(pub.responses)

    def info_se(theta: np.ndarray) -> np.ndarray:
        info = np.where(answered, item_information(theta, pub.items), 0.0).sum(axis=1)
        return 1 / np.sqrt(info)

    return pub, ours, info_se(ours), info_se(pub.rows["IRT_SCORE"].to_numpy())


def _cells(pub: object) -> list[tuple[tuple[str, str, int], np.ndarray]]:
    rows = pub.rows.reset_index(drop=True)  # type: ignore[attr-defined]
    model = (rows["MODEL_NAME"].astype(str) + " " + rows["MODEL_SIZE"].fillna("").astype(str)).str.strip()
    rows = rows.assign(model=model)
    return [
        (key, part.index.to_numpy()) for key, part in rows.groupby(["EXAM_SUBJECT", "LANGUAGE", "EXAM_YEAR"])
    ]


def test_theta_pairs_agree_with_mirt_on_160_published_pairs(published: tuple) -> None:
    pub, ours, _, _ = published
    rows = pub.rows.reset_index(drop=True)
    model = (rows["MODEL_NAME"].astype(str) + " " + rows["MODEL_SIZE"].fillna("").astype(str)).str.strip()
    mirt = rows["IRT_SCORE"].to_numpy()
    checked = decided = 0
    for _key, index in _cells(pub):
        names = sorted(set(model[index]))
        by = {m: index[model[index] == m] for m in names}
        with_mirt = theta_pairs([ThetaSample.of(m, mirt[by[m]]) for m in names])
        with_ours = {
            frozenset((p.model_a, p.model_b)): p
            for p in theta_pairs([ThetaSample.of(m, ours[by[m]]) for m in names])
        }
        for p in with_mirt:
            ref = stats.ttest_ind(mirt[by[p.model_a]], mirt[by[p.model_b]], equal_var=False)
            assert p.diff == pytest.approx(mirt[by[p.model_a]].mean() - mirt[by[p.model_b]].mean(), abs=1e-12)
            assert p.t == pytest.approx(ref.statistic, rel=1e-9) and p.df == pytest.approx(ref.df, rel=1e-9)
            assert p.p_value == pytest.approx(ref.pvalue, rel=1e-6, abs=1e-300)
            q = with_ours[frozenset((p.model_a, p.model_b))]
            sign = 1 if q.model_a == p.model_a else -1
            assert sign * q.diff == pytest.approx(p.diff, abs=2e-3)  # each θ within mirt's 1e-3 contract
            assert q.se == pytest.approx(p.se, abs=1e-3)
            if not (
                p.alpha_i / 2 < p.p_value < 2 * p.alpha_i
            ):  # away from the boundary the decision is mirt's
                assert q.different == p.different
                decided += 1
            checked += 1
    assert checked == 160 and decided >= 100


def test_pattern_differences_with_the_information_se_agree_with_mirts_theta(published: tuple) -> None:
    """Pattern k of model A against pattern k of model B, Wald: (θ_A - θ_B) / sqrt(1/I(θ_A) + 1/I(θ_B))."""
    pub, ours, ours_se, mirt_se = published
    rows = pub.rows.reset_index(drop=True)
    model = (rows["MODEL_NAME"].astype(str) + " " + rows["MODEL_SIZE"].fillna("").astype(str)).str.strip()
    mirt = rows["IRT_SCORE"].to_numpy()
    assert np.max(np.abs(ours - mirt)) < 1e-3  # the oracle contract (tests/psychometrics/test_estimation.py)
    pairs = 0
    for _key, index in _cells(pub):
        names = sorted(set(model[index]))
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                ia, ib = index[model[index] == a], index[model[index] == b]
                k = min(ia.size, ib.size)
                diff_ours, diff_mirt = ours[ia[:k]] - ours[ib[:k]], mirt[ia[:k]] - mirt[ib[:k]]
                se_ours = np.hypot(ours_se[ia[:k]], ours_se[ib[:k]])
                se_mirt = np.hypot(mirt_se[ia[:k]], mirt_se[ib[:k]])
                assert np.allclose(diff_ours, diff_mirt, atol=2e-3) and np.allclose(
                    se_ours, se_mirt, rtol=5e-3
                )
                assert np.all((se_mirt > 0) & np.isfinite(se_mirt))
                pairs += k
    assert pairs >= 100 * 15
